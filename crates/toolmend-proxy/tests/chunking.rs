//! Properties over chunk boundaries: the same upstream bytes split anywhere give the same
//! client-visible result, and a valid stream passes semantically unchanged.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde_json::{Value, json};
use support::{Joined, Script, join_openai, openai_tools, sse_body, world};

fn run(body: &str, cuts: &[usize]) -> Joined {
    join_openai(&fetch("/v1/chat/completions", openai_tools(), body, cuts))
}

/// The proxy's answer to a streamed request whose upstream body is `body` cut at `cuts`.
fn fetch(path: &str, tools: Value, body: &str, cuts: &[usize]) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let world = world();
    let model = format!("p{}", N.fetch_add(1, Ordering::Relaxed));
    let pieces = support::cut_at(body.as_bytes(), cuts);
    let script = if path == "/api/chat" {
        Script::Lines(pieces)
    } else {
        Script::Chunks(pieces)
    };
    world.mock.script(&model, script);
    let request = json!({"model": model, "stream": true, "tools": tools, "max_tokens": 9,
        "messages": [{"role": "user", "content": "go"}]});
    world
        .runtime
        .block_on(support::post_text(&world.base, path, &request))
}

/// An Anthropic stream: text with a leak, a broken tool_use in fragments.
fn anthropic() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
            "text": "Ok <tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
            "partial_json": "{\"file_path\": \"é\","}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
            "partial_json": " \"max_lines\": \"4\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// A Responses stream: text with a leak, a broken call in fragments, a keep-alive comment.
fn responses() -> String {
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read_file",
        "arguments": "", "status": "in_progress"});
    let mut done = item.clone();
    done["arguments"] = json!("{\"file_path\": \"é\", \"max_lines\": \"4\"}");
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_p", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item":
            {"type": "message", "id": "m1", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "item_id": "m1", "output_index": 0,
            "content_index": 0, "delta": "Ok <tool_call>{\"name\": \"list_dir\", "}),
        json!({"type": "response.output_text.delta", "item_id": "m1", "output_index": 0,
            "content_index": 0, "delta": "\"arguments\": {\"dir\": \"/\"}}</tool_call>."}),
        json!({"type": "response.output_text.done", "item_id": "m1", "output_index": 0,
            "content_index": 0, "text": "(ignored)"}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": item}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 1, "delta": "{\"file_path\": \"é\","}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 1, "delta": " \"max_lines\": \"4\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": done}),
        json!({"type": "response.completed", "response": {"id": "resp_p", "output": []}}),
    ];
    let mut body = support::named_sse(&events, true);
    body.insert_str(0, ": keep-alive\n\n");
    body
}

