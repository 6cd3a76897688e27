//! A repaired Chat chunk keeps every key of the chunk that carried the call (issue #24, item 4):
//! `system_fingerprint`, `service_tier`, `usage: null`, the choice's `logprobs`, and any other.

mod support;

use serde_json::{Value, json};
use support::{Script, openai_tools, post_text, sse_body, start};

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-k", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "system_fingerprint": "fp_k", "service_tier": "default", "usage": null,
        "x_vendor": {"a": 1},
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
}

#[tokio::test]
async fn the_repaired_call_chunk_keeps_the_upstream_keys() {
    let (mock, base) = start(|_| {}).await;
    let body = sse_body(&[
        chunk(json!({"role": "assistant", "content": null}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0,
            "function": {"arguments": "{\"file_path\": \"a\", \"max_lines\": \"3\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ]);
    mock.script("keys", Script::Chunks(vec![body.into_bytes()]));
    let request = json!({"model": "keys", "stream": true, "tools": openai_tools(),
        "messages": [{"role": "user", "content": "hi"}]});
    let text = post_text(&base, "/v1/chat/completions", &request).await;
    let with_call: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|c| c.pointer("/choices/0/delta/tool_calls").is_some())
        .collect();
    assert_eq!(with_call.len(), 1, "{text}");
    let written = &with_call[0];
    let arguments = written["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        json!({"path": "a", "max_lines": 3})
    );
    for key in [
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "service_tier",
        "usage",
        "x_vendor",
    ] {
        assert!(written.get(key).is_some(), "{key} missing: {written}");
    }
    assert_eq!(written["usage"], Value::Null);
    assert_eq!(written["x_vendor"], json!({"a": 1}));
    let choice = written["choices"][0].as_object().unwrap();
    let keys: Vec<&str> = choice.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["index", "delta", "logprobs", "finish_reason"],
        "{written}"
    );
}
