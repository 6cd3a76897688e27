//! `toolmend._toolmend`: the native half of the `toolmend` Python package.
//!
//! The Python package (`python/toolmend/`) re-exports these classes and adds the pure-Python
//! parts: the json_repair-compatible functions, the openai/anthropic SDK helpers and the
//! framework adapters (`toolmend.integrations`). Work on inputs over [`DETACH_BYTES`] runs with
//! the GIL released, so other Python threads go on.

mod arrow_ffi;
mod audit;
mod call;
mod call_batch;
mod convert;
mod dropin;
mod menders;
mod pydumps;
mod strict;
mod text_column;
mod turn_arrow;
mod turn_batch;

use std::sync::{Arc, Mutex};

use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;
use toolmend::recover::StreamOutput;
use toolmend::salvage::{
    DocumentOptions, SalvageErrorKind, SalvageOptions, TruncationPolicy, salvage_broken_document,
    salvage_document,
};
use toolmend::{AssistantTurn, Limits, MenderOptions, RecoverMode};

use call::{Call, SpareCalls};
use convert::{to_py, to_value};

/// Inputs longer than this are processed with the GIL released (below it, releasing and
/// re-taking the GIL costs more than the work).
const DETACH_BYTES: usize = 16 * 1024;

pyo3::create_exception!(
    _toolmend,
    ToolmendError,
    pyo3::exceptions::PyValueError,
    "Base class of every toolmend error (a ValueError)."
);
pyo3::create_exception!(
    _toolmend,
    ToolSpecError,
    ToolmendError,
    "A tool list or tool object toolmend cannot read."
);
pyo3::create_exception!(
    _toolmend,
    SalvageError,
    ToolmendError,
    "A text that holds no JSON toolmend can read without guessing."
);
pyo3::create_exception!(
    _toolmend,
    NoJsonError,
    SalvageError,
    "The text holds no JSON at all (prose, empty text)."
);
pyo3::create_exception!(
    _toolmend,
    JsonSyntaxError,
    SalvageError,
    "The text looks like JSON but cannot be read even leniently."
);
pyo3::create_exception!(
    _toolmend,
    NonFiniteError,
    SalvageError,
    "NaN or Infinity where a number is expected: JSON has no such value."
);
pyo3::create_exception!(
    _toolmend,
    TooLargeError,
    SalvageError,
    "The text is over the size limit."
);
pyo3::create_exception!(
    _toolmend,
    TooDeepError,
    SalvageError,
    "The nesting is over the depth limit."
);

/// The `SalvageError` subclass for a failure, with `kind`, `offset`, `line`, `column` set.
fn salvage_err(py: Python<'_>, e: &toolmend::salvage::SalvageError) -> PyErr {
    let (kind, msg) = match e.kind {
        SalvageErrorKind::TooLarge => ("too_large", "text over the size limit"),
        SalvageErrorKind::TooDeep => ("too_deep", "nesting over the depth limit"),
        SalvageErrorKind::NoJson => ("no_json", "no JSON in the text"),
        SalvageErrorKind::NonFinite => ("non_finite", "NaN or Infinity is not JSON"),
        _ => ("syntax", "JSON that cannot be read without guessing"),
    };
    let message = format!(
        "{msg} at byte {} (line {}, column {})",
        e.offset, e.line, e.column
    );
    let err = match e.kind {
        SalvageErrorKind::TooLarge => TooLargeError::new_err(message),
        SalvageErrorKind::TooDeep => TooDeepError::new_err(message),
        SalvageErrorKind::NoJson => NoJsonError::new_err(message),
        SalvageErrorKind::NonFinite => NonFiniteError::new_err(message),
        _ => JsonSyntaxError::new_err(message),
    };
    let value = err.value(py);
    for (name, v) in [("offset", e.offset), ("line", e.line), ("column", e.column)] {
        let _ = value.setattr(name, v);
    }
    let _ = value.setattr("kind", kind);
    err
}

