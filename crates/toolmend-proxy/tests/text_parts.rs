//! Calls leaked into any text part are recovered (issue #29 §2): Anthropic's text blocks
//! (text, thinking, text; two text blocks), streamed and not; every `output_text` part of every
//! Responses message item; Responses reasoning summaries under `--recover all` only. Each part
//! keeps what the library kept of it.

mod leaks;
mod support;

use leaks::{payloads, recovered_ids};
use serde_json::{Value, json};
use support::{Script, post_text, start};
use toolmend::RecoverMode;

const CALL: &str =
    "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";

fn anthropic_request(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "max_tokens": 50,
        "tools": support::anthropic_tools(), "messages": [{"role": "user", "content": "go"}]})
}

fn responses_request(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "tools": support::responses_tools(),
        "input": [{"role": "user", "content": "go"}]})
}

fn anthropic_body(content: Value) -> String {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": content, "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": 1}})
    .to_string()
}

#[tokio::test]
async fn anthropic_recovers_from_the_second_text_block() {
    let (mock, base) = start(|_| {}).await;
    let thinking = json!({"type": "thinking", "thinking": "hm", "signature": "sig"});
    mock.script(
        "ttt",
        Script::json(anthropic_body(json!([
            {"type": "text", "text": "Let me look."},
            thinking,
            {"type": "text", "text": CALL},
        ]))),
    );
    let out: Value = serde_json::from_str(
        &post_text(&base, "/v1/messages", &anthropic_request("ttt", false)).await,
    )
    .unwrap();
    let content = out["content"].as_array().unwrap();
    let kinds: Vec<&str> = content.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(kinds, ["text", "thinking", "tool_use"], "{out}");
    assert_eq!(content[0]["text"], "Let me look.");
    assert_eq!(content[1], thinking, "thinking passes untouched");
    assert_eq!(content[2]["input"], json!({"path": "a"}));
    assert_eq!(out["stop_reason"], "tool_use");
}

#[tokio::test]
async fn anthropic_two_text_blocks_each_keep_their_text() {
    let (mock, base) = start(|_| {}).await;
    mock.script(
        "tt",
        Script::json(anthropic_body(json!([
            {"type": "text", "text": format!("one {CALL}")},
            {"type": "text", "text": "two"},
        ]))),
    );
    let out: Value = serde_json::from_str(
        &post_text(&base, "/v1/messages", &anthropic_request("tt", false)).await,
    )
    .unwrap();
    let content = out["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{out}");
    assert_eq!(content[0]["text"], "one ");
    assert_eq!(content[1]["text"], "two");
    assert_eq!(content[2]["type"], "tool_use");
}

#[tokio::test]
async fn anthropic_stream_recovers_from_any_text_block_with_contiguous_indices() {
    let (mock, base) = start(|_| {}).await;
    let text_block = |index: u64, text: &str| {
        vec![
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": index}),
        ]
    };
    let mut events = vec![json!({"type": "message_start", "message": {"id": "msg_1",
        "type": "message", "role": "assistant", "content": [], "model": "m"}})];
    events.extend(text_block(0, "Hi."));
    events.extend([
        json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "thinking_delta", "thinking": "hm"}}),
        json!({"type": "content_block_stop", "index": 1}),
    ]);
    // Only markup: the block is left out and the blocks after it move up.
    events.extend(text_block(2, CALL));
    events.extend(text_block(3, "Bye."));
    events.extend([
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        json!({"type": "message_stop"}),
    ]);
    mock.script(
        "stream",
        Script::Chunks(vec![support::named_sse(&events, false).into_bytes()]),
    );
    let out = post_text(&base, "/v1/messages", &anthropic_request("stream", true)).await;
    assert_eq!(recovered_ids(&out).len(), 1, "{out}");
    let mut starts = Vec::new();
    let mut texts = Vec::new();
    for payload in payloads(&out) {
        if payload["type"] == "content_block_start" {
            starts.push((
                payload["index"].as_u64().unwrap(),
                payload["content_block"]["type"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            ));
        }
        if let Some(text) = payload.pointer("/delta/text").and_then(Value::as_str) {
            texts.push((payload["index"].as_u64().unwrap(), text.to_owned()));
        }
    }
    let expected: Vec<(u64, String)> = [(0, "text"), (1, "thinking"), (2, "text"), (3, "tool_use")]
        .iter()
        .map(|(i, k)| (*i, (*k).to_owned()))
        .collect();
    assert_eq!(starts, expected, "{out}");
    assert_eq!(
        texts,
        [(0, "Hi.".to_owned()), (2, "Bye.".to_owned())],
        "{out}"
    );
    assert!(out.contains(r#""stop_reason":"tool_use""#), "{out}");
}

fn responses_body(output: Value) -> String {
    json!({"id": "resp_1", "object": "response", "status": "completed", "output": output})
        .to_string()
}

fn message(id: &str, parts: &[&str]) -> Value {
    let content: Vec<Value> = parts
        .iter()
        .map(|t| json!({"type": "output_text", "text": t, "annotations": []}))
        .collect();
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
        "content": content})
}

