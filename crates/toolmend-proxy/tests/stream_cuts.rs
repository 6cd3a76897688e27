//! Cut and failing upstream streams (issue #25): a partial event is dropped (never glued to
//! what follows), held calls go out before an upstream's error event, and no event the
//! upstream never sent is invented.

mod support;

use serde_json::json;
use support::{Script, openai_tools, start};

async fn chat(base: &str, model: &str, stream: bool) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": openai_tools(), "messages": []});
    support::post_json(base, "/v1/chat/completions", &[], &body).await
}

/// A first chunk holding a call with a broken argument (held for repair), as OpenAI streams it.
fn held_call_event() -> String {
    let chunk = json!({"id": "c", "choices": [{"index": 0, "finish_reason": null, "delta": {
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"file_path\": \"a\"}"}}]}}]});
    format!("data: {chunk}\n\n")
}

#[tokio::test]
async fn a_stream_cut_mid_event_drops_the_partial_event() {
    let (mock, base) = start(|_| {}).await;
    let partial = "data: {\"id\": \"c\", \"choices\": [{\"index\": 0,";
    let body = format!("{}{partial}", held_call_event());
    mock.script("cut", Script::Cut(vec![body.into_bytes()]));
    let text = chat(&base, "cut", true).await.text().await.unwrap();
    assert!(
        !text.contains("\"index\": 0,"),
        "partial event forwarded: {text}"
    );
    // Every event the client got is whole JSON, and the held call kept its id and name.
    let joined = support::join_openai(&text);
    assert_eq!(joined.calls[&0].0, "call_1", "{text}");
    assert_eq!(joined.calls[&0].1, "read_file", "{text}");
}

#[tokio::test]
async fn an_unterminated_last_event_is_not_glued_to_what_follows() {
    let (mock, base) = start(|_| {}).await;
    // The upstream ends cleanly, its last event without the blank line.
    let last = "data: {\"id\": \"c\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"x\"}, \"finish_reason\": null}]}";
    let body = format!("{}{last}", held_call_event());
    mock.script("unterminated", Script::Chunks(vec![body.into_bytes()]));
    let text = chat(&base, "unterminated", true)
        .await
        .text()
        .await
        .unwrap();
    let joined = support::join_openai(&text);
    assert_eq!(joined.content, "x", "{text}");
    assert_eq!(joined.calls[&0].1, "read_file", "{text}");
}

#[tokio::test]
async fn held_calls_go_out_before_an_error_event() {
    let (mock, base) = start(|_| {}).await;
    let error = "data: {\"error\": {\"message\": \"overloaded\"}}\n\n";
    let body = format!("{}{error}", held_call_event());
    mock.script("err", Script::Chunks(vec![body.into_bytes()]));
    let text = chat(&base, "err", true).await.text().await.unwrap();
    let call = text.find("call_1").expect("the call");
    let error = text.find("overloaded").expect("the error");
    assert!(call < error, "the call went out after the error: {text}");
}

fn anthropic_request(model: &str) -> serde_json::Value {
    json!({"model": model, "stream": true, "tools": support::anthropic_tools(), "messages": []})
}

fn anthropic_held_call() -> String {
    support::named_sse(
        &[
            json!({"type": "message_start", "message": {"id": "msg_1", "content": []}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": "{\"file_path\": \"a\"}"}}),
        ],
        false,
    )
}

#[tokio::test]
async fn an_anthropic_stream_cut_gets_no_invented_stop() {
    let (mock, base) = start(|_| {}).await;
    mock.script(
        "cut-a",
        Script::Cut(vec![anthropic_held_call().into_bytes()]),
    );
    let text = support::post_text(&base, "/v1/messages", &anthropic_request("cut-a")).await;
    assert!(
        text.contains("toolu_1"),
        "the held call is delivered: {text}"
    );
    assert!(
        !text.contains("content_block_stop"),
        "the upstream never closed the block: {text}"
    );
    // A cut call is never closed, nor repaired: its input goes out as received.
    assert!(text.contains("file_path"), "{text}");
}

#[tokio::test]
async fn an_anthropic_error_event_follows_the_held_call() {
    let (mock, base) = start(|_| {}).await;
    let error = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    let body = format!("{}{error}", anthropic_held_call());
    mock.script("err-a", Script::Chunks(vec![body.into_bytes()]));
    let text = support::post_text(&base, "/v1/messages", &anthropic_request("err-a")).await;
    let call = text.find("toolu_1").expect("the call");
    let error = text.find("overloaded_error").expect("the error");
    assert!(call < error, "the call went out after the error: {text}");
    assert!(!text.contains("content_block_stop"), "{text}");
}