/// Reads any JSON document leniently (the json_repair-compatible functions build on this).
///
/// `truncation` is `"close"` (keep what was read and close it) or `"refuse"`; `trim_layout`,
/// `lenient_scalars` and `trim_cut_strings` are the document readings of `DocumentOptions`
/// (`trim_cut_strings` is json_repair's `stream_stable=False`); `broken=True` says
/// the text is known not to be strict JSON (`salvage_broken_document`). Returns
/// `(values, repairs, truncated)`: every value found (several for `{…}{…}`), `repairs` a list
/// of `(kind, byte offset)`.
#[pyfunction]
#[pyo3(signature = (
    text, *, truncation = "close", max_bytes = None, max_depth = None, trim_layout = true,
    lenient_scalars = true, trim_cut_strings = false, broken = false
))]
#[allow(clippy::fn_params_excessive_bools, clippy::too_many_arguments)] // keyword-only options, named at every call
fn salvage_values<'py>(
    py: Python<'py>,
    text: &str,
    truncation: &str,
    max_bytes: Option<usize>,
    max_depth: Option<usize>,
    trim_layout: bool,
    lenient_scalars: bool,
    trim_cut_strings: bool,
    broken: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let policy = match truncation {
        "close" => TruncationPolicy::Close,
        "refuse" => TruncationPolicy::Refuse,
        other => {
            return Err(PyValueError::new_err(format!(
                "truncation must be 'close' or 'refuse', not {other:?}"
            )));
        }
    };
    let defaults = DocumentOptions::default();
    let limits = SalvageOptions::default()
        .with_max_bytes(max_bytes.unwrap_or(defaults.salvage.max_bytes))
        .with_max_depth(max_depth.unwrap_or(defaults.salvage.max_depth));
    let options = defaults
        .with_truncation(policy)
        .with_salvage(limits)
        .with_trim_layout(trim_layout)
        .with_lenient_scalars(lenient_scalars)
        .with_trim_cut_strings(trim_cut_strings);
    let run = || {
        if broken {
            salvage_broken_document(text, &options)
        } else {
            salvage_document(text, &options)
        }
    };
    let doc = if text.len() > DETACH_BYTES {
        py.detach(run)
    } else {
        run()
    }
    .map_err(|e| salvage_err(py, &e))?;
    let repairs: Vec<(&'static str, usize)> = doc
        .repairs
        .iter()
        .map(|r| (r.kind.name(), r.offset))
        .collect();
    let values = doc
        .values
        .iter()
        .map(|v| to_py(py, v))
        .collect::<PyResult<Vec<_>>>()?;
    (values, repairs, doc.truncated).into_pyobject(py)
}

/// Strict JSON straight into Python objects, the json_repair functions' path for valid input:
/// the value; `...` (`Ellipsis`, which no JSON text gives) when the text is not strict JSON
/// (then `salvage_values(text, broken=True)` skips its own strict attempt); `NotImplemented`
/// when it may be strict JSON this path leaves to serde_json (see `salvage/strict/`) or is over
/// 16 KiB (read with the GIL released by `salvage_values`). Either way the value is the same.
#[pyfunction]
fn loads_strict<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    if text.len() > DETACH_BYTES {
        return Ok(py.NotImplemented().into_bound(py));
    }
    match strict::loads(py, text) {
        Ok(value) => Ok(value),
        Err(strict::Miss::Invalid) => Ok(py.Ellipsis().into_bound(py)),
        Err(strict::Miss::NotFast) => Ok(py.NotImplemented().into_bound(py)),
        Err(strict::Miss::Py(e)) => Err(e),
    }
}

/// The tools of a request, compiled once.
///
/// Build it with `ToolSet.from_openai(tools)`, `ToolSet.from_anthropic(tools)` or
/// `ToolSet(tools)`; each accepts every form (OpenAI `{"type": "function", "function": …}`,
/// flat `{"name", "parameters"}`, Anthropic `{"name", "input_schema"}`) and SDK objects.
#[pyclass(frozen, module = "toolmend")]
struct ToolSet {
    inner: Arc<toolmend::ToolSet>,
    /// The tool objects as given, so each `Mender` can compile its own copy.
    source: Arc<Value>,
}

impl ToolSet {
    fn build(tools: &Bound<'_, PyAny>) -> PyResult<Self> {
        let source = to_value(tools)?;
        if !source.is_array() {
            return Err(ToolSpecError::new_err(
                "tools must be a list of tool objects",
            ));
        }
        Ok(Self {
            inner: Arc::new(toolmend::ToolSet::from_json(&source)),
            source: Arc::new(source),
        })
    }

