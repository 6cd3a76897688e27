//! OpenAI Chat Completions through a real proxy socket in front of a scripted mock upstream.

mod support;

use serde_json::{Value, json};
use support::{
    Script, join_openai, metrics_text, openai_tools, post_json, repairs, sse_body, start,
};
use toolmend_proxy::{InvalidPolicy, REPAIRS_HEADER};

fn completion(message: Value, finish: &str) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "system_fingerprint": "fp_x",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}})
    .to_string()
}

fn call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

async fn post(base: &str, model: &str, stream: bool) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": openai_tools(),
        "messages": [{"role": "user", "content": "hi"}]});
    let auth = [("authorization", "Bearer sk-client")];
    post_json(base, "/v1/chat/completions", &auth, &body).await
}

#[tokio::test]
async fn valid_response_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            call("call_1", "read_file", "{ \"path\" : \"a.txt\", \"max_lines\": 1.0e1 }")]}),
        "tool_calls",
    );
    mock.script("valid", Script::json(body.clone()));
    let response = post(&base, "valid", false).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get(REPAIRS_HEADER).is_none());
    assert_eq!(response.headers()["x-upstream"], "mock");
    assert_eq!(response.text().await.unwrap(), body);
    // The client's key and body reached the upstream unchanged.
    let received = mock.last();
    assert_eq!(received.path, "/v1/chat/completions");
    assert_eq!(received.headers["authorization"], "Bearer sk-client");
    assert!(String::from_utf8_lossy(&received.body).contains("\"model\":\"valid\""));
}

#[tokio::test]
async fn broken_arguments_are_repaired_and_reported() {
    let (mock, base) = start(|_| {}).await;
    let body = completion(
        json!({"role": "assistant", "content": null, "provider_extra": {"k": 1}, "tool_calls": [
            call("call_1", "Read_File", "```json\n{\"file_path\": \"a.txt\", \"max_lines\": \"20\",}\n```")]}),
        "tool_calls",
    );
    mock.script("broken", Script::json(body));
    let response = post(&base, "broken", false).await;
    let header = repairs(&response);
    assert!(header.contains("field_renamed=1"), "{header}");
    assert!(header.contains("name_repaired=1"), "{header}");
    let out: Value = response.json().await.unwrap();
    let message = &out["choices"][0]["message"];
    let tool_call = &message["tool_calls"][0];
    assert_eq!(tool_call["id"], "call_1");
    assert_eq!(tool_call["function"]["name"], "read_file");
    let arguments: Value =
        serde_json::from_str(tool_call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "a.txt", "max_lines": 20}));
    // Unknown fields stay where they were.
    assert_eq!(message["provider_extra"], json!({"k": 1}));
    assert_eq!(out["system_fingerprint"], "fp_x");
    assert_eq!(out["usage"]["total_tokens"], 3);

    let metrics = metrics_text(&base).await;
    // Other tests of this binary count too: look for this one's series.
    let series = metrics.lines().find(|l| {
        l.starts_with("toolmend_calls_total")
            && l.contains("status=\"repaired\"")
            && l.contains("tool=\"read_file\"")
            && l.contains("model=\"broken\"")
    });
    assert!(series.is_some(), "no repaired series in\n{metrics}");
    assert!(metrics.contains("toolmend_repairs_total{"));
    assert!(metrics.contains("toolmend_request_duration_seconds"));
}

#[tokio::test]
async fn leaked_call_in_content_becomes_a_tool_call() {
    let (mock, base) = start(|_| {}).await;
    let body = completion(
        json!({"role": "assistant", "content":
            "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.txt\"}}\n</tool_call>"}),
        "stop",
    );
    mock.script("leak", Script::json(body));
    let response = post(&base, "leak", false).await;
    assert!(repairs(&response).contains("recovered=1"));
    let out: Value = response.json().await.unwrap();
    let choice = &out["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["content"].as_str().unwrap().trim(),
        "Let me look."
    );
    let tool_call = &choice["message"]["tool_calls"][0];
    assert_eq!(tool_call["function"]["name"], "read_file");
    assert_eq!(tool_call["type"], "function");
    let arguments: Value =
        serde_json::from_str(tool_call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "b.txt"}));
}

#[tokio::test]
async fn concatenated_calls_are_split() {
    let (mock, base) = start(|_| {}).await;
    let body = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            call("call_1", "read_file", "{\"path\": \"a\"}{\"path\": \"b\"}")]}),
        "tool_calls",
    );
    mock.script("concat", Script::json(body));
    let out: Value = post(&base, "concat", false).await.json().await.unwrap();
    let calls = out["choices"][0]["message"]["tool_calls"]
        .as_array()
        .unwrap();
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert_eq!(calls[1]["function"]["arguments"], "{\"path\":\"b\"}");
}

