//! Helpers of the real-browser tests: chromedriver, browser sessions,
//! screenshots, waiting for the page, and a server on loopback.
//!
//! Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

pub mod ws;

use std::net::{SocketAddr, TcpListener as StdListener};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use server::Config;
use tokio::net::TcpStream;

/// A running chromedriver and the browser profiles it made.
pub struct Driver {
    child: Child,
    url: String,
    profiles: Vec<PathBuf>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The whole process group: a test that failed before closing its
        // sessions would otherwise leave their browsers running.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in &self.profiles {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

pub fn find_chromedriver() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMEDRIVER") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromedriver"))
            .find(|p| p.is_file())
    })
}

pub async fn start_driver() -> Option<Driver> {
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
        .process_group(0)
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

pub async fn browser(driver: &mut Driver, width: u32, height: u32) -> Client {
    browser_with(driver, width, height, json!({})).await
}

/// A browser whose `goog:chromeOptions` also hold `options` (for example a
/// phone's touch screen through `mobileEmulation`).
pub async fn browser_with(
    driver: &mut Driver,
    width: u32,
    height: u32,
    options: serde_json::Value,
) -> Client {
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
    let mut chrome = json!({ "args": args });
    if let (Some(chrome), Some(extra)) = (chrome.as_object_mut(), options.as_object()) {
        chrome.extend(extra.clone());
    }
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), chrome);
    ClientBuilder::native()
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a browser session")
}

pub fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    std::fs::write(screenshots().join(format!("{name}.png")), png).unwrap();
}

pub async fn wait_css(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("waiting for {css}: {e}"))
}

/// Clicks the element, finding it again if the page redrew it meanwhile.
pub async fn click_css(c: &Client, css: &str) {
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

pub async fn wait_text(c: &Client, css: &str, want: &str) {
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

/// Runs `script` (no arguments) in the page; returns its value.
pub async fn js(c: &Client, script: &str) -> serde_json::Value {
    c.execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("{script}: {e}"))
}

/// The text of the element `css`.
pub async fn text_of(c: &Client, css: &str) -> String {
    let e = c.find(Locator::Css(css)).await.unwrap();
    e.text().await.unwrap()
}

/// How many elements match `css`.
pub async fn count(c: &Client, css: &str) -> usize {
    c.find_all(Locator::Css(css)).await.unwrap().len()
}

/// Waits until the element's text is no longer `old`.
pub async fn wait_text_not(c: &Client, css: &str, old: &str) {
    for _ in 0..300 {
        if let Ok(e) = c.find(Locator::Css(css)).await
            && let Ok(t) = e.text().await
            && t != old
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{css} stayed {old:?}");
}

pub async fn enter_name(c: &Client, url: &str, name: &str) {
    c.goto(url).await.unwrap();
    let input = wait_css(c, "#name-input").await;
    input.send_keys(name).await.unwrap();
    click_css(c, "#name-save").await;
}

pub async fn start_server() -> (String, SocketAddr) {
    let running = ws::start(Config::default()).await;
    (format!("http://{}", running.http), running.referee)
}
