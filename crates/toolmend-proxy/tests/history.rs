//! The request side (issue #29 §1): tool calls in a request's history whose arguments an
//! upstream would reject (empty, Python literals, a JSON string holding the object) reach the
//! upstream mended, in every API; a clean history reaches it as the same bytes; `--history off`
//! sends it as it came.

mod support;

use serde_json::{Value, json};
use support::*;

const OPENAI_ANSWER: &str = r#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#;
const ANTHROPIC_ANSWER: &str = r#"{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}"#;
const RESPONSES_ANSWER: &str = r#"{"id":"r","object":"response","status":"completed","output":[{"type":"message","id":"o","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}"#;
const OLLAMA_ANSWER: &str =
    r#"{"model":"m","message":{"role":"assistant","content":"ok"},"done":true}"#;

/// The three broken arguments every API's history carries, as text.
const EMPTY: &str = "";
const PYTHON: &str = "{'path': 'a.rs', 'max_lines': 5,}";
const STRINGIFIED: &str = "\"{\\\"dir\\\": \\\"src\\\"}\"";

/// Sends `body` as these exact bytes and returns what the upstream got.
async fn upstream_got(mock: &Mock, base: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let response = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response.bytes().await.unwrap();
    mock.last().body.to_vec()
}

fn chat_history(args: [&str; 3]) -> Value {
    json!({"model": "chat", "tools": openai_tools(), "messages": [
        {"role": "user", "content": "look {around"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": args[0]}},
            {"id": "b", "type": "function", "function": {"name": "read_file", "arguments": args[1]}},
            {"id": "c", "type": "function", "function": {"name": "list_dir", "arguments": args[2]}}]},
        {"role": "tool", "tool_call_id": "a", "content": "{not json"},
        {"role": "tool", "tool_call_id": "b", "content": "fn main() {}"},
        {"role": "tool", "tool_call_id": "c", "content": "a.rs"},
        {"role": "user", "content": "go on"}]})
}

#[tokio::test]
async fn chat_history_is_mended_and_content_untouched() {
    let (mock, base) = start(|_| {}).await;
    mock.script("chat", Script::json(OPENAI_ANSWER));
    let sent = chat_history([EMPTY, PYTHON, STRINGIFIED]);
    let got: Value = serde_json::from_slice(
        &upstream_got(
            &mock,
            &base,
            "/v1/chat/completions",
            sent.to_string().as_bytes(),
        )
        .await,
    )
    .unwrap();
    let calls = &got["messages"][1]["tool_calls"];
    // `read_file` needs `path`: the empty call cannot be saved, so `{}` (as sent it fails the
    // request at many providers).
    assert_eq!(calls[0]["function"]["arguments"], "{}");
    assert_eq!(
        calls[1]["function"]["arguments"],
        r#"{"path":"a.rs","max_lines":5}"#
    );
    assert_eq!(calls[2]["function"]["arguments"], r#"{"dir":"src"}"#);
    for i in [0, 2, 3, 4, 5] {
        assert_eq!(got["messages"][i], sent["messages"][i], "message {i}");
    }
    let metrics = metrics_text(&base).await;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("toolmend_history_repairs_total")
                && l.contains("kind=\"emptied\""))
    );
}

#[tokio::test]
async fn a_clean_history_goes_out_as_the_same_bytes() {
    let (mock, base) = start(|_| {}).await;
    mock.script("chat", Script::json(OPENAI_ANSWER));
    // Schema-invalid but well-formed (`max_lines` a string) is left as it is, spacing and all.
    let clean = chat_history([
        r#"{"path": "a.rs"}"#,
        r#"{ "path":"b.rs", "max_lines": "7" }"#,
        r#"{"dir": "src"}"#,
    ]);
    let bytes = serde_json::to_vec_pretty(&clean).unwrap();
    assert_eq!(
        upstream_got(&mock, &base, "/v1/chat/completions", &bytes).await,
        bytes
    );
}

#[tokio::test]
async fn history_off_sends_the_request_as_it_came() {
    let (mock, base) = start(|c| c.set("history", "off").unwrap()).await;
    mock.script("chat", Script::json(OPENAI_ANSWER));
    let bytes = chat_history([EMPTY, PYTHON, STRINGIFIED])
        .to_string()
        .into_bytes();
    assert_eq!(
        upstream_got(&mock, &base, "/v1/chat/completions", &bytes).await,
        bytes
    );
}

#[tokio::test]
async fn anthropic_tool_use_input_becomes_an_object() {
    let (mock, base) = start(|_| {}).await;
    mock.script("claude", Script::json(ANTHROPIC_ANSWER));
    let sent = json!({"model": "claude", "max_tokens": 64, "tools": anthropic_tools(), "messages": [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading {x"},
            {"type": "tool_use", "id": "a", "name": "read_file", "input": EMPTY},
            {"type": "tool_use", "id": "b", "name": "read_file", "input": PYTHON},
            {"type": "tool_use", "id": "c", "name": "list_dir", "input": {"dir": "src"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]}]});
    let got: Value = serde_json::from_slice(
        &upstream_got(&mock, &base, "/v1/messages", sent.to_string().as_bytes()).await,
    )
    .unwrap();
    let blocks = &got["messages"][1]["content"];
    assert_eq!(blocks[0], sent["messages"][1]["content"][0]);
    assert_eq!(blocks[1]["input"], json!({}));
    assert_eq!(blocks[2]["input"], json!({"path": "a.rs", "max_lines": 5}));
    assert_eq!(blocks[3]["input"], json!({"dir": "src"}));
}

#[tokio::test]
async fn responses_function_call_items_are_mended() {
    let (mock, base) = start(|_| {}).await;
    mock.script("resp", Script::json(RESPONSES_ANSWER));
    let item = |id: &str, name: &str, args: &str| json!({"type": "function_call", "call_id": id, "name": name, "arguments": args});
    let sent = json!({"model": "resp", "tools": responses_tools(), "input": [
        {"role": "user", "content": "look"},
        item("a", "read_file", EMPTY),
        item("b", "read_file", PYTHON),
        item("c", "list_dir", STRINGIFIED),
        {"type": "function_call_output", "call_id": "a", "output": "{x"}]});
    let got: Value = serde_json::from_slice(
        &upstream_got(&mock, &base, "/v1/responses", sent.to_string().as_bytes()).await,
    )
    .unwrap();
    assert_eq!(got["input"][1]["arguments"], "{}");
    assert_eq!(
        got["input"][2]["arguments"],
        r#"{"path":"a.rs","max_lines":5}"#
    );
    assert_eq!(got["input"][3]["arguments"], r#"{"dir":"src"}"#);
    assert_eq!(got["input"][4], sent["input"][4]);
}

#[tokio::test]
async fn ollama_string_arguments_become_objects() {
    let (mock, base) = start(|_| {}).await;
    mock.script("llama", Script::json(OLLAMA_ANSWER));
    let sent = json!({"model": "llama", "stream": false, "tools": openai_tools(), "messages": [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "read_file", "arguments": PYTHON}},
            {"function": {"name": "list_dir", "arguments": {"dir": "src"}}}]},
        {"role": "tool", "content": "x"}]});
    let got: Value = serde_json::from_slice(
        &upstream_got(&mock, &base, "/api/chat", sent.to_string().as_bytes()).await,
    )
    .unwrap();
    let calls = &got["messages"][1]["tool_calls"];
    assert_eq!(
        calls[0]["function"]["arguments"],
        json!({"path": "a.rs", "max_lines": 5})
    );
    assert_eq!(calls[1]["function"]["arguments"], json!({"dir": "src"}));
}