    /// A `ToolSet` argument, or a list of tool objects compiled now.
    fn resolve(tools: &Bound<'_, PyAny>) -> PyResult<(Arc<toolmend::ToolSet>, Arc<Value>)> {
        if let Ok(set) = tools.cast::<Self>() {
            let set = set.get();
            return Ok((Arc::clone(&set.inner), Arc::clone(&set.source)));
        }
        let set = Self::build(tools)?;
        Ok((set.inner, set.source))
    }
}

#[pymethods]
impl ToolSet {
    #[new]
    fn new(tools: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::build(tools)
    }

    /// Tools in the OpenAI Chat Completions form (`[{"type": "function", "function": {…}}]`).
    #[staticmethod]
    fn from_openai(tools: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::build(tools)
    }

    /// Tools in the Anthropic Messages form (`[{"name", "description", "input_schema"}]`).
    #[staticmethod]
    fn from_anthropic(tools: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::build(tools)
    }

    /// The declared tool names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.iter().map(|t| t.name().to_owned()).collect()
    }

    /// Why tool objects or schemas were refused (the rest of the set is built regardless).
    #[getter]
    fn rejected(&self) -> Vec<String> {
        self.inner
            .rejected()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.get(name).is_some()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("ToolSet({})", py_repr(py, self.names()))
    }
}

/// One repair: its kind (a DESIGN §5 name) and the JSON Pointer where it was made.
#[pyclass(frozen, get_all, eq, module = "toolmend")]
#[derive(PartialEq, Eq)]
pub(crate) struct Repair {
    kind: String,
    path: String,
}

#[pymethods]
impl Repair {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Repair(kind={}, path={})",
            py_repr(py, &self.kind),
            py_repr(py, &self.path)
        )
    }

    /// The repair as a plain dict (`kind`, `path`), for logs and JSON.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", &self.kind)?;
        d.set_item("path", &self.path)?;
        Ok(d)
    }
}

/// Python's `repr` of a value (what a `__repr__` shows of its fields).
pub(crate) fn py_repr<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> String {
    value
        .into_bound_py_any(py)
        .and_then(|o| o.repr())
        .map_or_else(|_| "?".to_owned(), |r| r.to_string())
}

/// Longest text a `repr` shows before eliding the middle (arguments can be megabytes).
const REPR_TEXT_CHARS: usize = 120;

/// `text`, or its head and tail around `…` when it is longer than `REPR_TEXT_CHARS`.
pub(crate) fn repr_clip(text: &str) -> String {
    let count = text.chars().count();
    if count <= REPR_TEXT_CHARS {
        return text.to_owned();
    }
    let half = REPR_TEXT_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}…{tail}")
}

/// A conversation's storm window and retry budget, shared by the turns of one session.
#[pyclass(frozen, module = "toolmend")]
struct Session {
    inner: Mutex<toolmend::Session>,
    /// The options as given (`None`: the library's default), for `repr`.
    options: (Option<usize>, Option<usize>, Option<u8>),
}

#[pymethods]
impl Session {
    /// A session; `window`/`threshold` tune the storm breaker (the `threshold`th identical call
    /// within `window` calls is suppressed), `max_reprompts` the retries per invalid call.
    #[new]
    #[pyo3(signature = (*, window = None, threshold = None, max_reprompts = None))]
    fn new(window: Option<usize>, threshold: Option<usize>, max_reprompts: Option<u8>) -> Self {
        let inner = match (window, threshold) {
            (None, None) => {
                let mut s = toolmend::Session::new();
                if let Some(m) = max_reprompts {
                    s.set_max_reprompts(m);
                }
                s
            }
            // What is not given keeps the library's default, as `Session::new` would.
            (w, t) => toolmend::Session::with_limits(
                w.unwrap_or(toolmend::turn::DEFAULT_STORM_WINDOW),
                t.unwrap_or(toolmend::turn::DEFAULT_STORM_THRESHOLD),
                max_reprompts.unwrap_or(toolmend::turn::DEFAULT_MAX_REPROMPTS),
            ),
        };
        Self {
            inner: Mutex::new(inner),
            options: (window, threshold, max_reprompts),
        }
    }

    /// A new user message: the storm window starts afresh (the retry budget does not).
    fn new_user_turn(&self) {
        lock(&self.inner).new_user_turn();
    }

