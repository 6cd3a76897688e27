//! `--reprompt N` on streamed responses (issue #24, item 5): the client's stream is held only
//! from the first native call; a call that cannot be saved is asked again and the answer
//! continues the same stream (one envelope, indices and sequence numbers going on, the text
//! already sent kept and the retry's text after it). The mock model streams some text and a
//! hopeless call until it sees the retry message.

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{Value, json};
use toolmend_proxy::ProxyConfig;

/// Arguments no repair can save: `path` is required and missing.
const HOPELESS: &str = r#"{"max_lines": "many"}"#;
const GOOD: &str = r#"{"path": "a.txt"}"#;
const TEXT: &str = "Let me read it. ";
const COMMENT: &str = ": x-toolmend-reprompts: ";

#[derive(Default)]
struct Model {
    /// Fix the call once the retry message comes back.
    learns: bool,
    /// Send good arguments from the start.
    good: bool,
    seen: Mutex<Vec<Value>>,
}

fn data(events: &[Value]) -> String {
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// The streamed answer number `n` (from 1) on `path`: text, then one call with `arguments`.
fn answer(path: &str, n: usize, arguments: &str) -> String {
    match path {
        "/v1/chat/completions" => {
            let chunk = |delta: Value, finish: Value| {
                json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk",
                    "created": n, "model": "m",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            data(&[
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                chunk(json!({"content": TEXT}), Value::Null),
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": format!("call_{n}"),
                        "type": "function", "function": {"name": "read_file", "arguments": ""}}]}),
                    Value::Null,
                ),
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
                    Value::Null,
                ),
                chunk(json!({}), json!("tool_calls")),
            ])
        }
        "/v1/messages" => support::named_sse(
            &[
                json!({"type": "message_start", "message": {"id": format!("msg_{n}"),
                    "type": "message", "role": "assistant", "model": "m", "content": [],
                    "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 0}}}),
                json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": TEXT}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "content_block_start", "index": 1, "content_block":
                    {"type": "tool_use", "id": format!("toolu_{n}"), "name": "read_file",
                        "input": {}}}),
                json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": arguments}}),
                json!({"type": "content_block_stop", "index": 1}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
                    "stop_sequence": null}, "usage": {"output_tokens": n}}),
                json!({"type": "message_stop"}),
            ],
            false,
        ),
        "/v1/responses" => {
            let message = json!({"type": "message", "id": format!("msg_{n}"),
                "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": TEXT, "annotations": []}]});
            let call = json!({"type": "function_call", "id": format!("fc_{n}"),
                "call_id": format!("call_{n}"), "name": "read_file", "arguments": arguments,
                "status": "completed"});
            let part = json!({"item_id": format!("msg_{n}"), "output_index": 0,
                "content_index": 0});
            let with = |mut base: Value, kind: &str, extra: Value| {
                base["type"] = json!(kind);
                for (k, v) in extra.as_object().unwrap() {
                    base[k] = v.clone();
                }
                base
            };
            support::named_sse(
                &[
                    json!({"type": "response.created", "response": {"id": format!("resp_{n}"),
                        "object": "response", "status": "in_progress", "output": []}}),
                    json!({"type": "response.output_item.added", "output_index": 0,
                        "item": {"type": "message", "id": format!("msg_{n}"),
                            "role": "assistant", "status": "in_progress", "content": []}}),
                    with(
                        part.clone(),
                        "response.content_part.added",
                        json!({"part": {"type": "output_text", "text": "", "annotations": []}}),
                    ),
                    with(
                        part.clone(),
                        "response.output_text.delta",
                        json!({"delta": TEXT}),
                    ),
                    with(
                        part.clone(),
                        "response.output_text.done",
                        json!({"text": TEXT}),
                    ),
                    with(
                        part,
                        "response.content_part.done",
                        json!({"part": {"type": "output_text", "text": TEXT, "annotations": []}}),
                    ),
                    json!({"type": "response.output_item.done", "output_index": 0,
                        "item": message}),
                    json!({"type": "response.output_item.added", "output_index": 1,
                        "item": {"type": "function_call", "id": format!("fc_{n}"),
                            "call_id": format!("call_{n}"), "name": "read_file",
                            "arguments": "", "status": "in_progress"}}),
                    json!({"type": "response.function_call_arguments.delta",
                        "item_id": format!("fc_{n}"), "output_index": 1, "delta": arguments}),
                    json!({"type": "response.function_call_arguments.done",
                        "item_id": format!("fc_{n}"), "output_index": 1,
                        "arguments": arguments}),
                    json!({"type": "response.output_item.done", "output_index": 1,
                        "item": call}),
                    json!({"type": "response.completed", "response": {"id": format!("resp_{n}"),
                        "object": "response", "status": "completed", "output": [message, call],
                        "usage": {"input_tokens": 1, "output_tokens": n, "total_tokens": n + 1}}}),
                ],
                true,
            )
        }
        _ => {
            let calls: Value = serde_json::from_str(arguments).unwrap();
            let line = |message: Value, done: bool| {
                json!({"model": "m", "created_at": "t",
                "message": message, "done": done})
            };
            support::ndjson_body(&[
                line(json!({"role": "assistant", "content": TEXT}), false),
                line(
                    json!({"role": "assistant", "content": "", "tool_calls":
                        [{"function": {"name": "read_file", "arguments": calls}}]}),
                    false,
                ),
                line(json!({"role": "assistant", "content": ""}), true),
            ])
        }
    }
}

