//! The JSON shapes of the ABI: options read from the caller, results written back.
//!
//! Field names are the Node face's (camelCase: `argumentsText`, `nativeIndex`); the values are
//! the library's serde names (`repaired`, `local-salvage`), as the Python face gives them.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolmend::recover::{LostCall, RecoveredCall};
use toolmend::{
    AssistantTurn, CallResult, Limits, MenderOptions, Origin, Outcome, RecoverMode, Repair, Status,
    TurnReport, TurnResult,
};

use crate::input::InputError;

/// `toolmend_mender_new`'s options; every field optional, unknown fields refused.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MenderOptionsIn {
    recover: Option<String>,
    model: Option<String>,
    include_values: Option<bool>,
    max_salvage_bytes: Option<usize>,
    max_depth: Option<usize>,
    max_recovered_calls: Option<usize>,
    max_repair_rounds: Option<usize>,
    max_message_bytes: Option<usize>,
    max_call_key_matches: Option<u64>,
    max_call_errors: Option<u64>,
}

impl MenderOptionsIn {
    /// The library's options (defaults where a field is absent).
    pub(crate) fn build(self) -> Result<MenderOptions, InputError> {
        let mut options = MenderOptions::default();
        if let Some(name) = self.recover {
            options.recover = recover_mode(&name)?;
        }
        if let Some(model) = self.model {
            options.model = model;
        }
        if let Some(include) = self.include_values {
            options.include_values = include;
        }
        let mut limits = Limits::default();
        set(&mut limits.max_salvage_bytes, self.max_salvage_bytes);
        set(&mut limits.max_depth, self.max_depth);
        set(&mut limits.max_recovered_calls, self.max_recovered_calls);
        set(&mut limits.max_repair_rounds, self.max_repair_rounds);
        set(&mut limits.max_message_bytes, self.max_message_bytes);
        set(&mut limits.max_call_key_matches, self.max_call_key_matches);
        set(&mut limits.max_call_errors, self.max_call_errors);
        options.limits = limits;
        Ok(options)
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

fn recover_mode(name: &str) -> Result<RecoverMode, InputError> {
    RecoverMode::from_name(name).ok_or_else(|| {
        InputError(format!(
            "recover must be \"off\", \"strip\", \"content\" or \"all\", not {name:?}"
        ))
    })
}

/// `toolmend_session_new`'s options (the storm window and the retry budget).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionOptionsIn {
    window: Option<usize>,
    threshold: Option<usize>,
    max_reprompts: Option<u8>,
}

impl SessionOptionsIn {
    /// A session with these limits (the library's defaults where absent).
    pub(crate) fn build(self) -> Result<toolmend::Session, InputError> {
        if let Some(m) = self.max_reprompts {
            if m > toolmend::turn::MAX_REPROMPTS {
                return Err(InputError(format!(
                    "maxReprompts must be 0 to {}, not {m}",
                    toolmend::turn::MAX_REPROMPTS
                )));
            }
        }
        Ok(toolmend::Session::with_limits(
            self.window.unwrap_or(toolmend::turn::DEFAULT_STORM_WINDOW),
            self.threshold
                .unwrap_or(toolmend::turn::DEFAULT_STORM_THRESHOLD),
            self.max_reprompts
                .unwrap_or(toolmend::turn::DEFAULT_MAX_REPROMPTS),
        ))
    }
}

/// `toolmend_recoverer_new`'s options.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RecovererOptionsIn {
    pub(crate) channel: Option<String>,
    pub(crate) max_calls: Option<usize>,
}

/// `toolmend_mender_run_turn`'s input: an OpenAI-style assistant message and the turn's flags.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TurnIn {
    message: serde_json::Map<String, Value>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    new_user_turn: bool,
    /// Something unique to the turn in its conversation (a response id): recovered calls'
    /// ids derive from it ([`AssistantTurn::id`]).
    #[serde(default)]
    turn_id: Option<String>,
}

