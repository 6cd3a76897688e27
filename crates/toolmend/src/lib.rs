/*!
toolmend repairs the tool calls that LLMs get nearly right.

Open models emit tool calls that are *nearly* valid: `null` for optional fields, arrays sent as
JSON strings, `file_path` instead of `path`, arguments in a Markdown fence, JSON cut off at the
token limit, calls leaked into the text in the model's own markup. toolmend validates each call
against the tool's JSON Schema and repairs only what failed, reporting every repair; a call it
cannot save gets a model-readable retry message instead of a guess.
*/
#![deny(missing_docs)]

mod error;
mod kind;
pub mod limits;
pub mod prepare;
pub mod recover;
pub mod salvage;

pub use error::Error;
pub use kind::RepairKind;
pub use limits::Limits;
pub use prepare::{PrepareOptions, Tool, ToolSet, prepare_tools};