async fn serve(State(model): State<Arc<Model>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let body = axum::body::to_bytes(request.into_body(), usize::MAX)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    let told = body.to_string().contains("was rejected");
    let n = {
        let mut seen = model.seen.lock().unwrap();
        seen.push(body);
        seen.len()
    };
    let arguments = if model.good || (told && model.learns) {
        GOOD
    } else {
        HOPELESS
    };
    let kind = if path == "/api/chat" {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    Response::builder()
        .header("content-type", kind)
        .body(Body::from(answer(&path, n, arguments)))
        .unwrap()
}

/// A scripted model and two proxies in front of it: with `--reprompt reprompt`, and without.
async fn start(learns: bool, good: bool, reprompt: u8) -> (Arc<Model>, String, String) {
    let model = Arc::new(Model {
        learns,
        good,
        ..Model::default()
    });
    let router = Router::new().fallback(serve).with_state(Arc::clone(&model));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let mut config = ProxyConfig::new(format!("http://{addr}"));
    config.reprompt = reprompt;
    let with = support::start_proxy(config).await;
    let without = support::start_proxy(ProxyConfig::new(format!("http://{addr}"))).await;
    (model, with, without)
}

/// The JSON data of each SSE event (or NDJSON line) of a body, and its SSE comments.
fn events(body: &str) -> (Vec<Value>, Vec<String>) {
    let mut values = Vec::new();
    let mut comments = Vec::new();
    let blocks: Vec<&str> = if body.contains("data: ") {
        body.split("\n\n").collect()
    } else {
        body.lines()
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    };
    for block in blocks {
        for line in block.lines() {
            if line.starts_with(':') {
                comments.push(line.to_owned());
            }
        }
        let text: Vec<&str> = block
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        let text = if text.is_empty() && block.starts_with('{') {
            block.to_owned()
        } else {
            text.join("\n")
        };
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            values.push(value);
        }
    }
    (values, comments)
}

