//! OpenAI Chat Completions read from the body's bytes: the turn of each choice taken from
//! borrowed spans, the tree built only when a choice must change (issue #29 §3).
//!
//! A valid completion is read without building its tree and goes out as the upstream's bytes.
//! It reads exactly what [`super::openai::repair_completion`] reads, the same way; a body in a
//! shape this reader does not take (a duplicate member, a call whose `function` is not an
//! object with string `name` and `arguments`, …) is left to that function, before anything
//! about it was run or counted.

use serde_json::Value;
use serde_json::value::RawValue;
use toolmend::{AssistantTurn, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{Annotations, BodyContext, ChoiceSessions, Fate, fates, repairing};
use crate::openai_views::{CallView, FunctionView, MessageView};
use crate::spans::{Member, Unread, objects};

#[derive(serde::Deserialize)]
struct CompletionView<'a> {
    #[serde(borrow, default)]
    choices: Member<'a>,
}

#[derive(serde::Deserialize)]
struct ChoiceView<'a> {
    #[serde(borrow, default)]
    finish_reason: Member<'a>,
    #[serde(borrow, default)]
    message: Member<'a>,
}

/// One native call as [`super::openai::read_calls`] reads it.
fn read_call(text: &str) -> Result<ToolCall, Unread> {
    let call: CallView<'_> = serde_json::from_str(text)?;
    // `call.get("function").unwrap_or(call)`: a present `function` of any kind is the one read.
    let function = match call.function {
        Member::Absent => Some(text),
        present => present.object(),
    };
    let (name, arguments) = match function {
        Some(function) => {
            let function: FunctionView<'_> = serde_json::from_str(function)?;
            let name = function.name.text()?.unwrap_or_default();
            let arguments = match function.arguments.raw() {
                None | Some("null") => String::new(),
                Some(text) if text.starts_with('"') => serde_json::from_str(text)?,
                // `arguments_text`: another value's compact JSON.
                Some(text) => serde_json::from_str::<Value>(text)?.to_string(),
            };
            (name, arguments)
        }
        // Not an object: `get` finds nothing in it.
        None => (String::new(), String::new()),
    };
    let id = call.id.text()?.unwrap_or_default();
    Ok(ToolCall::new(id, name, arguments))
}

/// The turn of one choice's message, as `read_turn` builds it.
fn read_turn(message: &str, finish_reason: Option<String>) -> Result<AssistantTurn, Unread> {
    let message: MessageView<'_> = serde_json::from_str(message)?;
    let mut turn = AssistantTurn::default();
    turn.content = message.content.text()?;
    turn.reasoning = match message.reasoning_content.text()? {
        Some(text) => Some(text),
        None => message.reasoning.text()?,
    };
    if let Some(calls) = message.tool_calls.raw().filter(|t| t.starts_with('[')) {
        turn.tool_calls = objects(calls)?
            .into_iter()
            .map(read_call)
            .collect::<Result<_, _>>()?;
    }
    turn.finish_reason = finish_reason;
    Ok(turn)
}

/// Whether writing `result` into the message would leave it as it is (`apply` reports no
/// change): every native call kept as sent, no native call dropped, the text as it was.
fn unchanged(turn: &AssistantTurn, result: &TurnResult, config: &ProxyConfig) -> bool {
    let calls_kept = result
        .calls
        .iter()
        .zip(fates(&result.calls, config))
        .all(|(call, fate)| match fate {
            Fate::AsSent => true,
            Fate::Drop => call.native_index.is_none(),
            Fate::Rewrite | Fate::DropWithText(_) => false,
        });
    let reasoning_kept = result.reasoning == turn.reasoning || result.reasoning.is_none();
    calls_kept && result.content == turn.content && reasoning_kept
}

/// What [`repair_completion`] found: the notes, and the repaired tree when a choice changed
/// (`None`: the body goes out as received).
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) notes: Annotations,
    pub(crate) repaired: Option<Value>,
}

