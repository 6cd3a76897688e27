//! OpenAI Responses: `output` items ↔ toolmend turns (non-streaming bodies).
//!
//! `function_call` items are the native calls (`arguments` a JSON string, `call_id` the id the
//! client answers with). Every `output_text` part of every message item, joined, is the content
//! channel (each part keeps what the library kept of it, [`super::parts`]); the reasoning
//! items' `reasoning_text` parts and `summary_text` summaries, joined, the reasoning channel
//! (scanned under `--recover all` only). Reasoning is never rewritten (like Anthropic's
//! thinking), but calls recovered from it are added. Recovered calls become new `function_call` items with fresh `call_id`s, after the
//! other items.

use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, CallResult, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{
    Annotations, BodyContext, Fate, append_text, arguments_text, fates, run_body_turn,
};

/// The `type` of an item.
fn item_type(item: &Value) -> Option<&str> {
    item.get("type").and_then(Value::as_str)
}

/// Whether an input item is a real user turn.
fn is_user_turn(item: &Value) -> bool {
    item.get("role").and_then(Value::as_str) == Some("user")
        && matches!(item_type(item), None | Some("message"))
}

/// The call of a `function_call` item, with its `call_id` as the id.
pub(crate) fn read_call(item: &Value) -> Option<ToolCall> {
    (item_type(item) == Some("function_call")).then(|| {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        ToolCall::new(
            text("call_id"),
            text("name"),
            arguments_text(item.get("arguments")),
        )
    })
}

/// The assistant tool calls since the last user message of an `input` list: each run of
/// `function_call` items is one turn (their outputs, or any other item, end it).
pub(crate) fn history(input: &Value) -> Vec<Vec<ToolCall>> {
    let Some(items) = input.as_array() else {
        return Vec::new();
    };
    let start = items.iter().rposition(is_user_turn).map_or(0, |i| i + 1);
    let mut turns = Vec::new();
    let mut current = Vec::new();
    for item in &items[start..] {
        match read_call(item) {
            Some(call) => current.push(call),
            // Reasoning and assistant text belong to the turn whose calls follow.
            None if matches!(item_type(item), Some("reasoning"))
                || item.get("role").and_then(Value::as_str) == Some("assistant") => {}
            None if !current.is_empty() => turns.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        turns.push(current);
    }
    turns
}

/// Every part of a type in the `list` (`content` or `summary`) of the items of a type: its
/// `(item, part)` position and text.
fn parts_of<'a>(
    items: &'a [Value],
    kind: &str,
    list: &'a str,
    part: &'a str,
) -> Vec<((usize, usize), &'a str)> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item_type(item) == Some(kind))
        .flat_map(|(i, item)| {
            item.get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .filter(move |(_, p)| item_type(p) == Some(part))
                .filter_map(move |(j, p)| Some(((i, j), p.get("text")?.as_str()?)))
        })
        .collect()
}

/// The joined text of `found`, `None` when there is none.
fn joined(found: &[((usize, usize), &str)]) -> Option<String> {
    let parts: Vec<&str> = found.iter().map(|(_, t)| *t).collect();
    (!parts.is_empty()).then(|| super::parts::join(&parts))
}

/// The finish reason of a response body (only truncation matters to the library).
pub(crate) fn finish_reason(response: &Value) -> Option<String> {
    let truncated = response.get("status").and_then(Value::as_str) == Some("incomplete")
        && response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            == Some("max_output_tokens");
    truncated.then(|| "length".to_owned())
}