    fn __repr__(&self) -> String {
        let (window, threshold, max_reprompts) = self.options;
        let mut parts = Vec::new();
        if let Some(w) = window {
            parts.push(format!("window={w}"));
        }
        if let Some(t) = threshold {
            parts.push(format!("threshold={t}"));
        }
        if let Some(m) = max_reprompts {
            parts.push(format!("max_reprompts={m}"));
        }
        format!("Session({})", parts.join(", "))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What `Mender.run_turn` made of one assistant message.
#[pyclass(frozen, get_all, module = "toolmend")]
struct TurnResult {
    content: Option<String>,
    reasoning: Option<String>,
    calls: Vec<Py<Call>>,
    report: Py<PyAny>,
}

#[pymethods]
impl TurnResult {
    fn __repr__(&self, py: Python<'_>) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .map(|c| {
                let c = c.borrow(py);
                format!("{}:{}", c.name(), c.status())
            })
            .collect();
        format!(
            "TurnResult(calls={}, content={})",
            py_repr(py, calls),
            py_repr(py, self.content.as_deref().map(repr_clip))
        )
    }

    /// The result as plain Python values: `content`, `reasoning`, `calls` (each `Call.to_dict()`)
    /// and `report`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("content", &self.content)?;
        d.set_item("reasoning", &self.reasoning)?;
        let calls = self
            .calls
            .iter()
            .map(|c| c.borrow(py).to_dict(py))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("calls", calls)?;
        d.set_item("report", self.report.bind(py))?;
        Ok(d)
    }
}

/// The repair pipeline over a set of tools; safe to share across threads.
///
/// Options (keywords): `recover` (`"off"`, `"strip"`, `"content"`, `"all"`), `model`,
/// `include_values`, and the limits `max_salvage_bytes`, `max_depth`, `max_recovered_calls`,
/// `max_repair_rounds`, `max_message_bytes`, `max_call_key_matches`, `max_call_errors`.
#[pyclass(frozen, module = "toolmend")]
pub(crate) struct Mender {
    /// Shared with the process-wide cache when made by `cached_mender` (`menders`).
    pub(crate) inner: Arc<toolmend::Mender>,
    /// The last `Call`s handed out, refilled when Python has let go of them.
    pub(crate) spares: SpareCalls,
}

fn recover_mode(name: &str) -> PyResult<RecoverMode> {
    RecoverMode::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "recover must be 'off', 'strip', 'content' or 'all', not {name:?}"
        ))
    })
}

/// `Mender`'s keywords as [`MenderOptions`] (for `Mender()` and `cached_mender`).
pub(crate) fn mender_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<MenderOptions> {
    let mut opts = MenderOptions::default();
    let mut limits = Limits::default();
    if let Some(options) = options {
        for (k, v) in options.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "recover" => opts.recover = recover_mode(&v.extract::<String>()?)?,
                "model" => opts.model = v.extract()?,
                "include_values" => opts.include_values = v.extract()?,
                "max_salvage_bytes" => limits.max_salvage_bytes = v.extract()?,
                "max_depth" => limits.max_depth = v.extract()?,
                "max_recovered_calls" => limits.max_recovered_calls = v.extract()?,
                "max_repair_rounds" => limits.max_repair_rounds = v.extract()?,
                "max_message_bytes" => limits.max_message_bytes = v.extract()?,
                "max_call_key_matches" => limits.max_call_key_matches = v.extract()?,
                "max_call_errors" => limits.max_call_errors = v.extract()?,
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "Mender() got an unexpected keyword argument {other:?}"
                    )));
                }
            }
        }
    }
    opts.limits = limits;
    Ok(opts)
}

#[pymethods]
impl Mender {
    #[new]
    #[pyo3(signature = (tools, **options))]
    fn new(tools: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let (_, source) = ToolSet::resolve(tools)?;
        let opts = mender_options(options)?;
        let set = toolmend::ToolSet::from_json(&source);
        Ok(Self {
            inner: Arc::new(toolmend::Mender::with_options(set, opts)),
            spares: SpareCalls::default(),
        })
    }

    /// Validates one call's raw `arguments` text against the tool's schema and repairs only
    /// what failed. Never raises for a broken call: it comes back `invalid` with `error` set.
    fn repair_call(&self, py: Python<'_>, name: &str, arguments: &str) -> PyResult<Py<Call>> {
        let mender = &self.inner;
        let run = || mender.repair_call(name, arguments);
        let result = if arguments.len() > DETACH_BYTES {
            py.detach(run)
        } else {
            run()
        };
        self.spares.hand_out(py, result)
    }

