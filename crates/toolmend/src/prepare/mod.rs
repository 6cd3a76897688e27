//! Stage 1: tool specs → a compiled [`ToolSet`] (validators, hints, flags).
//!
//! A `ToolSet` is built once per tool list and reused for every call: compiling a JSON Schema
//! costs far more than validating an instance with it.

mod hints;
mod spec;
mod toolset;

pub use hints::{FieldSemantic, RelationalGroup, ToolHints};
pub use spec::ToolFormat;
pub use toolset::{Tool, ToolSet};

pub(crate) use hints::{field_aliases, field_semantic};