/// Repairs a response body in place; returns what was found and whether the body changed.
pub(crate) fn repair_response(
    body: &mut Value,
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> (Annotations, bool) {
    let config = cx.config;
    let mut notes = Annotations::default();
    let finish = finish_reason(body);
    let Some(object) = body.as_object_mut() else {
        return (notes, false);
    };
    let Some(Value::Array(items)) = object.get("output") else {
        return (notes, false);
    };
    let texts = parts_of(items, "message", "content", "output_text");
    let mut turn = AssistantTurn::default();
    turn.content = joined(&texts);
    if cx.config.recover == toolmend::RecoverMode::All {
        let mut reasoning = parts_of(items, "reasoning", "content", "reasoning_text");
        reasoning.extend(parts_of(items, "reasoning", "summary", "summary_text"));
        turn.reasoning = joined(&reasoning);
    }
    turn.tool_calls = items.iter().filter_map(read_call).collect();
    turn.finish_reason = finish;
    let Some(result) = run_body_turn(cx, &mut turn, history, &mut notes) else {
        return (notes, false);
    };
    // Each text part's new text, when the library changed the joined one.
    let new_texts: Vec<((usize, usize), String)> = match result.content.as_deref() {
        Some(content) if result.content != turn.content => {
            let parts: Vec<&str> = texts.iter().map(|(_, t)| *t).collect();
            let limit = cx.mender.options().limits.max_recovered_calls;
            let split = super::parts::split(&parts, content, cx.mender.tools(), limit);
            texts.iter().map(|(at, _)| *at).zip(split).collect()
        }
        _ => Vec::new(),
    };
    let tail = id_tail(object.get("id").and_then(Value::as_str).unwrap_or(""));
    let changed = apply(object, &new_texts, &turn, &result, config, &tail);
    (notes, changed)
}

/// The last alphanumerics of a response id, to make ids unique to the response.
pub(crate) fn id_tail(id: &str) -> String {
    let mut tail: Vec<char> = id
        .chars()
        .rev()
        .filter(char::is_ascii_alphanumeric)
        .take(12)
        .collect();
    tail.reverse();
    if tail.is_empty() {
        "toolmend".to_owned()
    } else {
        tail.into_iter().collect()
    }
}

/// A new `function_call` item for a recovered call: its `call_id` is the library's id for it
/// (`call_tm_…`, unique across the conversation's turns), its item id the same with `fc_`;
/// a call without an id gets number `n` of the response.
pub(crate) fn new_call_item(call: &CallResult, tail: &str, n: usize) -> Value {
    let (id, call_id) = match call.id.strip_prefix("call_") {
        Some(rest) if !rest.is_empty() => (format!("fc_{rest}"), call.id.clone()),
        _ if !call.id.is_empty() => (format!("fc_{}", call.id), call.id.clone()),
        _ => (format!("fc_tm_{tail}_{n}"), format!("call_tm_{tail}_{n}")),
    };
    json!({"type": "function_call", "id": id, "call_id": call_id, "name": call.name.as_ref(),
        "arguments": call.arguments_text, "status": "completed"})
}

/// A new assistant message item holding `text`.
pub(crate) fn new_text_item(text: &str, tail: &str, n: usize) -> Value {
    json!({"type": "message", "id": format!("msg_tm_{tail}_{n}"), "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

/// Writes a repaired call into a `function_call` item, keeping its other fields.
pub(crate) fn set_call_item(item: &mut Value, call_id: &str, name: &str, arguments: &str) {
    let Some(object) = item.as_object_mut() else {
        return;
    };
    if !call_id.is_empty() {
        object.insert("call_id".into(), json!(call_id));
    }
    object.insert("name".into(), json!(name));
    object.insert("arguments".into(), json!(arguments));
}

fn apply(
    object: &mut Map<String, Value>,
    new_texts: &[((usize, usize), String)],
    turn: &AssistantTurn,
    result: &TurnResult,
    config: &ProxyConfig,
    tail: &str,
) -> bool {
    let Some(Value::Array(items)) = object.get("output") else {
        return false;
    };
    let fates = fates(&result.calls, config);
    let content_changed = result.content != turn.content;
    if !content_changed && fates.iter().all(|f| *f == Fate::AsSent) {
        return false;
    }
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut native = 0usize;
    let mut extra: Option<String> = None;
    for (i, item) in items.iter().enumerate() {
        if content_changed && new_texts.iter().any(|((at, _), _)| *at == i) {
            let mut item = item.clone();
            if let Some(Value::Array(parts)) = item.get_mut("content") {
                // From the last part back, so a removal moves no part still to be written.
                for ((_, part), text) in new_texts.iter().rev().filter(|((at, _), _)| *at == i) {
                    let same = parts[*part].get("text").and_then(Value::as_str) == Some(text);
                    if same {
                        // Left as it was by the library: stays as sent.
                    } else if text.trim().is_empty() {
                        // Only markup taken out and blanks: no part at all.
                        parts.remove(*part);
                    } else {
                        parts[*part]["text"] = json!(text);
                    }
                }
                if parts.is_empty() {
                    continue;
                }
            }
            out.push(item);
            continue;
        }
        if item_type(item) != Some("function_call") {
            out.push(item.clone());
            continue;
        }
        let mut part = 0usize;
        for (call, fate) in result.calls.iter().zip(&fates) {
            if call.native_index != Some(native) {
                continue;
            }
            match fate {
                Fate::AsSent => out.push(item.clone()),
                Fate::Rewrite => {
                    let mut item = item.clone();
                    set_call_item(&mut item, &call.id, &call.name, &call.arguments_text);
                    if part > 0
                        && let Some(id) = item.get("id").and_then(Value::as_str)
                    {
                        // The parts of a split call are separate items.
                        item["id"] = json!(format!("{id}_{part}"));
                    }
                    part += 1;
                    out.push(item);
                }
                Fate::Drop => {}
                Fate::DropWithText(text) => extra = Some(append_text(extra, text)),
            }
        }
        native += 1;
    }
    let mut fresh = 0usize;
    for (call, fate) in result.calls.iter().zip(&fates) {
        if call.native_index.is_none() {
            match fate {
                Fate::Rewrite => {
                    out.push(new_call_item(call, tail, fresh));
                    fresh += 1;
                }
                Fate::DropWithText(text) => extra = Some(append_text(extra, text)),
                _ => {}
            }
        }
    }
    if let Some(text) = extra {
        out.push(new_text_item(&text, tail, out.len()));
    }
    object.insert("output".into(), Value::Array(out));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_groups_runs_of_calls_since_the_last_user_item() {
        let input = json!([
            {"role": "user", "content": "old"},
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
            {"role": "user", "content": "new"},
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "b", "name": "x", "arguments": "{}"},
            {"type": "function_call", "call_id": "c", "name": "y", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "b", "output": "1"},
            {"type": "function_call_output", "call_id": "c", "output": "2"},
            {"type": "function_call", "call_id": "d", "name": "x", "arguments": "{}"},
        ]);
        let turns = history(&input);
        let ids: Vec<Vec<&str>> = turns
            .iter()
            .map(|t| t.iter().map(|c| c.id.as_str()).collect())
            .collect();
        assert_eq!(ids, [vec!["b", "c"], vec!["d"]]);
        assert!(history(&json!("just text")).is_empty());
    }

    #[test]
    fn id_tail_keeps_the_last_alphanumerics() {
        assert_eq!(id_tail("resp_0123456789abcdef"), "456789abcdef");
        assert_eq!(id_tail("--"), "toolmend");
    }
}
