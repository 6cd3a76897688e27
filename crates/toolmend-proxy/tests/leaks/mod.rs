//! Upstream bodies whose only text is leaked call markup, for every API streamed and not, and
//! the requests of an agent loop's turns (issue #24).

#![allow(dead_code, unreachable_pub)]

use serde_json::{Value, json};

use crate::support::{self, Script};

/// Two Hermes blocks separated by a line break: the agents' usual leak.
pub const TWO_BLOCKS: &str = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}\n</tool_call>";

/// One API and body kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Chat,
    Messages,
    Responses,
    Ollama,
}

pub const ALL: [Api; 4] = [Api::Chat, Api::Messages, Api::Responses, Api::Ollama];

impl Api {
    pub fn path(self) -> &'static str {
        match self {
            Self::Chat => "/v1/chat/completions",
            Self::Messages => "/v1/messages",
            Self::Responses => "/v1/responses",
            Self::Ollama => "/api/chat",
        }
    }

    pub fn tools(self) -> Value {
        match self {
            Self::Chat | Self::Ollama => support::openai_tools(),
            Self::Messages => support::anthropic_tools(),
            Self::Responses => support::responses_tools(),
        }
    }

    /// The request of turn `turn` (0-based) of one conversation: each turn's history is longer.
    pub fn request(self, model: &str, stream: bool, turn: usize) -> Value {
        let mut history = vec![json!({"role": "user", "content": "go"})];
        for k in 0..turn {
            history.push(json!({"role": "assistant", "content": format!("step {k}")}));
            history.push(json!({"role": "user", "content": "go on"}));
        }
        let key = if self == Self::Responses {
            "input"
        } else {
            "messages"
        };
        json!({"model": model, "stream": stream, "max_tokens": 50, "tools": self.tools(),
            key: history})
    }

    /// The upstream's answer holding `text` as its only text, with the same response id every
    /// time (as a scripted model gives).
    pub fn script(self, stream: bool, text: &str) -> Script {
        if !stream {
            return Script::json(self.body(text).to_string());
        }
        match self {
            Self::Ollama => Script::Lines(vec![self.stream(text).into_bytes()]),
            _ => Script::Chunks(vec![self.stream(text).into_bytes()]),
        }
    }

    /// A whole response body.
    pub fn body(self, text: &str) -> Value {
        match self {
            Self::Chat => json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text}}]}),
            Self::Messages => json!({"id": "msg_1", "type": "message", "role": "assistant",
                "model": "m", "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 1, "output_tokens": 1}}),
            Self::Responses => json!({"id": "resp_1", "object": "response", "status": "completed",
                "output": [{"type": "message", "id": "msg_1", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "text": text,
                        "annotations": []}]}]}),
            Self::Ollama => json!({"model": "m", "created_at": "t", "done": true,
                "done_reason": "stop", "message": {"role": "assistant", "content": text}}),
        }
    }

    /// A streamed body, the text in two deltas.
    pub fn stream(self, text: &str) -> String {
        let cut = text
            .char_indices()
            .nth(text.chars().count() / 2)
            .map_or(0, |(i, _)| i);
        let (a, b) = text.split_at(cut);
        match self {
            Self::Chat => {
                let chunk = |delta: Value, finish: Value| {
                    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                        "model": "m", "choices": [{"index": 0, "delta": delta,
                            "finish_reason": finish}]})
                };
                support::sse_body(&[
                    chunk(json!({"role": "assistant", "content": ""}), Value::Null),
                    chunk(json!({"content": a}), Value::Null),
                    chunk(json!({"content": b}), Value::Null),
                    chunk(json!({}), json!("stop")),
                ])
            }
            Self::Messages => {
                let events = [
                    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                        "role": "assistant", "content": [], "model": "m"}}),
                    json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": a}}),
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": b}}),
                    json!({"type": "content_block_stop", "index": 0}),
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
                    json!({"type": "message_stop"}),
                ];
                support::named_sse(&events, false)
            }
            Self::Responses => {
                let delta = |d: &str| {
                    json!({"type": "response.output_text.delta", "item_id": "msg_1",
                        "output_index": 0, "content_index": 0, "delta": d})
                };
                let message = json!({"type": "message", "id": "msg_1", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "text": text,
                        "annotations": []}]});
                let events = [
                    json!({"type": "response.created", "response": {"id": "resp_1",
                        "status": "in_progress", "output": []}}),
                    json!({"type": "response.output_item.added", "output_index": 0, "item":
                        {"type": "message", "id": "msg_1", "status": "in_progress",
                            "role": "assistant", "content": []}}),
                    json!({"type": "response.content_part.added", "item_id": "msg_1",
                        "output_index": 0, "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []}}),
                    delta(a),
                    delta(b),
                    json!({"type": "response.output_text.done", "item_id": "msg_1",
                        "output_index": 0, "content_index": 0, "text": text}),
                    json!({"type": "response.content_part.done", "item_id": "msg_1",
                        "output_index": 0, "content_index": 0,
                        "part": {"type": "output_text", "text": text, "annotations": []}}),
                    json!({"type": "response.output_item.done", "output_index": 0,
                        "item": message}),
                    json!({"type": "response.completed", "response": {"id": "resp_1",
                        "status": "completed", "output": [message]}}),
                ];
                support::named_sse(&events, true)
            }
            Self::Ollama => {
                let line = |content: &str, done: bool| {
                    let mut line = json!({"model": "m", "created_at": "t", "done": done,
                        "message": {"role": "assistant", "content": content}});
                    if done {
                        line["done_reason"] = json!("stop");
                    }
                    line
                };
                support::ndjson_body(&[line(a, false), line(b, false), line("", true)])
            }
        }
    }
}

