//! The JSONL turn contract of DESIGN §9: one input line → one [`AssistantTurn`], one
//! [`TurnResult`] → one output line. Shared by `turns`, `eval` and `audit`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};
use toolmend::turn::DEFAULT_MAX_REPROMPTS;
use toolmend::{
    AssistantTurn, Mender, MenderCache, MenderOptions, RecoverMode, Session, Status, ToolCall,
    TurnResult,
};
use toolmend_proxy::wire::set_call;

/// Defaults the command line gives every line (a line's `options` override them).
#[derive(Debug, Clone, Default)]
pub(crate) struct Defaults {
    pub(crate) recover: Option<RecoverMode>,
    pub(crate) model: Option<String>,
    pub(crate) max_reprompts: Option<u8>,
    pub(crate) include_values: bool,
    /// The tool set of lines that carry no `tools` (`toolmend audit --tools`).
    pub(crate) tools: Option<Value>,
}

/// One line run through the library, before it is written out.
#[derive(Debug)]
pub(crate) struct RanTurn {
    /// The library's result.
    pub(crate) result: TurnResult,
    /// The native tool call objects as sent (`CallResult::native_index` points into them).
    pub(crate) native: Vec<Value>,
    /// The model the line ran for (its `model`, else the default; empty when neither).
    pub(crate) model: String,
    /// The turn as read from the line (its calls' argument text as sent).
    pub(crate) turn: AssistantTurn,
    mender: Arc<Mender>,
}

/// Most sessions kept; past it the least recently used session is dropped.
const MAX_SESSIONS: usize = 10_000;

/// Processes turn lines in order, keeping per-session state and compiled tool sets.
#[derive(Debug)]
pub(crate) struct TurnProcessor {
    defaults: Defaults,
    /// Compiled tool sets by tools and options (bounded; the library's cache).
    menders: MenderCache,
    /// Each session with the line number of its last use.
    sessions: HashMap<String, (Session, u64)>,
    /// Sessions by last use, oldest first: the one to drop when the cap is reached.
    by_use: BTreeMap<u64, String>,
    /// Lines that named a session so far.
    uses: u64,
    max_sessions: usize,
}

impl TurnProcessor {
    pub(crate) fn new(defaults: Defaults) -> Self {
        Self {
            defaults,
            menders: MenderCache::default(),
            sessions: HashMap::new(),
            by_use: BTreeMap::new(),
            uses: 0,
            max_sessions: MAX_SESSIONS,
        }
    }

