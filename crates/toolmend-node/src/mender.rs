//! `Mender` (the repair pipeline over a tool set), `Session` (a conversation's storm window and
//! retry budget) and the call results they return.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;
use serde_json::Value;
use toolmend::turn;
use toolmend::{
    AssistantTurn, CallResult, Limits, MenderOptions, Origin, RecoverMode, Status as CallStatus,
};

use crate::tools::ToolSet;

/// One repair: its kind (a DESIGN §5 name) and the JSON Pointer where it was made.
#[napi(object)]
#[derive(Debug)]
pub struct Repair {
    /// The repair kind, e.g. `key_renamed`.
    pub kind: String,
    /// The JSON Pointer of the value it changed (`""` for the whole call).
    pub path: String,
}

/// Everything toolmend decided about one call, as the binding hands it to JavaScript.
#[napi(object)]
#[derive(Debug)]
pub struct Call {
    /// The call id (generated for calls recovered from text).
    pub id: String,
    /// The tool name, after any name repair.
    pub name: String,
    /// `native`, `recovered_content` or `recovered_reasoning`.
    pub origin: String,
    /// `valid`, `repaired`, `recovered`, `invalid`, `suppressed` or `unvalidated`.
    pub status: String,
    /// The text to dispatch: compact JSON when repaired, the input when invalid; absent when
    /// the call is valid, whose text is the input itself (JavaScript keeps its own string, so
    /// a valid call's text never crosses back).
    pub arguments_text: Option<String>,
    /// The final arguments as JSON text when they differ from `argumentsText` (an invalid call
    /// whose text could be read); absent when `argumentsText` is them or there are none.
    pub arguments_json: Option<String>,
    /// Whether the call has final arguments at all.
    pub has_arguments: bool,
    /// Every repair, in order.
    pub repairs: Vec<Repair>,
    /// Value-free notes for the model.
    pub notes: Vec<String>,
    /// `local-salvage`, `re-prompt`, `gave-up`, or absent.
    pub outcome: Option<String>,
    /// The retry or guard message for `invalid` and `suppressed` calls.
    pub error: Option<String>,
    /// For a native call: its index in the turn's `tool_calls`.
    pub native_index: Option<u32>,
}

impl Call {
    /// The call as JavaScript sees it; `echo_valid` false leaves out a valid call's text (the
    /// caller holds it: `repairCall`'s own argument).
    fn from_result(r: &CallResult, echo_valid: bool) -> Self {
        let arguments_json = match &r.arguments {
            Some(value) if !r.is_dispatchable() => Some(value.to_string()),
            _ => None,
        };
        Self {
            id: r.id.clone(),
            name: r.name.to_string(),
            origin: r.origin.label().to_owned(),
            status: r.status.label().to_owned(),
            arguments_text: (echo_valid || r.status != CallStatus::Valid)
                .then(|| r.arguments_text.clone()),
            arguments_json,
            has_arguments: r.arguments.is_some(),
            repairs: r
                .repairs
                .iter()
                .map(|rep| Repair {
                    kind: rep.kind.name().to_owned(),
                    path: rep.path.clone(),
                })
                .collect(),
            notes: r.notes.clone(),
            outcome: r.outcome.map(|o| o.label().to_owned()),
            error: r.error.clone(),
            native_index: r.native_index.and_then(|i| u32::try_from(i).ok()),
        }
    }
}

/// A conversation's storm window and retry budget, shared by the turns of one agent run.
#[napi]
#[derive(Debug)]
pub struct Session {
    inner: Mutex<toolmend::Session>,
}

