//! Keys (issue #25): with an upstream key only `--allow-paths` are forwarded; neither client
//! key header leaks upstream; the upstream key goes in the header the target API reads;
//! `Bearer` in any case; `/metrics` behind the client key on request.

mod support;

use support::start;

#[tokio::test]
async fn with_an_upstream_key_only_allowed_paths_are_forwarded() {
    let (mock, base) = start(|c| c.upstream_api_key = Some("upstream-key".into())).await;
    let client = reqwest::Client::new();
    let denied = client
        .get(format!("{base}/admin/keys"))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), 403);
    let body = denied.text().await.unwrap();
    assert!(body.contains("permission_error"), "{body}");
    assert!(mock.received.lock().unwrap().is_empty());
    let models = client
        .get(format!("{base}/v1/models"))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    let model = client
        .get(format!("{base}/v1/models/org/name"))
        .send()
        .await
        .unwrap();
    assert_eq!(model.status(), 200);

    let (mock, base) = start(|c| {
        c.upstream_api_key = Some("upstream-key".into());
        c.allow_paths = vec!["*".into()];
    })
    .await;
    let open = client
        .get(format!("{base}/admin/keys"))
        .send()
        .await
        .unwrap();
    assert_eq!(open.status(), 200);
    assert_eq!(mock.last().path, "/admin/keys");

    // Without an upstream key the client's own key goes on: every path is forwarded.
    let (mock, base) = start(|_| {}).await;
    let own = client
        .get(format!("{base}/admin/keys"))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    assert_eq!(mock.last().path, "/admin/keys");
}

#[tokio::test]
async fn client_keys_never_leak_upstream() {
    let (mock, base) = start(|c| {
        c.api_key = Some("proxy-key".into());
        c.upstream_api_key = Some("upstream-key".into());
    })
    .await;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{base}/v1/models"))
        .header("authorization", "bearer proxy-key")
        .header("x-api-key", "proxy-key")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "Bearer in any case");
    let received = mock.last();
    assert_eq!(received.headers["authorization"], "Bearer upstream-key");
    assert!(received.headers.get("x-api-key").is_none());

    // The Anthropic route reads x-api-key: the upstream key goes there, and no client
    // Authorization rides along.
    let response = client
        .post(format!("{base}/v1/messages"))
        .header("x-api-key", "proxy-key")
        .header("authorization", "Bearer sk-someone-else")
        .json(&serde_json::json!({"model": "m", "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let received = mock.last();
    assert_eq!(received.headers["x-api-key"], "upstream-key");
    assert!(received.headers.get("authorization").is_none());

    // Without an upstream key, the proxy key in both headers is removed from both.
    let (mock, base) = start(|c| c.api_key = Some("proxy-key".into())).await;
    client
        .get(format!("{base}/v1/models"))
        .header("authorization", "Bearer proxy-key")
        .header("x-api-key", "proxy-key")
        .send()
        .await
        .unwrap();
    let received = mock.last();
    assert!(received.headers.get("x-api-key").is_none());
    assert!(received.headers.get("authorization").is_none());
}

#[tokio::test]
async fn metrics_can_require_the_client_key() {
    let (_mock, base) = start(|c| {
        c.api_key = Some("proxy-key".into());
        c.metrics_need_key = true;
    })
    .await;
    let client = reqwest::Client::new();
    let denied = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(denied.status(), 401);
    let allowed = client
        .get(format!("{base}/metrics"))
        .bearer_auth("proxy-key")
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), 200);
}
