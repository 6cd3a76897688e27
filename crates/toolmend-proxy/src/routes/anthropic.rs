//! Anthropic Messages: `content` blocks ↔ toolmend turns (non-streaming bodies).
//!
//! `tool_use` blocks are the native calls; the `text` blocks, joined, are the content channel
//! (each keeps what the library kept of it, [`super::parts`]) and the `thinking` blocks, joined,
//! the reasoning channel. Thinking text is never rewritten (its `signature` covers it), but
//! calls recovered from it are added.

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

/// The text of every block of a type (its `field`), with the block's index.
fn texts<'a>(blocks: &'a [Value], kind: &str, field: &str) -> Vec<(usize, &'a str)> {
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| block_type(b) == Some(kind))
        .filter_map(|(i, b)| Some((i, b.get(field)?.as_str()?)))
        .collect()
}

/// The joined text of `found`, `None` when there is none.
fn joined(found: &[(usize, &str)]) -> Option<String> {
    let parts: Vec<&str> = found.iter().map(|(_, t)| *t).collect();
    (!parts.is_empty()).then(|| super::parts::join(&parts))
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
    let text = texts(blocks, "text", "text");
    let mut turn = AssistantTurn::default();
    turn.content = joined(&text);
    turn.reasoning = joined(&texts(blocks, "thinking", "thinking"));
    turn.tool_calls = blocks.iter().filter_map(tool_use).collect();
    turn.finish_reason = match object.get("stop_reason").and_then(Value::as_str) {
        Some("max_tokens") => Some("length".to_owned()),
        other => other.map(str::to_owned),
    };
    let Some(result) = run_body_turn(cx, &mut turn, history, &mut notes) else {
        return (notes, false);
    };
    // Each text block's new text, when the library changed the joined one.
    let new_texts: Vec<(usize, String)> = match result.content.as_deref() {
        Some(content) if result.content != turn.content => {
            let parts: Vec<&str> = text.iter().map(|(_, t)| *t).collect();
            let limit = cx.mender.options().limits.max_recovered_calls;
            let split = super::parts::split(&parts, content, cx.mender.tools(), limit);
            text.iter().map(|(i, _)| *i).zip(split).collect()
        }
        _ => Vec::new(),
    };
    let changed = apply(object, &new_texts, &turn, &result, config);
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
    new_texts: &[(usize, String)],
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
        if let Some((_, text)) = new_texts.iter().find(|(at, _)| *at == i)
            && content_changed
        {
            // A block the library left as it was stays as sent; one left with only blanks
            // (markup taken out of it) is dropped.
            if block.get("text").and_then(Value::as_str) == Some(text.as_str()) {
                out.push(block.clone());
            } else if !text.trim().is_empty() {
                let mut b = block.clone();
                b["text"] = json!(text);
                out.push(b);
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