/// A retry budget from JavaScript, capped at the library's `MAX_REPROMPTS`.
fn reprompts(n: u32) -> u8 {
    u8::try_from(n).map_or(turn::MAX_REPROMPTS, |n| n.min(turn::MAX_REPROMPTS))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[napi]
impl Session {
    /// A session; `window`/`threshold` tune the storm breaker (the `threshold`th identical call
    /// within `window` calls is suppressed), `maxReprompts` the retries per invalid call (at
    /// most 5). Each defaults to the library's (`DEFAULT_STORM_WINDOW`, …).
    #[napi(constructor)]
    #[must_use]
    pub fn new(window: Option<u32>, threshold: Option<u32>, max_reprompts: Option<u32>) -> Self {
        let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
        Self {
            inner: Mutex::new(toolmend::Session::with_limits(
                window.map_or(turn::DEFAULT_STORM_WINDOW, size),
                threshold.map_or(turn::DEFAULT_STORM_THRESHOLD, size),
                max_reprompts.map_or(turn::DEFAULT_MAX_REPROMPTS, reprompts),
            )),
        }
    }

    /// Changes the retry budget from now on; the failures counted so far are kept.
    #[napi]
    pub fn set_max_reprompts(&self, max_reprompts: u32) {
        lock(&self.inner).set_max_reprompts(reprompts(max_reprompts));
    }

    /// A new user message: the storm window starts afresh (the retry budget does not).
    #[napi]
    pub fn new_user_turn(&self) {
        lock(&self.inner).new_user_turn();
    }
}

/// Options of `new Mender(tools, options)`; each defaults to the library's.
#[napi(object)]
#[derive(Debug, Default)]
pub struct NativeMenderOptions {
    /// `off`, `strip`, `content` or `all`.
    pub recover: Option<String>,
    /// The model name (chooses model-specific readings).
    pub model: Option<String>,
    /// Put argument values in notes and errors (off: value-free messages).
    pub include_values: Option<bool>,
    /// Longest argument text salvaged, in bytes.
    pub max_salvage_bytes: Option<u32>,
    /// Deepest nesting read.
    pub max_depth: Option<u32>,
    /// Most calls recovered from one message.
    pub max_recovered_calls: Option<u32>,
    /// Most repair rounds on one call.
    pub max_repair_rounds: Option<u32>,
    /// Longest message scanned for leaked calls, in bytes.
    pub max_message_bytes: Option<u32>,
    /// Most key matches tried on one call.
    pub max_call_key_matches: Option<u32>,
    /// Most validation errors looked at on one call.
    pub max_call_errors: Option<u32>,
}

fn mender_options(given: NativeMenderOptions) -> Result<MenderOptions> {
    let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
    let mut opts = MenderOptions::default();
    let mut limits = Limits::default();
    if let Some(name) = given.recover {
        opts.recover = RecoverMode::from_name(&name).ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("recover must be 'off', 'strip', 'content' or 'all', not {name:?}"),
            )
        })?;
    }
    if let Some(model) = given.model {
        opts.model = model;
    }
    if let Some(v) = given.include_values {
        opts.include_values = v;
    }
    if let Some(v) = given.max_salvage_bytes {
        limits.max_salvage_bytes = size(v);
    }
    if let Some(v) = given.max_depth {
        limits.max_depth = size(v);
    }
    if let Some(v) = given.max_recovered_calls {
        limits.max_recovered_calls = size(v);
    }
    if let Some(v) = given.max_repair_rounds {
        limits.max_repair_rounds = size(v);
    }
    if let Some(v) = given.max_message_bytes {
        limits.max_message_bytes = size(v);
    }
    if let Some(v) = given.max_call_key_matches {
        limits.max_call_key_matches = u64::from(v);
    }
    if let Some(v) = given.max_call_errors {
        limits.max_call_errors = u64::from(v);
    }
    opts.limits = limits;
    Ok(opts)
}

/// What `Mender.runTurn` made of one assistant message.
#[napi(object)]
#[derive(Debug)]
pub struct Turn {
    /// The content with recovered (or stripped) markup removed.
    pub content: Option<String>,
    /// The reasoning with recovered markup removed.
    pub reasoning: Option<String>,
    /// Every call: native calls first, then recovered calls in text order.
    pub calls: Vec<Call>,
    /// The turn's counts, as JSON text.
    pub report_json: String,
}

/// The repair pipeline over a tool set; one per set of tools, reused across calls.
#[napi]
#[derive(Debug)]
pub struct Mender {
    inner: Arc<toolmend::Mender>,
}