/// An Ollama NDJSON stream: thinking, text with a leak, a broken call, the done line.
fn ollama() -> String {
    let line = |message: Value| json!({"model": "m", "created_at": "t", "message": message, "done": false});
    support::ndjson_body(&[
        line(json!({"role": "assistant", "content": "", "thinking": "hm é"})),
        line(json!({"role": "assistant", "content": "Ok <tool_call>{\"name\": \"list_dir\", "})),
        line(
            json!({"role": "assistant", "content": "\"arguments\": {\"dir\": \"/\"}}</tool_call>."}),
        ),
        line(
            json!({"role": "assistant", "content": "", "tool_calls": [{"function":
            {"name": "read_file", "arguments": {"file_path": "é", "max_lines": "4"}}}]}),
        ),
        json!({"model": "m", "created_at": "t", "message": {"role": "assistant", "content": ""},
            "done": true, "done_reason": "stop"}),
    ])
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "chatcmpl-p", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// Reasoning, text with leaked markup, a broken call, a valid call, usage.
fn messy() -> String {
    let mut body = String::from(": OPENROUTER PROCESSING\n\n");
    body.push_str(&sse_body(&[
        chunk(json!({"role": "assistant", "reasoning_content": "think <b>first</b>"}), None),
        chunk(json!({"content": "Plan: <tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/t\"}}\n</tool_call> done"}), None),
        chunk(json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": "{'path': 'x',"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": " 'max_lines': '3'}"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
            "function": {"name": "list_dir", "arguments": "{\"dir\": \"é/ü\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        json!({"id": "chatcmpl-p", "choices": [], "usage": {"total_tokens": 5}}),
    ]));
    body
}

/// A valid stream: plain text, two valid calls in fragments.
fn valid() -> String {
    sse_body(&[
        chunk(
            json!({"role": "assistant", "content": "Two calls, ok? "}),
            None,
        ),
        chunk(json!({"content": "Yes — “quoted” text."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\": "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\", \"max_lines\": 2}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
            "function": {"name": "list_dir", "arguments": "{\"dir\": \"/\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_split_gives_the_same_events(cuts in proptest::collection::vec(0usize..4096, 0..12)) {
        let body = messy();
        let whole = run(&body, &[]);
        prop_assert_eq!(run(&body, &cuts), whole);
    }

    #[test]
    fn any_split_gives_the_same_anthropic_stream(cuts in proptest::collection::vec(0usize..2048, 0..12)) {
        let tools = support::anthropic_tools();
        let whole = fetch("/v1/messages", tools.clone(), &anthropic(), &[]);
        prop_assert_eq!(fetch("/v1/messages", tools, &anthropic(), &cuts), whole);
    }

    #[test]
    fn any_split_gives_the_same_responses_stream(cuts in proptest::collection::vec(0usize..2048, 0..12)) {
        let tools = support::responses_tools();
        let whole = fetch("/v1/responses", tools.clone(), &responses(), &[]);
        prop_assert_eq!(fetch("/v1/responses", tools, &responses(), &cuts), whole);
    }

    #[test]
    fn any_split_gives_the_same_ollama_stream(cuts in proptest::collection::vec(0usize..1024, 0..12)) {
        let whole = fetch("/api/chat", openai_tools(), &ollama(), &[]);
        prop_assert_eq!(fetch("/api/chat", openai_tools(), &ollama(), &cuts), whole);
    }

    #[test]
    fn valid_stream_is_semantically_unchanged(cuts in proptest::collection::vec(0usize..4096, 0..12)) {
        let body = valid();
        prop_assert_eq!(run(&body, &cuts), join_openai(&body));
    }
}

#[test]
fn messy_stream_is_repaired() {
    let joined = run(&messy(), &[]);
    assert_eq!(joined.reasoning, "think <b>first</b>");
    // Recovered from content only when the turn has no native calls (`--recover content`):
    // here it has two, so the held markup comes back as text, where it was (issue #29 §2).
    assert_eq!(
        joined.content,
        "Plan: <tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/t\"}}\n</tool_call> done"
    );
    assert_eq!(joined.calls[&0].2, "{\"path\":\"x\",\"max_lines\":3}");
    assert_eq!(joined.calls[&1].2, "{\"dir\": \"é/ü\"}");
    assert_eq!(joined.calls.len(), 2);
    assert_eq!(joined.finish, ["tool_calls"]);
    assert!(joined.done);
    assert_eq!(joined.other.len(), 2, "{:?}", joined.other);
}

#[test]
fn responses_and_ollama_streams_are_repaired() {
    let text = fetch(
        "/v1/responses",
        support::responses_tools(),
        &responses(),
        &[],
    );
    assert!(
        text.contains(r#""delta":"{\"path\":\"é\",\"max_lines\":4}""#),
        "{text}"
    );
    // A turn with a native call recovers nothing from text (`--recover content`): the markup
    // comes back where it was, in its message (issue #29 §2).
    assert!(text.contains(r#""delta":"Ok ","#), "{text}");
    assert!(
        text.contains(r#""delta":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>.""#),
        "{text}"
    );
    assert!(!text.contains("msg_tm_"), "{text}");
    // The message the upstream never closed is still in the completed output.
    assert!(
        text.contains(r#""output":[{"type":"message","id":"m1""#),
        "{text}"
    );
    assert!(text.starts_with(": keep-alive\n\n"), "{text}");
    let text = fetch("/api/chat", openai_tools(), &ollama(), &[]);
    assert!(
        text.contains(r#""arguments":{"path":"é","max_lines":4}"#),
        "{text}"
    );
    assert!(
        text.contains(r#""content":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>.""#),
        "{text}"
    );
    assert!(text.contains(r#""thinking":"hm é""#), "{text}");
}

#[test]
fn anthropic_stream_is_repaired() {
    let text = fetch(
        "/v1/messages",
        support::anthropic_tools(),
        &anthropic(),
        &[],
    );
    assert!(
        text.contains(r#""partial_json":"{\"path\":\"é\",\"max_lines\":4}""#),
        "{text}"
    );
    assert!(text.contains("event: ping"), "{text}");
}