    /// Repairs a column of calls at once, with the GIL released for the whole batch (the
    /// engine of `toolmend.arrow.repair_calls`).
    ///
    /// `names[i]` and `arguments[i]` are one call; a `None` argument text is read as `""`
    /// (judged like an empty string, never filled in). Returns `status`, `arguments_repaired`
    /// (the text to dispatch, the input bytes when valid, `None` when not dispatchable),
    /// the repairs as Arrow-style flat lists (`offsets` of length n + 1 into `kinds` and
    /// `paths`) and `error`.
    #[allow(clippy::type_complexity)]
    fn repair_many(
        &self,
        py: Python<'_>,
        names: Vec<Option<String>>,
        arguments: Vec<Option<String>>,
    ) -> PyResult<(
        Vec<String>,
        Vec<Option<String>>,
        Vec<i64>,
        Vec<String>,
        Vec<String>,
        Vec<Option<String>>,
    )> {
        if names.len() != arguments.len() {
            return Err(PyValueError::new_err(format!(
                "names and arguments differ in length ({} and {})",
                names.len(),
                arguments.len()
            )));
        }
        let mender = &self.inner;
        Ok(py.detach(|| {
            let mut status = Vec::with_capacity(names.len());
            let mut repaired = Vec::with_capacity(names.len());
            let mut offsets = Vec::with_capacity(names.len() + 1);
            let (mut kinds, mut paths) = (Vec::new(), Vec::new());
            let mut error = Vec::with_capacity(names.len());
            offsets.push(0);
            for (name, args) in names.iter().zip(&arguments) {
                let r = mender
                    .repair_call(name.as_deref().unwrap_or(""), args.as_deref().unwrap_or(""));
                let label = r.status.label();
                let dispatchable = r.is_dispatchable();
                repaired.push(dispatchable.then(|| r.arguments_text.clone()));
                for rep in &r.repairs {
                    kinds.push(rep.kind.name().to_owned());
                    paths.push(rep.path.clone());
                }
                offsets.push(i64::try_from(kinds.len()).unwrap_or(i64::MAX));
                error.push(r.error.clone());
                status.push(label.to_owned());
            }
            (status, repaired, offsets, kinds, paths, error)
        }))
    }

    /// Runs one assistant message through every stage with the session's state.
    ///
    /// `message` is an OpenAI-style assistant message (dict or SDK object): `content`,
    /// `reasoning_content`/`reasoning`, `tool_calls` (`id`, `function.name`,
    /// `function.arguments`).
    #[pyo3(signature = (session, message, *, finish_reason = None, new_user_turn = false))]
    fn run_turn(
        &self,
        py: Python<'_>,
        session: &Session,
        message: &Bound<'_, PyAny>,
        finish_reason: Option<String>,
        new_user_turn: bool,
    ) -> PyResult<TurnResult> {
        let message = to_value(message)?;
        let mut turn = AssistantTurn::from_openai_message(&message)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        turn.finish_reason = finish_reason;
        turn.new_user_turn = new_user_turn;
        let mender = &self.inner;
        let size = turn.content.as_ref().map_or(0, String::len)
            + turn
                .tool_calls
                .iter()
                .map(|c| c.arguments.len())
                .sum::<usize>();
        let run = || {
            let mut s = lock(&session.inner);
            mender.run_turn(&mut s, &turn)
        };
        let result = if size > DETACH_BYTES {
            py.detach(run)
        } else {
            run()
        };
        // Moved into their `Call`s, not copied: the turn's answer is ours.
        let calls = result
            .calls
            .into_iter()
            .map(|c| Py::new(py, Call::from_owned(c)))
            .collect::<PyResult<_>>()?;
        let report = serde_json::to_value(result.report)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(TurnResult {
            content: result.content,
            reasoning: result.reasoning,
            calls,
            report: to_py(py, &report)?.unbind(),
        })
    }

    /// Counters since the mender was built: calls, invalid, recovered, storms broken, gave up,
    /// and repairs per kind.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let snap = serde_json::to_value(self.inner.stats().snapshot())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        to_py(py, &snap)
    }

    /// The tools this mender validates against.
    #[getter]
    fn tool_names(&self) -> Vec<String> {
        self.inner
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Mender(tools={})", py_repr(py, self.tool_names()))
    }
}

