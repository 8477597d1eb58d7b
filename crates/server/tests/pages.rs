//! The HTTP side a person meets by typing or pasting a link.

mod support;

use server::Config;
use support::ws::{http_get, start};

#[tokio::test]
async fn a_mistyped_link_gets_a_404_that_says_where_the_lobby_is() {
    let s = start(Config::default()).await;
    for path in ["/nonsense", "/r/", "/games/x/y", "/r/abc/def"] {
        let response = http_get(&format!("http://{}{path}", s.http)).await;
        assert!(response.starts_with("HTTP/1.1 404"), "{path}: {response}");
        assert!(response.contains("the lobby is at /"), "{path}: {response}");
    }
}
