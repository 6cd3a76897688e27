//! The per-call and per-turn report.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::RepairKind;

/// One repair: what was done, and where.
///
/// The path is a JSON Pointer into the arguments (`""` for the whole text, as syntax repairs
/// and root rules report). Shape repairs always name a location that failed validation; only
/// the opt-in hint rules name locations that validated (DESIGN §3, invariant 2).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Repair {
    /// The catalogue kind.
    pub kind: RepairKind,
    /// Where it was made, as a JSON Pointer.
    pub path: String,
}

impl Repair {
    /// A repair of `kind` at `path`.
    #[must_use]
    pub fn new(kind: RepairKind, path: String) -> Self {
        Self { kind, path }
    }
}

/// How a call ended (DESIGN §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Passed untouched.
    Valid,
    /// Repaired and re-validated.
    Repaired,
    /// Found in text (and then valid or repaired).
    Recovered,
    /// Could not be saved; `error` holds the retry message.
    Invalid,
    /// Not dispatched (storm breaker); `error` holds the guard message.
    Suppressed,
    /// Not dispatched: the tool's schema was refused when the [`crate::ToolSet`] was built (it
    /// does not compile, or it is over [`crate::limits::MAX_SCHEMA_EVALUATIONS`]), so the
    /// call cannot be checked. Never `valid`: a schema that cannot be enforced must not let
    /// arbitrary arguments through (fail closed). `error` says so, and tells the model not to
    /// retry; no retry budget is spent. Serialised `unvalidated`.
    Unvalidated,
}

impl Status {
    /// The label as in JSONL and the Python package (`Status::Repaired` → `repaired`), the
    /// serde name without a serde round trip.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Repaired => "repaired",
            Self::Recovered => "recovered",
            Self::Invalid => "invalid",
            Self::Suppressed => "suppressed",
            Self::Unvalidated => "unvalidated",
        }
    }
}

/// The outcome label of a repaired or rejected call (the everruns labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Outcome {
    /// Repaired here, without asking the model again.
    #[serde(rename = "local-salvage")]
    LocalSalvage,
    /// Rejected; the model gets a retry message.
    #[serde(rename = "re-prompt")]
    Reprompt,
    /// Rejected past the retry budget; stop retrying.
    #[serde(rename = "gave-up")]
    GaveUp,
}

impl Outcome {
    /// The label as in events and JSONL.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::LocalSalvage => "local-salvage",
            Self::Reprompt => "re-prompt",
            Self::GaveUp => "gave-up",
        }
    }
}

/// Where a call came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Origin {
    /// The response's own `tool_calls`.
    Native,
    /// Recovered from the content text.
    Content,
    /// Recovered from the reasoning channel.
    Reasoning,
}

impl Origin {
    /// The label as in JSONL and the Python package (`Origin::Content` → `content`), the serde
    /// name without a serde round trip.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Content => "content",
            Self::Reasoning => "reasoning",
        }
    }
}

/// Everything toolmend decided about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallResult {
    /// The call id (generated for recovered calls).
    pub id: String,
    /// The tool name, after `name_repaired` (shared with the tool set: no copy per call).
    pub name: Arc<str>,
    /// Where the call came from.
    pub origin: Origin,
    /// How it ended.
    pub status: Status,
    /// The final arguments (`None` when invalid and not even parseable).
    pub arguments: Option<Value>,
    /// The argument text to dispatch: the exact input bytes when valid; compact JSON (key order
    /// kept) when repaired; the input text when invalid.
    #[serde(skip)]
    pub arguments_text: String,
    /// Every repair, in order.
    pub repairs: Vec<Repair>,
    /// Value-free notes for the model, to prepend to the tool result.
    pub notes: Vec<String>,
    /// The outcome label, for repaired and rejected calls.
    pub outcome: Option<Outcome>,
    /// The retry or guard message for `invalid` and `suppressed` calls.
    pub error: Option<String>,
    /// For a native call (or a part of one split call): its index in the turn's `tool_calls`.
    #[serde(skip)]
    pub native_index: Option<usize>,
}

impl CallResult {
    /// Whether the harness should run the call.
    #[must_use]
    pub fn is_dispatchable(&self) -> bool {
        matches!(
            self.status,
            Status::Valid | Status::Repaired | Status::Recovered
        )
    }

    /// Whether any repair of `kind` was made.
    #[must_use]
    pub fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }
}

/// Counts for one turn, as in the `report` of `toolmend turns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnReport {
    /// Calls repaired (recovered calls that needed repairs included).
    pub repaired: usize,
    /// Calls that could not be saved (`invalid` and `unvalidated`).
    pub invalid: usize,
    /// Calls recovered from text.
    pub scavenged: usize,
    /// Truncated calls that were closed and kept.
    pub truncations_fixed: usize,
    /// Calls suppressed by the storm breaker.
    pub storms_broken: usize,
    /// Recovered calls dropped as duplicates of a native or earlier recovered call (not listed
    /// in `calls[]`, their markup removed from the text).
    #[serde(default)]
    pub duplicates_dropped: usize,
}

#[cfg(test)]
mod tests {
    use super::{Origin, Outcome, Status};

    fn serde_name<T: serde::Serialize>(value: T) -> String {
        match serde_json::to_value(value) {
            Ok(serde_json::Value::String(s)) => s,
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn labels_are_the_serde_names() {
        for s in [
            Status::Valid,
            Status::Repaired,
            Status::Recovered,
            Status::Invalid,
            Status::Suppressed,
            Status::Unvalidated,
        ] {
            assert_eq!(s.label(), serde_name(s));
        }
        for o in [Origin::Native, Origin::Content, Origin::Reasoning] {
            assert_eq!(o.label(), serde_name(o));
        }
        for o in [Outcome::LocalSalvage, Outcome::Reprompt, Outcome::GaveUp] {
            assert_eq!(o.label(), serde_name(o));
        }
    }
}
