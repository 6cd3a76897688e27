//! The `write_file` tool of the `make_corpus.py` corpus's medium and large calls, shared by the
//! examples that run the corpus through `repair_call` (`fast_path_ratio`, `answer_digest`,
//! `profile_group`) so they measure against the same schema.

use serde_json::{Value, json};

/// The `write_file` tool, in the flat form.
pub(crate) fn write_file_tool() -> Value {
    json!([{"name": "write_file", "parameters": {
        "type": "object", "required": ["path", "content"], "additionalProperties": false,
        "properties": {
            "path": {"type": "string"}, "content": {"type": "string"},
            "create_dirs": {"type": "boolean"}, "mode": {"type": ["string", "null"]},
            "encoding": {"type": "string"}, "overwrite": {"type": "boolean"},
            "lines_hint": {"type": "integer"}}}}])
}
