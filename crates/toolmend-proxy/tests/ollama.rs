//! Ollama's native chat (`POST /api/chat`, NDJSON streaming) and its other routes through a
//! real proxy socket in front of a scripted mock upstream.

mod support;

use serde_json::{Value, json};
use support::{Script, ndjson_body, openai_tools, post_json, repairs, start};
use toolmend_proxy::REPAIRS_HEADER;

fn reply(message: Value) -> String {
    json!({"model": "qwen3", "created_at": "2026-11-21T10:00:00.1Z", "message": message,
        "done": true, "done_reason": "stop", "total_duration": 912, "eval_count": 31})
    .to_string()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"function": {"name": name, "arguments": arguments}})
}

async fn post(base: &str, model: &str, stream: bool, messages: Value) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": openai_tools(),
        "messages": messages});
    post_json(base, "/api/chat", &[], &body).await
}

fn hi() -> Value {
    json!([{"role": "user", "content": "hi"}])
}

#[tokio::test]
async fn valid_reply_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = reply(json!({"role": "assistant", "content": "",
        "tool_calls": [call("read_file", json!({"path": "a.txt", "max_lines": 20}))]}));
    mock.script("valid", Script::json(body.clone()));
    let response = post(&base, "valid", false, hi()).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get(REPAIRS_HEADER).is_none());
    assert_eq!(response.text().await.unwrap(), body);
    assert_eq!(mock.last().path, "/api/chat");
}

#[tokio::test]
async fn broken_arguments_are_repaired_and_stay_an_object() {
    let (mock, base) = start(|_| {}).await;
    let mut broken = call(
        "Read_File",
        json!({"file_path": "a.txt", "max_lines": "20", "extra_null": null}),
    );
    broken["id"] = json!("call_x");
    broken["function"]["index"] = json!(0);
    let body = reply(
        json!({"role": "assistant", "content": "", "thinking": "hmm",
        "tool_calls": [broken]}),
    );
    mock.script("broken", Script::json(body));
    let response = post(&base, "broken", false, hi()).await;
    let header = repairs(&response);
    assert!(header.contains("field_renamed=1"), "{header}");
    assert!(header.contains("name_repaired=1"), "{header}");
    let out: Value = response.json().await.unwrap();
    let message = &out["message"];
    let tool_call = &message["tool_calls"][0];
    assert_eq!(tool_call["id"], "call_x");
    assert_eq!(tool_call["function"]["index"], 0);
    assert_eq!(tool_call["function"]["name"], "read_file");
    assert_eq!(
        tool_call["function"]["arguments"],
        json!({"path": "a.txt", "max_lines": 20, "extra_null": null})
    );
    assert_eq!(message["thinking"], "hmm");
    assert_eq!(out["done_reason"], "stop");
    assert_eq!(out["eval_count"], 31);
}

#[tokio::test]
async fn leaked_call_in_content_is_recovered() {
    let (mock, base) = start(|_| {}).await;
    let body = reply(json!({"role": "assistant",
        "content": "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/tmp\"}}\n</tool_call>"}));
    mock.script("leak", Script::json(body));
    let out: Value = post(&base, "leak", false, hi()).await.json().await.unwrap();
    let message = &out["message"];
    assert_eq!(message["content"], "");
    let tool_call = &message["tool_calls"][0];
    assert_eq!(tool_call["function"]["name"], "list_dir");
    assert_eq!(tool_call["function"]["arguments"], json!({"dir": "/tmp"}));
    assert!(tool_call["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(out["done_reason"], "stop");
}

#[tokio::test]
async fn storm_in_history_is_suppressed() {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for _ in 0..4 {
        messages.push(json!({"role": "assistant", "content": "",
            "tool_calls": [call("list_dir", json!({"dir": "/"}))]}));
        messages.push(json!({"role": "tool", "content": "x"}));
    }
    let body = reply(json!({"role": "assistant", "content": "",
        "tool_calls": [call("list_dir", json!({"dir": "/"}))]}));
    let (mock, base) = start(|c| c.storm = toolmend_proxy::StormPolicy::Suppress).await;
    mock.script("storm", Script::json(body));
    let response = post(&base, "storm", false, Value::Array(messages)).await;
    let header = repairs(&response);
    assert!(header.contains("storm_suppressed=1"), "{header}");
    let out: Value = response.json().await.unwrap();
    assert!(out["message"].get("tool_calls").is_none(), "{out}");
    assert!(!out["message"]["content"].as_str().unwrap().is_empty());
}

fn line(message: Value) -> Value {
    json!({"model": "qwen3", "created_at": "t", "message": message, "done": false})
}

/// Thinking, text, a broken call, a valid call, the done line.
fn broken_stream() -> String {
    ndjson_body(&[
        line(json!({"role": "assistant", "content": "", "thinking": "Let me see."})),
        line(json!({"role": "assistant", "content": "Reading "})),
        line(json!({"role": "assistant", "content": "now."})),
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            call("read_file", json!({"file_path": "notes.txt", "max_lines": "20"}))]})),
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            call("list_dir", json!({"dir": "/"}))]})),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": "stop", "total_duration": 5, "eval_count": 31}),
    ])
}

/// The client's view of an NDJSON chat stream.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    content: String,
    thinking: String,
    calls: Vec<Value>,
    done_reason: Option<String>,
    lines: usize,
}

