//! The request side: tool calls in an outgoing conversation that would make the upstream fail.
//!
//! A broken call does not fail once: it stays in the conversation, and the *next* request is
//! rejected by the provider or crashes its chat template (`arguments: ""` is a 400 after
//! conversion to Anthropic or Gemini, a string `tool_use.input` is refused, vLLM's templates
//! parse the arguments of every earlier call). [`Mender::mend_history`] reads the assistant
//! tool calls of a request body in its API's shape and mends only the arguments an upstream
//! would reject:
//!
//! - **Well-formed arguments are never touched**: a JSON object (as text in OpenAI Chat and
//!   Responses, as a value in Anthropic and Ollama) keeps its exact bytes, even when it does
//!   not validate against the tool's schema: the upstream accepts it, and it is what the model
//!   said and the tool answered.
//! - Arguments that are not an object (empty text, broken JSON, a string where Anthropic and
//!   Ollama want an object, `null`) are mended like a call ([`Mender::repair_call`]: salvage,
//!   validate-then-repair; syntax alone for a tool the request does not declare) and written
//!   back in the API's shape ([`HistoryRepairKind::Repaired`]).
//! - One that cannot be saved becomes `{}`, the smallest value every upstream accepts
//!   ([`HistoryRepairKind::Emptied`]): left as it is, it fails the whole request.
//! - Message content is never read or written. Nothing here counts in [`Mender::stats`]: the
//!   same history is sent again with every turn.

use serde_json::{Map, Value};

use crate::salvage::{SalvageOptions, salvage};
use crate::{Mender, Status};

/// The API whose request body a history is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireApi {
    /// OpenAI Chat Completions: `messages[].tool_calls[].function.arguments` (text).
    OpenAiChat,
    /// OpenAI Responses: `input[]` items of type `function_call`, `arguments` (text).
    OpenAiResponses,
    /// Anthropic Messages: `messages[].content[]` blocks of type `tool_use`, `input` (object).
    Anthropic,
    /// Ollama `/api/chat`: `messages[].tool_calls[].function.arguments` (object).
    Ollama,
}

/// What was done to one call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryRepairKind {
    /// The arguments were mended and written back.
    Repaired,
    /// The arguments could not be saved and were sent as `{}`.
    Emptied,
}

impl HistoryRepairKind {
    /// The kind's snake_case name (metrics labels, logs).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Repaired => "repaired",
            Self::Emptied => "emptied",
        }
    }
}

/// One changed call of a history.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryRepair {
    /// The JSON Pointer of the changed value in the request body
    /// (`/messages/3/tool_calls/0/function/arguments`).
    pub path: String,
    /// The tool the call names.
    pub tool: String,
    /// What was done.
    pub kind: HistoryRepairKind,
}

/// How an API holds arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// JSON text in a string.
    Text,
    /// A JSON object value.
    Object,
}