/// One call found in text: the tool `name`, the markup `family`, `arguments` as JSON text,
/// `span` the `(start, end)` byte range of the markup.
#[pyclass(frozen, get_all, module = "toolmend")]
struct RecoveredCall {
    name: String,
    written_name: Option<String>,
    family: String,
    arguments: String,
    arguments_unwrapped: bool,
    span: (usize, usize),
    channel: String,
}

impl RecoveredCall {
    fn new(c: &toolmend::recover::RecoveredCall, channel: &str) -> Self {
        Self {
            name: c.name.clone(),
            written_name: c.written_name.clone(),
            family: c.family.to_owned(),
            arguments: c.arguments.clone(),
            arguments_unwrapped: c.arguments_unwrapped,
            span: (c.span.start, c.span.end),
            channel: channel.to_owned(),
        }
    }
}

#[pymethods]
impl RecoveredCall {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "RecoveredCall(name={}, family={}, arguments={})",
            py_repr(py, &self.name),
            py_repr(py, &self.family),
            py_repr(py, repr_clip(&self.arguments))
        )
    }

    /// The call as a plain dict, for logs and JSON.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", &self.name)?;
        d.set_item("written_name", &self.written_name)?;
        d.set_item("family", &self.family)?;
        d.set_item("arguments", &self.arguments)?;
        d.set_item("arguments_unwrapped", self.arguments_unwrapped)?;
        d.set_item("span", self.span)?;
        d.set_item("channel", &self.channel)?;
        Ok(d)
    }
}

#[pymethods]
impl Recovered {
    fn __repr__(&self, py: Python<'_>) -> String {
        let calls: Vec<String> = self
            .calls
            .iter()
            .map(|c| c.borrow(py).name.clone())
            .collect();
        // `lost` is shown only when a call was lost: the common repr stays short.
        let lost = if self.lost.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = self
                .lost
                .iter()
                .map(|c| c.borrow(py).name.clone())
                .collect();
            format!(", lost={}", py_repr(py, names))
        };
        format!(
            "Recovered(text={}, calls={}{lost})",
            py_repr(py, repr_clip(&self.text)),
            py_repr(py, calls)
        )
    }

    /// `text`, `calls` (each `RecoveredCall.to_dict()`) and `lost` (each `LostCall.to_dict()`)
    /// as plain Python values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("text", &self.text)?;
        let calls = self
            .calls
            .iter()
            .map(|c| c.borrow(py).to_dict(py))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("calls", calls)?;
        let lost = self
            .lost
            .iter()
            .map(|c| c.borrow(py).to_dict(py))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("lost", lost)?;
        Ok(d)
    }
}

/// Text with the markup of recovered calls removed, those calls, and the calls of their blocks
/// that could not be read (`lost`).
#[pyclass(frozen, get_all, module = "toolmend")]
struct Recovered {
    text: String,
    calls: Vec<Py<RecoveredCall>>,
    lost: Vec<Py<LostCall>>,
}

/// A call of a declared tool in a recovered block that could not be read (issue #28): never
/// recovered, never dropped silently. `text` is what could not be read, as written (its
/// arguments or its whole list entry); `position` its place among the recovered calls (for a
/// stream: among every call released so far); `span` the `(start, end)` byte range of its
/// block, shared with the block's recovered calls.
#[pyclass(frozen, get_all, module = "toolmend")]
struct LostCall {
    name: String,
    family: String,
    text: String,
    position: usize,
    span: (usize, usize),
    channel: String,
}

impl LostCall {
    fn new(c: &toolmend::recover::LostCall, channel: &str) -> Self {
        Self {
            name: c.name.clone(),
            family: c.family.to_owned(),
            text: c.text.clone(),
            position: c.position,
            span: (c.span.start, c.span.end),
            channel: channel.to_owned(),
        }
    }
}

#[pymethods]
impl LostCall {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "LostCall(name={}, family={}, position={}, text={})",
            py_repr(py, &self.name),
            py_repr(py, &self.family),
            self.position,
            py_repr(py, repr_clip(&self.text))
        )
    }

    /// The lost call as a plain dict, for logs and JSON.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", &self.name)?;
        d.set_item("family", &self.family)?;
        d.set_item("text", &self.text)?;
        d.set_item("position", self.position)?;
        d.set_item("span", self.span)?;
        d.set_item("channel", &self.channel)?;
        Ok(d)
    }
}

