//! A bingo room in real browsers: headless Chromium driven over WebDriver,
//! like `browser.rs` (same needs; screenshots in
//! `target/browser-screenshots/bingo-*.png`).

mod support;

use fantoccini::{Client, Locator};
use serde_json::json;
use support::{
    browser, browser_with, click_css, count, enter_name, js, shot, start_driver, start_server,
    wait_css, wait_text, ws,
};

/// Places 1, 2, ... on the card by clicking, in turn, the cell where each
/// number goes.
async fn place(c: &Client, card: &[u16]) {
    for k in 1..=card.len() {
        let cell = card.iter().position(|&x| usize::from(x) == k).unwrap();
        click_css(c, &format!("#bingo-card [data-cell=\"{cell}\"]")).await;
        wait_css(
            c,
            &format!("#bingo-card [data-cell=\"{cell}\"][data-number=\"{k}\"]"),
        )
        .await;
    }
}

async fn select(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_browsers_play_bingo_to_a_ranked_result() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let evil = "<img src=x onerror=f()>";

    // Ann creates a 3-player 3x3 room with one line to win, calling first.
    let ann = browser(&mut driver, 1280, 900).await;
    enter_name(&ann, &format!("{http}/"), "Ann").await;
    wait_css(&ann, "#bingo-create").await;
    select(&ann, "#bingo-size option[value=\"3\"]").await;
    select(&ann, "#bingo-lines option[value=\"1\"]").await;
    select(&ann, "#bingo-players-count option[value=\"3\"]").await;
    select(&ann, "#bingo-first option[value=\"0\"]").await;
    click_css(&ann, "#bingo-create").await;
    wait_text(&ann, "#status", "Waiting for players: 1 of 3").await;
    let room_url = ann.current_url().await.unwrap().to_string();
    assert!(room_url.contains("/b/"), "{room_url}");

    // Bob joins by the link on a phone, Carol on a laptop; the lobby lists
    // the room meanwhile.
    let bob = browser(&mut driver, 390, 844).await;
    enter_name(&bob, &format!("{http}/"), "Bob").await;
    wait_css(&bob, "tr[data-game=\"bingo\"] a.join").await;
    shot(&bob, "bingo-lobby-phone").await;
    bob.goto(&room_url).await.unwrap();
    wait_text(&bob, "#status", "2 of 3").await;
    let carol = browser(&mut driver, 1024, 768).await;
    enter_name(&carol, &room_url, evil).await;
    wait_text(&carol, "#status", "Fill your card").await;

    // Ann and Bob place 1..9 cell by cell; Carol tries the shuffle, clears,
    // and places a card on which 1, 2 and 3 are in no line.
    place(&ann, &[1, 2, 3, 4, 5, 6, 7, 8, 9]).await;
    click_css(&ann, "#bingo-ready").await;
    wait_text(&ann, "#bingo-ready", "Ready ✓").await;
    place(&bob, &[1, 2, 3, 4, 5, 6, 7, 8, 9]).await;
    shot(&bob, "bingo-filling-phone").await;
    click_css(&bob, "#bingo-ready").await;
    click_css(&carol, "#bingo-shuffle").await;
    wait_css(&carol, "#bingo-card [data-cell=\"8\"][data-number]").await;
    click_css(&carol, "#bingo-clear").await;
    wait_css(&carol, "#bingo-card [data-cell=\"8\"]:not([data-number])").await;
    place(&carol, &[1, 5, 6, 2, 8, 9, 4, 7, 3]).await;
    click_css(&carol, "#bingo-ready").await;

    // The calls, by clicking numbers on one's own card. Bob's tab closes
    // and reopens before his turn: the seat, card and marks are his again.
    wait_text(&ann, "#status", "Your call").await;
    click_css(&ann, "#bingo-card [data-number=\"1\"]").await;
    wait_css(&bob, "#bingo-calls [data-call=\"1\"]").await;
    let new = bob.new_window(true).await.unwrap();
    bob.close_window().await.unwrap();
    bob.switch_to_window(new.handle).await.unwrap();
    bob.goto(&room_url).await.unwrap();
    wait_css(&bob, "#bingo-card [data-number=\"1\"].marked").await;
    for (c, number) in [(&bob, 2), (&carol, 3)] {
        wait_text(c, "#status", "Your call").await;
        click_css(c, &format!("#bingo-card [data-number=\"{number}\"]")).await;
        wait_css(c, &format!("#bingo-calls [data-call=\"{number}\"]")).await;
    }

    // Ann and Bob completed the top row on the third call: they share first
    // place, Carol is third; everyone sees all cards.
    for c in [&ann, &bob, &carol] {
        wait_text(c, "#status", "Ann and Bob share first place").await;
        let ranks = js(c, "return [...document.querySelectorAll('#bingo-ranking tbody tr')].map(r => [r.dataset.seat, r.dataset.rank])").await;
        assert_eq!(ranks, json!([["0", "1"], ["1", "1"], ["2", "3"]]));
        assert_eq!(count(c, "#bingo-cards .bingo-small").await, 3);
    }
    wait_text(&carol, "#status", "You placed 3 of 3").await;
    let names = js(&ann, "return [...document.querySelectorAll('#bingo-players .player-name')].map(e => e.textContent)").await;
    assert_eq!(names, json!(["Ann", "Bob", evil]));
    assert!(count(&ann, "main img").await == 0);
    // The marks: the top row is a completed line on Ann's card.
    assert_eq!(count(&ann, "#bingo-card .in-line").await, 3);
    shot(&ann, "bingo-result-desktop").await;
    shot(&bob, "bingo-result-phone").await;

    // The replay steps through the calls.
    click_css(&bob, "#bingo-replay").await;
    wait_text(&bob, "#replay-at", "call 3 of 3: 3 by").await;
    click_css(&bob, "#prev").await;
    wait_text(&bob, "#replay-at", "call 2 of 3: 2 by Bob").await;
    // On the phone the step buttons sit above the cards they step.
    let above = js(
        &bob,
        "return document.querySelector('#next').getBoundingClientRect().bottom \
             <= document.querySelector('#bingo-cards').getBoundingClientRect().top",
    )
    .await;
    assert_eq!(
        above,
        serde_json::json!(true),
        "replay buttons below the cards"
    );
    shot(&bob, "bingo-replay-phone").await;
    // Its buttons say what they do, in glyphs the phone has (⏮ and ⏭
    // were boxes) and in words for a screen reader.
    let controls = js(
        &bob,
        "return ['first', 'prev', 'next', 'last'].map(id => { \
           const b = document.getElementById(id); return [b.textContent, b.getAttribute('aria-label')]; })",
    )
    .await;
    assert_eq!(
        controls,
        serde_json::json!([
            ["|◀", "first call"],
            ["◀", "previous call (←)"],
            ["▶", "next call (→)"],
            ["▶|", "last call"]
        ])
    );

    for c in [ann, bob, carol] {
        let _ = c.close().await;
    }
}