impl TurnIn {
    /// The library's turn: `content`, `reasoning_content`/`reasoning`, `tool_calls`
    /// (`id`, `function.name`, `function.arguments`), read as every face reads them
    /// ([`AssistantTurn::from_openai_message`]).
    pub(crate) fn build(self) -> Result<AssistantTurn, InputError> {
        let message = Value::Object(self.message);
        let mut turn =
            AssistantTurn::from_openai_message(&message).map_err(|e| InputError(e.to_string()))?;
        turn.finish_reason = self.finish_reason;
        turn.new_user_turn = self.new_user_turn;
        turn.id = self.turn_id;
        Ok(turn)
    }
}

/// One call's result as written to the caller.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallOut<'a> {
    id: &'a str,
    name: &'a str,
    origin: Origin,
    status: Status,
    /// Absent when `null`, or when `argumentsIsText` says the text is these arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a Value>,
    /// A dispatchable call's text is its arguments (the bytes sent, or the repaired text):
    /// the value is not written twice, and the binding reads `arguments` from the text.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    arguments_is_text: bool,
    arguments_text: &'a str,
    repairs: &'a [Repair],
    notes: &'a [String],
    outcome: Option<Outcome>,
    error: Option<&'a str>,
    native_index: Option<usize>,
}

impl<'a> CallOut<'a> {
    pub(crate) fn new(r: &'a CallResult) -> Self {
        let arguments_is_text = r.is_dispatchable() && r.arguments.is_some();
        Self {
            id: &r.id,
            name: &r.name,
            origin: r.origin,
            status: r.status,
            arguments: r.arguments.as_ref().filter(|_| !arguments_is_text),
            arguments_is_text,
            arguments_text: &r.arguments_text,
            repairs: &r.repairs,
            notes: &r.notes,
            outcome: r.outcome,
            error: r.error.as_deref(),
            native_index: r.native_index,
        }
    }
}

/// A turn's result as written to the caller.
#[derive(Serialize)]
pub(crate) struct TurnOut<'a> {
    content: Option<&'a str>,
    reasoning: Option<&'a str>,
    calls: Vec<CallOut<'a>>,
    report: &'a TurnReport,
}

impl<'a> TurnOut<'a> {
    pub(crate) fn new(r: &'a TurnResult) -> Self {
        Self {
            content: r.content.as_deref(),
            reasoning: r.reasoning.as_deref(),
            calls: r.calls.iter().map(CallOut::new).collect(),
            report: &r.report,
        }
    }
}

/// What a stream recoverer released: text, the calls completed, and the calls of their blocks
/// that could not be read.
#[derive(Serialize)]
pub(crate) struct RecoveredOut<'a> {
    pub(crate) text: &'a str,
    pub(crate) calls: Vec<RecoveredCallOut<'a>>,
    pub(crate) lost: Vec<LostCallOut<'a>>,
}

/// A call of a declared tool in a recovered block that could not be read (issue #28).
#[derive(Serialize)]
pub(crate) struct LostCallOut<'a> {
    name: &'a str,
    family: &'a str,
    text: &'a str,
    position: usize,
    span: [usize; 2],
    channel: &'a str,
}

impl<'a> LostCallOut<'a> {
    pub(crate) fn new(c: &'a LostCall, channel: &'a str) -> Self {
        Self {
            name: &c.name,
            family: c.family,
            text: &c.text,
            position: c.position,
            span: [c.span.start, c.span.end],
            channel,
        }
    }
}

/// One call found in text.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecoveredCallOut<'a> {
    name: &'a str,
    written_name: Option<&'a str>,
    family: &'a str,
    arguments: &'a str,
    arguments_unwrapped: bool,
    span: [usize; 2],
    channel: &'a str,
}

impl<'a> RecoveredCallOut<'a> {
    pub(crate) fn new(c: &'a RecoveredCall, channel: &'a str) -> Self {
        Self {
            name: &c.name,
            written_name: c.written_name.as_deref(),
            family: c.family,
            arguments: &c.arguments,
            arguments_unwrapped: c.arguments_unwrapped,
            span: [c.span.start, c.span.end],
            channel,
        }
    }
}

/// The tool names a mender validates against, and why any tool objects were refused.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MenderInfoOut {
    pub(crate) tool_names: Vec<String>,
    pub(crate) rejected: Vec<String>,
}
