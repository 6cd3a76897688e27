//! Properties over chunk boundaries: the same upstream bytes split anywhere give the same
//! client-visible result, and a valid stream passes semantically unchanged.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use serde_json::{Value, json};
use support::{Joined, Mock, Script, join_openai, openai_tools, sse_body};

struct World {
    runtime: tokio::runtime::Runtime,
    mock: Arc<Mock>,
    base: String,
}

/// One mock and one proxy for every case (sockets are real, the runtime is shared).
fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (mock, base) = runtime.block_on(support::start(|_| {}));
        World {
            runtime,
            mock,
            base,
        }
    })
}

fn run(body: &str, cuts: &[usize]) -> Joined {
    static N: AtomicUsize = AtomicUsize::new(0);
    let world = world();
    let model = format!("p{}", N.fetch_add(1, Ordering::Relaxed));
    world.mock.script(
        &model,
        Script::Chunks(support::cut_at(body.as_bytes(), cuts)),
    );
    let text = world.runtime.block_on(async {
        reqwest::Client::new()
            .post(format!("{}/v1/chat/completions", world.base))
            .json(
                &json!({"model": model, "stream": true, "tools": openai_tools(),
                "messages": [{"role": "user", "content": "go"}]}),
            )
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    join_openai(&text)
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
    // here it has two, so the held markup comes back as text, at the end of the message.
    assert_eq!(
        joined.content,
        "Plan:  done<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/t\"}}\n</tool_call>"
    );
    assert_eq!(joined.calls[&0].2, "{\"path\":\"x\",\"max_lines\":3}");
    assert_eq!(joined.calls[&1].2, "{\"dir\": \"é/ü\"}");
    assert_eq!(joined.calls.len(), 2);
    assert_eq!(joined.finish, ["tool_calls"]);
    assert!(joined.done);
    assert_eq!(joined.other.len(), 2, "{:?}", joined.other);
}
