//! Anthropic Messages: `content` blocks ↔ toolmend turns (non-streaming bodies).
//!
//! `tool_use` blocks are the native calls; a single `text` block is the content channel and a
//! single `thinking` block the reasoning channel. Thinking text is never rewritten (its
//! `signature` covers it), but calls recovered from it are added.

use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, CallResult, Status, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{
    Annotations, BodyContext, Fate, append_text, arguments_text, fates, run_body_turn,
};

/// Whether a user message is a real user turn (not only `tool_result` blocks).
fn is_user_turn(message: &Value) -> bool {
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return false;
    }
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) != Some("tool_result")),
        _ => true,
    }
}

/// The assistant tool calls since the last real user message of a `messages` array.
pub(crate) fn history(messages: &Value) -> Vec<Vec<ToolCall>> {
    let Some(messages) = messages.as_array() else {
        return Vec::new();
    };
    let start = messages.iter().rposition(is_user_turn).map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(|m| match m.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().filter_map(tool_use).collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

fn tool_use(block: &Value) -> Option<ToolCall> {
    (block_type(block) == Some("tool_use")).then(|| {
        let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
        let name = block
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ToolCall::new(id, name, arguments_text(block.get("input")))
    })
}

/// The only block of a type, if there is exactly one.
fn single<'a>(blocks: &'a [Value], kind: &str) -> Option<(usize, &'a Value)> {
    let mut found = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| block_type(b) == Some(kind));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Repairs a message body in place; returns what was found and whether the body changed.
pub(crate) fn repair_message(
    body: &mut Value,
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> (Annotations, bool) {
    let config = cx.config;
    let mut notes = Annotations::default();
    let Some(object) = body.as_object_mut() else {
        return (notes, false);
    };
    let Some(Value::Array(blocks)) = object.get("content") else {
        return (notes, false);
    };
    let text = single(blocks, "text");
    let thinking = single(blocks, "thinking");
    let mut turn = AssistantTurn::default();
    turn.content = text.and_then(|(_, b)| b.get("text")?.as_str().map(str::to_owned));
    turn.reasoning = thinking.and_then(|(_, b)| b.get("thinking")?.as_str().map(str::to_owned));
    turn.tool_calls = blocks.iter().filter_map(tool_use).collect();
    turn.finish_reason = match object.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => Some("length".to_owned()),
        other => other.map(str::to_owned),
    };
    let Some(result) = run_body_turn(cx, &mut turn, history, &mut notes) else {
        return (notes, false);
    };
    let text_index = text.map(|(i, _)| i);
    let changed = apply(object, text_index, &turn, &result, config);
    (notes, changed)
}

/// The `input` object of a repaired call.
fn input_of(call: &CallResult) -> Value {
    call.arguments.clone().unwrap_or_else(|| {
        serde_json::from_str(&call.arguments_text)
            .unwrap_or_else(|_| Value::String(call.arguments_text.clone()))
    })
}

/// A new `tool_use` block for a call.
pub(crate) fn new_block(call: &CallResult) -> Value {
    json!({"type": "tool_use", "id": call.id, "name": call.name.as_ref(), "input": input_of(call)})
}

fn apply(
    object: &mut Map<String, Value>,
    text_index: Option<usize>,
    turn: &AssistantTurn,
    result: &TurnResult,
    config: &ProxyConfig,
) -> bool {
    let Some(Value::Array(blocks)) = object.get("content") else {
        return false;
    };
    let fates = fates(&result.calls, config);
    let content_changed = result.content != turn.content;
    let any = content_changed || fates.iter().any(|f| *f != Fate::AsSent);
    if !any {
        return false;
    }
    let mut out = Vec::with_capacity(blocks.len() + 1);
    let mut native = 0usize;
    let mut extra_text: Option<String> = None;
    let mut calls_left = 0usize;
    for (i, block) in blocks.iter().enumerate() {
        if Some(i) == text_index && content_changed {
            match result.content.as_deref() {
                Some(text) if !text.trim().is_empty() => {
                    let mut b = block.clone();
                    b["text"] = json!(text);
                    out.push(b);
                }
                _ => {}
            }
            continue;
        }
        if block_type(block) != Some("tool_use") {
            out.push(block.clone());
            continue;
        }
        for (call, fate) in result.calls.iter().zip(&fates) {
            if call.native_index != Some(native) {
                continue;
            }
            match fate {
                Fate::AsSent => {
                    calls_left += 1;
                    out.push(block.clone());
                }
                Fate::Rewrite => {
                    calls_left += 1;
                    let mut b = block.clone();
                    if !call.id.is_empty() {
                        b["id"] = json!(call.id);
                    }
                    b["name"] = json!(call.name.as_ref());
                    b["input"] = input_of(call);
                    out.push(b);
                }
                Fate::Drop => {}
                Fate::DropWithText(text) => extra_text = Some(append_text(extra_text, text)),
            }
        }
        native += 1;
    }
    let mut recovered = false;
    for (call, fate) in result.calls.iter().zip(&fates) {
        if call.native_index.is_none() {
            match fate {
                Fate::Rewrite => {
                    recovered |= call.status == Status::Recovered;
                    calls_left += 1;
                    out.push(new_block(call));
                }
                Fate::DropWithText(text) => extra_text = Some(append_text(extra_text, text)),
                _ => {}
            }
        }
    }
    if let Some(text) = extra_text {
        out.push(json!({"type": "text", "text": text}));
    }
    object.insert("content".into(), Value::Array(out));
    if recovered {
        object.insert("stop_reason".into(), json!("tool_use"));
    } else if calls_left == 0
        && object.get("stop_reason").and_then(Value::as_str) == Some("tool_use")
    {
        object.insert("stop_reason".into(), json!("end_turn"));
    }
    true
}