fn read_stream(body: &str) -> Seen {
    let mut seen = Seen::default();
    for text in body.lines() {
        let value: Value = serde_json::from_str(text).unwrap();
        let message = &value["message"];
        seen.content
            .push_str(message["content"].as_str().unwrap_or(""));
        seen.thinking
            .push_str(message["thinking"].as_str().unwrap_or(""));
        seen.calls.extend(
            message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .cloned(),
        );
        if value["done"] == true {
            assert!(seen.done_reason.is_none(), "one done line");
            seen.done_reason = value["done_reason"].as_str().map(str::to_owned);
        }
        seen.lines += 1;
    }
    seen
}

async fn stream_text(base: &str, model: &str) -> String {
    let response = post(base, model, true, hi()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    response.text().await.unwrap()
}

#[tokio::test]
async fn streamed_call_is_repaired_matching_the_golden_transcript() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream();
    let pieces = support::cut_at(body.as_bytes(), &[3, 90, 91, 200, 333, 334, 520]);
    mock.script("s", Script::Lines(pieces));
    let text = stream_text(&base, "s").await;
    let golden = include_str!("golden/ollama_repaired_stream.ndjson");
    assert_eq!(text, golden, "got:\n{text}");
    let seen = read_stream(&text);
    assert_eq!(seen.content, "Reading now.");
    assert_eq!(seen.thinking, "Let me see.");
    assert_eq!(seen.calls.len(), 2);
    assert_eq!(
        seen.calls[0]["function"]["arguments"],
        json!({"path": "notes.txt", "max_lines": 20})
    );
    assert_eq!(seen.calls[1], call("list_dir", json!({"dir": "/"})));
    assert_eq!(seen.done_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn valid_stream_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream()
        .replace("file_path", "path")
        .replace("\"20\"", "20");
    mock.script(
        "v",
        Script::Lines(support::cut_at(body.as_bytes(), &[50, 301])),
    );
    assert_eq!(stream_text(&base, "v").await, body);
}

#[tokio::test]
async fn streamed_leak_in_content_and_thinking_is_recovered() {
    let (mock, base) = start(|c| c.recover = toolmend::RecoverMode::All).await;
    let leak =
        "Ok <tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/x\"}}</tool_call>";
    let body = ndjson_body(&[
        line(json!({"role": "assistant", "content": &leak[..9]})),
        line(json!({"role": "assistant", "content": &leak[9..]})),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": "stop"}),
    ]);
    mock.script("l", Script::Lines(vec![body.into_bytes()]));
    let seen = read_stream(&stream_text(&base, "l").await);
    assert_eq!(seen.content, "Ok ");
    assert_eq!(seen.calls.len(), 1, "{seen:?}");
    assert_eq!(seen.calls[0]["function"]["name"], "list_dir");
    assert_eq!(seen.calls[0]["function"]["arguments"], json!({"dir": "/x"}));
    assert_eq!(seen.done_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn observe_mode_never_alters_but_reports() {
    let (mock, base) = start(|c| c.mode = toolmend_proxy::Mode::Observe).await;
    let body = broken_stream();
    mock.script("o", Script::Lines(vec![body.clone().into_bytes()]));
    assert_eq!(stream_text(&base, "o").await, body);
    let whole = reply(json!({"role": "assistant", "content": "",
        "tool_calls": [call("read_file", json!({"file_path": "a"}))]}));
    mock.script("ob", Script::json(whole.clone()));
    let response = post(&base, "ob", false, hi()).await;
    assert!(response.headers().get(REPAIRS_HEADER).is_some());
    assert_eq!(response.text().await.unwrap(), whole);
}

#[tokio::test]
async fn stream_cut_midway_delivers_what_arrived() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream();
    let cut = body.find("list_dir").unwrap();
    mock.script(
        "cut",
        Script::LinesCut(vec![body.as_bytes()[..cut].to_vec()]),
    );
    let text = stream_text(&base, "cut").await;
    let complete: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    let seen = read_stream(&complete);
    assert_eq!(seen.content, "Reading now.");
    assert_eq!(seen.calls.len(), 1);
    // The cut line comes as received.
    assert!(
        text.ends_with(&body[body[..cut].rfind('\n').unwrap() + 1..cut]),
        "{text}"
    );
}

#[tokio::test]
async fn other_ollama_routes_and_errors_pass_verbatim() {
    let (mock, base) = start(|_| {}).await;
    let client = reqwest::Client::new();
    let tags = client.get(format!("{base}/api/tags")).send().await.unwrap();
    assert_eq!(tags.text().await.unwrap(), "{\"echo\":\"/api/tags\"}");
    for path in ["/api/generate", "/api/show", "/api/embed"] {
        let body = json!({"model": "m", "prompt": "x", "tools": openai_tools()}).to_string();
        let response = client
            .post(format!("{base}{path}"))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.text().await.unwrap(),
            format!("{{\"echo\":\"{path}\"}}")
        );
        assert_eq!(mock.last().body, body.as_bytes());
    }
    let error = r#"{"error":"error parsing tool call: raw='{\"name\": \"x\"'"}"#;
    mock.script("e", Script::Body(500, "application/json", error.to_owned()));
    let response = post(&base, "e", false, hi()).await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), error);
}
