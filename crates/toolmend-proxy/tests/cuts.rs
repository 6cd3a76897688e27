//! Cut upstream bodies on the repair routes (issue #25): the client is never left hanging,
//! and a 502 names no upstream address.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{openai_tools, start_proxy, start_raw_upstream};
use toolmend_proxy::ProxyConfig;

async fn chat(base: &str, model: &str, stream: bool) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": openai_tools(), "messages": []});
    support::post_json(base, "/v1/chat/completions", &[], &body).await
}

#[tokio::test]
async fn a_cut_body_on_a_repair_route_does_not_hang_the_client() {
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"id\": \"x\",";
    let addr = start_raw_upstream(head).await;
    let base = start_proxy(ProxyConfig::new(format!("http://{addr}"))).await;
    let body = json!({"model": "m", "tools": openai_tools(), "messages": []});
    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
        let response = reqwest::Client::new()
            .post(format!("{base}/v1/chat/completions"))
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        response.bytes().await.map(|body| (status, body))
    })
    .await
    .expect("the proxy ends the client's response");
    // What arrived went out, then the connection was closed: the client sees the cut (at the
    // head or in the body), or a 502; never a complete answer.
    if let Ok((status, body)) = outcome {
        assert_eq!(status, 502, "{body:?}");
    }
}

#[tokio::test]
async fn a_body_cut_before_any_byte_is_a_502() {
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    let addr = start_raw_upstream(head).await;
    let base = start_proxy(ProxyConfig::new(format!("http://{addr}"))).await;
    let response = tokio::time::timeout(Duration::from_secs(10), chat(&base, "m", false))
        .await
        .expect("an answer");
    assert_eq!(response.status(), 502);
    let body = response.text().await.unwrap();
    assert!(body.contains("upstream_unreachable"), "{body}");
    assert!(
        !body.contains(&addr.to_string()),
        "the upstream's address leaked: {body}"
    );
}
