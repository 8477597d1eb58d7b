//! The yard in a real browser: headless Chromium driven over WebDriver.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs
//! them). Without chromedriver the test says so and passes, unless `CI` is
//! set, where it fails. Screenshots go to `target/browser-screenshots/`.

mod support;

use std::time::Duration;

use fantoccini::Client;
use fantoccini::Locator;
use serde_json::json;
use support::{
    browser, browser_with, click_css, count, enter_name, js, shot, start_driver, start_server,
    text_of, wait_css, wait_text, wait_text_not, ws,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn click_point(c: &Client, point: &str) {
    click_css(c, &format!("[data-point=\"{point}\"]")).await;
}

async fn frame(s: &mut TcpStream) -> [u8; 3] {
    let mut f = [0u8; 3];
    tokio::time::timeout(Duration::from_secs(15), s.read_exact(&mut f))
        .await
        .unwrap()
        .unwrap();
    f
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_and_a_bot_play_in_real_browsers() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, referee) = start_server().await;
    let evil = "<script>x()</script>";

    // Ann creates a room in the lobby (desktop size), with a name that
    // must be shown as text.
    let ann = browser(&mut driver, 1280, 900).await;
    enter_name(&ann, &format!("{http}/"), evil).await;
    wait_css(&ann, "#create").await;
    ann.find(Locator::Css("#create-color option[value=black]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    shot(&ann, "lobby-desktop").await;
    click_css(&ann, "#create").await;
    wait_text(&ann, "#status", "Waiting for an opponent").await;
    // The link to send is offered beside the status, not only at the foot.
    wait_text(&ann, "#actions #copy-invite", "Copy the link").await;
    // The players' boxes share the panel: a long name does not push the
    // free seat out of it.
    let fits = js(
        &ann,
        "const p = document.querySelector('.players'); return p.scrollWidth <= p.clientWidth",
    )
    .await;
    assert_eq!(fits, json!(true), "the players overflow their panel");
    // The name is cut, not the "you" under it.
    let you_shown = js(&ann, "const b = document.querySelector('.player .you'); \
             const r = b.getBoundingClientRect(), box = b.closest('.player').getBoundingClientRect(); \
             return r.width > 0 && r.right <= box.right").await;
    assert_eq!(you_shown, json!(true), "\"you\" is cut off");
    let room_url = ann.current_url().await.unwrap().to_string();
    assert!(room_url.contains("/r/"));

    // Bob joins by the link on a phone-sized window; Carol watches.
    let bob = browser(&mut driver, 390, 844).await;
    enter_name(&bob, &room_url, "Bob").await;
    wait_text(&bob, "#status", "Black to move").await;
    let carol = browser(&mut driver, 1024, 768).await;
    enter_name(&carol, &format!("{room_url}?watch=1"), "Carol").await;
    wait_text(&carol, "#spectators", "1 watching").await;
    wait_text(
        &carol,
        "#status",
        "Black to move · move 1. You are watching.",
    )
    .await;
    let names = js(
        &carol,
        "return [...document.querySelectorAll('.player-name')].map(e => e.textContent)",
    )
    .await;
    assert_eq!(names, json!([evil, "Bob"]));
    assert!(count(&carol, "main script").await == 0);

    // Black builds a double-three point at h8 while white lines up a1..a4.
    let moves = ["g8", "a1", "i8", "a2", "h7", "a3", "h9", "a4"];
    for (i, m) in moves.iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&ann, &bob)
        } else {
            (&bob, &ann)
        };
        wait_text(mover, "#status", "Your move").await;
        click_point(mover, m).await;
        wait_css(other, &format!("[data-stone=\"{m}\"]")).await;
        wait_css(&carol, &format!("[data-stone=\"{m}\"]")).await;
    }
    // The forbidden point is marked and refused.
    wait_css(&ann, "[data-forbidden=\"h8\"]").await;
    shot(&ann, "forbidden-desktop").await;
    click_point(&ann, "h8").await;
    wait_text(&ann, "#toast", "forbidden").await;
    assert!(count(&ann, "[data-stone=\"h8\"]").await == 0);
    // Ann plays o15 from the keyboard: the cursor starts on h8.
    let board = ann.find(Locator::Css("svg.board")).await.unwrap();
    let keys = format!("{}{}\u{E007}", "\u{E014}".repeat(7), "\u{E013}".repeat(7));
    board.send_keys(&keys).await.unwrap();
    wait_css(&bob, "[data-stone=\"o15\"]").await;

    // Bob's tab closes and reopens: the seat is his again.
    let old = bob.window().await.unwrap();
    let new = bob.new_window(true).await.unwrap();
    bob.close_window().await.unwrap();
    assert_ne!(old, new.handle);
    bob.switch_to_window(new.handle).await.unwrap();
    bob.goto(&room_url).await.unwrap();
    wait_text(&bob, "#status", "Your move").await;
    shot(&bob, "resumed-phone").await;

    // Chat is shown as text too.
    let input = wait_css(&bob, "#chat-input").await;
    input.send_keys("<b>hi</b>").await.unwrap();
    click_css(&bob, "#chat-send").await;
    wait_text(&carol, "#chat-log", "<b>hi</b>").await;

    // Bob offers a draw: Ann is told even if the offer is out of sight,
    // and declines.
    click_css(&bob, "#draw").await;
    wait_text(&ann, "#toast", "Your opponent offers a draw").await;
    click_css(&ann, "#decline").await;
    wait_text(&bob, "#draw", "Offer draw").await;

    // White completes five; everyone sees the line.
    click_point(&bob, "a5").await;
    wait_text(&ann, "#status", "White wins").await;
    wait_text(&carol, "#status", "White wins (five)").await;
    assert_eq!(count(&carol, "[data-five]").await, 5);
    shot(&carol, "five-spectator").await;
    shot(&bob, "won-phone").await;
    // Carol opens the play link of the full room: she is told she watches.
    carol.goto(&room_url).await.unwrap();
    wait_text(&carol, "#status", "You are watching: both seats are taken.").await;

    // A bot on the 3-byte port waits in the lobby; Ann takes the seat.
    let mut bot = TcpStream::connect(referee).await.unwrap();
    bot.write_all(&[0, 0, 0, 1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [0, 0, 1]);
    ann.goto(&format!("{http}/")).await.unwrap();
    let join = wait_css(&ann, "tr[data-room] a.join").await;
    wait_text(
        &ann,
        "#rooms",
        "waiting for an opponent (program or person)",
    )
    .await;
    join.click().await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 0, 0]);
    bot.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 1, 0x77]);
    wait_css(&ann, "[data-stone=\"h8\"]").await;
    wait_text(&ann, "#status", "Your move").await;
    click_point(&ann, "h9").await;
    assert_eq!(frame(&mut bot).await, [2, 0, 0x78]);
    // The bot puts on a stone: it loses, and hears so first.
    bot.write_all(&[3, 0, 0x78]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [4, 0, 0]);
    // Said in words, not the wire's reason ("occupied").
    wait_text(
        &ann,
        "#status",
        "White wins (black played on a taken point)",
    )
    .await;
    // The program has gone (one game per connection): no rematch is
    // offered (it could only be refused), the way on is.
    wait_text(&ann, "#opponent-gone", "Find another game in the lobby").await;
    assert_eq!(count(&ann, "#rematch").await, 0);
    let black = text_of(&ann, "[data-color=black]").await;
    assert!(
        !black.contains("waiting"),
        "a gone program's seat: {black:?}"
    );
    // ...and it still says who played black.
    let program = text_of(&ann, "[data-color=black] .player-name").await;
    assert!(program.starts_with("program "), "black was {program:?}");
    assert!(black.contains("left the room"), "{black:?}");
    shot(&ann, "bot-game-desktop").await;

    for c in [ann, bob, carol] {
        let _ = c.close().await;
    }
}

