//! A strict-mode tool (every property required, `additionalProperties: false`) whose call omits
//! its optional members and renames another is repaired, and so no longer rejected under
//! `--invalid reject` (issue #24, item 2).

mod support;

use serde_json::{Value, json};
use support::{Script, join_openai, post_json, repairs, sse_body, start};
use toolmend_proxy::InvalidPolicy;

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "read_file", "strict": true, "parameters": {
        "type": "object", "additionalProperties": false,
        "required": ["path", "limit", "encoding"], "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "default": 100},
            "encoding": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}}])
}

const SENT: &str = r#"{"file_path": "/a"}"#;

fn request(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "tools": tools(),
        "messages": [{"role": "user", "content": "read /a"}]})
}

fn arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn an_omitted_optional_and_a_rename_are_repaired_not_rejected() {
    let (mock, base) = start(|c| c.invalid = InvalidPolicy::Reject).await;
    let call = json!({"id": "call_1", "type": "function",
        "function": {"name": "read_file", "arguments": SENT}});
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [call]}}]});
    mock.script("body", Script::json(body.to_string()));
    let response = post_json(&base, "/v1/chat/completions", &[], &request("body", false)).await;
    let header = repairs(&response);
    assert!(header.contains("strict_default_filled=1"), "{header}");
    assert!(header.contains("strict_null_filled=1"), "{header}");
    assert!(!header.contains("invalid"), "{header}");
    let out: Value = response.json().await.unwrap();
    let message = &out["choices"][0]["message"];
    assert_eq!(message["content"], Value::Null, "{out}");
    assert_eq!(out["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        arguments(
            message["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
        ),
        json!({"path": "/a", "limit": 100, "encoding": null})
    );

    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let stream = sse_body(&[
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_1", "type": "function", "function": {"name": "read_file",
            "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": SENT}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ]);
    mock.script("stream", Script::Chunks(vec![stream.into_bytes()]));
    let response = post_json(&base, "/v1/chat/completions", &[], &request("stream", true)).await;
    let joined = join_openai(&response.text().await.unwrap());
    assert_eq!(joined.content, "");
    assert_eq!(joined.finish, ["tool_calls"]);
    assert_eq!(
        arguments(&joined.calls[&0].2),
        json!({"path": "/a", "limit": 100, "encoding": null})
    );
}
