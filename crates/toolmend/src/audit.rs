//! The audit tally: where a model's tool calls break, over many turns run through the library.
//!
//! Counts calls by how they ended (valid, repaired, recovered, invalid, …), per model, tool and
//! repair kind, with the repair rate, the top failing tools and the *silently invalid* calls:
//! native calls whose arguments were strict JSON as sent yet failed the schema, which an agent
//! without toolmend would have dispatched as they were. One tally serves `toolmend audit` (the
//! CLI's table, JSON and JSONL) and `toolmend.arrow.audit` (Python, the JSONL rows as a table),
//! so both faces count the same rows the same way.
//!
//! Memory is bounded by a cap on distinct keys per dimension ([`MAX_KEYS`]); later keys count
//! under [`OTHER`].

use std::collections::HashMap;

use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use crate::{AssistantTurn, CallResult, Origin, Status, TurnResult};

/// Most distinct keys kept per dimension (models, tools, kinds); later keys count as [`OTHER`].
pub const MAX_KEYS: usize = 1000;
/// The key that collects every key past the cap.
pub const OTHER: &str = "(other)";
/// The model key of turns that name no model (and get none from a default).
pub const NO_MODEL: &str = "(none)";
/// Unreadable lines quoted in the report (their line number and error); the rest are counted.
const MAX_ERROR_EXAMPLES: usize = 5;

/// Why a line could not be audited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineError {
    /// The line is not UTF-8.
    NotUtf8,
    /// The line is not JSON.
    NotJson,
    /// The line is JSON but not a turn the library can run (no `message`, a bad option, …).
    Rejected,
}

/// Unreadable lines by [`LineError`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ErrorCounts {
    /// Every unreadable line.
    pub total: u64,
    /// Lines that are not UTF-8.
    pub not_utf8: u64,
    /// Lines that are not JSON.
    pub not_json: u64,
    /// Lines the library could not run.
    pub rejected: u64,
}

/// Calls of one key by how they ended, and the lines behind them (for the total and models).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Calls counted.
    pub calls: u64,
    /// Calls valid as sent.
    pub valid: u64,
    /// Calls repaired.
    pub repaired: u64,
    /// Calls recovered from the text.
    pub recovered: u64,
    /// Calls that could not be saved.
    pub invalid: u64,
    /// Calls dropped (duplicates, storms).
    pub suppressed: u64,
    /// Calls of tools without a usable schema (and any status added later).
    pub unvalidated: u64,
    /// Native calls whose arguments were strict JSON as sent, yet not valid: an agent without
    /// toolmend would have dispatched them as they were.
    pub silently_invalid: u64,
    /// Repairs made (a call may have several).
    pub repairs: u64,
    /// Turns run (total and model rows only).
    pub turns: u64,
    /// Unreadable lines (total and model rows only).
    pub errors: u64,
}

impl Counts {
    fn add_call(&mut self, call: &CallResult, silently_invalid: bool, repairs: u64) {
        self.calls += 1;
        match call.status {
            Status::Valid => self.valid += 1,
            Status::Repaired => self.repaired += 1,
            Status::Recovered => self.recovered += 1,
            Status::Invalid => self.invalid += 1,
            Status::Suppressed => self.suppressed += 1,
            // Unvalidated, and any status added later: not dispatched as checked.
            _ => self.unvalidated += 1,
        }
        self.silently_invalid += u64::from(silently_invalid);
        self.repairs += repairs;
    }

    /// Calls that were not valid as sent: repaired, recovered from text, or invalid.
    #[must_use]
    pub fn broken(&self) -> u64 {
        self.repaired + self.recovered + self.invalid
    }

    /// The share of broken calls toolmend saved (repaired or recovered); `None` with none broken.
    #[must_use]
    pub fn repair_rate(&self) -> Option<f64> {
        ratio(self.repaired + self.recovered, self.broken())
    }

    /// The share of calls that were broken; `None` with no calls.
    #[must_use]
    pub fn broken_rate(&self) -> Option<f64> {
        ratio(self.broken(), self.calls)
    }

    /// The counts as a JSON object (`lines`: whether `turns` and `errors` mean something here).
    #[must_use]
    pub fn to_json(self, key: &str, lines: bool) -> Value {
        let mut row = json!({
            "key": key,
            "calls": self.calls,
            "valid": self.valid,
            "repaired": self.repaired,
            "recovered": self.recovered,
            "invalid": self.invalid,
            "suppressed": self.suppressed,
            "unvalidated": self.unvalidated,
            "silently_invalid": self.silently_invalid,
            "repairs": self.repairs,
            "broken": self.broken(),
            "repair_rate": self.repair_rate(),
            "broken_rate": self.broken_rate(),
        });
        if lines {
            row["turns"] = json!(self.turns);
            row["errors"] = json!(self.errors);
        }
        row
    }
}