impl Mender {
    /// Mends the assistant tool calls of the request `body` (an `api` request) whose arguments
    /// an upstream would reject, in place, and returns each change; an empty list means `body`
    /// is as it was (send the original bytes). See the [module docs](crate::history).
    pub fn mend_history(&self, api: WireApi, body: &mut Value) -> Vec<HistoryRepair> {
        let mut repairs = Vec::new();
        match api {
            WireApi::OpenAiChat | WireApi::Ollama => {
                let holds = if api == WireApi::Ollama {
                    Holds::Object
                } else {
                    Holds::Text
                };
                for (i, message) in items(body, "messages") {
                    if message.get("role").and_then(Value::as_str) != Some("assistant") {
                        continue;
                    }
                    let Some(Value::Array(calls)) = message.get_mut("tool_calls") else {
                        continue;
                    };
                    for (j, call) in calls.iter_mut().enumerate() {
                        let Some(Value::Object(function)) = call.get_mut("function") else {
                            continue;
                        };
                        let path = format!("/messages/{i}/tool_calls/{j}/function/arguments");
                        self.mend_slot(function, "arguments", holds, path, &mut repairs);
                    }
                }
            }
            WireApi::OpenAiResponses => {
                for (i, item) in items(body, "input") {
                    if item.get("type").and_then(Value::as_str) != Some("function_call") {
                        continue;
                    }
                    let path = format!("/input/{i}/arguments");
                    self.mend_slot(item, "arguments", Holds::Text, path, &mut repairs);
                }
            }
            WireApi::Anthropic => {
                for (i, message) in items(body, "messages") {
                    if message.get("role").and_then(Value::as_str) != Some("assistant") {
                        continue;
                    }
                    let Some(Value::Array(blocks)) = message.get_mut("content") else {
                        continue;
                    };
                    for (j, block) in blocks.iter_mut().enumerate() {
                        let Value::Object(block) = block else {
                            continue;
                        };
                        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                            continue;
                        }
                        let path = format!("/messages/{i}/content/{j}/input");
                        self.mend_slot(block, "input", Holds::Object, path, &mut repairs);
                    }
                }
            }
        }
        repairs
    }

    /// Mends `holder[key]` when an upstream would reject it.
    fn mend_slot(
        &self,
        holder: &mut Map<String, Value>,
        key: &str,
        holds: Holds,
        path: String,
        repairs: &mut Vec<HistoryRepair>,
    ) {
        let raw = match (holder.get(key), holds) {
            // Well-formed: never touched.
            (Some(Value::Object(_)), Holds::Object) => return,
            (Some(Value::String(text)), Holds::Text) if is_object_text(text) => return,
            (Some(Value::String(text)), _) => text.clone(),
            (None | Some(Value::Null), _) => String::new(),
            (Some(other), _) => other.to_string(),
        };
        let tool = holder
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let (mended, kind) = match self.mend_text(&tool, &raw) {
            Some(text) => (text, HistoryRepairKind::Repaired),
            None => ("{}".to_owned(), HistoryRepairKind::Emptied),
        };
        let value = match holds {
            Holds::Text => Value::String(mended),
            Holds::Object => {
                serde_json::from_str(&mended).unwrap_or_else(|_| Value::Object(Map::new()))
            }
        };
        holder.insert(key.to_owned(), value);
        repairs.push(HistoryRepair { path, tool, kind });
    }

    /// The arguments text `raw` of a call of `tool`, mended into an object's text; `None` when
    /// it cannot be saved.
    fn mend_text(&self, tool: &str, raw: &str) -> Option<String> {
        if self.tools().get(tool).is_some() {
            let call = self.mend_quietly(tool, raw);
            return matches!(call.status, Status::Valid | Status::Repaired)
                .then_some(call.arguments_text)
                .filter(|text| is_object_text(text));
        }
        // A tool the request does not declare: its syntax only, and only one object.
        let salvaged = salvage(raw, &SalvageOptions::from_limits(&self.options().limits)).ok()?;
        if salvaged.truncated {
            return None;
        }
        match salvaged.values.as_slice() {
            [value @ Value::Object(_)] => Some(value.to_string()),
            _ => None,
        }
    }
}

/// Whether `text` is a JSON object (serde_json's reading).
fn is_object_text(text: &str) -> bool {
    serde_json::from_str::<&serde_json::value::RawValue>(text)
        .is_ok_and(|raw| raw.get().trim_start().starts_with('{'))
}

