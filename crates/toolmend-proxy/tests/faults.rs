//! Faults: nothing is lost, the proxy's own errors are in the client API's error shape.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{Script, openai_tools, post_json, post_text, start, start_proxy, start_raw_upstream};
use toolmend_proxy::ProxyConfig;

async fn chat(base: &str, model: &str) -> reqwest::Response {
    let body = json!({"model": model, "tools": openai_tools(), "messages": []});
    post_json(base, "/v1/chat/completions", &[], &body).await
}

#[tokio::test]
async fn upstream_down_is_a_502_in_each_api_shape() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base = start_proxy(ProxyConfig::new(format!("http://127.0.0.1:{port}"))).await;
    let response = chat(&base, "m").await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "upstream_unreachable");
    let response = post_json(&base, "/v1/messages", &[], &json!({"model": "m"})).await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    let body = json!({"model": "m", "input": "hi"});
    let response = post_json(&base, "/v1/responses", &[], &body).await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "upstream_unreachable");
    for path in ["/api/chat", "/api/tags"] {
        let response = post_json(&base, path, &[], &json!({"model": "m"})).await;
        assert_eq!(response.status(), 502);
        // Ollama's shape: the message is the `error` string.
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("unreachable"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn slow_upstream_times_out() {
    let (mock, base) = start(|c| c.limits.read_timeout = Duration::from_millis(200)).await;
    mock.script("slow", Script::Hang);
    let response = chat(&base, "slow").await;
    assert_eq!(response.status(), 504);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "upstream_timeout");
}

#[tokio::test]
async fn upstream_errors_and_garbage_pass_through() {
    let (mock, base) = start(|_| {}).await;
    let error = r#"{"error":{"message":"model overloaded","type":"server_error"}}"#;
    mock.script("e500", Script::Body(500, "application/json", error.into()));
    let response = chat(&base, "e500").await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), error);

    mock.script("garbage", Script::json("<html>oops"));
    let response = chat(&base, "garbage").await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "<html>oops");
}

#[tokio::test]
async fn stream_cut_midway_closes_cleanly_with_what_arrived() {
    let (mock, base) = start(|_| {}).await;
    let first = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\": \\\"a\\\"\"}}]},\"finish_reason\":null}]}\n\n";
    mock.script("cut", Script::Cut(vec![first.as_bytes().to_vec()]));
    let response = chat(&base, "cut").await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("the stream ends cleanly");
    let joined = support::join_openai(&text);
    assert!(!joined.done, "{text}");
    assert!(joined.calls.contains_key(&0), "{text}");
    // The cut call is still delivered, as received (the harness sees the cut).
    assert_eq!(joined.calls[&0].1, "read_file");
    assert_eq!(joined.calls[&0].2, "{\"path\": \"a\"");
}

#[tokio::test]
async fn request_over_the_limit_is_413() {
    let (_mock, base) = start(|c| c.limits.max_request_bytes = 1000).await;
    let big = "x".repeat(2000);
    let body = json!({"model": "m", "messages": [{"role": "user", "content": big}]});
    let response = post_json(&base, "/v1/chat/completions", &[], &body).await;
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "request_too_large");
}

#[tokio::test]
async fn response_over_the_limit_passes_unrepaired() {
    let (mock, base) = start(|c| c.limits.max_response_bytes = 64).await;
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "read_file",
        "arguments": "{\"file_path\": \"a\"}"}}]}, "finish_reason": "tool_calls"}]})
    .to_string();
    mock.script("big", Script::json(body.clone()));
    assert_eq!(chat(&base, "big").await.text().await.unwrap(), body);
}

