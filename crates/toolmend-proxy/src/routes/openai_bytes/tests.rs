//! The one-pass reader against the tree path (the same notes, the same repaired tree, a valid
//! body kept as its bytes) and against the serde views it replaced (kept here as the oracle:
//! the same turns read, the same bodies left to the tree).

use serde_json::{Value, json};
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
        for body in bodies().into_iter().chain(odd_bodies()) {
            let Ok(read) = repair_completion(body.as_bytes(), &cx, Vec::new) else {
                continue;
            };
            read_here += 1;
            // A lone surrogate in a member nothing decodes: the tree path refuses the body
            // (not JSON to it) and passes it as received; so does this reader.
            let Ok(mut tree) = serde_json::from_str::<Value>(&body) else {
                assert!(read.repaired.is_none(), "{body}");
                continue;
            };
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

/// The serde views' reader, as it was before the one-pass reader.
mod oracle {
    use serde_json::Value;
    use serde_json::value::RawValue;
    use toolmend::{AssistantTurn, ToolCall};

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

    fn read_call(text: &str) -> Result<ToolCall, Unread> {
        let call: CallView<'_> = serde_json::from_str(text)?;
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
                    Some(text) => serde_json::from_str::<Value>(text)?.to_string(),
                };
                (name, arguments)
            }
            None => (String::new(), String::new()),
        };
        let id = call.id.text()?.unwrap_or_default();
        Ok(ToolCall::new(id, name, arguments))
    }

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

    /// The choices read, as `read_completion` returns them.
    pub(super) fn read(body: &[u8]) -> Result<Vec<(usize, AssistantTurn)>, Unread> {
        if body.trim_ascii_start().first() != Some(&b'{') {
            return Err(Unread);
        }
        let view: CompletionView<'_> = serde_json::from_slice(body)?;
        let Some(choices) = view.choices.raw().filter(|t| t.starts_with('[')) else {
            return Ok(Vec::new());
        };
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
            turns.push((index, read_turn(message, choice.finish_reason.text()?)?));
        }
        Ok(turns)
    }
}

/// Shapes the serde views refused or read in their own way: the one-pass reader must read
/// them the same or leave them to the tree.
fn odd_bodies() -> Vec<String> {
    [
        r#"{"choices":[{"message":{"content":"a"}}],"choices":[]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"id":"a","id":"b"}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"index":0,"index":1,"function":{}}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"a","name":"b"}}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"name":"get_weather","arguments":"{}"}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"name":"a","name":"b"}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"function":{"name":"get_weather","arguments":"{}"},"name":"x","name":"y"}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"function":"f","name":"get_weather"}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"function":{"arguments":null,"name":7}}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"function":{"arguments":[1, {"b": 2.50}]}}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[{"id":"c\"1","function":{"name":"get_w\u0065ather","arguments":"{\"location\": \"K\u00f6ln\"}"}}]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":[1]}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":{"function":{}}}}]}"#,
        r#"{"choices":[{"message":{"tool_calls":null,"content":"a\nb \ud83d\ude00"}}]}"#,
        r#"{"choices":[{"message":{"content":"\ud800"}}]}"#,
        r#"{"choices":[{"message":{"content":5,"reasoning_content":null,"reasoning":"r"}}]}"#,
        r#"{"choices":[{"message":{"reasoning_content":"a","reasoning":"\ud800"}}]}"#,
        r#"{"choices":[{"message":{"reasoning":"a","reasoning":"b"}}]}"#,
        r#"{"choices":[{"finish_reason":"length","message":{"content":"a"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"finish_reason":"\ud800","message":null}]}"#,
        r#"{"choices":[{"finish_reason":"\ud800","message":{}}]}"#,
        r#"{"choices":[{"finish_reason":5,"message":{"content":"x"},"message":{}}]}"#,
        r#"{"choices":[null,"x",{"message":[1]},{"message":{"content":"y"}}]}"#,
        r#"{"ch\u006fices":[{"message":{"content":"y"}}]}"#,
        r#"{"choices":[{"message":{"c\u006fntent":"y"}}]}"#,
        r#"{"choices":[{"message":{"content":"y"}}]} x"#,
        r#"{"choices":[{"message":{"content":"y"}}]"#,
        r#"{"choices":[{"message":{"content":"y"}},]}"#,
        r#"{"choices":"none","usage":{"a":[1,2,{"b":null}]}}"#,
        r#"{"choices":null}"#,
        r#"{}"#,
        "  \n{\"choices\" : [ ] }  ",
        r#"[{"choices":[]}]"#,
        "not json",
        "",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

#[test]
fn reads_what_the_serde_views_read() {
    let mut bodies = bodies();
    bodies.extend(odd_bodies());
    let mut read_by_both = 0;
    for body in &bodies {
        match (read_completion(body), oracle::read(body.as_bytes())) {
            (Ok(one_pass), Ok(serde)) => {
                assert_eq!(one_pass, serde, "{body}");
                read_by_both += 1;
            }
            // Left to the tree where the views read it: only a key with an escape, or a
            // repeated member the views ignore (a call's own `name` beside its `function`).
            (Err(Unread), Ok(_)) => assert!(
                body.contains(r"\u006f") || body.contains(r#""name":"x","name""#),
                "{body}"
            ),
            (Ok(_), Err(Unread)) => panic!("read here, refused by the views: {body}"),
            (Err(Unread), Err(Unread)) => {}
        }
    }
    assert!(read_by_both >= 25, "{read_by_both}");
}

#[test]
fn a_body_that_is_not_utf8_is_left_to_the_tree() {
    let mender = mender();
    let config = ProxyConfig::new("http://h");
    let cx = BodyContext {
        mender: &mender,
        config: &config,
        model: "m",
        turn_id: "req_1",
    };
    let body = b"{\"choices\":[],\"x\":\"\xff\"}";
    assert!(repair_completion(body, &cx, Vec::new).is_err());
}
