//! OpenAI Responses (`POST /v1/responses`) through a real proxy socket in front of a scripted
//! mock upstream.

mod support;

use serde_json::{Value, json};
use support::{Script, named_sse, post_json, repairs, responses_tools, start};
use toolmend_proxy::REPAIRS_HEADER;

fn response(output: Value) -> String {
    json!({"id": "resp_abc123", "object": "response", "created_at": 1, "status": "completed",
        "model": "m", "output": output, "parallel_tool_calls": true,
        "usage": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}})
    .to_string()
}

fn call(id: &str, call_id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
        "arguments": arguments, "status": "completed"})
}

fn text_item(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

async fn post(base: &str, model: &str, stream: bool, input: Value) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": responses_tools(),
        "input": input});
    let auth = [("authorization", "Bearer sk-client")];
    post_json(base, "/v1/responses", &auth, &body).await
}

fn hi() -> Value {
    json!([{"role": "user", "content": "hi"}])
}

#[tokio::test]
async fn valid_response_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = response(json!([call(
        "fc_1",
        "call_1",
        "read_file",
        "{ \"path\" : \"a.txt\", \"max_lines\": 1.0e1 }"
    )]));
    mock.script("valid", Script::json(body.clone()));
    let response = post(&base, "valid", false, hi()).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers().get(REPAIRS_HEADER).is_none());
    assert_eq!(response.text().await.unwrap(), body);
    let received = mock.last();
    assert_eq!(received.path, "/v1/responses");
    assert_eq!(received.headers["authorization"], "Bearer sk-client");
}

#[tokio::test]
async fn broken_call_is_repaired_and_unknown_fields_kept() {
    let (mock, base) = start(|_| {}).await;
    let mut broken = call(
        "fc_1",
        "call_1",
        "read_file",
        "{\"file_path\": \"a.txt\", \"max_lines\": \"20\",}",
    );
    broken["provider_extra"] = json!({"k": 1});
    let body = response(json!([
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
        broken
    ]));
    mock.script("broken", Script::json(body));
    let response = post(&base, "broken", false, hi()).await;
    let header = repairs(&response);
    assert!(header.contains("field_renamed=1"), "{header}");
    let out: Value = response.json().await.unwrap();
    let items = out["output"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["encrypted_content"], "x");
    let item = &items[1];
    assert_eq!(
        (&item["id"], &item["call_id"], &item["name"]),
        (&json!("fc_1"), &json!("call_1"), &json!("read_file"))
    );
    assert_eq!(item["provider_extra"], json!({"k": 1}));
    let arguments: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "a.txt", "max_lines": 20}));
    assert_eq!(out["usage"]["total_tokens"], 3);
}

#[tokio::test]
async fn leaked_call_in_output_text_becomes_a_function_call() {
    let (mock, base) = start(|_| {}).await;
    let body = response(json!([text_item(
        "Let me look.\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/tmp\"}}\n</tool_call>"
    )]));
    mock.script("leak", Script::json(body));
    let response = post(&base, "leak", false, hi()).await;
    assert!(response.headers().get(REPAIRS_HEADER).is_some());
    let out: Value = response.json().await.unwrap();
    let items = out["output"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{out}");
    assert_eq!(items[0]["content"][0]["text"], "Let me look.\n");
    assert_eq!(items[1]["type"], "function_call");
    assert_eq!(items[1]["name"], "list_dir");
    // The library's id for the recovered call (unique across the conversation's turns), and
    // the item id made from it.
    let call_id = items[1]["call_id"].as_str().unwrap();
    assert!(
        call_id.starts_with("call_tm_") && call_id.ends_with("_1"),
        "{call_id}"
    );
    assert_eq!(items[1]["id"], format!("fc_{}", &call_id["call_".len()..]));
    let arguments: Value = serde_json::from_str(items[1]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"dir": "/tmp"}));
}

