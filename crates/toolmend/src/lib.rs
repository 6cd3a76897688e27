/*!
toolmend repairs the tool calls that LLMs get nearly right.

Open models emit tool calls that are *nearly* valid: `null` for optional fields, arrays sent as
JSON strings, `file_path` instead of `path`, arguments in a Markdown fence, JSON cut off at the
token limit, calls leaked into the text in the model's own markup. toolmend validates each call
against the tool's JSON Schema and repairs only what failed, reporting every repair; a call it
cannot save gets a model-readable retry message instead of a guess.

# Overview

- [`ToolSet`]: the tools of a request, compiled once (OpenAI, flat or Anthropic tool objects).
- [`Mender`]: the pipeline — `prepare → recover → salvage → repair → turn → feedback`.
  [`Mender::repair_call`] mends one call; [`Mender::run_turn`] a whole assistant turn with a
  [`Session`]'s storm window and retry budget. [`MenderCache`] keeps compiled tool sets for
  callers that see the same tools again (bounded).
- [`CallResult`]: status, final arguments, every [`Repair`] with its JSON Pointer, notes for the
  model, and the retry message when nothing could be saved.

Valid input is never touched: if the raw arguments parse and validate, the output is the same
bytes.

```
use toolmend::{Mender, RepairKind, Status, ToolSet};

let tools = ToolSet::from_json(&serde_json::json!([{
    "type": "function",
    "function": {"name": "read", "parameters": {
        "type": "object", "required": ["path"],
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}}]));
let mender = Mender::new(tools);

let call = mender.repair_call("read", r#"{"file_path": "/src/main.rs", "limit": null}"#);
assert_eq!(call.status, Status::Repaired);
assert_eq!(call.arguments_text, r#"{"path":"/src/main.rs"}"#);
assert!(call.has(RepairKind::FieldRenamed) && call.has(RepairKind::NullStripped));

let broken = mender.repair_call("read", r#"{"limit": 5}"#);
assert_eq!(broken.status, Status::Invalid);
assert!(broken.error.unwrap().contains("`/path` is required but missing"));
```
*/
#![deny(missing_docs)]

pub mod audit;
mod error;
mod feedback;
pub mod history;
mod kind;
pub mod limits;
mod mender;
pub mod mender_cache;
mod pointer;
pub mod prepare;
pub mod recover;
mod repair;
pub mod salvage;
pub mod turn;

pub use error::Error;
pub use feedback::{
    CallResult, Origin, Outcome, Repair, RepairStats, RepairStatsSnapshot, Status, TurnReport,
};
pub use kind::RepairKind;
pub use limits::Limits;
pub use mender::{Mender, MenderOptions};
pub use mender_cache::MenderCache;
pub use prepare::{PrepareOptions, Tool, ToolSet, prepare_tools};
pub use recover::RecoverMode;
pub use turn::{AssistantTurn, Session, ToolCall, TurnResult};

/// The README's Rust examples, compiled and run as doctests so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