#[tokio::test]
async fn responses_scans_every_output_text_part() {
    let (mock, base) = start(|_| {}).await;
    let call2 = CALL.replace("\"a\"", "\"b\"");
    mock.script(
        "parts",
        Script::json(responses_body(json!([
            message("msg_1", &["Looking."]),
            message("msg_2", &["first part", &format!("second {CALL}")]),
            message("msg_3", &[&call2]),
        ]))),
    );
    let out: Value = serde_json::from_str(
        &post_text(&base, "/v1/responses", &responses_request("parts", false)).await,
    )
    .unwrap();
    let output = out["output"].as_array().unwrap();
    let kinds: Vec<&str> = output.iter().filter_map(|i| i["type"].as_str()).collect();
    // The third message held only markup: no message at all.
    assert_eq!(
        kinds,
        ["message", "message", "function_call", "function_call"],
        "{out}"
    );
    assert_eq!(output[0], json!(message("msg_1", &["Looking."])));
    assert_eq!(output[1]["content"][0]["text"], "first part");
    assert_eq!(output[1]["content"][1]["text"], "second ");
    assert_eq!(output[2]["arguments"], "{\"path\": \"a\"}");
    assert_eq!(output[3]["arguments"], "{\"path\": \"b\"}");
}

fn with_summary() -> String {
    responses_body(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [
            {"type": "summary_text", "text": format!("I will read it. {CALL}")}]},
        message("msg_1", &["Done."]),
    ]))
}

#[tokio::test]
async fn responses_summaries_are_scanned_under_recover_all() {
    let (mock, base) = start(|c| c.recover = RecoverMode::All).await;
    mock.script("summary", Script::json(with_summary()));
    let out: Value = serde_json::from_str(
        &post_text(&base, "/v1/responses", &responses_request("summary", false)).await,
    )
    .unwrap();
    let output = out["output"].as_array().unwrap();
    assert_eq!(output.len(), 3, "{out}");
    assert_eq!(output[2]["type"], "function_call", "{out}");
    // Reasoning is never rewritten.
    assert_eq!(
        output[0]["summary"][0]["text"],
        format!("I will read it. {CALL}")
    );
}

#[tokio::test]
async fn responses_summaries_are_not_scanned_under_recover_content() {
    let (mock, base) = start(|_| {}).await;
    mock.script("summary", Script::json(with_summary()));
    let out = post_text(&base, "/v1/responses", &responses_request("summary", false)).await;
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value,
        serde_json::from_str::<Value>(&with_summary()).unwrap()
    );
}

#[tokio::test]
async fn a_streamed_summary_is_scanned_under_recover_all() {
    let (mock, base) = start(|c| c.recover = RecoverMode::All).await;
    let summary = format!("I will read it. {CALL}");
    let item = json!({"type": "reasoning", "id": "rs_1", "summary": []});
    let done = json!({"type": "reasoning", "id": "rs_1",
        "summary": [{"type": "summary_text", "text": summary}]});
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
            "output_index": 0, "summary_index": 0, "delta": summary}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
        json!({"type": "response.completed", "response": {"id": "resp_1",
            "status": "completed", "output": [done]}}),
    ];
    mock.script(
        "summary",
        Script::Chunks(vec![support::named_sse(&events, true).into_bytes()]),
    );
    let out = post_text(&base, "/v1/responses", &responses_request("summary", true)).await;
    assert_eq!(recovered_ids(&out).len(), 1, "{out}");
    assert!(out.contains("I will read it."), "the summary passes: {out}");
}
