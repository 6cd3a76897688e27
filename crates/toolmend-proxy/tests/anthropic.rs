//! Anthropic Messages through a real proxy socket in front of a scripted mock upstream.

mod support;

use serde_json::{Value, json};
use support::{Script, anthropic_tools, post_json, repairs, start};
use toolmend_proxy::REPAIRS_HEADER;

fn message(content: Value, stop: &str) -> String {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 3, "output_tokens": 4}})
    .to_string()
}

async fn post(base: &str, model: &str, stream: bool) -> reqwest::Response {
    let body = json!({"model": model, "max_tokens": 100, "stream": stream,
        "tools": anthropic_tools(), "messages": [{"role": "user", "content": "hi"}]});
    let headers = [
        ("x-api-key", "sk-ant-client"),
        ("anthropic-version", "2023-06-01"),
    ];
    post_json(base, "/v1/messages", &headers, &body).await
}

#[tokio::test]
async fn valid_message_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = message(
        json!([{"type": "text", "text": "I'll read it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}]),
        "tool_use",
    );
    mock.script("valid", Script::json(body.clone()));
    let response = post(&base, "valid", false).await;
    assert!(response.headers().get(REPAIRS_HEADER).is_none());
    assert_eq!(response.text().await.unwrap(), body);
    assert_eq!(mock.last().headers["x-api-key"], "sk-ant-client");
}

#[tokio::test]
async fn tool_use_input_is_repaired_and_leaks_recovered() {
    let (mock, base) = start(|_| {}).await;
    let body = message(
        json!([{"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                "input": {"file_path": "a", "max_lines": "5"}, "cache_hint": 1}]),
        "tool_use",
    );
    mock.script("broken", Script::json(body));
    let response = post(&base, "broken", false).await;
    assert!(repairs(&response).contains("field_renamed=1"));
    let out: Value = response.json().await.unwrap();
    let block = &out["content"][1];
    assert_eq!(block["input"], json!({"path": "a", "max_lines": 5}));
    assert_eq!(block["id"], "toolu_1");
    assert_eq!(block["cache_hint"], 1);

    let leak = message(
        json!([{"type": "text", "text":
            "Reading.\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}\n</tool_call>"}]),
        "end_turn",
    );
    mock.script("leak", Script::json(leak));
    let out: Value = post(&base, "leak", false).await.json().await.unwrap();
    assert_eq!(out["stop_reason"], "tool_use");
    assert_eq!(
        out["content"][0]["text"].as_str().unwrap().trim(),
        "Reading."
    );
    assert_eq!(out["content"][1]["type"], "tool_use");
    assert_eq!(out["content"][1]["name"], "list_dir");
    assert_eq!(out["content"][1]["input"], json!({"dir": "/"}));
}

fn event(value: Value) -> String {
    format!(
        "event: {}\ndata: {value}\n\n",
        value["type"].as_str().unwrap()
    )
}

/// The client-visible blocks of an Anthropic stream: per index, the block start and the
/// joined text or input; plus the stop reason and the other event types in order.
fn join(body: &str) -> (Vec<(Value, String)>, Option<String>, Vec<String>) {
    let mut blocks: Vec<(Value, String)> = Vec::new();
    let mut stop = None;
    let mut kinds = Vec::new();
    for chunk in body.split("\n\n").filter(|c| !c.trim().is_empty()) {
        let data = chunk
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap();
        let value: Value = serde_json::from_str(data).unwrap();
        let kind = value["type"].as_str().unwrap().to_owned();
        match kind.as_str() {
            "content_block_start" => {
                assert_eq!(value["index"].as_u64().unwrap() as usize, blocks.len());
                blocks.push((value["content_block"].clone(), String::new()));
            }
            "content_block_delta" => {
                let i = value["index"].as_u64().unwrap() as usize;
                let d = &value["delta"];
                for key in ["text", "partial_json", "thinking"] {
                    if let Some(t) = d[key].as_str() {
                        blocks[i].1.push_str(t);
                    }
                }
            }
            "message_delta" => stop = value["delta"]["stop_reason"].as_str().map(str::to_owned),
            _ => {}
        }
        kinds.push(kind);
    }
    (blocks, stop, kinds)
}

#[tokio::test]
async fn streamed_tool_use_is_repaired_and_leak_added() {
    // `content` recovers only from turns without native calls; `all` also beside them.
    let (mock, base) = start(|c| c.recover = toolmend::RecoverMode::All).await;
    let mut body = event(json!({"type": "message_start", "message": {"id": "msg_1",
        "type": "message", "role": "assistant", "content": [], "model": "m"}}));
    body += &event(json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}}));
    let text = "Looking.\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}\n</tool_call>";
    for piece in text.as_bytes().chunks(9) {
        body += &event(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": String::from_utf8_lossy(piece)}}));
    }
    body += &event(json!({"type": "content_block_stop", "index": 0}));
    body += &event(json!({"type": "ping"}));
    body += &read_file_and_stop(
        "toolu_9",
        &["{\"file_path\"", ": \"x\", \"max_lines\"", ": \"7\"}"],
    );
    let pieces = support::cut_at(body.as_bytes(), &[3, 50, 51, 200, 777, 900, 1001, 1500]);
    mock.script("s", Script::Chunks(pieces));
    let response = post(&base, "s", true).await;
    let text = response.text().await.unwrap();
    let (blocks, stop, kinds) = join(&text);
    assert_eq!(blocks.len(), 3, "{text}");
    assert_eq!(blocks[0].1.trim(), "Looking.");
    assert_eq!(blocks[1].0["name"], "read_file");
    assert_eq!(blocks[1].0["id"], "toolu_9");
    let input: Value = serde_json::from_str(&blocks[1].1).unwrap();
    assert_eq!(input, json!({"path": "x", "max_lines": 7}));
    assert_eq!(blocks[2].0["name"], "list_dir");
    assert_eq!(
        serde_json::from_str::<Value>(&blocks[2].1).unwrap(),
        json!({"dir": "/"})
    );
    assert_eq!(stop.as_deref(), Some("tool_use"));
    assert!(kinds.contains(&"ping".to_owned()));
    assert_eq!(kinds.last().unwrap(), "message_stop");
}

fn tool_stream() -> String {
    let mut body = event(json!({"type": "message_start", "message": {"id": "msg_2",
        "type": "message", "role": "assistant", "content": [], "model": "m"}}));
    body += &event(
        json!({"type": "content_block_start", "index": 0, "content_block":
        {"type": "thinking", "thinking": "", "signature": ""}}),
    );
    body += &event(json!({"type": "content_block_delta", "index": 0, "delta":
        {"type": "thinking_delta", "thinking": "I should call <tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>"}}));
    body += &event(json!({"type": "content_block_delta", "index": 0, "delta":
        {"type": "signature_delta", "signature": "c2ln"}}));
    body += &event(json!({"type": "content_block_stop", "index": 0}));
    body + &read_file_and_stop(
        "toolu_7",
        &["", "{\"path\": \"a\", ", "\"max_lines\": \"9\"}"],
    )
}

/// A `read_file` tool_use block at index 1 whose input comes in `pieces`, then the message's
/// end (`stop_reason: tool_use`).
fn read_file_and_stop(id: &str, pieces: &[&str]) -> String {
    let mut body = event(
        json!({"type": "content_block_start", "index": 1, "content_block":
        {"type": "tool_use", "id": id, "name": "read_file", "input": {}}}),
    );
    for piece in pieces {
        body += &event(json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    body += &event(json!({"type": "content_block_stop", "index": 1}));
    body += &event(
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 9}}),
    );
    body += &event(json!({"type": "message_stop"}));
    body
}

#[tokio::test]
async fn streamed_tool_use_matches_the_golden_transcript() {
    let (mock, base) = start(|_| {}).await;
    mock.script(
        "g",
        Script::Chunks(support::cut_at(
            tool_stream().as_bytes(),
            &[10, 400, 401, 999],
        )),
    );
    let text = post(&base, "g", true).await.text().await.unwrap();
    assert_eq!(
        text,
        include_str!("golden/anthropic_repaired_stream.sse"),
        "got:\n{text}"
    );
}

#[tokio::test]
async fn thinking_passes_unchanged_and_its_calls_are_added_with_recover_all() {
    let (mock, base) = start(|c| c.recover = toolmend::RecoverMode::All).await;
    mock.script("t", Script::Chunks(vec![tool_stream().into_bytes()]));
    let text = post(&base, "t", true).await.text().await.unwrap();
    let (blocks, stop, _) = join(&text);
    // The thinking text is byte-for-byte as sent (its signature covers it).
    let original = tool_stream();
    let thinking_event = original.split("\n\n").nth(2).unwrap();
    assert!(text.contains(thinking_event), "{text}");
    assert_eq!(blocks.len(), 3, "{text}");
    assert_eq!(blocks[1].0["name"], "read_file");
    assert_eq!(blocks[2].0["name"], "list_dir");
    assert_eq!(
        serde_json::from_str::<Value>(&blocks[2].1).unwrap(),
        json!({"dir": "/"})
    );
    assert_eq!(stop.as_deref(), Some("tool_use"));
}
