//! Whole assistant turns in a batch, as columns: the engine of `toolmend.arrow.run_turns`.
//!
//! Each row is one line of the `toolmend turns` contract (DESIGN §9): a message, its tools,
//! model, session and options. Rows are run in order with the GIL released for the whole
//! batch; rows naming the same session share its storm and retry state (within the batch, as
//! lines of one file do). A row that cannot be read gets an error and the rows after it go on.
//! The result is flat columns (calls, repairs and notes as values with offsets) that the Python
//! side turns into Arrow arrays without a Python object per call.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use toolmend::turn::{DEFAULT_MAX_REPROMPTS, DEFAULT_STORM_THRESHOLD, DEFAULT_STORM_WINDOW};
use toolmend::{AssistantTurn, Mender, MenderOptions, RecoverMode, Session, TurnResult};

/// The input columns (one entry per row; `None` for a column the batch does not have).
#[derive(Debug, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct TurnRows {
    pub(crate) messages: Vec<Option<String>>,
    pub(crate) ids: Option<Vec<Option<String>>>,
    pub(crate) sessions: Option<Vec<Option<String>>>,
    pub(crate) models: Option<Vec<Option<String>>>,
    pub(crate) tools: Option<Vec<Option<String>>>,
    pub(crate) finish_reasons: Option<Vec<Option<String>>>,
    pub(crate) new_user_turns: Option<Vec<Option<bool>>>,
    pub(crate) options: Option<Vec<Option<String>>>,
}

/// What rows without their own value use (the keywords of `run_turns`, as the CLI's flags).
#[derive(Debug, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct TurnDefaults {
    tools: Option<String>,
    recover: Option<String>,
    model: Option<String>,
    max_reprompts: Option<u8>,
    include_values: bool,
}

/// The result columns, flat.
#[derive(Debug, Default)]
pub(crate) struct TurnColumns {
    pub(crate) error: Vec<Option<String>>,
    pub(crate) content: Vec<Option<String>>,
    pub(crate) reasoning: Vec<Option<String>>,
    /// Offsets into the call columns, one per row plus one.
    pub(crate) call_offsets: Vec<i64>,
    pub(crate) call_id: Vec<String>,
    pub(crate) call_name: Vec<String>,
    pub(crate) call_origin: Vec<String>,
    pub(crate) call_status: Vec<String>,
    pub(crate) call_arguments: Vec<Option<String>>,
    pub(crate) call_arguments_text: Vec<String>,
    pub(crate) call_outcome: Vec<Option<String>>,
    pub(crate) call_error: Vec<Option<String>>,
    pub(crate) call_native_index: Vec<Option<i64>>,
    pub(crate) repair_offsets: Vec<i64>,
    pub(crate) repair_kind: Vec<&'static str>,
    pub(crate) repair_path: Vec<String>,
    pub(crate) note_offsets: Vec<i64>,
    pub(crate) notes: Vec<String>,
    pub(crate) report: [Vec<Option<i64>>; 6],
}

/// The names of the report's counts, in `TurnColumns::report` order.
pub(crate) const REPORT_FIELDS: [&str; 6] = [
    "repaired",
    "invalid",
    "scavenged",
    "truncations_fixed",
    "storms_broken",
    "duplicates_dropped",
];

/// Runs every row; returns the result columns as a dict of lists.
#[pyfunction]
pub(crate) fn run_turn_rows<'py>(
    py: Python<'py>,
    rows: TurnRows,
    defaults: TurnDefaults,
) -> PyResult<Bound<'py, PyDict>> {
    let n = rows.messages.len();
    for (name, len) in [
        ("ids", rows.ids.as_ref().map(Vec::len)),
        ("sessions", rows.sessions.as_ref().map(Vec::len)),
        ("models", rows.models.as_ref().map(Vec::len)),
        ("tools", rows.tools.as_ref().map(Vec::len)),
        ("finish_reasons", rows.finish_reasons.as_ref().map(Vec::len)),
        ("new_user_turns", rows.new_user_turns.as_ref().map(Vec::len)),
        ("options", rows.options.as_ref().map(Vec::len)),
    ] {
        if len.is_some_and(|len| len != n) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{name} has {} rows, messages {n}",
                len.unwrap_or_default()
            )));
        }
    }
    let columns = py.detach(|| run_all(&rows, &defaults));
    into_dict(py, columns)
}