#[tokio::test]
async fn client_disconnect_mid_stream_drops_the_upstream() {
    let (mock, base) = start(|_| {}).await;
    let chunk = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n";
    mock.script(
        "long",
        Script::Chunks(vec![chunk.as_bytes().to_vec(); 5000]),
    );
    let mut response = chat(&base, "long").await;
    assert!(response.chunk().await.unwrap().is_some());
    assert_eq!(
        mock.live_streams.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    drop(response);
    // The proxy drops its upstream stream (no task left behind) and serves the next request.
    let mut waited = 0;
    while mock.live_streams.load(std::sync::atomic::Ordering::SeqCst) != 0 {
        assert!(waited < 200, "the upstream stream was never dropped");
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn other_paths_health_metrics_and_keys() {
    let (mock, base) = start(|c| {
        c.api_key = Some("proxy-key".into());
        c.upstream_api_key = Some("upstream-key".into());
    })
    .await;
    let client = reqwest::Client::new();
    let denied = client
        .get(format!("{base}/v1/models"))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), 401);
    let models = client
        .get(format!("{base}/v1/models?limit=2"))
        .bearer_auth("proxy-key")
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    assert_eq!(models.text().await.unwrap(), r#"{"echo":"/v1/models"}"#);
    let received = mock.last();
    assert_eq!(received.path, "/v1/models?limit=2");
    assert_eq!(received.headers["authorization"], "Bearer upstream-key");

    assert_eq!(
        reqwest::get(format!("{base}/healthz"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "ok"
    );
    let metrics = reqwest::get(format!("{base}/metrics")).await.unwrap();
    assert_eq!(metrics.status(), 200);
}

#[tokio::test]
async fn requests_over_the_concurrency_limit_get_503() {
    let (mock, base) = start(|c| {
        c.limits.max_concurrent_requests = 1;
        c.limits.read_timeout = Duration::from_millis(800);
    })
    .await;
    mock.script("slow", Script::Hang);
    let first = tokio::spawn({
        let base = base.clone();
        async move { chat(&base, "slow").await.status() }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let response = post_json(&base, "/v1/messages", &[], &json!({"model": "m"})).await;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "overloaded_error");
    assert_eq!(first.await.unwrap(), 504);
}

#[tokio::test]
async fn call_over_the_argument_buffer_is_forwarded_as_received() {
    let (mock, base) = start(|c| c.limits.max_call_arguments_bytes = 16).await;
    let chunk = |arguments: &str, finish: Option<&str>| {
        json!({"id": "c", "choices": [{"index": 0, "finish_reason": finish, "delta": {
            "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": arguments}}]}}]})
    };
    let pieces = ["{\"file_path\": ", "\"a-long-file-name.txt\"", "}"];
    let mut chunks: Vec<Value> = pieces.iter().map(|p| chunk(p, None)).collect();
    chunks.push(
        json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    );
    mock.script(
        "big",
        Script::Chunks(vec![support::sse_body(&chunks).into_bytes()]),
    );
    let text = chat_stream(&base, "big").await;
    let joined = support::join_openai(&text);
    // Too large to hold: not repaired, nothing lost.
    assert_eq!(joined.calls[&0].2, pieces.concat(), "{text}");
    assert_eq!(joined.finish, ["tool_calls"]);
}

#[tokio::test]
async fn responses_call_over_the_buffer_is_forwarded_as_received() {
    let (mock, base) = start(|c| c.limits.max_call_arguments_bytes = 300).await;
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read_file",
        "arguments": ""});
    let pieces = ["{\"file_path\": ", "\"a-long-file-name.txt\"", "}"];
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": 0,
        "item": item}),
    ];
    for piece in pieces {
        events.push(
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 0, "delta": piece}),
        );
    }
    let mut done = item.clone();
    done["arguments"] = json!(pieces.concat());
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": done}));
    events.push(json!({"type": "response.completed", "response": {"output": [done]}}));
    let body = support::named_sse(&events, true);
    mock.script("big", Script::Chunks(vec![body.clone().into_bytes()]));
    let request = json!({"model": "big", "stream": true, "tools": support::responses_tools(),
        "input": "hi"});
    let text = post_text(&base, "/v1/responses", &request).await;
    // Too large to hold: not repaired, nothing lost, the events as received.
    assert_eq!(text, body);
}

async fn chat_stream(base: &str, model: &str) -> String {
    let body = json!({"model": model, "stream": true, "tools": openai_tools(), "messages": []});
    post_text(base, "/v1/chat/completions", &body).await
}

#[tokio::test]
async fn odd_stream_shapes_pass_through() {
    let (mock, base) = start(|c| c.recover = toolmend::RecoverMode::All).await;
    let odd = "data: {\"choices\": [1, \"x\", {\"delta\": \"str\"}, {\"index\": 0, \"delta\": {\"tool_calls\": 7}}]}\n\n\
        data: {\"error\": {\"message\": \"upstream broke\"}}\n\n\
        data: not json\n\n\
        event: mystery\ndata: {\"type\": \"mystery\"}\n\n";
    mock.script("odd", Script::Chunks(vec![odd.as_bytes().to_vec()]));
    let text = chat_stream(&base, "odd").await;
    assert!(text.contains("upstream broke"), "{text}");
    assert!(text.contains("data: not json"), "{text}");
    assert!(text.contains("event: mystery"), "{text}");

    let odd = "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 5, \"delta\": \"x\"}\n\n\
        event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"tool_use\", \"name\": 3}}\n\n\
        event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": 1}\n\n\
        event: message_delta\ndata: {\"type\": \"message_delta\", \"delta\": \"x\"}\n\n\
        event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\"}}\n\n";
    mock.script("odd-a", Script::Chunks(vec![odd.as_bytes().to_vec()]));
    let request = json!({"model": "odd-a", "stream": true, "tools": support::anthropic_tools(),
        "messages": []});
    let text = post_text(&base, "/v1/messages", &request).await;
    assert!(text.contains("overloaded_error"), "{text}");
    assert!(text.contains("\"index\": 5"), "{text}");
}

#[tokio::test]
async fn an_upstream_redirect_goes_back_to_the_client_unfollowed() {
    // The target would answer if followed: the proxy must not go there itself.
    let (mock, target) = start(|_| {}).await;
    mock.script("m", Script::json(r#"{"followed": true}"#));
    let answer: &'static [u8] = Box::leak(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}/v1/chat/completions\r\n\
             content-length: 0\r\n\r\n"
        )
        .into_bytes()
        .into_boxed_slice(),
    );
    let upstream = start_raw_upstream(answer).await;
    let base = start_proxy(ProxyConfig::new(format!("http://{upstream}"))).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let body = json!({"model": "m", "tools": openai_tools(), "messages": []});
    for path in ["/v1/chat/completions", "/v1/models"] {
        let response = client
            .post(format!("{base}{path}"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 307, "{path}");
        assert_eq!(
            response.headers()["location"],
            format!("{target}/v1/chat/completions").as_str()
        );
    }
    assert!(
        mock.received.lock().unwrap().is_empty(),
        "the redirect was followed"
    );
}
