//! Stage 5: turn-level checks — names, concatenated calls, duplicates, storms, retry budgets.
//!
//! A [`Session`] carries what one agent run remembers between turns: the storm window and the
//! retry budget. The types here are the turn as toolmend reads it ([`AssistantTurn`]) and what
//! it makes of it ([`TurnResult`]).

mod budget;
pub mod call_id;
pub(crate) mod canonical;
mod message;
pub(crate) mod names;
mod storm;

use crate::{CallResult, TurnReport};

pub use budget::{DEFAULT_MAX_REPROMPTS, MAX_REPROMPTS};
pub use storm::{DEFAULT_STORM_THRESHOLD, DEFAULT_STORM_WINDOW};

pub(crate) use budget::RetryBudget;
pub(crate) use storm::{Signature, StormBreaker, StormFlags, guard_message};

/// One native tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call id.
    pub id: String,
    /// The tool name as the model wrote it.
    pub name: String,
    /// The raw argument text.
    pub arguments: String,
}

impl ToolCall {
    /// A call with these parts.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// One assistant turn, as toolmend reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AssistantTurn {
    /// The content text.
    pub content: Option<String>,
    /// The reasoning channel (`reasoning_content` / `reasoning`).
    pub reasoning: Option<String>,
    /// The native tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The finish reason; `length` marks the last call as cut off.
    pub finish_reason: Option<String>,
    /// This turn answers a new user message: the storm window starts afresh.
    pub new_user_turn: bool,
    /// Something unique to this turn in its conversation (the API's response id, the CLI
    /// line's id), if the caller has one: the ids of calls recovered from the turn's text are
    /// derived from it, with the session's turn number and the text (see [`call_id`]).
    pub id: Option<String>,
}

/// What toolmend made of one turn.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TurnResult {
    /// The content with recovered (or stripped) markup removed.
    pub content: Option<String>,
    /// The reasoning with recovered markup removed.
    pub reasoning: Option<String>,
    /// Every call: native calls first in their order (a split call replaced in place by its
    /// parts), then recovered calls in text order.
    pub calls: Vec<CallResult>,
    /// Counts for the turn.
    pub report: TurnReport,
}

/// What one agent run remembers between turns: the storm window and the retry budget.
#[derive(Debug, Clone)]
pub struct Session {
    pub(crate) storm: StormBreaker,
    pub(crate) budget: RetryBudget,
    /// Turns run so far: part of recovered calls' ids, so no two turns share one.
    pub(crate) turns: u64,
}

impl Session {
    /// A session with the default window, threshold and budget.
    #[must_use]
    pub fn new() -> Self {
        Self::with_limits(
            DEFAULT_STORM_WINDOW,
            DEFAULT_STORM_THRESHOLD,
            DEFAULT_MAX_REPROMPTS,
        )
    }

    /// A session with a storm window of `window` calls, suppressing the `threshold`th identical
    /// call, and `max_reprompts` retry messages per identical invalid call (at most 5).
    #[must_use]
    pub fn with_limits(window: usize, threshold: usize, max_reprompts: u8) -> Self {
        Self {
            storm: StormBreaker::new(window, threshold),
            budget: RetryBudget::new(max_reprompts),
            turns: 0,
        }
    }

    /// Changes the retry budget from now on; the failures counted so far are kept.
    pub fn set_max_reprompts(&mut self, max_reprompts: u8) {
        self.budget.set_max_reprompts(max_reprompts);
    }

    /// A new user message: the storm window starts afresh (the retry budget does not).
    pub fn new_user_turn(&mut self) {
        self.storm.reset();
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}