/// What the client ends with: the text, the calls' (name, arguments), and for the SSE APIs
/// checks that the stream is one well-formed message.
fn client_view(path: &str, body: &str) -> (String, Vec<(String, Value)>) {
    let (values, _) = events(body);
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    match path {
        "/v1/chat/completions" => {
            let joined = support::join_openai(body);
            assert!(joined.done, "{body}");
            assert_eq!(joined.finish, ["tool_calls"], "{body}");
            let ids: Vec<&Value> = values.iter().map(|v| &v["id"]).collect();
            assert!(ids.windows(2).all(|w| w[0] == w[1]), "one chunk id: {body}");
            let roles = body.matches("\"role\"").count();
            assert_eq!(roles, 1, "{body}");
            let calls = joined
                .calls
                .values()
                .map(|(_, name, args)| (name.clone(), parse(args)))
                .collect();
            (joined.content, calls)
        }
        "/v1/messages" => {
            let kinds: Vec<&str> = values.iter().filter_map(|v| v["type"].as_str()).collect();
            assert_eq!(kinds.iter().filter(|k| **k == "message_start").count(), 1);
            assert_eq!(kinds.iter().filter(|k| **k == "message_stop").count(), 1);
            assert_eq!(kinds.last(), Some(&"message_stop"), "{body}");
            let mut text = String::new();
            let mut calls = Vec::new();
            let mut open: Option<u64> = None;
            let mut next = 0;
            let mut input = String::new();
            let mut name = String::new();
            for value in &values {
                let index = value["index"].as_u64();
                match value["type"].as_str().unwrap() {
                    "content_block_start" => {
                        assert_eq!(open, None, "blocks do not overlap: {body}");
                        assert_eq!(index, Some(next), "indices go on: {body}");
                        open = index;
                        next += 1;
                        name = value["content_block"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned();
                    }
                    "content_block_delta" => {
                        assert_eq!(index, open, "{body}");
                        text.push_str(value["delta"]["text"].as_str().unwrap_or_default());
                        input.push_str(value["delta"]["partial_json"].as_str().unwrap_or_default());
                    }
                    "content_block_stop" => {
                        assert_eq!(index, open, "{body}");
                        open = None;
                        if !name.is_empty() {
                            calls.push((std::mem::take(&mut name), parse(&input)));
                        }
                        input.clear();
                    }
                    "message_delta" => assert_eq!(value["delta"]["stop_reason"], "tool_use"),
                    _ => {}
                }
            }
            (text, calls)
        }
        "/v1/responses" => {
            let kinds: Vec<&str> = values.iter().filter_map(|v| v["type"].as_str()).collect();
            assert_eq!(
                kinds.iter().filter(|k| **k == "response.created").count(),
                1
            );
            assert_eq!(kinds.last(), Some(&"response.completed"), "{body}");
            let numbers: Vec<u64> = values
                .iter()
                .map(|v| v["sequence_number"].as_u64().unwrap())
                .collect();
            assert_eq!(
                numbers,
                (0..values.len() as u64).collect::<Vec<_>>(),
                "{body}"
            );
            let mut text = String::new();
            let mut added = 0;
            for value in &values {
                match value["type"].as_str().unwrap() {
                    "response.output_item.added" => {
                        assert_eq!(value["output_index"], added, "indices go on: {body}");
                        added += 1;
                    }
                    "response.output_text.delta" => {
                        text.push_str(value["delta"].as_str().unwrap());
                    }
                    _ => {}
                }
            }
            let output = values.last().unwrap()["response"]["output"]
                .as_array()
                .unwrap()
                .clone();
            assert_eq!(
                output.len(),
                added as usize,
                "the final output lists all: {body}"
            );
            let calls = output
                .iter()
                .filter(|i| i["type"] == "function_call")
                .map(|i| {
                    (
                        i["name"].as_str().unwrap().to_owned(),
                        parse(i["arguments"].as_str().unwrap()),
                    )
                })
                .collect();
            (text, calls)
        }
        _ => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for value in &values {
                text.push_str(value["message"]["content"].as_str().unwrap_or_default());
                for call in value["message"]["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let name = call["function"]["name"].as_str().unwrap().to_owned();
                    calls.push((name, call["function"]["arguments"].clone()));
                }
            }
            assert_eq!(values.iter().filter(|v| v["done"] == true).count(), 1);
            (text, calls)
        }
    }
}