fn channel_name(channel: &str) -> PyResult<String> {
    match channel {
        "content" | "reasoning" => Ok(channel.to_owned()),
        other => Err(PyValueError::new_err(format!(
            "channel must be 'content' or 'reasoning', not {other:?}"
        ))),
    }
}

fn recovered_calls(
    py: Python<'_>,
    calls: &[RecoveredCall_],
    channel: &str,
) -> PyResult<Vec<Py<RecoveredCall>>> {
    calls
        .iter()
        .map(|c| Py::new(py, RecoveredCall::new(c, channel)))
        .collect()
}

fn lost_calls(
    py: Python<'_>,
    lost: &[toolmend::recover::LostCall],
    channel: &str,
) -> PyResult<Vec<Py<LostCall>>> {
    lost.iter()
        .map(|c| Py::new(py, LostCall::new(c, channel)))
        .collect()
}

type RecoveredCall_ = toolmend::recover::RecoveredCall;

/// Finds tool calls the model wrote as text (Hermes `<tool_call>`, Qwen XML, DSML, …) in
/// `text` from the given `channel` (`"content"` or `"reasoning"`); only declared tools count.
#[pyfunction]
#[pyo3(signature = (text, tools, *, channel = "content", max_calls = None))]
fn recover(
    py: Python<'_>,
    text: &str,
    tools: &Bound<'_, PyAny>,
    channel: &str,
    max_calls: Option<usize>,
) -> PyResult<Recovered> {
    let channel = channel_name(channel)?;
    let (set, _) = ToolSet::resolve(tools)?;
    let max = max_calls.unwrap_or(toolmend::limits::MAX_RECOVERED_CALLS);
    let run = || toolmend::recover::recover_text(text, &set, max);
    let found = if text.len() > DETACH_BYTES {
        py.detach(run)
    } else {
        run()
    };
    Ok(Recovered {
        calls: recovered_calls(py, &found.calls, &channel)?,
        lost: lost_calls(py, &found.lost, &channel)?,
        text: found.text,
    })
}

/// Recovers calls from text that arrives in chunks: `feed(chunk)` returns the text safe to
/// show now and the calls completed so far; `finish()` the rest. One per channel and message.
#[pyclass(frozen, module = "toolmend")]
struct StreamRecoverer {
    tools: Arc<toolmend::ToolSet>,
    channel: String,
    /// The recoverer (`None` after `finish()`), and the buffer each `feed` writes into.
    state: Mutex<(Option<toolmend::recover::StreamRecoverer>, StreamOutput)>,
}

impl StreamRecoverer {
    fn output(&self, py: Python<'_>, out: &StreamOutput, text: String) -> PyResult<Recovered> {
        Ok(Recovered {
            calls: recovered_calls(py, &out.calls, &self.channel)?,
            lost: lost_calls(py, &out.lost, &self.channel)?,
            text,
        })
    }
}

#[pymethods]
impl StreamRecoverer {
    #[new]
    #[pyo3(signature = (tools, *, channel = "content", max_calls = None))]
    fn new(tools: &Bound<'_, PyAny>, channel: &str, max_calls: Option<usize>) -> PyResult<Self> {
        let (set, _) = ToolSet::resolve(tools)?;
        let max = max_calls.unwrap_or(toolmend::limits::MAX_RECOVERED_CALLS);
        Ok(Self {
            tools: set,
            channel: channel_name(channel)?,
            state: Mutex::new((
                Some(toolmend::recover::StreamRecoverer::new(max)),
                StreamOutput::default(),
            )),
        })
    }

    /// Adds a chunk of text; returns what may be released now.
    fn feed(&self, py: Python<'_>, chunk: &str) -> PyResult<Recovered> {
        let mut state = lock(&self.state);
        let (recoverer, released) = &mut *state;
        let r = recoverer
            .as_mut()
            .ok_or_else(|| ToolmendError::new_err("feed() after finish()"))?;
        // The buffer keeps its capacity: the text is copied out once, at its final size.
        released.text.clear();
        released.calls.clear();
        released.lost.clear();
        r.push_into(&self.tools, chunk, released);
        self.output(py, released, released.text.clone())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let finished = lock(&self.state).0.is_none();
        let names: Vec<String> = self.tools.iter().map(|t| t.name().to_owned()).collect();
        format!(
            "StreamRecoverer(tools={}, channel={}, finished={})",
            py_repr(py, names),
            py_repr(py, &self.channel),
            if finished { "True" } else { "False" }
        )
    }