/// The replay page steps through a finished game with its buttons and the
/// keyboard, shows the five at the end, and offers the three exports; the
/// list of games filters by rule and result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_listed_replayed_and_exported() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let mut ann = ws::hello(http.trim_start_matches("http://"), "Ann").await.0;
    let mut bob = ws::hello(http.trim_start_matches("http://"), "Bob").await.0;
    let create = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    ws::send(&mut ann, create).await;
    let room = ws::next_where(&mut ann, |m| m["type"] == "created").await["room"].clone();
    ws::send(&mut ann, json!({"type": "join", "room": room})).await;
    ws::next_where(&mut ann, |m| m["type"] == "you").await;
    ws::send(&mut bob, json!({"type": "join", "room": room})).await;
    ws::next_where(&mut ann, |s| s["status"] == "playing").await;
    let moves = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];
    let mut last = serde_json::Value::Null;
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut ann } else { &mut bob };
        ws::send(mover, json!({"type": "move", "point": m})).await;
        let n = i + 1;
        let moved = |s: &serde_json::Value| {
            s["type"] == "state" && s["moves"].as_array().is_some_and(|v| v.len() == n)
        };
        last = ws::next_where(&mut ann, moved).await;
    }
    let over = last;
    assert_eq!(over["result"]["winner"], "black");

    let c = browser(&mut driver, 1280, 800).await;
    // The games list and replays ask nobody's name.
    c.goto(&format!("{http}/games")).await.unwrap();
    wait_css(&c, "tr[data-game]").await;
    assert_eq!(count(&c, "#name-input").await, 0);
    // Filters: no freestyle game, no white win; the renju black win is there.
    click_css(&c, "#filter-rule option[value=freestyle]").await;
    wait_text(&c, "#games", "No games match").await;
    click_css(&c, "#filter-rule option[value=renju]").await;
    click_css(&c, "#filter-result option[value=white]").await;
    wait_text(&c, "#games", "No games match").await;
    click_css(&c, "#filter-result option[value=black]").await;
    wait_text(&c, "#games", "Black wins (five)").await;
    assert!(
        c.current_url()
            .await
            .unwrap()
            .as_str()
            .contains("result=black")
    );
    shot(&c, "games-list-desktop").await;
    click_css(&c, "tr[data-game] a.replay").await;

    wait_text(&c, "#replay-at", "move 9 of 9 (l8").await;
    wait_text(&c, "#replay-result", "Black wins (five)").await;
    assert_eq!(count(&c, "[data-five]").await, 5);
    shot(&c, "replay-desktop").await;
    click_css(&c, "#prev").await;
    wait_text(&c, "#replay-at", "move 8 of 9 (a4").await;
    assert!(count(&c, "[data-five]").await == 0);
    assert!(count(&c, "[data-stone=l8]").await == 0);
    let body = c.find(Locator::Css("body")).await.unwrap();
    body.send_keys("\u{E012}").await.unwrap(); // ArrowLeft
    wait_text(&c, "#replay-at", "move 7 of 9 (k8").await;
    body.send_keys("\u{E011}").await.unwrap(); // Home
    wait_text(&c, "#replay-at", "move 0 of 9").await;
    assert!(count(&c, "[data-stone]").await == 0);
    body.send_keys("\u{E014}").await.unwrap(); // ArrowRight
    wait_css(&c, "[data-stone=h8]").await;
    click_css(&c, "#replay-moves [data-move=\"4\"]").await;
    wait_text(&c, "#replay-at", "move 4 of 9 (a2").await;
    click_css(&c, "#last").await;
    wait_text(&c, "#replay-at", "move 9 of 9").await;

    // The export links lead to the record in each format.
    for (id, want) in [
        ("#export-sgf", "GM[4]"),
        ("#export-psq", "Piskvorky 15x15"),
        ("#export-json", "\"winner\":\"black\""),
    ] {
        let href = c
            .find(Locator::Css(id))
            .await
            .unwrap()
            .attr("href")
            .await
            .unwrap()
            .unwrap();
        let text = c
            .execute(
                "return fetch(arguments[0]).then(r => r.text())",
                vec![json!(href)],
            )
            .await
            .unwrap();
        assert!(text.as_str().unwrap().contains(want), "{id}: {text}");
    }

    // A filter value no option holds is sent as it is, and the list says
    // what the server refused rather than listing every game.
    c.goto(&format!("{http}/games?rule=bogus")).await.unwrap();
    wait_text(&c, "#games", "rule: `bogus` is not one of renju").await;
    assert_eq!(count(&c, "tr[data-game]").await, 0);
    let _ = c.close().await;
}

