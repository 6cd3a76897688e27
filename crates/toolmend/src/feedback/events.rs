//! Tracing events with the seeds' exact targets and fields (DESIGN §8).
//!
//! Off unless a subscriber is installed; `RUST_LOG=tool_repair=info,tool_input_invalid=info`
//! shows them. Fields name tools, models and kinds, never argument values.

use crate::{CallResult, Outcome, Status};

/// Emits the events for one finished call.
///
/// The fields are built inside each event macro, which evaluates them only when a subscriber
/// listens for that event: with none, a call pays for the checks and nothing else (issue #31).
/// Nearly always nothing listens even at `warn`, the most severe level these events use: that
/// is told here, inlined into the caller, before a call is made (~40 instructions a call).
#[inline(always)]
pub(crate) fn emit(call: &CallResult, model: &str) {
    if tracing::level_enabled!(tracing::Level::WARN) {
        emit_events(call, model);
    }
}

/// [`emit`]'s events, when a subscriber may listen for them.
fn emit_events(call: &CallResult, model: &str) {
    // An unknown tool's name is the model's text: escaped and bounded like any echoed name.
    let tool = || super::escape_name(&call.name);
    let model = || super::escape_name(model);
    match call.status {
        Status::Repaired | Status::Recovered if !call.repairs.is_empty() => {
            tracing::info!(
                target: "tool_repair",
                tool = &*tool(),
                model = &*model(),
                repair_kind = repair_kinds(call).as_str(),
                "tool_input_repaired"
            );
        }
        Status::Invalid => {
            tracing::info!(target: "tool_input_invalid", tool = &*tool(), model = &*model(), "tool_input_invalid");
        }
        Status::Unvalidated => {
            tracing::warn!(target: "tool_input_invalid", tool = &*tool(), model = &*model(), "tool_schema_refused");
        }
        _ => {}
    }
    if let Some(outcome) = call.outcome {
        let outcome = Outcome::label(outcome);
        tracing::info!(target: "tool_repair", tool = &*tool(), model = &*model(), outcome, "tool.call_repaired");
    }
}

/// The kinds of a call's repairs, comma-separated.
fn repair_kinds(call: &CallResult) -> String {
    let kinds: Vec<&str> = call.repairs.iter().map(|r| r.kind.name()).collect();
    kinds.join(",")
}

/// The event for a recovered call dropped as a duplicate (never listed in `calls[]`).
pub(crate) fn emit_dropped(tool: &str, model: &str) {
    tracing::info!(target: "tool_repair", tool, model, repair_kind = "duplicate_dropped", "tool_input_repaired");
}