#[tokio::test]
async fn a_hopeless_streamed_call_is_asked_again_within_the_same_stream() {
    let (model, base, _) = start(true, false, 2).await;
    for path in support::REPAIRED_PATHS {
        model.seen.lock().unwrap().clear();
        let body = support::post_text(&base, path, &support::user_request(path, true)).await;
        let (text, calls) = client_view(path, &body);
        // The first answer's text went out before its call; the retry's text follows.
        assert_eq!(text, format!("{TEXT}{TEXT}"), "{path}: {body}");
        assert_eq!(
            calls,
            [("read_file".to_owned(), json!({"path": "a.txt"}))],
            "{path}: {body}"
        );
        let (_, comments) = events(&body);
        if path == "/api/chat" {
            assert!(comments.is_empty(), "NDJSON has no comments: {body}");
        } else {
            assert_eq!(comments, [format!("{COMMENT}1")], "{path}: {body}");
        }
        let seen = model.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "{path}");
        assert_eq!(seen[1]["stream"], true, "{path}");
        let retry = seen[1].to_string();
        assert!(retry.contains("was rejected"), "{path}: {retry}");
        assert!(
            retry.contains(TEXT),
            "the assistant turn goes back: {retry}"
        );
    }
    let metrics = support::metrics_text(&base).await;
    for route in ["chat", "messages", "responses", "ollama_chat"] {
        let fixed = metrics.lines().find(|l| {
            l.starts_with("toolmend_reprompts_total")
                && l.contains(&format!("route=\"{route}\""))
                && l.contains("outcome=\"fixed\"")
        });
        assert!(
            fixed.is_some_and(|l| l.ends_with(" 1")),
            "{route}: {metrics}"
        );
    }
}

#[tokio::test]
async fn a_stream_still_unsaved_after_n_reprompts_ends_with_the_last_answer_annotated() {
    let (model, base, _) = start(false, false, 2).await;
    for path in support::REPAIRED_PATHS {
        model.seen.lock().unwrap().clear();
        let body = support::post_text(&base, path, &support::user_request(path, true)).await;
        let (text, calls) = client_view(path, &body);
        assert_eq!(text, TEXT.repeat(3), "{path}: {body}");
        // `--invalid pass`: the last answer's call as the upstream sent it.
        assert_eq!(
            calls,
            [("read_file".to_owned(), json!({"max_lines": "many"}))],
            "{path}: {body}"
        );
        if path != "/api/chat" {
            let (_, comments) = events(&body);
            assert_eq!(comments, [format!("{COMMENT}2")], "{path}: {body}");
        }
        assert_eq!(model.seen.lock().unwrap().len(), 3, "{path}");
    }
    let metrics = support::metrics_text(&base).await;
    let unsaved = metrics.lines().find(|l| {
        l.starts_with("toolmend_reprompts_total")
            && l.contains("route=\"messages\"")
            && l.contains("outcome=\"unsaved\"")
    });
    assert!(unsaved.is_some_and(|l| l.ends_with(" 2")), "{metrics}");
}

#[tokio::test]
async fn a_stream_whose_calls_are_fine_is_not_reprompted_and_goes_out_unchanged() {
    let (model, base, without) = start(false, true, 2).await;
    for path in support::REPAIRED_PATHS {
        model.seen.lock().unwrap().clear();
        let body = support::post_text(&base, path, &support::user_request(path, true)).await;
        assert_eq!(model.seen.lock().unwrap().len(), 1, "{path}");
        model.seen.lock().unwrap().clear();
        let plain = support::post_text(&without, path, &support::user_request(path, true)).await;
        // Each answer is numbered by the model's request count: both were its first.
        assert_eq!(body, plain, "{path}");
        let (text, calls) = client_view(path, &body);
        assert_eq!(text, TEXT);
        assert_eq!(calls, [("read_file".to_owned(), json!({"path": "a.txt"}))]);
    }
}
