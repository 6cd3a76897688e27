//! Reading an OpenAI-style assistant message (`content`, `reasoning_content`, `tool_calls`) as
//! an [`AssistantTurn`]: the one reading the Python, Node and Go faces share.

use serde_json::Value;

use super::{AssistantTurn, ToolCall};
use crate::Error;

impl AssistantTurn {
    /// The turn an OpenAI Chat Completions assistant message holds: `content`, the reasoning
    /// (`reasoning_content` or `reasoning`), and each of `tool_calls` with its `id`,
    /// `function.name` and `function.arguments` (a flat `{name, arguments}` call is read too).
    /// Arguments sent already parsed (some clients do) are taken as their JSON text; missing or
    /// `null` arguments as empty text, which the pipeline reads as `{}`.
    ///
    /// # Errors
    ///
    /// [`Error::Message`] when a tool call has no string `name`.
    pub fn from_openai_message(message: &Value) -> Result<Self, Error> {
        let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut turn = Self {
            content: text("content"),
            reasoning: text("reasoning_content").or_else(|| text("reasoning")),
            ..Self::default()
        };
        let calls = message.get("tool_calls").and_then(Value::as_array);
        for (index, call) in calls.into_iter().flatten().enumerate() {
            let function = call.get("function").unwrap_or(call);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or(Error::Message {
                    index,
                    reason: "every tool call needs function.name",
                })?;
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            turn.tool_calls.push(ToolCall::new(id, name, arguments));
        }
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_content_reasoning_and_calls() {
        let turn = AssistantTurn::from_openai_message(&json!({
            "content": "Reading.", "reasoning_content": "think",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a\"}"}},
                {"id": "c2", "function": {"name": "ls", "arguments": {"dir": "."}}},
                {"name": "flat", "arguments": null}]}))
        .unwrap();
        assert_eq!(turn.content.as_deref(), Some("Reading."));
        assert_eq!(turn.reasoning.as_deref(), Some("think"));
        assert_eq!(
            turn.tool_calls,
            vec![
                ToolCall::new("c1", "read", "{\"path\": \"a\"}"),
                ToolCall::new("c2", "ls", "{\"dir\":\".\"}"),
                ToolCall::new("", "flat", ""),
            ]
        );
    }

    #[test]
    fn a_call_without_a_name_is_an_error() {
        let err = AssistantTurn::from_openai_message(&json!({"tool_calls": [
            {"function": {"name": "a"}}, {"function": {"arguments": "{}"}}]}))
        .unwrap_err();
        assert_eq!(
            err,
            Error::Message {
                index: 1,
                reason: "every tool call needs function.name"
            }
        );
    }
}