#[allow(clippy::cast_precision_loss)] // counts far below 2^52
fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Counts by key, at most `max` distinct keys; keys past the cap count under [`OTHER`].
#[derive(Debug)]
pub struct Keyed {
    named: HashMap<String, Counts>,
    other: Counts,
    max: usize,
}

impl Keyed {
    fn new(max: usize) -> Self {
        Self {
            named: HashMap::new(),
            other: Counts::default(),
            max,
        }
    }

    fn entry(&mut self, key: &str) -> &mut Counts {
        if !self.named.contains_key(key) {
            if self.named.len() >= self.max {
                return &mut self.other;
            }
            self.named.insert(key.to_owned(), Counts::default());
        }
        self.named.get_mut(key).expect("present or just inserted")
    }

    /// Keys and counts, most calls first (then by key); [`OTHER`] last when anything fell in it.
    #[must_use]
    pub fn sorted(&self) -> Vec<(&str, Counts)> {
        let mut rows: Vec<(&str, Counts)> =
            self.named.iter().map(|(k, c)| (k.as_str(), *c)).collect();
        rows.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(b.0)));
        if self.other != Counts::default() {
            rows.push((OTHER, self.other));
        }
        rows
    }
}

/// The whole report's counts.
///
/// # Examples
///
/// ```
/// use toolmend::audit::Tally;
/// use toolmend::{AssistantTurn, Mender, Session, ToolCall, ToolSet};
///
/// let tools = ToolSet::from_json(&serde_json::json!([{"name": "read", "parameters": {
///     "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}]));
/// let mender = Mender::new(tools);
/// let mut turn = AssistantTurn::default();
/// turn.tool_calls = vec![ToolCall::new("c1", "read", r#"{"file_path": "a"}"#)];
/// let result = mender.run_turn(&mut Session::default(), &turn);
///
/// let mut tally = Tally::new(toolmend::audit::MAX_KEYS);
/// tally.add_turn("m", &turn, &result);
/// assert_eq!((tally.total().calls, tally.total().repaired), (1, 1));
/// // Strict JSON that failed the schema: what an agent would have dispatched as it was.
/// assert_eq!(tally.total().silently_invalid, 1);
/// ```
#[derive(Debug)]
pub struct Tally {
    lines: u64,
    errors: ErrorCounts,
    /// The first unreadable lines: line number and why.
    error_examples: Vec<(u64, String)>,
    total: Counts,
    models: Keyed,
    tools: Keyed,
    kinds: Keyed,
}

impl Tally {
    /// An empty tally keeping at most `max_keys` distinct keys per dimension.
    #[must_use]
    pub fn new(max_keys: usize) -> Self {
        Self {
            lines: 0,
            errors: ErrorCounts::default(),
            error_examples: Vec::new(),
            total: Counts::default(),
            models: Keyed::new(max_keys),
            tools: Keyed::new(max_keys),
            kinds: Keyed::new(max_keys),
        }
    }

    /// Lines counted (turns and unreadable ones).
    #[must_use]
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Unreadable lines by why.
    #[must_use]
    pub fn errors(&self) -> ErrorCounts {
        self.errors
    }

    /// The first unreadable lines (at most five): line number and why.
    #[must_use]
    pub fn error_examples(&self) -> &[(u64, String)] {
        &self.error_examples
    }

    /// Every call and line.
    #[must_use]
    pub fn total(&self) -> &Counts {
        &self.total
    }

    /// Counts by model ([`NO_MODEL`] for turns that name none).
    #[must_use]
    pub fn models(&self) -> &Keyed {
        &self.models
    }

    /// Counts by tool name as the model wrote it.
    #[must_use]
    pub fn tools(&self) -> &Keyed {
        &self.tools
    }

    /// Counts by repair kind: the calls that have the kind, and its repairs.
    #[must_use]
    pub fn kinds(&self) -> &Keyed {
        &self.kinds
    }