pub(crate) fn run_all(rows: &TurnRows, defaults: &TurnDefaults) -> TurnColumns {
    let mut out = TurnColumns::default();
    out.call_offsets.push(0);
    out.repair_offsets.push(0);
    out.note_offsets.push(0);
    for_each_row(rows, defaults, |_, ran| match ran {
        Ok(ran) => push_result(&mut out, &ran.result),
        Err(message) => push_error(&mut out, message),
    });
    out
}

/// One row that ran: the turn as read, the model it ran for (empty when none), the result.
#[derive(Debug)]
pub(crate) struct RanRow {
    pub(crate) turn: AssistantTurn,
    pub(crate) model: String,
    pub(crate) result: TurnResult,
}

/// Runs every row in order, rows of one session sharing its state (within this call), and
/// hands each row's outcome to `each` with its index.
pub(crate) fn for_each_row(
    rows: &TurnRows,
    defaults: &TurnDefaults,
    mut each: impl FnMut(usize, Result<RanRow, String>),
) {
    let mut sessions: HashMap<String, Session> = HashMap::new();
    for i in 0..rows.messages.len() {
        each(i, run_row(rows, i, defaults, &mut sessions));
    }
}

/// The model a row runs for: its own, else the default; empty when neither.
pub(crate) fn row_model(rows: &TurnRows, i: usize, defaults: &TurnDefaults) -> String {
    cell(rows.models.as_ref(), i)
        .or_else(|| defaults.model.clone())
        .unwrap_or_default()
}

fn cell<T: Clone>(column: Option<&Vec<Option<T>>>, i: usize) -> Option<T> {
    column.and_then(|c| c.get(i).cloned().flatten())
}

/// One row through the turn pipeline, read as `toolmend turns` reads a line.
fn run_row(
    rows: &TurnRows,
    i: usize,
    defaults: &TurnDefaults,
    sessions: &mut HashMap<String, Session>,
) -> Result<RanRow, String> {
    let message: Value = match rows.messages.get(i).cloned().flatten() {
        Some(text) => serde_json::from_str(&text).map_err(|e| format!("message: {e}"))?,
        None => Value::Null,
    };
    if !message.is_object() {
        return Err("no `message` object".into());
    }
    let options: Value = match cell(rows.options.as_ref(), i) {
        Some(text) => serde_json::from_str(&text).map_err(|e| format!("options: {e}"))?,
        None => Value::Null,
    };
    let option = |key: &str| options.get(key).filter(|v| !v.is_null());
    let recover = match option("recover").and_then(Value::as_str) {
        Some(name) => {
            RecoverMode::from_name(name).ok_or_else(|| format!("unknown recover mode `{name}`"))?
        }
        None => match &defaults.recover {
            Some(name) => RecoverMode::from_name(name)
                .ok_or_else(|| format!("unknown recover mode `{name}`"))?,
            None => RecoverMode::default(),
        },
    };
    let max_reprompts = match option("max_reprompts") {
        Some(v) => v
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .filter(|n| *n <= toolmend::turn::MAX_REPROMPTS)
            .ok_or("`max_reprompts` must be 0 to 5")?,
        None => defaults.max_reprompts.unwrap_or(DEFAULT_MAX_REPROMPTS),
    };
    let model = row_model(rows, i, defaults);
    let tools = match defaults
        .tools
        .clone()
        .or_else(|| cell(rows.tools.as_ref(), i))
    {
        Some(text) => serde_json::from_str(&text).map_err(|e| format!("tools: {e}"))?,
        None => Value::Array(Vec::new()),
    };
    let mender = mender(&tools, recover, &model, defaults.include_values);
    let mut turn =
        AssistantTurn::from_openai_message(&message).map_err(|e| format!("message: {e}"))?;
    turn.finish_reason = cell(rows.finish_reasons.as_ref(), i);
    turn.new_user_turn = cell(rows.new_user_turns.as_ref(), i).unwrap_or(false);
    turn.id = cell(rows.ids.as_ref(), i);
    let mut scratch =
        Session::with_limits(DEFAULT_STORM_WINDOW, DEFAULT_STORM_THRESHOLD, max_reprompts);
    let session = match cell(rows.sessions.as_ref(), i) {
        Some(key) => {
            let session = sessions.entry(key).or_insert(scratch);
            // A row's budget applies from that row on; the counts so far are kept.
            session.set_max_reprompts(max_reprompts);
            session
        }
        None => &mut scratch,
    };
    let result = mender.run_turn(session, &turn);
    Ok(RanRow {
        turn,
        model,
        result,
    })
}

