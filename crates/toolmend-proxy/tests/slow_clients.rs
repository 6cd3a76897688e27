//! Slow and greedy clients (issue #25), on raw sockets: a trickled head or body is cut off,
//! a client still sending holds no slot among the requests in flight, and one address can be
//! held to a number of connections.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{post_json, raw_http, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Opens a connection to the proxy and sends `bytes`, leaving it open.
async fn open_with(base: &str, bytes: &[u8]) -> tokio::net::TcpStream {
    let mut stream = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    stream.write_all(bytes).await.unwrap();
    stream
}

/// Reads until the proxy closes the connection (10 s at most); `None` if it never does.
async fn read_until_closed(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .ok()?
        .ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[tokio::test]
async fn a_trickled_head_is_cut_off() {
    let (_mock, base) = start(|c| c.limits.header_read_timeout = Duration::from_millis(300)).await;
    let mut stream = open_with(&base, b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n").await;
    assert!(
        read_until_closed(&mut stream).await.is_some(),
        "a half-sent head kept its connection"
    );
}

#[tokio::test]
async fn a_trickled_body_gets_a_408() {
    let (mock, base) = start(|c| c.limits.body_read_timeout = Duration::from_millis(300)).await;
    let mut stream = open_with(
        &base,
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    )
    .await;
    let answer = read_until_closed(&mut stream).await.expect("an answer");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    assert!(mock.received.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_client_still_sending_holds_no_slot() {
    let (_mock, base) = start(|c| c.limits.max_concurrent_requests = 1).await;
    let _slow = open_with(
        &base,
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{",
    )
    .await;
    let _slow_other = open_with(
        &base,
        b"POST /v1/models HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{",
    )
    .await;
    // Let the proxy read both heads and start on the bodies.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let response = post_json(&base, "/v1/chat/completions", &[], &json!({"model": "m"})).await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn one_address_gets_at_most_its_connections() {
    let (_mock, base) = start(|c| c.limits.max_connections_per_peer = 2).await;
    let _a = open_with(&base, b"GET /healthz HTTP/1.1\r\n").await;
    let _b = open_with(&base, b"GET /healthz HTTP/1.1\r\n").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = raw_http(&base, b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop((_a, _b));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let answer = raw_http(
        &base,
        b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
