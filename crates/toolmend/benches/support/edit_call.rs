//! The `edit` tool and its valid calls, shared by `benches/repair.rs` and
//! `examples/fast_path_ratio.rs` so both measure the same thing.

use serde_json::{Value, json};

/// An `edit` tool with an array of edit objects, in the OpenAI form.
pub(crate) fn edit_tool() -> Value {
    json!([{"type": "function", "function": {"name": "edit", "parameters": {
        "type": "object", "required": ["path", "edits"],
        "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object", "required": ["old_text", "new_text"],
                "properties": {"old_text": {"type": "string"}, "new_text": {"type": "string"},
                               "replace_all": {"type": "boolean"}}}},
            "dry_run": {"type": "boolean"}}}}}])
}

/// A valid `edit` call of about `size` bytes (at least ~150: the path and one edit).
pub(crate) fn valid_call(size: usize) -> String {
    let line = "    let value = compute(\"input\", 42);\n";
    let mut new_text = String::new();
    while new_text.len() + 60 < size {
        new_text.push_str(line);
    }
    json!({"path": "/src/main.rs", "edits": [{"old_text": "fn main() {}", "new_text": new_text}]})
        .to_string()
}
