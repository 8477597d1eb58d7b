//! What a newcomer met in a real browser and tripped over: a program's
//! room that did not say where programs connect, a program's name gone
//! from the finished room, an engine view calling a lost position "about
//! even", a short name cut beside "(you)", a busy room's page that must
//! come in a second later (Omok and bingo alike), and a room cap that took
//! the whole lobby away.
//!
//! Needs Debian's `chromium` and `chromium-driver`, as `tests/browser.rs`.

mod support;

use std::time::Duration;

use serde_json::json;
use server::{Config, Rate, RoomRates};
use support::{
    browser, browser_with, click_css, enter_name, js, shot, start_driver, start_server, text_of,
    wait_css, wait_text, ws,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn frame(s: &mut TcpStream) -> [u8; 3] {
    let mut f = [0u8; 3];
    tokio::time::timeout(Duration::from_secs(15), s.read_exact(&mut f))
        .await
        .expect("a frame in time")
        .expect("a frame");
    f
}

/// Whether the element `css` shows its whole text (nothing cut off).
async fn whole(c: &fantoccini::Client, css: &str) -> bool {
    let script =
        format!("const e = document.querySelector('{css}'); return e.scrollWidth <= e.clientWidth");
    js(c, &script).await == json!(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_room_tells_where_programs_connect_and_keeps_who_played() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, referee) = start_server().await;
    // A program connects first: no room waits for one, so it waits alone
    // in a new room, as black.
    let mut bot = TcpStream::connect(referee).await.unwrap();
    bot.write_all(&[0, 0, 0]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [0, 0, 1]);

    // A host opens a room for a program: the page says where it connects,
    // and a short name is shown whole at desktop size.
    let host = browser(&mut driver, 1280, 800).await;
    enter_name(&host, &format!("{http}/"), "Newcomer12").await;
    wait_css(&host, "#create").await;
    js(
        &host,
        "const s = document.getElementById('create-opponent'); s.value = 'program'; \
         s.dispatchEvent(new Event('change')); return null",
    )
    .await;
    click_css(&host, "#create").await;
    wait_text(&host, "#status", &referee.to_string()).await;
    assert_eq!(
        text_of(&host, "[data-color=black] .player-name").await,
        "Newcomer12"
    );
    assert!(
        whole(&host, "[data-color=black] .player-name").await,
        "the name is cut"
    );
    shot(&host, "program-room-desktop").await;
    let _ = host.close().await;

    // A watcher on a phone sets the computer on the waiting program.
    let phone = json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2, "touch": true}}});
    let w = browser_with(&mut driver, 390, 844, phone).await;
    enter_name(&w, &format!("{http}/"), "Wes").await;
    wait_text(&w, "#rooms", "(program)").await;
    let room = js(
        &w,
        "return [...document.querySelectorAll('tr[data-room]')].find(r => r.textContent.includes('(program)')).dataset.room",
    )
    .await;
    let room = room.as_str().unwrap().to_owned();
    w.goto(&format!("{http}/r/{room}?watch=1")).await.unwrap();
    wait_text(&w, "#invite-engine", "Let the computer play it").await;
    click_css(&w, "#invite-engine").await;
    wait_text(&w, "[data-color=white]", "engine").await;
    // The program plays black, then puts a stone on a taken point: it loses
    // and leaves with its game.
    bot.write_all(&[1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 0, 0]);
    bot.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 1, 0x77]);
    let reply = frame(&mut bot).await;
    assert_eq!(reply[..2], [2, 0], "the engine's move");
    bot.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [4, 0, 0]);
    wait_text(&w, "#status", "White wins (black played on a taken point)").await;
    // The watcher still reads who played black.
    wait_text(&w, "[data-color=black]", "left the room").await;
    let black = text_of(&w, "[data-color=black] .player-name").await;
    assert!(black.starts_with("program "), "black was {black:?}");
    shot(&w, "program-gone-phone").await;
    // So does the lobby: the finished room names both players, not a free
    // seat, each after the colour of its stones (a phone shows no header).
    w.goto(&format!("{http}/")).await.unwrap();
    let row = format!("tr[data-room=\"{room}\"]");
    wait_text(&w, &row, "finished").await;
    assert_eq!(
        text_of(&w, &format!("{row} td")).await,
        format!("● {black} / ○ madang (engine)")
    );
    let _ = w.close().await;
}

