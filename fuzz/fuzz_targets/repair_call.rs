//! Any argument text against a realistic schema: never a panic; a dispatchable result
//! validates; a valid input comes back byte for byte.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolmend::{Mender, Status, ToolSet};

static SCHEMA: LazyLock<serde_json::Value> = LazyLock::new(|| {
    json!({"type": "object", "required": ["path", "edits"], "properties": {
        "path": {"type": "string"},
        "edits": {"type": "array", "items": {"type": "object", "required": ["old", "new"],
            "properties": {"old": {"type": "string"}, "new": {"type": "string"}, "all": {"type": "boolean"}}}},
        "mode": {"enum": ["fast", "careful"]},
        "limit": {"type": "integer"}}})
});
static MENDER: LazyLock<Mender> = LazyLock::new(|| {
    Mender::new(ToolSet::from_json(
        &json!([{"name": "edit", "parameters": *SCHEMA}]),
    ))
});

fuzz_target!(|text: &str| {
    let call = MENDER.repair_call("edit", text);
    match call.status {
        Status::Valid => assert_eq!(call.arguments_text, text),
        Status::Repaired => {
            let value: serde_json::Value = serde_json::from_str(&call.arguments_text).unwrap();
            assert!(MENDER.tools().get("edit").unwrap().is_valid(&value));
        }
        _ => assert!(call.error.is_some()),
    }
});