#[tokio::test]
async fn invalid_call_passes_unchanged_or_is_rejected() {
    let body = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            call("call_1", "read_file", "{\"max_lines\": 3}")]}),
        "tool_calls",
    );
    let (mock, base) = start(|_| {}).await;
    mock.script("invalid", Script::json(body.clone()));
    let response = post(&base, "invalid", false).await;
    assert_eq!(response.headers()[REPAIRS_HEADER], "invalid=1");
    assert_eq!(response.text().await.unwrap(), body);

    let (mock, base) = start(|c| c.invalid = InvalidPolicy::Reject).await;
    mock.script("invalid", Script::json(body));
    let out: Value = post(&base, "invalid", false).await.json().await.unwrap();
    let choice = &out["choices"][0];
    assert!(choice["message"].get("tool_calls").is_none());
    assert_eq!(choice["finish_reason"], "stop");
    assert!(
        choice["message"]["content"]
            .as_str()
            .unwrap()
            .contains("`/path` is required")
    );
}

#[tokio::test]
async fn storm_in_history_is_annotated_or_suppressed() {
    let same = call("c", "list_dir", "{\"dir\": \"/\"}");
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for i in 0..4 {
        messages.push(json!({"role": "assistant", "content": null,
            "tool_calls": [call(&format!("c{i}"), "list_dir", "{\"dir\": \"/\"}")]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "x"}));
    }
    let body = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [same]}),
        "tool_calls",
    );
    for suppress in [false, true] {
        let (mock, base) = start(|c| {
            if suppress {
                c.storm = toolmend_proxy::StormPolicy::Suppress;
            }
        })
        .await;
        mock.script("storm", Script::json(body.clone()));
        let request = json!({"model": "storm", "tools": openai_tools(), "messages": messages});
        let response = post_json(&base, "/v1/chat/completions", &[], &request).await;
        assert!(repairs(&response).contains("storm_suppressed=1"));
        let text = response.text().await.unwrap();
        if suppress {
            let out: Value = serde_json::from_str(&text).unwrap();
            assert!(out["choices"][0]["message"].get("tool_calls").is_none());
            assert!(out["choices"][0]["message"]["content"].as_str().is_some());
        } else {
            assert_eq!(text, body);
        }
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// A stream with a broken call split over many fragments.
fn broken_stream() -> String {
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": "Reading."}),
        None,
    )];
    chunks.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
        "function": {"name": "read_file", "arguments": ""}}]}),
        None,
    ));
    for piece in [
        "{\"file_",
        "path\": \"no",
        "tes.txt\", \"max_lines\"",
        ": \"20\"}",
    ] {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("tool_calls")));
    chunks.push(json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1,
        "model": "m", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}));
    let mut body = String::from(": keep-alive\n\n");
    body.push_str(&sse_body(&chunks));
    body
}

async fn stream_text(base: &str, model: &str) -> String {
    let response = post(base, model, true).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    response.text().await.unwrap()
}

#[tokio::test]
async fn streamed_call_is_emitted_repaired_once() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream();
    let pieces = support::cut_at(body.as_bytes(), &[5, 77, 140, 141, 300, 301, 302, 555, 700]);
    mock.script("s", Script::Chunks(pieces));
    let text = stream_text(&base, "s").await;
    let golden = include_str!("golden/openai_repaired_stream.sse");
    assert_eq!(text, golden, "got:\n{text}");
    let joined = join_openai(&text);
    assert!(joined.done);
    assert_eq!(joined.content, "Reading.");
    assert_eq!(joined.finish, ["tool_calls"]);
    let (id, name, arguments) = &joined.calls[&0];
    assert_eq!((id.as_str(), name.as_str()), ("call_a", "read_file"));
    assert_eq!(arguments, "{\"path\":\"notes.txt\",\"max_lines\":20}");
}