#[tokio::test]
async fn storm_in_the_input_history_is_suppressed() {
    let mut input = vec![json!({"role": "user", "content": "go"})];
    for i in 0..4 {
        input.push(call(
            &format!("fc{i}"),
            &format!("c{i}"),
            "list_dir",
            "{\"dir\": \"/\"}",
        ));
        input.push(
            json!({"type": "function_call_output", "call_id": format!("c{i}"), "output": "x"}),
        );
    }
    let body = response(json!([call("fc9", "c9", "list_dir", "{\"dir\": \"/\"}")]));
    let (mock, base) = start(|c| c.storm = toolmend_proxy::StormPolicy::Suppress).await;
    mock.script("storm", Script::json(body));
    let response = post(&base, "storm", false, Value::Array(input)).await;
    let header = repairs(&response);
    assert!(header.contains("storm_suppressed=1"), "{header}");
    let out: Value = response.json().await.unwrap();
    let items = out["output"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{out}");
    assert_eq!(
        items[0]["type"], "message",
        "the call became a message: {out}"
    );
}

/// The events of a broken streamed response: text, then a call whose arguments come in
/// fragments with an alias and a number as a string, then `response.completed`.
fn broken_stream() -> String {
    let item = |args: &str, status: &str| {
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
            "arguments": args, "status": status})
    };
    let args = "{\"file_path\": \"notes.txt\", \"max_lines\": \"20\"}";
    named_sse(
        &[
            json!({"type": "response.created", "response": {"id": "resp_s1", "status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item":
                {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}}),
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "delta": "Reading."}),
            json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "text": "Reading."}),
            json!({"type": "response.content_part.done", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "part": {"type": "output_text", "text": "Reading.", "annotations": []}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": text_item("Reading.")}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": item("", "in_progress")}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 1, "delta": "{\"file_path\": \"no"}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                "output_index": 1, "delta": "tes.txt\", \"max_lines\": \"20\"}"}),
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                "output_index": 1, "arguments": args}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": item(args, "completed")}),
            json!({"type": "response.completed", "response": {"id": "resp_s1", "status": "completed",
                "output": [text_item("Reading."), item(args, "completed")], "usage": {"total_tokens": 9}}}),
        ],
        true,
    )
}

/// The client's view of a Responses stream.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    /// Every `type`, in order.
    types: Vec<String>,
    /// Joined `output_text` deltas.
    text: String,
    /// The items of `output_item.done`, by output index.
    done: Vec<(u64, Value)>,
    /// Joined argument deltas by item id.
    deltas: std::collections::BTreeMap<String, String>,
    /// The output of the final `response.completed`.
    completed: Option<Value>,
}

/// Reads a Responses stream, checking that sequence numbers count up by one.
fn read_stream(body: &str) -> Seen {
    let mut seen = Seen::default();
    let mut last: Option<u64> = None;
    for block in body.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let name = block.lines().find_map(|l| l.strip_prefix("event: "));
        let data: String = block
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        let value: Value = serde_json::from_str(&data).unwrap();
        let kind = value["type"].as_str().unwrap().to_owned();
        assert_eq!(name, Some(kind.as_str()), "event name and type agree");
        if let Some(seq) = value["sequence_number"].as_u64() {
            if let Some(last) = last {
                assert_eq!(seq, last + 1, "sequence numbers count up: {body}");
            }
            last = Some(seq);
        }
        match kind.as_str() {
            "response.output_text.delta" => seen.text.push_str(value["delta"].as_str().unwrap()),
            "response.function_call_arguments.delta" => seen
                .deltas
                .entry(value["item_id"].as_str().unwrap().to_owned())
                .or_default()
                .push_str(value["delta"].as_str().unwrap()),
            "response.output_item.done" => seen.done.push((
                value["output_index"].as_u64().unwrap(),
                value["item"].clone(),
            )),
            "response.completed" => seen.completed = Some(value["response"]["output"].clone()),
            _ => {}
        }
        seen.types.push(kind);
    }
    seen
}

async fn stream_text(base: &str, model: &str, input: Value) -> String {
    let response = post(base, model, true, input).await;
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test]
async fn streamed_call_is_repaired_matching_the_golden_transcript() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream();
    let pieces = support::cut_at(body.as_bytes(), &[3, 90, 91, 400, 401, 777, 1200, 1500]);
    mock.script("s", Script::Chunks(pieces));
    let text = stream_text(&base, "s", hi()).await;
    let golden = include_str!("golden/responses_repaired_stream.sse");
    assert_eq!(text, golden, "got:\n{text}");
    let seen = read_stream(&text);
    assert_eq!(seen.text, "Reading.");
    let repaired = "{\"path\":\"notes.txt\",\"max_lines\":20}";
    assert_eq!(seen.deltas["fc_1"], repaired);
    let (index, item) = &seen.done[1];
    assert_eq!(*index, 1);
    assert_eq!(item["arguments"], repaired);
    assert_eq!(item["call_id"], "call_1");
    let completed = seen.completed.unwrap();
    assert_eq!(completed[1]["arguments"], repaired);
    assert_eq!(completed[0]["content"][0]["text"], "Reading.");
    assert!(text.contains(&format!(
        "\"type\":\"response.function_call_arguments.done\",\"output_index\":1,\"item_id\":\"fc_1\",\"arguments\":{}",
        json!(repaired)
    )));
}

