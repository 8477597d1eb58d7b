//! The yard in a real browser: headless Chromium driven over WebDriver.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs
//! them). Without chromedriver the test says so and passes, unless `CI` is
//! set, where it fails. Screenshots go to `target/browser-screenshots/`.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Driver {
    child: Child,
    url: String,
    profiles: Vec<PathBuf>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in &self.profiles {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

fn find_chromedriver() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMEDRIVER") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromedriver"))
            .find(|p| p.is_file())
    })
}

async fn start_driver() -> Option<Driver> {
    let Some(path) = find_chromedriver() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromedriver not found, and CI is set: the browser tests must run (install chromium and chromium-driver)"
        );
        eprintln!("SKIPPED: browser tests need chromedriver (Debian: chromium chromium-driver)");
        return None;
    };
    let port = StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(path)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    // Ready when it accepts connections.
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Some(Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
        profiles: Vec::new(),
    })
}

async fn browser(driver: &mut Driver, width: u32, height: u32) -> Client {
    let profile =
        std::env::temp_dir().join(format!("madang-chromium-{}", server::rooms::random_id()));
    driver.profiles.push(profile.clone());
    let args = [
        "--headless".to_owned(),
        "--no-sandbox".to_owned(),
        "--disable-gpu".to_owned(),
        "--disable-quic".to_owned(),
        "--no-first-run".to_owned(),
        "--disable-background-networking".to_owned(),
        "--disable-component-update".to_owned(),
        "--disable-sync".to_owned(),
        "--disable-dev-shm-usage".to_owned(),
        format!("--window-size={width},{height}"),
        format!("--user-data-dir={}", profile.display()),
    ];
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), json!({ "args": args }));
    ClientBuilder::native()
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a browser session")
}

fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    std::fs::write(screenshots().join(format!("{name}.png")), png).unwrap();
}

async fn wait_css(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("waiting for {css}: {e}"))
}

/// Clicks the element, finding it again if the page redrew it meanwhile.
async fn click_css(c: &Client, css: &str) {
    for _ in 0..100 {
        if let Ok(e) = c.find(Locator::Css(css)).await
            && e.click().await.is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("could not click {css}");
}

async fn wait_text(c: &Client, css: &str, want: &str) {
    for _ in 0..300 {
        if let Ok(e) = c.find(Locator::Css(css)).await
            && let Ok(t) = e.text().await
            && t.contains(want)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{css} never showed {want:?}");
}

async fn enter_name(c: &Client, url: &str, name: &str) {
    c.goto(url).await.unwrap();
    let input = wait_css(c, "#name-input").await;
    input.send_keys(name).await.unwrap();
    click_css(c, "#name-save").await;
}

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

async fn start_server() -> (String, SocketAddr) {
    let database = std::env::temp_dir().join(format!(
        "madang-web-browser-{}.db",
        server::rooms::random_id()
    ));
    let server = Server::bind(Config {
        database: database.display().to_string(),
        ..Config::default()
    })
    .await
    .unwrap();
    let http = format!("http://{}", server.http_addr().unwrap());
    let referee = server.referee_addr();
    tokio::spawn(server.run(std::future::pending()));
    (http, referee)
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