/// Asks for the engine's view until its verdict says `want`: the server
/// answers one request a second per connection (`busy` past it, and the
/// page offers the button again).
async fn engine_view(c: &fantoccini::Client, want: &str) {
    for _ in 0..40 {
        click_css(c, "#analyse").await;
        for _ in 0..40 {
            let shown = text_of(c, "#analysis").await;
            if shown.contains(want) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            // Refused: the view was emptied; ask again.
            if shown.is_empty() {
                break;
            }
        }
    }
    panic!("the engine view never said {want:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_view_calls_a_forced_reply_forced() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let s = ws::start(Config::default()).await;
    let (mut a, _) = ws::hello(&s.http, "ann").await;
    let room = ws::create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    ws::send(&mut a, json!({"type": "join", "room": room})).await;
    let (mut b, _) = ws::hello(&s.http, "bob").await;
    ws::send(&mut b, json!({"type": "join", "room": room})).await;
    ws::next(&mut b, "you").await;
    let c = browser(&mut driver, 1280, 800).await;
    enter_name(&c, &format!("http://{}/r/{room}?watch=1", s.http), "Cy").await;
    wait_text(&c, "#status", "Black to move").await;
    // On the empty board the engine opens in the centre, unsearched too:
    // nothing is forced there.
    engine_view(&c, "The engine opens at h8").await;
    // Black's h8..k8 is a four that g8 closes: white must block l8.
    let moves = ["h8", "g8", "i8", "a1", "j8", "a2", "k8"];
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        ws::send(mover, json!({"type": "move", "point": m})).await;
        ws::next_where(&mut a, |v| {
            v["type"] == "state" && v["moves"].as_array().is_some_and(|l| l.len() == i + 1)
        })
        .await;
    }
    wait_text(&c, "#status", "White to move · move 8").await;
    engine_view(&c, "White must play l8").await;

    let view = text_of(&c, "#analysis").await;
    assert!(!view.contains("About even"), "{view:?}");
    shot(&c, "engine-view-forced-desktop").await;
    let _ = c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_room_lets_the_page_in_a_moment_later() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    // One watcher's join every 5 s: the page's is turned away at first.
    let slow = Rate {
        per_sec: 0.2,
        burst: 1.0,
    };
    let s = ws::start(Config {
        room_rates: RoomRates {
            watcher_joins: slow,
            ..RoomRates::default()
        },
        ..Config::default()
    })
    .await;
    let (mut a, _) = ws::hello(&s.http, "ann").await;
    let omok = ws::create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person"}),
    )
    .await;
    let (mut b, _) = ws::hello(&s.http, "bob").await;
    let bingo = ws::create(
        &mut b,
        json!({"type": "create", "game": "bingo", "players": 2}),
    )
    .await;
    let c = browser(&mut driver, 1280, 800).await;
    enter_name(&c, &format!("http://{}/", s.http), "Cy").await;
    wait_css(&c, "#create").await;
    for (room, path, status) in [
        (&omok, "r", "Waiting for an opponent"),
        (&bingo, "b", "Waiting for players"),
    ] {
        // Someone watches first and takes the room's one join for now.
        let (mut w, _) = ws::hello(&s.http, "wes").await;
        ws::send(&mut w, json!({"type": "join", "room": room, "play": false})).await;
        ws::next(&mut w, "state").await;
        c.goto(&format!("http://{}/{path}/{room}?watch=1", s.http))
            .await
            .unwrap();
        wait_text(&c, "#toast", "entering in a moment").await;
        // The page comes in by itself once the room has room (5 s).
        wait_text(&c, "#status", status).await;
        wait_text(&c, "#spectators", "2 watching").await;
    }
    let _ = c.close().await;
}

/// With the server at its room cap, the lobby says why no room was made,
/// above the rooms, and stays usable: a waiting room can still be joined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_room_cap_is_said_in_a_lobby_that_stays_usable() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let s = ws::start(Config {
        max_rooms: 1,
        ..Config::default()
    })
    .await;
    let (mut a, _) = ws::hello(&s.http, "ann").await;
    let room = ws::create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person"}),
    )
    .await;
    let c = browser(&mut driver, 1280, 800).await;
    enter_name(&c, &format!("http://{}/", s.http), "Bob").await;
    let join = format!("tr[data-room=\"{room}\"] a.join");
    wait_css(&c, &join).await;
    click_css(&c, "#create").await;
    wait_text(&c, "#lobby-problem", "as many rooms as it allows").await;
    shot(&c, "lobby-room-cap").await;
    click_css(&c, &join).await;
    wait_css(&c, "[data-point=h8]").await;
    wait_text(&c, "#status", "Waiting for an opponent").await;
    let _ = c.close().await;
}