    /// Processes one input line into one output line (an error line for a bad input line).
    pub(crate) fn process_line(&mut self, line: &str) -> Value {
        let input: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(error) => {
                return json!({"id": null, "error": format!("the line is not JSON: {error}")});
            }
        };
        let id = input.get("id").cloned().unwrap_or(Value::Null);
        match self.process(&input) {
            Ok((_, output)) => output,
            Err(error) => json!({"id": id, "error": format!("{error:#}")}),
        }
    }

    /// Processes one parsed input line; returns the result and the output line.
    pub(crate) fn process(&mut self, input: &Value) -> anyhow::Result<(TurnResult, Value)> {
        let ran = self.run(input)?;
        let (object, message) = line_parts(input)?;
        let mut output = write_output(object, message, &ran.native, &ran.result)?;
        if let Some(warnings) = warnings(&ran.mender) {
            output["warnings"] = warnings;
        }
        Ok((ran.result, output))
    }

    /// Runs one parsed input line through the library (sessions and tool sets as `process`),
    /// without building its output line.
    pub(crate) fn run(&mut self, input: &Value) -> anyhow::Result<RanTurn> {
        let (object, message) = line_parts(input)?;
        let options = object.get("options").and_then(Value::as_object);
        let option = |key: &str| options.and_then(|o| o.get(key));

        let recover = match option("recover").and_then(Value::as_str) {
            Some(name) => RecoverMode::from_name(name)
                .with_context(|| format!("unknown recover mode `{name}`"))?,
            None => self.defaults.recover.unwrap_or_default(),
        };
        let model = object
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| self.defaults.model.clone())
            .unwrap_or_default();
        let max_reprompts = match option("max_reprompts") {
            Some(v) => u8::try_from(v.as_u64().context("`max_reprompts` is not a number")?)
                .ok()
                .filter(|n| *n <= toolmend::turn::MAX_REPROMPTS)
                .context("`max_reprompts` must be 0 to 5")?,
            None => self.defaults.max_reprompts.unwrap_or(DEFAULT_MAX_REPROMPTS),
        };
        let tools = object
            .get("tools")
            // A null `tools` is no tools given (as a null column cell is to `run_turns`).
            .filter(|tools| !tools.is_null())
            .or(self.defaults.tools.as_ref())
            .cloned()
            .unwrap_or(Value::Array(Vec::new()));
        let options = MenderOptions::default()
            .with_recover(recover)
            .with_model(model.as_str())
            .with_values(self.defaults.include_values);
        let mender = self.menders.get_value(&tools, &options);

        let (turn, native) = read_turn(object, message)?;
        let session_key = object
            .get("session")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut scratch = Session::with_limits(
            toolmend::turn::DEFAULT_STORM_WINDOW,
            toolmend::turn::DEFAULT_STORM_THRESHOLD,
            max_reprompts,
        );
        let session = match session_key {
            Some(key) => {
                let session = self.session(key, scratch);
                // A line's budget applies from that line on; the counts so far are kept.
                session.set_max_reprompts(max_reprompts);
                session
            }
            None => &mut scratch,
        };
        let result = mender.run_turn(session, &turn);
        Ok(RanTurn {
            result,
            native,
            model,
            turn,
            mender,
        })
    }

    /// The session named `key` (`fresh` when it is new), marked as just used. At the cap, a new
    /// session replaces the least recently used one; every other session keeps its state.
    fn session(&mut self, key: String, fresh: Session) -> &mut Session {
        self.uses += 1;
        let now = self.uses;
        if let Some((_, used)) = self.sessions.get_mut(&key) {
            self.by_use.remove(used);
            *used = now;
        } else {
            while self.sessions.len() >= self.max_sessions.max(1) {
                let Some((_, oldest)) = self.by_use.pop_first() else {
                    break;
                };
                self.sessions.remove(&oldest);
            }
            self.sessions.insert(key.clone(), (fresh, now));
        }
        self.by_use.insert(now, key.clone());
        &mut self
            .sessions
            .get_mut(&key)
            .expect("the session was just inserted or found")
            .0
    }
}

/// A JSON object's members.
type Object = Map<String, Value>;

/// The line's object and its `message` object, or why the line has none.
fn line_parts(input: &Value) -> anyhow::Result<(&Object, &Object)> {
    let Some(object) = input.as_object() else {
        bail!("the line is not a JSON object")
    };
    let message = object
        .get("message")
        .and_then(Value::as_object)
        .context("no `message` object")?;
    Ok((object, message))
}

/// The argument text of a native tool call object as sent: `function.arguments` (or `input`)
/// as written when it is a string, the JSON of any other value, empty when absent or null.
fn native_arguments(call: &Value) -> String {
    let function = call.get("function").unwrap_or(call);
    match function.get("arguments").or_else(|| function.get("input")) {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Reads the turn; also returns the native tool call objects as sent.
fn read_turn(
    object: &Map<String, Value>,
    message: &Map<String, Value>,
) -> anyhow::Result<(AssistantTurn, Vec<Value>)> {
    let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
    let native: Vec<Value> = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls.clone(),
        Some(_) => bail!("`message.tool_calls` is not an array"),
    };
    let mut tool_calls = Vec::with_capacity(native.len());
    for (i, call) in native.iter().enumerate() {
        let function = call.get("function").unwrap_or(call);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .with_context(|| format!("tool call #{i} has no name"))?;
        let arguments = native_arguments(call);
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        tool_calls.push(ToolCall::new(id, name, arguments));
    }
    let mut turn = AssistantTurn::default();
    turn.content = text("content");
    turn.reasoning = text("reasoning_content").or_else(|| text("reasoning"));
    turn.tool_calls = tool_calls;
    turn.finish_reason = object
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    turn.new_user_turn = object
        .get("new_user_turn")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    // The line's id makes recovered calls' ids differ from line to line, reproducibly.
    turn.id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(other) => Some(other.to_string()),
    };
    Ok((turn, native))
}