#[napi]
impl Mender {
    /// A mender over `tools` (compiled again for this mender, so the set can be reused).
    #[napi(constructor)]
    pub fn new(tools: &ToolSet, options: Option<NativeMenderOptions>) -> Result<Self> {
        let opts = mender_options(options.unwrap_or_default())?;
        let set = toolmend::ToolSet::from_json(&tools.source);
        Ok(Self {
            inner: Arc::new(toolmend::Mender::with_options(set, opts)),
        })
    }

    /// Validates one call's raw argument text against the tool's schema and repairs only what
    /// failed. Never throws for a broken call: it comes back `invalid` with `error` set.
    /// `null` means valid as given: status `valid`, the caller's name and text, nothing else.
    #[napi]
    #[must_use]
    pub fn repair_call(&self, name: String, arguments: String) -> Option<Call> {
        unless_valid_as_given(&self.inner.repair_call(&name, &arguments), &name)
    }

    /// `repairCall` on the libuv thread pool, for argument texts large enough that the hop
    /// costs less than blocking the event loop.
    #[napi(ts_return_type = "Promise<Call | null>")]
    #[must_use]
    pub fn repair_call_async(&self, name: String, arguments: String) -> AsyncTask<RepairTask> {
        AsyncTask::new(RepairTask {
            mender: Arc::clone(&self.inner),
            name,
            arguments,
        })
    }

    /// Runs one assistant message (OpenAI-style, as JSON text) through every stage with the
    /// session's state.
    #[napi]
    pub fn run_turn(
        &self,
        session: &Session,
        message_json: String,
        finish_reason: Option<String>,
        new_user_turn: Option<bool>,
    ) -> Result<Turn> {
        let message: Value = serde_json::from_str(&message_json).map_err(|e| {
            Error::new(Status::InvalidArg, format!("message is not JSON text: {e}"))
        })?;
        let mut turn = AssistantTurn::from_openai_message(&message)
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        turn.finish_reason = finish_reason;
        turn.new_user_turn = new_user_turn.unwrap_or(false);
        let result = {
            let mut s = lock(&session.inner);
            self.inner.run_turn(&mut s, &turn)
        };
        let report_json = serde_json::to_string(&result.report)
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
        Ok(Turn {
            content: result.content,
            reasoning: result.reasoning,
            calls: result
                .calls
                .iter()
                .map(|c| Call::from_result(c, true))
                .collect(),
            report_json,
        })
    }

    /// Counters since the mender was built, as JSON text.
    #[napi]
    pub fn stats_json(&self) -> Result<String> {
        serde_json::to_string(&self.inner.stats().snapshot())
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    }

    /// The tools this mender validates against.
    #[napi(getter)]
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }
}

/// `Mender.repairCallAsync`'s work: the same call, run off the JavaScript thread.
#[derive(Debug)]
pub struct RepairTask {
    mender: Arc<toolmend::Mender>,
    name: String,
    arguments: String,
}

impl Task for RepairTask {
    type Output = CallResult;
    type JsValue = Option<Call>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(self.mender.repair_call(&self.name, &self.arguments))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(unless_valid_as_given(&output, &self.name))
    }
}

/// A `repairCall` result for JavaScript, `None` when the call is valid as given: status
/// `valid`, the caller's own name, no id, native origin, no repairs, notes, outcome or error.
///
/// Most calls are valid, and on a ~100 B call building the result object (a dozen fields,
/// strings crossing back) cost several times the library's work; `null` crosses for free and
/// the wrapper (`src-js/mender.ts`) builds the same public result from the caller's strings.
/// Any call that differs from that in one field comes back whole.
fn unless_valid_as_given(r: &CallResult, name: &str) -> Option<Call> {
    let as_given = r.status == CallStatus::Valid
        && r.origin == Origin::Native
        && r.id.is_empty()
        && *r.name == *name
        && r.arguments.is_some()
        && r.repairs.is_empty()
        && r.notes.is_empty()
        && r.outcome.is_none()
        && r.error.is_none()
        && r.native_index.is_none();
    (!as_given).then(|| Call::from_result(r, false))
}
