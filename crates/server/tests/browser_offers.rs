//! Two people in real browsers (a desktop and a phone with a touch
//! screen) use what passes between players: a draw offer declined, then a
//! takeback granted, a draw agreed, and a rematch with colours swapped.
//! Screenshots go to `target/browser-screenshots/`.

mod support;

use fantoccini::Client;
use serde_json::json;
use support::{
    browser, browser_with, click_css, count, enter_name, js, shot, start_driver, start_server,
    wait_css, wait_text,
};

/// Plays `point`: a click on the desktop, two taps on the touch screen
/// (the first only shows the stone).
async fn play(c: &Client, point: &str, taps: usize) {
    for _ in 0..taps {
        click_css(c, &format!("[data-point=\"{point}\"]")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_offer_refuse_take_back_agree_a_draw_and_play_again() {
    let Some(mut driver) = start_driver().await else {
        return;
    };
    let (http, _) = start_server().await;
    let ann = browser(&mut driver, 1280, 800).await;
    enter_name(&ann, &format!("{http}/"), "Ann").await;
    wait_css(&ann, "#create").await;
    click_css(&ann, "#create-color option[value=black]").await;
    click_css(&ann, "#create-clock option[value=move60]").await;
    click_css(&ann, "#create").await;
    wait_text(&ann, "#status", "Waiting for an opponent").await;
    let room_url = ann.current_url().await.unwrap().to_string();
    let phone = json!({"mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3, "touch": true}}});
    let bob = browser_with(&mut driver, 390, 844, phone).await;
    enter_name(&bob, &room_url, "Bob").await;
    wait_text(&bob, "#status", "Black to move").await;

    play(&ann, "h8", 1).await;
    wait_css(&bob, "[data-stone=h8]").await;
    play(&bob, "i9", 2).await;
    wait_css(&ann, "[data-stone=i9]").await;

    // A draw offered and declined: the asker is told, not left guessing.
    click_css(&ann, "#draw").await;
    wait_css(&bob, "#accept-draw").await;
    wait_text(&bob, "#toast", "offers a draw").await;
    shot(&bob, "draw-offered-phone").await;
    click_css(&bob, "#decline").await;
    wait_text(&ann, "#toast", "declined the draw").await;
    wait_text(&ann, "#draw", "Offer draw").await;

    // A takeback asked and granted.
    play(&ann, "j10", 1).await;
    wait_css(&bob, "[data-stone=j10]").await;
    click_css(&ann, "#takeback").await;
    wait_css(&bob, "#accept-takeback").await;
    wait_text(&bob, "#toast", "take back a move").await;
    shot(&bob, "takeback-asked-phone").await;
    // A toast takes the phone's width: it wrapped at half of it (four
    // lines for one sentence over the move list).
    let width = js(
        &bob,
        "const r = document.getElementById('toast').getBoundingClientRect(); \
         return [r.width, r.left, r.right, window.innerWidth]",
    )
    .await;
    let [w, left, right, screen] = [0, 1, 2, 3].map(|i| width[i].as_f64().unwrap());
    assert!(w > screen / 2.0 + 60.0, "the toast is {w} px of {screen}");
    assert!(left >= 0.0 && right <= screen, "the toast is cut: {width}");
    click_css(&bob, "#accept-takeback").await;
    wait_text(&ann, "#status", "Your move · move 3").await;
    assert_eq!(count(&ann, "[data-stone=j10]").await, 0);

    // A draw agreed; then a rematch, colours swapped.
    click_css(&ann, "#draw").await;
    click_css(&bob, "#accept-draw").await;
    wait_text(&ann, "#status", "Draw (agreed).").await;
    wait_text(&bob, "#status", "Draw (agreed).").await;
    // The toast that announced the offer goes once it is answered (it
    // stayed over the next game, announcing an offer long gone).
    let announced = js(
        &bob,
        "return document.getElementById('toast').classList.contains('show')",
    )
    .await;
    assert_eq!(
        announced,
        json!(false),
        "the answered offer is still announced"
    );
    shot(&ann, "draw-agreed-desktop").await;
    click_css(&ann, "#rematch").await;
    wait_text(&bob, "#rematch", "Accept rematch").await;
    click_css(&bob, "#rematch").await;
    wait_text(&bob, "#status", "Your move · move 1").await;
    wait_text(&ann, "#status", "Black to move").await;
    shot(&bob, "rematch-phone").await;
    shot(&ann, "rematch-desktop").await;
    for c in [ann, bob] {
        c.close().await.unwrap();
    }
}
