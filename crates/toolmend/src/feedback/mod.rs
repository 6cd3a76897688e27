//! Stage 6: what toolmend tells the harness and the model.
//!
//! The [`CallResult`] of every call with its [`Repair`]s, value-free notes for repaired calls,
//! model-readable retry messages for invalid ones, tracing events and [`RepairStats`] counters.
//! Nothing here prints argument values: messages name tools, paths, types and kinds.

mod counters;
mod events;
mod notes;
mod report;
mod retry_message;

pub use counters::{RepairStats, RepairStatsSnapshot};
pub use report::{CallResult, Origin, Outcome, Repair, Status, TurnReport};

pub(crate) use events::{emit, emit_dropped};
pub(crate) use notes::notes_for;
pub(crate) use retry_message::{
    MessageOptions, RetryContext, escape_name, retry_message, unknown_tool_message,
    unvalidated_message,
};
