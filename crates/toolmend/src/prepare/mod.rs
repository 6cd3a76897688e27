//! Stage 1: tool specs → a compiled [`ToolSet`] (validators, hints, flags).
//!
//! A `ToolSet` is built once per tool list and reused for every call: compiling a JSON Schema
//! costs far more than validating an instance with it.

mod anchors;
mod contract;
mod cost;
mod dotted;
mod flatten;
mod for_model;
mod hints;
mod mcp;
#[cfg(test)]
mod round_trip;
mod spec;
mod strip;
mod toolset;
mod type_aliases;
mod unflatten;
mod walk;

pub use anchors::DEFAULT_ANCHOR_MODELS;
pub use contract::DEFAULT_MAX_HINT_BYTES;
pub use for_model::{PrepareOptions, prepare_tools};
pub use hints::{FieldSemantic, RelationalGroup, ToolHints};
pub use spec::ToolFormat;
pub use toolset::{Tool, ToolSet};

pub(crate) use cost::Document as SchemaDocument;
pub(crate) use hints::{field_aliases, field_semantic};
pub(crate) use toolset::{CallCost, REGEX_SIZE_LIMIT};
pub(crate) use unflatten::unflatten;