/// Every `call_tm_<12 hex>_<n>` id in a response text, in order.
pub fn recovered_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("call_tm_") {
        let tail = &rest[at + "call_tm_".len()..];
        let len = tail
            .find(|c: char| !(c.is_ascii_hexdigit() || c == '_'))
            .unwrap_or(tail.len());
        let id = format!("call_tm_{}", &tail[..len]);
        if !ids.contains(&id) {
            ids.push(id);
        }
        rest = &tail[len..];
    }
    ids
}

/// Every JSON payload of a response: the body itself, each SSE `data:` or each NDJSON line.
pub fn payloads(text: &str) -> Vec<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return vec![value];
    }
    text.lines()
        .map(|line| line.strip_prefix("data: ").unwrap_or(line))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .collect()
}

/// The text the client sees and how many text parts carry it (Chat: messages or deltas with
/// `content` other than null and ""; Anthropic: text blocks; Responses: message items; Ollama:
/// lines with content other than "").
pub fn visible_text(api: Api, stream: bool, text: &str) -> (String, usize) {
    let mut joined = String::new();
    let mut parts = 0;
    for payload in payloads(text) {
        match (api, stream) {
            (Api::Chat, false) => {
                if let Some(t) = payload
                    .pointer("/choices/0/message/content")
                    .and_then(Value::as_str)
                {
                    joined.push_str(t);
                    parts += 1;
                }
            }
            (Api::Chat, true) => {
                if let Some(t) = payload
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    && !t.is_empty()
                {
                    joined.push_str(t);
                    parts += 1;
                }
            }
            (Api::Messages, false) => {
                for block in payload["content"].as_array().into_iter().flatten() {
                    if block["type"] == "text" {
                        joined.push_str(block["text"].as_str().unwrap_or_default());
                        parts += 1;
                    }
                }
            }
            (Api::Messages, true) => {
                if payload["type"] == "content_block_start"
                    && payload["content_block"]["type"] == "text"
                {
                    parts += 1;
                }
                if let Some(t) = payload.pointer("/delta/text").and_then(Value::as_str) {
                    joined.push_str(t);
                }
            }
            (Api::Responses, false) => {
                for item in payload["output"].as_array().into_iter().flatten() {
                    if item["type"] == "message" {
                        parts += 1;
                        joined.push_str(item["content"][0]["text"].as_str().unwrap_or_default());
                    }
                }
            }
            (Api::Responses, true) => {
                if payload["type"] == "response.output_item.added"
                    && payload["item"]["type"] == "message"
                {
                    parts += 1;
                }
                if payload["type"] == "response.output_text.delta" {
                    joined.push_str(payload["delta"].as_str().unwrap_or_default());
                }
                if payload["type"] == "response.completed" {
                    let messages = payload["response"]["output"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|i| i["type"] == "message")
                        .count();
                    assert!(
                        messages <= parts,
                        "completed lists a message never sent: {payload}"
                    );
                }
            }
            (Api::Ollama, _) => {
                if let Some(t) = payload.pointer("/message/content").and_then(Value::as_str)
                    && !t.is_empty()
                {
                    joined.push_str(t);
                    parts += 1;
                }
            }
        }
    }
    (joined, parts)
}