#[tokio::test]
async fn valid_stream_passes_byte_for_byte() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream()
        .replace("file_path", "path")
        .replace("\\\"20\\\"", "20");
    mock.script(
        "v",
        Script::Chunks(support::cut_at(body.as_bytes(), &[50, 600])),
    );
    assert_eq!(stream_text(&base, "v", hi()).await, body);
}

#[tokio::test]
async fn streamed_leak_becomes_a_new_item_before_completed() {
    let (mock, base) = start(|_| {}).await;
    let leak =
        "Sure. <tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>";
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_l", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item":
            {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": &leak[..12]}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "delta": &leak[12..]}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0,
            "content_index": 0, "text": leak}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": text_item(leak)}),
        json!({"type": "response.completed", "response": {"id": "resp_l", "status": "completed",
            "output": [text_item(leak)]}}),
    ];
    mock.script(
        "l",
        Script::Chunks(vec![named_sse(&events, true).into_bytes()]),
    );
    let seen = read_stream(&stream_text(&base, "l", hi()).await);
    assert_eq!(seen.text, "Sure. ");
    assert_eq!(seen.done.len(), 2);
    assert_eq!(seen.done[0].1["content"][0]["text"], "Sure. ");
    let call = &seen.done[1].1;
    assert_eq!(
        (&call["type"], &call["name"]),
        (&json!("function_call"), &json!("list_dir"))
    );
    let call_id = call["call_id"].as_str().unwrap();
    assert!(call_id.starts_with("call_tm_"), "{call_id}");
    let item_id = format!("fc_{}", &call_id["call_".len()..]);
    assert_eq!(seen.deltas[&item_id], "{\"dir\": \"/\"}");
    let completed = seen.completed.unwrap();
    assert_eq!(completed.as_array().unwrap().len(), 2);
    assert_eq!(completed[1]["call_id"], call_id);
    assert_eq!(seen.types.last().unwrap(), "response.completed");
}

#[tokio::test]
async fn observe_mode_never_alters_but_reports() {
    let (mock, base) = start(|c| c.mode = toolmend_proxy::Mode::Observe).await;
    let body = broken_stream();
    mock.script("o", Script::Chunks(vec![body.clone().into_bytes()]));
    assert_eq!(stream_text(&base, "o", hi()).await, body);
    let whole = response(json!([call(
        "fc_1",
        "call_1",
        "read_file",
        "{\"file_path\": \"a\"}"
    )]));
    mock.script("ob", Script::json(whole.clone()));
    let response = post(&base, "ob", false, hi()).await;
    assert!(response.headers().get(REPAIRS_HEADER).is_some());
    assert_eq!(response.text().await.unwrap(), whole);
}

#[tokio::test]
async fn stream_cut_midway_delivers_what_arrived() {
    let (mock, base) = start(|_| {}).await;
    let body = broken_stream();
    let cut = body
        .find("event: response.function_call_arguments.done")
        .unwrap();
    mock.script("cut", Script::Cut(vec![body.as_bytes()[..cut].to_vec()]));
    let seen = read_stream(&stream_text(&base, "cut", hi()).await);
    assert_eq!(seen.text, "Reading.");
    // The held call is flushed at the cut, repaired from the fragments that came.
    assert_eq!(
        seen.deltas["fc_1"],
        "{\"path\":\"notes.txt\",\"max_lines\":20}"
    );
    assert!(seen.completed.is_none());
}

#[tokio::test]
async fn upstream_errors_pass_through() {
    let (mock, base) = start(|_| {}).await;
    let error =
        r#"{"error": {"message": "only tool_choice auto", "type": "invalid_request_error"}}"#;
    mock.script("e", Script::Body(400, "application/json", error.to_owned()));
    let response = post(&base, "e", false, hi()).await;
    assert_eq!(response.status(), 400);
    assert_eq!(response.text().await.unwrap(), error);
}
