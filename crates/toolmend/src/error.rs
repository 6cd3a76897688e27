//! The library's typed errors.

/// An error building a [`crate::ToolSet`] or reading an input.
///
/// Calls that cannot be repaired are not errors: they are `invalid` outcomes with a retry
/// message. These are the failures of the caller's own data: a tool object of no known form, or
/// a schema that does not compile or is over the evaluation budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool object is none of the OpenAI, flat or Anthropic forms.
    #[error("tool #{index} is not a tool object: {reason}")]
    ToolSpec {
        /// Position of the tool object in its array.
        index: usize,
        /// What was missing or of the wrong type.
        reason: String,
    },
    /// A tool's JSON Schema is refused: it does not compile, or it could cost more than
    /// [`crate::limits::MAX_SCHEMA_EVALUATIONS`] evaluations at one location (the reason names
    /// the construct). Calls of that tool are `unvalidated`, never `valid`.
    #[error("tool `{tool}`: the schema is refused, so its calls are unvalidated: {reason}")]
    Schema {
        /// The tool's name.
        tool: String,
        /// The validator's explanation.
        reason: String,
    },
    /// Two tools share a name; the first one is kept.
    #[error("tool `{tool}` is declared twice; the first declaration is used")]
    DuplicateTool {
        /// The repeated name.
        tool: String,
    },
    /// An assistant message's tool call cannot be read
    /// ([`crate::AssistantTurn::from_openai_message`]).
    #[error("tool call #{index} of the message: {reason}")]
    Message {
        /// Position of the call in `tool_calls`.
        index: usize,
        /// What is missing.
        reason: &'static str,
    },
}