#[tokio::test]
async fn streamed_leak_and_envelope_deviations_are_fixed() {
    let (mock, base) = start(|_| {}).await;
    // Two calls on index 0, ids repeated on every chunk, then a leak in a second choice-less
    // stream is covered by `streamed_leak_in_content`.
    let chunks = vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "x1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\": "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "x1", "type": "function",
            "function": {"name": "read_file", "arguments": "\"a\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "x2", "type": "function",
            "function": {"name": "list_dir", "arguments": "{\"dir\": \"/\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "x2",
            "function": {"arguments": ""}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    mock.script("dev", Script::Chunks(vec![sse_body(&chunks).into_bytes()]));
    let joined = join_openai(&stream_text(&base, "dev").await);
    assert_eq!(joined.calls.len(), 2, "{joined:?}");
    assert_eq!(
        joined.calls[&0],
        ("x1".into(), "read_file".into(), "{\"path\": \"a\"}".into())
    );
    assert_eq!(
        joined.calls[&1],
        ("x2".into(), "list_dir".into(), "{\"dir\": \"/\"}".into())
    );
}

#[tokio::test]
async fn streamed_leak_in_content() {
    let (mock, base) = start(|_| {}).await;
    let text = "I will read it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"c\"}}\n</tool_call>";
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for piece in text.as_bytes().chunks(7) {
        chunks.push(chunk(
            json!({"content": String::from_utf8_lossy(piece)}),
            None,
        ));
    }
    chunks.push(chunk(json!({}), Some("stop")));
    mock.script("leak", Script::Chunks(vec![sse_body(&chunks).into_bytes()]));
    let joined = join_openai(&stream_text(&base, "leak").await);
    assert_eq!(joined.content.trim(), "I will read it.");
    assert_eq!(joined.finish, ["tool_calls"]);
    assert_eq!(joined.calls[&0].1, "read_file");
    assert_eq!(joined.calls[&0].2, "{\"path\": \"c\"}");
}

#[tokio::test]
async fn whole_call_in_one_chunk_with_finish() {
    let (mock, base) = start(|_| {}).await;
    let chunks = vec![chunk(
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "g1", "type": "function",
            "function": {"name": "list_dir", "arguments": "```json\n{\"dir\": \"/x\",}\n```"}}]}),
        Some("tool_calls"),
    )];
    mock.script("groq", Script::Chunks(vec![sse_body(&chunks).into_bytes()]));
    let text = stream_text(&base, "groq").await;
    let joined = join_openai(&text);
    assert_eq!(joined.finish, ["tool_calls"], "{text}");
    assert_eq!(joined.calls.len(), 1, "{text}");
    let (id, name, arguments) = &joined.calls[&0];
    assert_eq!((id.as_str(), name.as_str()), ("g1", "list_dir"));
    let arguments: Value = serde_json::from_str(arguments).unwrap();
    assert_eq!(arguments, json!({"dir": "/x"}));
    // The role comes before the call, the finish reason after it.
    let role = text.find("\"role\"").unwrap();
    let call = text.find("\"tool_calls\"").unwrap();
    let finish = text.find("\"finish_reason\":\"tool_calls\"").unwrap();
    assert!(role < call && call < finish, "{text}");
}

#[tokio::test]
async fn same_id_on_parallel_calls_repeated_on_every_chunk() {
    let (mock, base) = start(|_| {}).await;
    let fragment = |index: u64, name: &str, arguments: &str| {
        chunk(
            json!({"tool_calls": [{"index": index, "id": "dup", "type": "function",
            "function": {"name": name, "arguments": arguments}}]}),
            None,
        )
    };
    let chunks = vec![
        fragment(0, "read_file", "{\"path\": "),
        fragment(1, "list_dir", "{\"dir\": "),
        fragment(0, "read_file", "\"a\"}"),
        fragment(1, "list_dir", "\"/\"}"),
        chunk(json!({}), Some("tool_calls")),
    ];
    mock.script("dup", Script::Chunks(vec![sse_body(&chunks).into_bytes()]));
    let joined = join_openai(&stream_text(&base, "dup").await);
    assert_eq!(joined.calls.len(), 2, "{joined:?}");
    assert_eq!(joined.calls[&0].2, "{\"path\": \"a\"}");
    assert_eq!(joined.calls[&1].2, "{\"dir\": \"/\"}");
    assert_ne!(joined.calls[&0].0, joined.calls[&1].0);
}

#[tokio::test]
async fn observe_mode_never_alters_but_reports() {
    let (mock, base) = start(|c| c.mode = toolmend_proxy::Mode::Observe).await;
    let body = completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            call("call_1", "read_file", "{\"file_path\": \"a\"}")]}),
        "tool_calls",
    );
    mock.script("observe", Script::json(body.clone()));
    let response = post(&base, "observe", false).await;
    assert_eq!(response.headers()[REPAIRS_HEADER], "field_renamed=1");
    assert_eq!(response.text().await.unwrap(), body);

    let streamed = broken_stream();
    mock.script(
        "observe-s",
        Script::Chunks(vec![streamed.clone().into_bytes()]),
    );
    assert_eq!(stream_text(&base, "observe-s").await, streamed);
}