    /// Counts one turn that ran: `turn` as it was sent (its calls' argument text is what
    /// tells silently invalid calls), `result` as [`crate::Mender::run_turn`] gave it, for
    /// `model` (empty: [`NO_MODEL`]).
    pub fn add_turn(&mut self, model: &str, turn: &AssistantTurn, result: &TurnResult) {
        self.lines += 1;
        self.total.turns += 1;
        let model = model_key(model);
        self.models.entry(model).turns += 1;
        for call in &result.calls {
            let silently = silently_invalid(call, turn);
            let repairs = call.repairs.len() as u64;
            self.total.add_call(call, silently, repairs);
            self.models.entry(model).add_call(call, silently, repairs);
            self.tools
                .entry(&call.name)
                .add_call(call, silently, repairs);
            // A call counts once under each kind it has; `repairs` counts that kind's repairs.
            let mut kinds: Vec<&str> = call.repairs.iter().map(|r| r.kind.name()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            for kind in kinds {
                let of_kind = call
                    .repairs
                    .iter()
                    .filter(|r| r.kind.name() == kind)
                    .count();
                self.kinds
                    .entry(kind)
                    .add_call(call, silently, of_kind as u64);
            }
        }
    }

    /// Counts one line that could not be run (`model`: the line's model when it was readable);
    /// `message` is kept for the first few.
    pub fn add_error(&mut self, line: u64, error: LineError, model: &str, message: String) {
        self.lines += 1;
        self.errors.total += 1;
        match error {
            LineError::NotUtf8 => self.errors.not_utf8 += 1,
            LineError::NotJson => self.errors.not_json += 1,
            LineError::Rejected => self.errors.rejected += 1,
        }
        self.total.errors += 1;
        self.models.entry(model_key(model)).errors += 1;
        if self.error_examples.len() < MAX_ERROR_EXAMPLES {
            self.error_examples.push((line, message));
        }
    }

    /// Tools with broken calls, most broken first (then most invalid, then by name), at most `n`.
    #[must_use]
    pub fn top_failing_tools(&self, n: usize) -> Vec<(&str, Counts)> {
        let mut rows: Vec<(&str, Counts)> = self
            .tools
            .sorted()
            .into_iter()
            .filter(|(_, c)| c.broken() > 0)
            .collect();
        rows.sort_by(|a, b| {
            b.1.broken()
                .cmp(&a.1.broken())
                .then_with(|| b.1.invalid.cmp(&a.1.invalid))
                .then_with(|| a.0.cmp(b.0))
        });
        rows.truncate(n);
        rows
    }

    /// The report as one JSON document (`toolmend audit --format json`).
    #[must_use]
    pub fn to_json(&self, top: usize) -> Value {
        let rows = |keyed: &Keyed, lines: bool| -> Vec<Value> {
            keyed
                .sorted()
                .into_iter()
                .map(|(k, c)| c.to_json(k, lines))
                .collect()
        };
        json!({
            "lines": self.lines,
            "turns": self.total.turns,
            "errors": self.errors,
            "error_examples": self.error_examples.iter()
                .map(|(line, error)| json!({"line": line, "error": error}))
                .collect::<Vec<_>>(),
            "max_keys": self.models.max,
            "total": self.total.to_json("all", true),
            "models": rows(&self.models, true),
            "tools": rows(&self.tools, false),
            "kinds": rows(&self.kinds, false),
            "top_failing_tools": self.top_failing_tools(top).into_iter()
                .map(|(k, c)| c.to_json(k, false))
                .collect::<Vec<_>>(),
        })
    }

    /// The report as rows, one per dimension and key (`toolmend audit --format jsonl`; the
    /// rows of the Python `toolmend.arrow.audit` table). `turns` and `errors` are null on tool
    /// and kind rows.
    #[must_use]
    pub fn rows(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut push = |dimension: &str, key: &str, counts: Counts, lines: bool| {
            let mut row = json!({"dimension": dimension});
            let body = counts.to_json(key, lines);
            if let (Some(row), Value::Object(body)) = (row.as_object_mut(), body) {
                row.extend(body);
                if !lines {
                    row.insert("turns".into(), Value::Null);
                    row.insert("errors".into(), Value::Null);
                }
            }
            out.push(row);
        };
        push("total", "all", self.total, true);
        for (key, counts) in self.models.sorted() {
            push("model", key, counts, true);
        }
        for (key, counts) in self.tools.sorted() {
            push("tool", key, counts, false);
        }
        for (key, counts) in self.kinds.sorted() {
            push("kind", key, counts, false);
        }
        out
    }
}

/// The model's key: its name, or [`NO_MODEL`].
#[must_use]
pub fn model_key(model: &str) -> &str {
    if model.is_empty() { NO_MODEL } else { model }
}

/// Whether `call` is a native call whose arguments, as sent in `turn`, were strict JSON yet not
/// valid (repaired or invalid): what an agent without toolmend would have dispatched as it was.
fn silently_invalid(call: &CallResult, turn: &AssistantTurn) -> bool {
    call.origin == Origin::Native
        && matches!(call.status, Status::Repaired | Status::Invalid)
        && call
            .native_index
            .and_then(|i| turn.tool_calls.get(i))
            .is_some_and(|sent| serde_json::from_str::<IgnoredAny>(&sent.arguments).is_ok())
}