/// The objects of the array `body[key]`, with their indices.
fn items<'a>(
    body: &'a mut Value,
    key: &str,
) -> impl Iterator<Item = (usize, &'a mut Map<String, Value>)> {
    body.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, item)| item.as_object_mut().map(|map| (i, map)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolSet;

    fn mender() -> Mender {
        Mender::new(ToolSet::from_json(&json!([{"name": "read", "parameters": {
            "type": "object", "required": ["path"], "additionalProperties": false,
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}])))
    }

    #[test]
    fn chat_history_arguments_that_fail_the_upstream_are_mended() {
        let mut body = json!({"model": "m", "messages": [
            {"role": "user", "content": "{not json either}"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a\",  \"limit\": \"5\"}"}},
                {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{'path': 'b', 'limit': True}"}},
                {"id": "c", "type": "function", "function": {"name": "read", "arguments": ""}},
                {"id": "d", "type": "function", "function": {"name": "other", "arguments": "{\"x\": 1,}"}},
                {"id": "e", "type": "function", "function": {"name": "read", "arguments": "{'path': 'e'"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "{x"}]});
        let m = mender();
        let repairs = m.mend_history(WireApi::OpenAiChat, &mut body);
        let calls = &body["messages"][1]["tool_calls"];
        // Well-formed (if schema-invalid) text keeps its bytes; content is never touched.
        assert_eq!(
            calls[0]["function"]["arguments"],
            "{\"path\": \"a\",  \"limit\": \"5\"}"
        );
        assert_eq!(body["messages"][0]["content"], "{not json either}");
        assert_eq!(body["messages"][2]["content"], "{x");
        // `True` cannot be an integer: the call cannot be saved, so `{}`.
        assert_eq!(calls[1]["function"]["arguments"], "{}");
        assert_eq!(calls[2]["function"]["arguments"], "{}");
        assert_eq!(calls[3]["function"]["arguments"], "{\"x\":1}");
        // Cut off: `read` is undeclared-mutating, so never closed.
        assert_eq!(calls[4]["function"]["arguments"], "{}");
        let kinds: Vec<_> = repairs.iter().map(|r| (r.path.as_str(), r.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (
                    "/messages/1/tool_calls/1/function/arguments",
                    HistoryRepairKind::Emptied
                ),
                (
                    "/messages/1/tool_calls/2/function/arguments",
                    HistoryRepairKind::Emptied
                ),
                (
                    "/messages/1/tool_calls/3/function/arguments",
                    HistoryRepairKind::Repaired
                ),
                (
                    "/messages/1/tool_calls/4/function/arguments",
                    HistoryRepairKind::Emptied
                ),
            ]
        );
        // A history is sent again with every turn: nothing of it is counted as a call.
        assert_eq!(m.stats().snapshot().calls, 0);
    }

    #[test]
    fn a_repairable_call_is_repaired_in_every_api() {
        let m = mender();
        let mut chat = json!({"messages": [{"role": "assistant", "tool_calls": [
            {"function": {"name": "read", "arguments": "```json\n{\"path\": \"a\", \"limit\": 5,}\n```"}}]}]});
        assert_eq!(m.mend_history(WireApi::OpenAiChat, &mut chat).len(), 1);
        assert_eq!(
            chat["messages"][0]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"a\",\"limit\":5}"
        );

        let mut responses = json!({"input": [{"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{\"path\": \"a\""}]});
        // Cut off and mutating (undeclared): emptied, never closed.
        let r = m.mend_history(WireApi::OpenAiResponses, &mut responses);
        assert_eq!(r[0].kind, HistoryRepairKind::Emptied);
        assert_eq!(responses["input"][1]["arguments"], "{}");

        let mut anthropic = json!({"messages": [{"role": "assistant", "content": [
            {"type": "text", "text": "x"},
            {"type": "tool_use", "id": "t", "name": "read", "input": "{\"path\": \"a\"}"},
            {"type": "tool_use", "id": "u", "name": "read", "input": {"path": "b"}}]}]});
        let r = m.mend_history(WireApi::Anthropic, &mut anthropic);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].path, "/messages/0/content/1/input");
        assert_eq!(
            anthropic["messages"][0]["content"][1]["input"],
            json!({"path": "a"})
        );

        let mut ollama = json!({"messages": [{"role": "assistant", "tool_calls": [
            {"function": {"name": "read", "arguments": "{\"path\": \"a\"}"}},
            {"function": {"name": "read", "arguments": {"path": "b"}}}]}]});
        assert_eq!(m.mend_history(WireApi::Ollama, &mut ollama).len(), 1);
        assert_eq!(
            ollama["messages"][0]["tool_calls"][0]["function"]["arguments"],
            json!({"path": "a"})
        );
    }

    #[test]
    fn a_clean_history_is_left_as_it_was() {
        let mut body = json!({"messages": [{"role": "assistant", "tool_calls": [
            {"function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]}]});
        let before = body.clone();
        assert!(
            mender()
                .mend_history(WireApi::OpenAiChat, &mut body)
                .is_empty()
        );
        assert_eq!(body, before);
    }
}