/// The biggest card (15x15, numbers up to 225) on a phone: every number
/// fits its cell. Someone opening the link of a full room is told they
/// watch, and sees the board of numbers the calls mark.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_card_fits_a_phone_and_a_full_room_says_you_watch() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let pia = browser_with(&mut driver, 390, 844, phone()).await;
    enter_name(&pia, &format!("{http}/"), "Pia").await;
    wait_css(&pia, "#bingo-create").await;
    select(&pia, "#bingo-players-count option[value=\"2\"]").await;
    select(&pia, "#bingo-size option[value=\"15\"]").await;
    click_css(&pia, "#bingo-create").await;
    wait_text(&pia, "#status", "Waiting for players: 1 of 2").await;
    wait_text(&pia, "#copy-invite", "Copy the link").await;
    let room_url = pia.current_url().await.unwrap().to_string();
    click_css(&pia, "#bingo-shuffle").await;
    wait_css(&pia, "#bingo-card [data-number=\"225\"]").await;
    let cells = "[...document.querySelectorAll('#bingo-card [data-number]')]";
    let overflowing = js(
        &pia,
        &format!(
            "return {cells}.filter(e => e.scrollWidth > e.clientWidth).map(e => e.dataset.number)"
        ),
    )
    .await;
    assert_eq!(overflowing, json!([]), "numbers wider than their cells");
    let page_width = js(
        &pia,
        "return document.documentElement.scrollWidth <= window.innerWidth",
    )
    .await;
    assert_eq!(page_width, json!(true), "the page scrolls sideways");
    shot(&pia, "bingo-15x15-phone").await;

    // Bo takes the second seat; Cy opens the same link and watches.
    let bo = browser(&mut driver, 1024, 768).await;
    enter_name(&bo, &room_url, "Bo").await;
    wait_css(&bo, "#bingo-card").await;
    let cy = browser(&mut driver, 1024, 768).await;
    enter_name(&cy, &room_url, "Cy").await;
    wait_text(&cy, "#status", "You are watching: every seat is taken.").await;
    // A watcher has no card, but sees the numbers the calls will mark.
    wait_css(&cy, "#bingo-called [data-number=\"225\"]").await;
    let marked = js(
        &cy,
        "return document.querySelectorAll('#bingo-called .marked').length",
    )
    .await;
    assert_eq!(marked, json!(0), "nothing is called yet");
    for c in [pia, bo, cy] {
        let _ = c.close().await;
    }
}