    /// Ends the text; returns the rest (text held back, calls completed at the end).
    fn finish(&self, py: Python<'_>) -> PyResult<Recovered> {
        let r = lock(&self.state)
            .0
            .take()
            .ok_or_else(|| ToolmendError::new_err("finish() called twice"))?;
        let mut out = r.finish(&self.tools);
        let text = std::mem::take(&mut out.text);
        self.output(py, &out, text)
    }
}

/// Rewrites tool definitions for `model` (anchors, flattening, contract hints) and returns
/// them in the form given. Options: `strip_hints`, `strip_anchors`, `flatten`,
/// `flatten_leaves_over`, `flatten_depth_over`, `contract_hints`, `max_hint_bytes`.
#[pyfunction]
#[pyo3(signature = (tools, *, model = "", **options))]
fn prepare_tools<'py>(
    py: Python<'py>,
    tools: &Bound<'py, PyAny>,
    model: &str,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = to_value(tools)?;
    let mut opts = toolmend::PrepareOptions::default();
    if let Some(options) = options {
        for (k, v) in options.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "strip_hints" => opts.strip_hints = v.extract()?,
                "strip_anchors" => opts.strip_anchors = v.extract()?,
                "flatten" => opts.flatten = v.extract()?,
                "flatten_leaves_over" => opts.flatten_leaves_over = v.extract()?,
                "flatten_depth_over" => opts.flatten_depth_over = v.extract()?,
                "contract_hints" => opts.contract_hints = v.extract()?,
                "max_hint_bytes" => opts.max_hint_bytes = v.extract()?,
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "prepare_tools() got an unexpected keyword argument {other:?}"
                    )));
                }
            }
        }
    }
    let prepared = toolmend::prepare_tools(&value, model, &opts)
        .map_err(|e| ToolSpecError::new_err(e.to_string()))?;
    to_py(py, &prepared)
}

/// The repair kinds toolmend reports, by name.
#[pyfunction]
fn repair_kinds() -> Vec<&'static str> {
    toolmend::RepairKind::ALL.iter().map(|k| k.name()).collect()
}

#[pymodule]
fn _toolmend(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<ToolSet>()?;
    m.add_class::<Mender>()?;
    m.add_class::<Call>()?;
    m.add_class::<Repair>()?;
    m.add_class::<Session>()?;
    m.add_class::<TurnResult>()?;
    m.add_class::<RecoveredCall>()?;
    m.add_class::<Recovered>()?;
    m.add_class::<LostCall>()?;
    m.add_class::<StreamRecoverer>()?;
    m.add_function(wrap_pyfunction!(recover, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_tools, m)?)?;
    m.add_function(wrap_pyfunction!(salvage_values, m)?)?;
    m.add_function(wrap_pyfunction!(loads_strict, m)?)?;
    m.add_function(wrap_pyfunction!(dropin::loads_document, m)?)?;
    m.add_function(wrap_pyfunction!(dropin::repair_document, m)?)?;
    m.add_function(wrap_pyfunction!(repair_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(turn_batch::run_turn_rows, m)?)?;
    m.add_class::<audit::AuditTally>()?;
    m.add_function(wrap_pyfunction!(call_batch::repair_call_columns, m)?)?;
    m.add_function(wrap_pyfunction!(menders::cached_mender, m)?)?;
    m.add_function(wrap_pyfunction!(turn_arrow::run_turn_columns, m)?)?;
    m.add_class::<arrow_ffi::ArrowArrayExport>()?;
    m.add("ToolmendError", py.get_type::<ToolmendError>())?;
    m.add("ToolSpecError", py.get_type::<ToolSpecError>())?;
    m.add("SalvageError", py.get_type::<SalvageError>())?;
    m.add("NoJsonError", py.get_type::<NoJsonError>())?;
    m.add("JsonSyntaxError", py.get_type::<JsonSyntaxError>())?;
    m.add("NonFiniteError", py.get_type::<NonFiniteError>())?;
    m.add("TooLargeError", py.get_type::<TooLargeError>())?;
    m.add("TooDeepError", py.get_type::<TooDeepError>())?;
    Ok(())
}