/// The output line: the message with repaired calls, the per-call report and the counts.
fn write_output(
    object: &Map<String, Value>,
    message: &Map<String, Value>,
    native: &[Value],
    result: &TurnResult,
) -> anyhow::Result<Value> {
    let mut out_message = message.clone();
    if let Some(content) = &result.content {
        out_message.insert("content".into(), json!(content));
    }
    if let Some(reasoning) = &result.reasoning {
        let key = if message.contains_key("reasoning_content") {
            "reasoning_content"
        } else {
            "reasoning"
        };
        out_message.insert(key.into(), json!(reasoning));
    }
    let mut tool_calls = Vec::new();
    // Parts of one split call share their native index.
    let parts_of = |index: usize| {
        result
            .calls
            .iter()
            .filter(|c| c.native_index == Some(index))
            .count()
    };
    for call in &result.calls {
        let split = call.native_index.is_some_and(|i| parts_of(i) > 1);
        match (call.status, call.native_index) {
            (Status::Suppressed, _) => {}
            // A native call as sent: valid, or invalid and kept for its retry message.
            (Status::Valid | Status::Invalid | Status::Unvalidated, Some(index)) if !split => {
                tool_calls.push(native.get(index).cloned().unwrap_or_else(|| json!({})));
            }
            // A repaired native call, or one part of a split call (invalid parts carry their
            // own id and text, so the unsplit original never comes back).
            (_, Some(index)) => {
                let mut sent = native.get(index).cloned().unwrap_or_else(|| json!({}));
                set_call(&mut sent, &call.id, &call.name, &call.arguments_text);
                tool_calls.push(sent);
            }
            // A recovered call; an invalid one stays in the text as sent.
            (Status::Invalid | Status::Unvalidated, None) => {}
            (_, None) => {
                let mut fresh = json!({"id": call.id, "type": "function", "function": {}});
                set_call(&mut fresh, &call.id, &call.name, &call.arguments_text);
                tool_calls.push(fresh);
            }
        }
    }
    if !tool_calls.is_empty() || message.contains_key("tool_calls") {
        out_message.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Ok(json!({
        "id": object.get("id").cloned().unwrap_or(Value::Null),
        "message": out_message,
        "calls": serde_json::to_value(&result.calls)?,
        "report": serde_json::to_value(result.report)?,
    }))
}

/// Tools that could not be built as declared, as `warnings` for the output line.
fn warnings(mender: &Mender) -> Option<Value> {
    let rejected = mender.tools().rejected();
    (!rejected.is_empty())
        .then(|| Value::Array(rejected.iter().map(|e| json!(e.to_string())).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turn of session `session` with one call that stays invalid (`path` missing).
    fn invalid_turn(session: &str) -> Value {
        json!({"session": session, "tools": [{"name": "read", "parameters": {"type": "object",
            "required": ["path"], "properties": {"path": {"type": "string"}}}}],
            "message": {"tool_calls": [{"id": "c", "function": {"name": "read", "arguments": "{}"}}]}})
    }

    fn outcome(processor: &mut TurnProcessor, session: &str) -> String {
        let (_, out) = processor.process(&invalid_turn(session)).unwrap();
        out["calls"][0]["outcome"].as_str().unwrap().to_owned()
    }

    // Issue #8 item 11: at the cap, the least recently used session goes, not all of them.
    #[test]
    fn the_session_cap_drops_the_least_recently_used_session_only() {
        let mut processor = TurnProcessor::new(Defaults::default());
        processor.max_sessions = 2;
        assert_eq!(outcome(&mut processor, "a"), "re-prompt");
        assert_eq!(outcome(&mut processor, "b"), "re-prompt");
        // `a` is used again (and gives up), so `b` is now the least recently used.
        assert_eq!(outcome(&mut processor, "a"), "gave-up");
        assert_eq!(outcome(&mut processor, "c"), "re-prompt");
        assert_eq!(processor.sessions.len(), 2);
        // `a` kept its count; `b` was dropped and starts over.
        assert_eq!(outcome(&mut processor, "a"), "gave-up");
        assert_eq!(outcome(&mut processor, "b"), "re-prompt");
    }
}
