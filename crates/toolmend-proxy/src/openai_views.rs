//! The OpenAI Chat Completions objects as borrowed serde views: the members a completion's
//! message and a stream's delta carry, each kept as its raw span ([`Member`]).
//!
//! Test-only: the one-pass readers (`routes/openai_bytes.rs`, `stream/openai/chunk.rs`)
//! replaced them, and their tests keep these views as the oracle they must agree with.

use crate::spans::Member;

/// A message (completion) or delta (stream): its text, reasoning and calls.
#[derive(serde::Deserialize)]
pub(crate) struct MessageView<'a> {
    #[serde(borrow, default)]
    pub(crate) content: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) reasoning_content: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) reasoning: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) tool_calls: Member<'a>,
}

/// One entry of `tool_calls`: a whole call (completion) or a fragment of one (stream, where
/// `index` says which call it continues).
#[derive(serde::Deserialize)]
pub(crate) struct CallView<'a> {
    /// Not read since the stream reads its chunks in one pass; kept so the completion reader
    /// still refuses a call with a repeated `index` (leaves it to the tree) as it always did.
    #[allow(dead_code)]
    #[serde(borrow, default)]
    pub(crate) index: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) id: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) function: Member<'a>,
}

/// A call's `function`: its name and arguments (whole, or a fragment of them).
#[derive(serde::Deserialize)]
pub(crate) struct FunctionView<'a> {
    #[serde(borrow, default)]
    pub(crate) name: Member<'a>,
    #[serde(borrow, default)]
    pub(crate) arguments: Member<'a>,
}
