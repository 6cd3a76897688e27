//! Request paths never climb above the `--upstream` prefix (issue #25): `..`, escaped dots and
//! slashes, and absolute-form targets, sent over a raw socket (an HTTP client would resolve
//! them itself).

mod support;

use support::{raw_http, start_mock, start_proxy};
use toolmend_proxy::ProxyConfig;

#[tokio::test]
async fn paths_above_the_prefix_are_refused_and_never_forwarded() {
    let (mock, addr) = start_mock().await;
    let mut config = ProxyConfig::new(format!("http://{addr}/tenant-a/v1"));
    config.upstream_api_key = Some("upstream-key".into());
    let base = start_proxy(config).await;
    let proxy = base.trim_start_matches("http://");
    let targets = [
        "/../../admin/keys".to_owned(),
        "/%2e%2e/%2e%2e/admin/keys".to_owned(),
        "/v1/.%2E/.%2e/admin/keys".to_owned(),
        "/v1/models%2f..%2f..%2f..%2fadmin".to_owned(),
        "/..;/..;/admin/keys".to_owned(),
        format!("http://{proxy}/../../admin/keys"),
        format!("http://{proxy}/%2e%2e/%2E%2E/admin/keys"),
    ];
    for target in &targets {
        let request =
            format!("GET {target} HTTP/1.1\r\nhost: {proxy}\r\nconnection: close\r\n\r\n");
        let answer = raw_http(&base, request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{target}: {answer}");
        assert!(
            answer.contains("invalid_request_error"),
            "{target}: {answer}"
        );
    }
    assert!(
        mock.received.lock().unwrap().is_empty(),
        "forwarded: {:?}",
        mock.received.lock().unwrap()
    );
}

#[tokio::test]
async fn dot_segments_within_the_prefix_resolve_before_routing() {
    let (mock, addr) = start_mock().await;
    let base = start_proxy(ProxyConfig::new(format!("http://{addr}/tenant-a/v1"))).await;
    let proxy = base.trim_start_matches("http://");
    let request = format!(
        "GET /v1/x/%2e%2e/models?limit=2 HTTP/1.1\r\nhost: {proxy}\r\nconnection: close\r\n\r\n"
    );
    let answer = raw_http(&base, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(mock.last().path, "/tenant-a/v1/models?limit=2");
}
