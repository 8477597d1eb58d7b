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
    browser, click_css, enter_name, shot, start_driver, start_server, wait_css, wait_text,
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
    let room_url = ann.current_url().await.unwrap().to_string();
    assert!(room_url.contains("/r/"));

    // Bob joins by the link on a phone-sized window; Carol watches.
    let bob = browser(&mut driver, 390, 844).await;
    enter_name(&bob, &room_url, "Bob").await;
    wait_text(&bob, "#status", "Black to move").await;
    let carol = browser(&mut driver, 1024, 768).await;
    enter_name(&carol, &format!("{room_url}?watch=1"), "Carol").await;
    wait_text(&carol, "#spectators", "1 watching").await;
    let names = carol
        .execute(
            "return [...document.querySelectorAll('.player-name')].map(e => e.textContent)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(names, json!([evil, "Bob"]));
    assert!(
        carol
            .find_all(Locator::Css("main script"))
            .await
            .unwrap()
            .is_empty()
    );

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
    assert!(
        ann.find_all(Locator::Css("[data-stone=\"h8\"]"))
            .await
            .unwrap()
            .is_empty()
    );
    click_point(&ann, "o15").await;
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

    // White completes five; everyone sees the line.
    click_point(&bob, "a5").await;
    wait_text(&ann, "#status", "White wins").await;
    wait_text(&carol, "#status", "White wins (five)").await;
    assert_eq!(
        carol
            .find_all(Locator::Css("[data-five]"))
            .await
            .unwrap()
            .len(),
        5
    );
    shot(&carol, "five-spectator").await;
    shot(&bob, "won-phone").await;

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
    wait_text(&ann, "#status", "White wins (occupied)").await;
    shot(&ann, "bot-game-desktop").await;

    for c in [ann, bob, carol] {
        let _ = c.close().await;
    }
}