fn phone() -> serde_json::Value {
    json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3, "touch": true}}})
}

/// The replay of a game someone left says so in the ranking, apart from a
/// player still without bingo at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_tells_a_player_who_left_from_one_without_bingo() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let addr = http.trim_start_matches("http://");
    let mut p = Vec::new();
    for name in ["Ann", "Bob", "Cy"] {
        p.push(ws::hello(addr, name).await.0);
    }
    let settings =
        json!({"type": "create", "game": "bingo", "players": 3, "size": 3, "lines": 1, "first": 0});
    let room = ws::create(&mut p[0], settings).await;
    // Ann's card has 1, 2, 3 in its top row, Bob's in no line.
    let cards = [
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
        [1, 5, 6, 2, 8, 9, 4, 7, 3],
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
    ];
    for (c, card) in p.iter_mut().zip(cards) {
        ws::send(c, json!({"type": "join", "room": room})).await;
        ws::next(c, "you").await;
        ws::send(c, json!({"type": "card", "numbers": card})).await;
    }
    ws::next_where(&mut p[2], |s| s["status"] == "playing").await;
    ws::send(&mut p[2], json!({"type": "quit"})).await;
    let mut st = ws::next_where(&mut p[0], |s| s["seats"][2]["gone"] == true).await;
    for (i, n) in [1, 2, 3].into_iter().enumerate() {
        let who = st["turn"].as_u64().unwrap() as usize;
        ws::send(&mut p[who], json!({"type": "call", "number": n})).await;
        st = ws::next_where(&mut p[0], |s| {
            s["type"] == "state" && s["calls"].as_array().is_some_and(|c| c.len() == i + 1)
        })
        .await;
    }
    assert_eq!(st["status"], "over", "{st}");
    let id = st["record"].as_str().unwrap();

    let c = browser(&mut driver, 1024, 768).await;
    c.goto(&format!("{http}/games/{id}")).await.unwrap();
    wait_text(&c, "#bingo-ranking", "left the game").await;
    let rows = js(
        &c,
        "return [...document.querySelectorAll('#bingo-ranking tbody tr')].map(r => [r.dataset.seat, r.cells[2].textContent])",
    )
    .await;
    assert_eq!(
        rows,
        json!([
            ["0", "bingo on call 3"],
            ["1", "no bingo"],
            ["2", "left the game"]
        ])
    );
    let _ = c.close().await;
}
