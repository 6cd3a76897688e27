//! A call cut off mid-stream (issue #29 §2): the upstream's stream ends inside the call's
//! arguments. With `--invalid reject` the client gets the retry message instead of the call;
//! with `--invalid pass` the call goes out as received (never closed) and is counted invalid.

mod support;

use serde_json::json;
use support::{Script, metrics_text, start};
use toolmend_proxy::InvalidPolicy;

/// A read of a tool that may mutate (no read-only hint), cut inside its string.
const CUT: &str = "{\"path\": \"a";

fn chat_body() -> String {
    let chunk = json!({"id": "c", "choices": [{"index": 0, "finish_reason": null, "delta": {
        "content": "Reading. ",
        "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": CUT}}]}}]});
    format!("data: {chunk}\n\n")
}

fn anthropic_body() -> String {
    support::named_sse(
        &[
            json!({"type": "message_start", "message": {"id": "msg_1", "content": []}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": CUT}}),
        ],
        false,
    )
}

fn responses_body() -> String {
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "read_file", "arguments": "", "status": "in_progress"});
    support::named_sse(
        &[
            json!({"type": "response.created", "response": {"id": "resp_1", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                "item_id": "fc_1", "delta": CUT}),
        ],
        true,
    )
}

/// One route's request for a cut stream and the upstream body that cuts.
struct Case {
    path: &'static str,
    tools: serde_json::Value,
    body: String,
}

fn cases() -> [Case; 3] {
    [
        Case {
            path: "/v1/chat/completions",
            tools: support::openai_tools(),
            body: chat_body(),
        },
        Case {
            path: "/v1/messages",
            tools: support::anthropic_tools(),
            body: anthropic_body(),
        },
        Case {
            path: "/v1/responses",
            tools: support::responses_tools(),
            body: responses_body(),
        },
    ]
}

fn request(case: &Case, model: &str) -> serde_json::Value {
    let key = if case.path == "/v1/responses" {
        "input"
    } else {
        "messages"
    };
    json!({"model": model, "stream": true, "max_tokens": 50, "tools": case.tools,
        key: [{"role": "user", "content": "go"}]})
}

/// The cut argument text as it appears JSON-escaped in an event.
fn cut_escaped() -> String {
    let quoted = serde_json::to_string(CUT).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

#[tokio::test]
async fn a_cut_call_is_rejected_with_its_retry_message() {
    let (mock, base) = start(|c| c.invalid = InvalidPolicy::Reject).await;
    for case in cases() {
        let model = format!("reject{}", case.path.replace('/', "-"));
        mock.script(&model, Script::Cut(vec![case.body.clone().into_bytes()]));
        let out = support::post_text(&base, case.path, &request(&case, &model)).await;
        assert!(out.contains("cut off"), "{model}: no retry message: {out}");
        assert!(
            !out.contains(&cut_escaped()),
            "{model}: the cut call went out: {out}"
        );
    }
}

#[tokio::test]
async fn a_cut_call_passes_as_received_and_is_counted() {
    let (mock, base) = start(|c| c.invalid = InvalidPolicy::Pass).await;
    for case in cases() {
        let model = format!("pass{}", case.path.replace('/', "-"));
        mock.script(&model, Script::Cut(vec![case.body.clone().into_bytes()]));
        let out = support::post_text(&base, case.path, &request(&case, &model)).await;
        assert!(
            out.contains(&cut_escaped()),
            "{model}: not as received: {out}"
        );
        assert!(!out.contains("cut off"), "{model}: {out}");
        let metrics = metrics_text(&base).await;
        let counted = metrics.lines().any(|l| {
            l.starts_with("toolmend_calls_total")
                && l.contains(&format!("model=\"{model}\""))
                && l.contains("status=\"invalid\"")
        });
        assert!(counted, "{model}: not counted invalid: {metrics}");
    }
}