/// The cached mender for these tools and options (compiled on first use; the process-wide
/// cache of `menders`, shared with `toolmend.arrow.repair_calls`).
pub(crate) fn mender(
    tools: &Value,
    recover: RecoverMode,
    model: &str,
    include_values: bool,
) -> Arc<Mender> {
    let options = MenderOptions::default()
        .with_recover(recover)
        .with_model(model)
        .with_values(include_values);
    crate::menders::for_value(tools, &options)
}

fn offset(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

fn push_result(out: &mut TurnColumns, result: &TurnResult) {
    out.error.push(None);
    out.content.push(result.content.clone());
    out.reasoning.push(result.reasoning.clone());
    for call in &result.calls {
        out.call_id.push(call.id.clone());
        out.call_name.push(call.name.to_string());
        out.call_origin.push(call.origin.label().to_owned());
        out.call_status.push(call.status.label().to_owned());
        out.call_arguments
            .push(call.arguments.as_ref().map(ToString::to_string));
        out.call_arguments_text.push(call.arguments_text.clone());
        out.call_outcome
            .push(call.outcome.map(|o| o.label().to_owned()));
        out.call_error.push(call.error.clone());
        out.call_native_index.push(call.native_index.map(offset));
        for repair in &call.repairs {
            out.repair_kind.push(repair.kind.name());
            out.repair_path.push(repair.path.clone());
        }
        out.repair_offsets.push(offset(out.repair_kind.len()));
        out.notes.extend(call.notes.iter().cloned());
        out.note_offsets.push(offset(out.notes.len()));
    }
    out.call_offsets.push(offset(out.call_id.len()));
    let r = &result.report;
    let counts = [
        r.repaired,
        r.invalid,
        r.scavenged,
        r.truncations_fixed,
        r.storms_broken,
        r.duplicates_dropped,
    ];
    for (column, count) in out.report.iter_mut().zip(counts) {
        column.push(Some(offset(count)));
    }
}

fn push_error(out: &mut TurnColumns, message: String) {
    out.error.push(Some(message));
    out.content.push(None);
    out.reasoning.push(None);
    out.call_offsets.push(offset(out.call_id.len()));
    for column in &mut out.report {
        column.push(None);
    }
}

fn into_dict(py: Python<'_>, c: TurnColumns) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("error", c.error)?;
    d.set_item("content", c.content)?;
    d.set_item("reasoning", c.reasoning)?;
    d.set_item("call_offsets", c.call_offsets)?;
    d.set_item("call_id", c.call_id)?;
    d.set_item("call_name", c.call_name)?;
    d.set_item("call_origin", c.call_origin)?;
    d.set_item("call_status", c.call_status)?;
    d.set_item("call_arguments", c.call_arguments)?;
    d.set_item("call_arguments_text", c.call_arguments_text)?;
    d.set_item("call_outcome", c.call_outcome)?;
    d.set_item("call_error", c.call_error)?;
    d.set_item("call_native_index", c.call_native_index)?;
    d.set_item("repair_offsets", c.repair_offsets)?;
    d.set_item("repair_kind", c.repair_kind)?;
    d.set_item("repair_path", c.repair_path)?;
    d.set_item("note_offsets", c.note_offsets)?;
    d.set_item("notes", c.notes)?;
    let report = PyDict::new(py);
    for (name, column) in REPORT_FIELDS.into_iter().zip(c.report) {
        report.set_item(name, column)?;
    }
    d.set_item("report", report)?;
    Ok(d)
}
