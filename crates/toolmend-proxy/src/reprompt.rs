//! `--reprompt N`: the loop agent frameworks lack. When a (non-streaming) response holds a call
//! that cannot be saved, the upstream is sent the same request plus the assistant's turn and
//! the retry message as that call's result, in the API's own shape.
//!
//! Every call of the turn gets a result (the APIs require one per call): an unsaved call its
//! retry message, any other call a note that it was not run because the turn is being asked
//! again. Stateless: the follow-up is built from the request and the response alone.

use serde_json::{Map, Value, json};

use crate::error::Api;
use crate::mend::Unsaved;

/// The name of the header saying how many re-prompts a response took.
pub const REPROMPTS_HEADER: &str = "x-toolmend-reprompts";

/// The result given to a call of the turn that could be saved: it was not run.
const NOT_RUN: &str = "Not run: another call of this turn was rejected. Send all the calls of \
this turn again, each with valid arguments.";

/// The follow-up request: `request` with the assistant's turn from `response` (as the upstream
/// sent it) and one result per call of the turn. `None` when the bodies are not the API's
/// shape.
pub(crate) fn follow_up(
    api: Api,
    request: &Value,
    response: &Value,
    unsaved: &[Unsaved],
) -> Option<Value> {
    let mut request = request.as_object()?.clone();
    let result_for = |id: &str| {
        unsaved
            .iter()
            .find(|u| u.id == id)
            .map_or(NOT_RUN, |u| u.message.as_str())
            .to_owned()
    };
    match api {
        Api::OpenAi | Api::Ollama => {
            let message = match api {
                Api::OpenAi => response.pointer("/choices/0/message")?,
                _ => response.get("message")?,
            };
            let calls = message.get("tool_calls")?.as_array()?;
            let messages = request.get_mut("messages")?.as_array_mut()?;
            messages.push(message.clone());
            for call in calls {
                let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let content = if api == Api::Ollama && id.is_empty() {
                    // Ollama's calls may have no id: the unsaved call is matched by name.
                    unsaved
                        .iter()
                        .find(|u| u.name == name)
                        .map_or(NOT_RUN.to_owned(), |u| u.message.clone())
                } else {
                    result_for(id)
                };
                let mut result = Map::new();
                result.insert("role".into(), json!("tool"));
                if api == Api::OpenAi {
                    result.insert("tool_call_id".into(), json!(id));
                } else {
                    result.insert("tool_name".into(), json!(name));
                }
                result.insert("content".into(), json!(content));
                messages.push(Value::Object(result));
            }
        }
        Api::Anthropic => {
            let content = response.get("content")?.as_array()?;
            let results: Vec<Value> = content
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|b| {
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                    json!({"type": "tool_result", "tool_use_id": id, "is_error": true,
                        "content": result_for(id)})
                })
                .collect();
            let messages = request.get_mut("messages")?.as_array_mut()?;
            messages.push(json!({"role": "assistant", "content": content}));
            messages.push(json!({"role": "user", "content": results}));
        }
        Api::Responses => {
            let output = response.get("output")?.as_array()?;
            let results: Vec<Value> = output
                .iter()
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
                .map(|i| {
                    let id = i.get("call_id").and_then(Value::as_str).unwrap_or_default();
                    json!({"type": "function_call_output", "call_id": id,
                        "output": result_for(id)})
                })
                .collect();
            if request.contains_key("previous_response_id")
                && let Some(id) = response.get("id")
            {
                // Server-side state: the response is already in the thread.
                request.insert("previous_response_id".into(), id.clone());
                request.insert("input".into(), Value::Array(results));
            } else {
                let mut input = match request.remove("input") {
                    Some(Value::Array(items)) => items,
                    Some(Value::String(text)) => vec![json!({"role": "user", "content": text})],
                    _ => Vec::new(),
                };
                input.extend(output.iter().cloned());
                input.extend(results);
                request.insert("input".into(), Value::Array(input));
            }
        }
    }
    Some(Value::Object(request))
}