/// On a phone's touch screen a first tap only shows the stone and a second
/// plays it; against the engine the engine view gives a verdict and a
/// line; resigning asks once more (and can be called off); the running
/// clock ticks without replacing the buttons under the finger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_plays_the_engine_by_touch() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let phone = json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3, "touch": true}}});
    let c = browser_with(&mut driver, 390, 844, phone).await;
    enter_name(&c, &format!("{http}/"), "Pia").await;
    wait_css(&c, "#create").await;
    // The rooms come first: in sight without scrolling on a phone.
    let rooms_in_sight = js(
        &c,
        "return document.querySelector('#rooms').getBoundingClientRect().top < window.innerHeight",
    )
    .await;
    assert_eq!(
        rooms_in_sight,
        json!(true),
        "the room list is below the fold"
    );
    click_css(&c, "#create-opponent option[value=engine]").await;
    click_css(&c, "#create-level option[value=\"1\"]").await;
    click_css(&c, "#create-color option[value=black]").await;
    click_css(&c, "#create-clock option[value=game5]").await;
    shot(&c, "lobby-phone").await;
    click_css(&c, "#create").await;
    wait_text(&c, "#status", "Your move").await;

    click_point(&c, "h8").await;
    wait_css(&c, "[data-preview=h8]").await;
    assert!(count(&c, "[data-stone]").await == 0);
    shot(&c, "touch-preview-phone").await;
    wait_text(&c, "#toast", "again to play").await;
    click_point(&c, "h8").await;
    wait_css(&c, "[data-stone=h8]").await;
    // The toast that asked for the second tap goes with it: it covered
    // the engine's view, still asking to play a point already played.
    let asking = js(
        &c,
        "return document.getElementById('toast').classList.contains('show')",
    )
    .await;
    assert_eq!(asking, json!(false), "the toast still asks for h8");
    // The engine answers.
    wait_text(&c, "#status", "move 3").await;
    assert_eq!(count(&c, "[data-stone]").await, 2);

    click_css(&c, "#analyse").await;
    wait_css(&c, "#analysis-verdict").await;
    let best = text_of(&c, "#analysis-best").await;
    assert!(best.parse::<renju::Point>().is_ok(), "best move {best:?}");
    shot(&c, "engine-view-phone").await;
    // A move makes the view stale: it goes.
    click_point(&c, "a1").await;
    wait_css(&c, "[data-preview=a1]").await;
    click_point(&c, "a1").await;
    wait_text(&c, "#status", "move 5").await;
    assert!(
        count(&c, "#analysis-verdict").await == 0,
        "the engine view of an old position is still shown"
    );

    // Black's clock runs: its text changes, the buttons stay the same
    // elements (a press must end on the element it began on).
    let before = js(
        &c,
        "window.resignButton = document.getElementById('resign'); \
             return document.getElementById('clock-black').textContent",
    )
    .await;
    wait_text_not(&c, "#clock-black", before.as_str().unwrap()).await;
    let same = js(
        &c,
        "return document.getElementById('resign') === window.resignButton",
    )
    .await;
    assert_eq!(same, json!(true), "the clock's tick replaced the buttons");

    click_css(&c, "#resign").await;
    wait_text(&c, "#resign", "Really resign?").await;
    let actions = text_of(&c, "#actions").await;
    assert!(!actions.contains("null"), "{actions:?}");
    click_css(&c, "#resign-cancel").await;
    wait_text(&c, "#resign", "Resign").await;
    assert!(!text_of(&c, "#resign").await.contains("Really"));
    click_css(&c, "#resign").await;
    wait_text(&c, "#resign", "Really resign?").await;
    assert!(!text_of(&c, "#status").await.contains("wins"));
    click_css(&c, "#resign").await;
    wait_text(&c, "#status", "White wins (resignation)").await;
    shot(&c, "resigned-phone").await;
    let _ = c.close().await;
}
