//! Ollama's native chat (`POST /api/chat`): `message` ↔ toolmend turns (non-streaming bodies).
//!
//! `message.tool_calls[].function.arguments` is a JSON **object**: it is read as its JSON text
//! and a repaired value is written back as an object. `message.content` is the content channel
//! and `message.thinking` the reasoning channel; both are rewritten when markup is taken out
//! of them. `done_reason` is kept (Ollama says `stop` even after a call).

use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, CallResult, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{
    Annotations, BodyContext, MessageCalls, arguments_text, message_calls, run_body_turn,
};

/// The calls of a `tool_calls` array (arguments as their JSON text).
pub(crate) fn read_calls(calls: Option<&Value>) -> Vec<ToolCall> {
    let Some(Value::Array(calls)) = calls else {
        return Vec::new();
    };
    calls
        .iter()
        .map(|call| {
            let function = call.get("function").unwrap_or(call);
            let name = function.get("name").and_then(Value::as_str).unwrap_or("");
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            ToolCall::new(id, name, arguments_text(function.get("arguments")))
        })
        .collect()
}

/// The repaired arguments as a value: the object the library built, else the text parsed,
/// else (an invalid call passed on) the text itself, so nothing is lost.
pub(crate) fn arguments_value(call: &CallResult) -> Value {
    call.arguments.clone().unwrap_or_else(|| {
        serde_json::from_str(&call.arguments_text)
            .unwrap_or_else(|_| Value::String(call.arguments_text.clone()))
    })
}

/// Writes a repaired call into an Ollama call object, keeping its other fields; the `id` is
/// written only where the upstream sent one.
pub(crate) fn set_call(sent: &mut Value, call: &CallResult) {
    let Some(object) = sent.as_object_mut() else {
        return;
    };
    if object.contains_key("id") && !call.id.is_empty() {
        object.insert("id".into(), json!(call.id));
    }
    let function = object
        .entry("function")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(function) = function.as_object_mut() {
        function.insert("name".into(), json!(call.name.as_ref()));
        function.insert("arguments".into(), arguments_value(call));
    }
}

/// A new call object for a recovered call.
pub(crate) fn new_call(call: &CallResult, index: usize) -> Value {
    json!({"id": call.id, "function": {"index": index, "name": call.name.as_ref(),
        "arguments": arguments_value(call)}})
}

/// The finish reason the library reads from `done_reason`.
pub(crate) fn finish_reason(body: &Map<String, Value>) -> Option<String> {
    body.get("done_reason")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Repairs a chat body in place; returns what was found and whether the body changed.
pub(crate) fn repair_chat(
    body: &mut Value,
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> (Annotations, bool) {
    let config = cx.config;
    let mut notes = Annotations::default();
    let Some(object) = body.as_object_mut() else {
        return (notes, false);
    };
    let finish = finish_reason(object);
    let Some(message) = object.get_mut("message").and_then(Value::as_object_mut) else {
        return (notes, false);
    };
    let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut turn = AssistantTurn::default();
    turn.content = text("content");
    turn.reasoning = text("thinking");
    turn.tool_calls = read_calls(message.get("tool_calls"));
    turn.finish_reason = finish;
    let Some(result) = run_body_turn(cx, &mut turn, history, &mut notes) else {
        return (notes, false);
    };
    let changed = apply(message, &turn, &result, config);
    (notes, changed)
}

/// Writes the turn's result into the message; returns whether it changed.
fn apply(
    message: &mut Map<String, Value>,
    turn: &AssistantTurn,
    result: &TurnResult,
    config: &ProxyConfig,
) -> bool {
    let native: Vec<Value> = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls.clone(),
        _ => Vec::new(),
    };
    let rewrite = |sent: Option<Value>, call: &CallResult, at: usize| match sent {
        Some(mut sent) => {
            set_call(&mut sent, call);
            sent
        }
        None => new_call(call, at),
    };
    let MessageCalls {
        calls: tool_calls,
        content,
        mut changed,
    } = message_calls(&native, result, config, rewrite);
    if content != turn.content {
        changed = true;
        // Ollama always sends a string here; blanks left between removed markup are none.
        let content = content.filter(|text| !text.trim().is_empty());
        message.insert("content".into(), json!(content.unwrap_or_default()));
    }
    if result.reasoning != turn.reasoning
        && let Some(reasoning) = &result.reasoning
    {
        changed = true;
        message.insert("thinking".into(), json!(reasoning));
    }
    if !changed {
        return false;
    }
    if tool_calls.is_empty() {
        message.shift_remove("tool_calls");
    } else {
        message.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    true
}
