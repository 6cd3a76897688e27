//! The `toolmend audit` tally: counts of calls by status, by model, tool and repair kind, over
//! turn lines run through the library, in memory bounded by a cap on distinct keys.

use std::collections::HashMap;

use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use toolmend::{CallResult, Origin, Status};

use crate::turn_line::{RanTurn, native_arguments};

/// Most distinct keys kept per dimension (models, tools, kinds); later keys count as [`OTHER`].
pub(crate) const MAX_KEYS: usize = 1000;
/// The key that collects every key past the cap.
pub(crate) const OTHER: &str = "(other)";
/// The model key of lines that name no model (and get none from `--model`).
pub(crate) const NO_MODEL: &str = "(none)";
/// Unreadable lines quoted in the report (their line number and error); the rest are counted.
const MAX_ERROR_EXAMPLES: usize = 5;

/// Why a line could not be audited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum LineError {
    /// The line is not UTF-8.
    NotUtf8,
    /// The line is not JSON.
    NotJson,
    /// The line is JSON but not a turn the library can run (no `message`, a bad option, …).
    Rejected,
}

/// Unreadable lines by [`LineError`].
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub(crate) struct ErrorCounts {
    pub(crate) total: u64,
    pub(crate) not_utf8: u64,
    pub(crate) not_json: u64,
    pub(crate) rejected: u64,
}

/// Calls of one key by how they ended, and the lines behind them (for the total and models).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) calls: u64,
    pub(crate) valid: u64,
    pub(crate) repaired: u64,
    pub(crate) recovered: u64,
    pub(crate) invalid: u64,
    pub(crate) suppressed: u64,
    pub(crate) unvalidated: u64,
    /// Native calls whose arguments were strict JSON as sent, yet not valid: an agent without
    /// toolmend would have dispatched them as they were.
    pub(crate) silently_invalid: u64,
    /// Repairs made (a call may have several).
    pub(crate) repairs: u64,
    /// Turn lines run (total and model rows only).
    pub(crate) turns: u64,
    /// Unreadable lines (total and model rows only).
    pub(crate) errors: u64,
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
    pub(crate) fn broken(&self) -> u64 {
        self.repaired + self.recovered + self.invalid
    }

    /// The share of broken calls toolmend saved (repaired or recovered); `None` with none broken.
    pub(crate) fn repair_rate(&self) -> Option<f64> {
        ratio(self.repaired + self.recovered, self.broken())
    }

    /// The share of calls that were broken; `None` with no calls.
    pub(crate) fn broken_rate(&self) -> Option<f64> {
        ratio(self.broken(), self.calls)
    }

    /// The counts as a JSON object (`lines`: whether `turns` and `errors` mean something here).
    pub(crate) fn to_json(self, key: &str, lines: bool) -> Value {
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
pub(crate) struct Keyed {
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
    pub(crate) fn sorted(&self) -> Vec<(&str, Counts)> {
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
#[derive(Debug)]
pub(crate) struct Tally {
    pub(crate) lines: u64,
    pub(crate) errors: ErrorCounts,
    /// The first unreadable lines: line number and why.
    pub(crate) error_examples: Vec<(u64, String)>,
    pub(crate) total: Counts,
    pub(crate) models: Keyed,
    pub(crate) tools: Keyed,
    pub(crate) kinds: Keyed,
}

impl Tally {
    pub(crate) fn new(max_keys: usize) -> Self {
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

    /// Counts one line that ran.
    pub(crate) fn add_turn(&mut self, ran: &RanTurn) {
        self.lines += 1;
        self.total.turns += 1;
        let model = model_key(&ran.model);
        self.models.entry(model).turns += 1;
        for call in &ran.result.calls {
            let silently = silently_invalid(call, &ran.native);
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

    /// Counts one line that could not be run (`model`: the line's model when it was readable).
    pub(crate) fn add_error(&mut self, line: u64, error: LineError, model: &str, message: String) {
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
    pub(crate) fn top_failing_tools(&self, n: usize) -> Vec<(&str, Counts)> {
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

    /// The report as one JSON document (`--format json`).
    pub(crate) fn to_json(&self, top: usize) -> Value {
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

    /// The report as rows, one per dimension and key (`--format jsonl`; the columns of the
    /// Python `toolmend.arrow.audit` table). `turns` and `errors` are null on tool and kind rows.
    pub(crate) fn rows(&self) -> Vec<Value> {
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
pub(crate) fn model_key(model: &str) -> &str {
    if model.is_empty() { NO_MODEL } else { model }
}

/// Whether `call` is a native call whose arguments, as sent, were strict JSON yet not valid
/// (repaired or invalid): what an agent without toolmend would have dispatched as it was.
fn silently_invalid(call: &CallResult, native: &[Value]) -> bool {
    call.origin == Origin::Native
        && matches!(call.status, Status::Repaired | Status::Invalid)
        && call
            .native_index
            .and_then(|i| native.get(i))
            .is_some_and(|sent| serde_json::from_str::<IgnoredAny>(&native_arguments(sent)).is_ok())
}