/// Repairs a completion read from its bytes; the same reading, session, results and notes as
/// [`super::openai::repair_completion`], whose writing it calls for a choice that changes.
///
/// # Errors
///
/// [`Unread`] when the body is not in the shape read here; nothing was run or counted then.
pub(crate) fn repair_completion(
    body: &[u8],
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> Result<Read, Unread> {
    let BodyContext {
        mender,
        config,
        model,
        turn_id,
    } = *cx;
    // A struct also reads from an array, by position: only an object is read here.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(Unread);
    }
    let view: CompletionView<'_> = serde_json::from_slice(body)?;
    let mut read = Read {
        notes: Annotations::default(),
        repaired: None,
    };
    let Some(choices) = view.choices.raw().filter(|t| t.starts_with('[')) else {
        return Ok(read);
    };
    // Every choice is read before any is run: a shape not read here is found before anything
    // was counted.
    let mut turns = Vec::new();
    for (index, choice) in serde_json::from_str::<Vec<&RawValue>>(choices)?
        .into_iter()
        .enumerate()
    {
        let Some(choice) = Some(choice.get()).filter(|t| t.starts_with('{')) else {
            continue;
        };
        let choice: ChoiceView<'_> = serde_json::from_str(choice)?;
        let Some(message) = choice.message.object() else {
            continue;
        };
        let mut turn = read_turn(message, choice.finish_reason.text()?)?;
        turn.id = Some(turn_id.to_owned());
        if turn.tool_calls.is_empty() && turn.content.is_none() && turn.reasoning.is_none() {
            continue;
        }
        turns.push((index, turn));
    }
    let mut sessions = ChoiceSessions::new(history);
    let mut changes = Vec::new();
    for (index, turn) in turns {
        let result = mender.run_last_turn(sessions.for_turn(mender, &turn), &turn);
        for call in &result.calls {
            read.notes.add(model, call);
        }
        if repairing(config) && !unchanged(&turn, &result, config) {
            changes.push((index, turn, result));
        }
    }
    if changes.is_empty() {
        return Ok(read);
    }
    // The same bytes were read above: they parse (if not, the body goes out as received).
    let Ok(mut tree) = serde_json::from_slice::<Value>(body) else {
        return Ok(read);
    };
    let mut changed = false;
    for (index, turn, result) in changes {
        changed |= super::openai::apply_choice(&mut tree, index, &turn, &result, config);
    }
    read.repaired = changed.then_some(tree);
    Ok(read)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolmend::{Mender, MenderOptions, RecoverMode, ToolSet};

    use super::*;

    fn mender() -> Mender {
        let tools = json!([{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"}},
            "required": ["location"], "additionalProperties": false}}}]);
        let options = MenderOptions::default().with_recover(RecoverMode::Content);
        Mender::with_options(ToolSet::from_json(&tools), options)
    }

    fn call(function: Value) -> Value {
        json!({"id": "call_1", "type": "function", "function": function})
    }

    fn completion(message: Value) -> Value {
        json!({"id": "c", "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls"}]})
    }

    /// Bodies in many shapes: valid, repairable, unsavable, recovered from text, and shapes
    /// the byte reader leaves to the tree path.
    fn bodies() -> Vec<String> {
        let valid = r#"{"location":"Paris","unit":"celsius"}"#;
        let mut bodies: Vec<String> = [
            completion(json!({"role": "assistant", "content": "Looking it up.",
                "tool_calls": [call(json!({"name": "get_weather", "arguments": valid}))]})),
            completion(json!({"role": "assistant", "content": null,
                "tool_calls": [call(json!({"name": "get_weather",
                    "arguments": r#"{"location":"Paris","unit":"Celsius","days":"5"}"#}))]})),
            completion(json!({"role": "assistant", "tool_calls": [
                call(json!({"name": "get_weather", "arguments": "{\"location\": 'Paris',}"})),
                call(json!({"name": "get_weather", "arguments": valid}))]})),
            completion(json!({"role": "assistant", "tool_calls": [
                call(json!({"name": "get_weather", "arguments": "not json at all"}))]})),
            completion(json!({"role": "assistant", "tool_calls": [
                call(json!({"name": "nope", "arguments": "{}"}))]})),
            completion(json!({"role": "assistant", "content":
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Rome\"}}</tool_call>"})),
            completion(json!({"role": "assistant", "content": "Plain words.",
                "reasoning_content": "thinking"})),
            completion(json!({"role": "assistant", "tool_calls": [
                call(json!({"name": "get_weather", "arguments": {"location": "Oslo"}}))]})),
            completion(json!({"role": "assistant", "tool_calls": [
                json!({"id": "x", "function": null}),
                json!({"id": 5, "name": "get_weather", "arguments": valid})]})),
            completion(json!({"role": "assistant", "tool_calls": "none"})),
            completion(json!("not a message")),
            json!({"choices": [1, {"message": {"content": "hi"}}, {"message": {"tool_calls": [
                call(json!({"name": "get_weather", "arguments": "{\"location\": \"Oslo\""}))]}}]}),
            json!({"choices": {"a": 1}}),
            json!({"no_choices": true}),
            json!([1, 2]),
        ]
        .iter()
        .map(Value::to_string)
        .collect();
        // A duplicate member (left to the tree path), and a body spaced out.
        bodies.push(r#"{"choices":[{"message":{"content":"a","content":"b"}}]}"#.to_owned());
        bodies.push(
            r#"{ "choices": [ { "message" : { "tool_calls" : [ { "function": {
                "name": "get_weather", "arguments": "{\"location\": \"Lima\"}" } } ] } } ] }"#
                .to_owned(),
        );
        bodies
    }

    #[test]
    fn reads_what_the_tree_path_reads_and_keeps_a_valid_body_as_its_bytes() {
        let mender = mender();
        let mut read_here = 0;
        for mode in [crate::config::Mode::Repair, crate::config::Mode::Observe] {
            let mut config = ProxyConfig::new("http://h");
            config.mode = mode;
            let cx = BodyContext {
                mender: &mender,
                config: &config,
                model: "m",
                turn_id: "req_1",
            };
            for body in bodies() {
                let Ok(read) = repair_completion(body.as_bytes(), &cx, Vec::new) else {
                    continue;
                };
                read_here += 1;
                let mut tree: Value = serde_json::from_str(&body).unwrap();
                let (notes, changed) =
                    super::super::openai::repair_completion(&mut tree, &cx, Vec::new);
                assert_eq!(read.notes.header(), notes.header(), "{body}");
                assert_eq!(read.repaired.is_some(), changed, "{body}");
                if let Some(repaired) = read.repaired {
                    assert_eq!(repaired, tree, "{body}");
                }
            }
        }
        assert!(
            read_here >= 20,
            "most shapes are read from the bytes: {read_here}"
        );
    }
}
