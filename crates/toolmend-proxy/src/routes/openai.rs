//! OpenAI Chat Completions: `choices[].message` ↔ toolmend turns (non-streaming bodies).

use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, CallResult, Status, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{
    Annotations, BodyContext, ChoiceSessions, MessageCalls, arguments_text, message_calls,
};
use crate::wire::set_call;

/// The assistant tool calls since the last user message of an OpenAI `messages` array.
pub(crate) fn history(messages: &Value) -> Vec<Vec<ToolCall>> {
    let Some(messages) = messages.as_array() else {
        return Vec::new();
    };
    let start = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map(|m| read_calls(m.get("tool_calls")).0)
        .collect()
}

/// The calls of a `tool_calls` array; also the call objects as sent.
pub(crate) fn read_calls(calls: Option<&Value>) -> (Vec<ToolCall>, Vec<Value>) {
    let Some(Value::Array(native)) = calls else {
        return (Vec::new(), Vec::new());
    };
    let calls = native
        .iter()
        .map(|call| {
            let function = call.get("function").unwrap_or(call);
            let name = function.get("name").and_then(Value::as_str).unwrap_or("");
            let arguments = arguments_text(function.get("arguments"));
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            ToolCall::new(id, name, arguments)
        })
        .collect();
    (calls, native.clone())
}

/// Repairs every choice of a completion in place; `history` gives the storm session.
///
/// Returns what was found; the body is changed only in repair mode.
pub(crate) fn repair_completion(
    body: &mut Value,
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> (Annotations, bool) {
    let BodyContext {
        mender,
        config,
        model,
        turn_id,
    } = *cx;
    let mut notes = Annotations::default();
    let mut changed = false;
    let Some(choices) = body.get_mut("choices").and_then(Value::as_array_mut) else {
        return (notes, false);
    };
    let mut sessions = ChoiceSessions::new(history);
    for choice in choices {
        let Some(choice) = choice.as_object_mut() else {
            continue;
        };
        let finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(message) = choice.get_mut("message").and_then(Value::as_object_mut) else {
            continue;
        };
        let (mut turn, native) = read_turn(message, finish_reason);
        turn.id = Some(turn_id.to_owned());
        if turn.tool_calls.is_empty() && turn.content.is_none() && turn.reasoning.is_none() {
            continue;
        }
        // The history is read only when there are native calls a storm could repeat.
        let result = mender.run_last_turn(sessions.for_turn(mender, &turn), &turn);
        for call in &result.calls {
            notes.add(model, call);
        }
        if crate::mend::repairing(config) {
            let (did, finish) = apply(message, &turn, &native, &result, config);
            changed |= did;
            if let Some(finish) = finish {
                choice.insert("finish_reason".into(), json!(finish));
            }
        }
    }
    (notes, changed)
}

/// Writes one choice's result into the completion `body` (the choice at `index` of its
/// `choices`), as [`repair_completion`] does in repair mode; returns whether it changed.
pub(crate) fn apply_choice(
    body: &mut Value,
    index: usize,
    turn: &AssistantTurn,
    result: &TurnResult,
    config: &ProxyConfig,
) -> bool {
    let Some(choice) = body
        .get_mut("choices")
        .and_then(Value::as_array_mut)
        .and_then(|choices| choices.get_mut(index))
        .and_then(Value::as_object_mut)
    else {
        return false;
    };
    let Some(message) = choice.get_mut("message").and_then(Value::as_object_mut) else {
        return false;
    };
    let native = match message.get("tool_calls") {
        Some(Value::Array(native)) => native.clone(),
        _ => Vec::new(),
    };
    let (did, finish) = apply(message, turn, &native, result, config);
    if let Some(finish) = finish {
        choice.insert("finish_reason".into(), json!(finish));
    }
    did
}

fn read_turn(
    message: &Map<String, Value>,
    finish_reason: Option<String>,
) -> (AssistantTurn, Vec<Value>) {
    let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
    let (tool_calls, native) = read_calls(message.get("tool_calls"));
    let mut turn = AssistantTurn::default();
    turn.content = text("content");
    turn.reasoning = text("reasoning_content").or_else(|| text("reasoning"));
    turn.tool_calls = tool_calls;
    turn.finish_reason = finish_reason;
    (turn, native)
}

/// Writes the turn's result into the message; returns whether it changed and the new
/// finish reason, if any.
fn apply(
    message: &mut Map<String, Value>,
    turn: &AssistantTurn,
    native: &[Value],
    result: &TurnResult,
    config: &ProxyConfig,
) -> (bool, Option<&'static str>) {
    let mut recovered = false;
    let rewrite = |sent: Option<Value>, call: &CallResult, _| {
        let mut sent = sent.unwrap_or_else(|| {
            recovered |= call.status == Status::Recovered;
            json!({"id": call.id, "type": "function", "function": {}})
        });
        set_call(&mut sent, &call.id, &call.name, &call.arguments_text);
        sent
    };
    let MessageCalls {
        calls: tool_calls,
        content,
        mut changed,
    } = message_calls(native, result, config, rewrite);
    if content != turn.content {
        changed = true;
        // Blanks left between removed markup are no answer: no text at all.
        let content = content.filter(|text| !text.trim().is_empty());
        message.insert("content".into(), json!(content));
    }
    if result.reasoning != turn.reasoning
        && let Some(reasoning) = &result.reasoning
    {
        changed = true;
        let key = if message.contains_key("reasoning_content") {
            "reasoning_content"
        } else {
            "reasoning"
        };
        message.insert(key.into(), json!(reasoning));
    }
    if !changed {
        return (false, None);
    }
    let mut finish = None;
    if tool_calls.is_empty() {
        if message.contains_key("tool_calls") {
            message.insert("tool_calls".into(), Value::Null);
            message.shift_remove("tool_calls");
            finish = Some("stop");
        }
    } else {
        message.insert("tool_calls".into(), Value::Array(tool_calls));
        if recovered {
            finish = Some("tool_calls");
        }
    }
    (true, finish)
}
