//! Strict-mode schemas (every property required, `additionalProperties: false`, optional ones
//! with a `default` or a null in their type) no longer block every other repair (issue #24,
//! item 2). The schema is the one the OpenAI Agents SDK sends for
//! `def read_file(path: str, limit: int = 100, encoding: str | None = None)`.

use serde_json::{Value, json};
use toolmend::{Mender, RepairKind, Status, ToolSet};

fn mender() -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"type": "function", "name": "read_file",
        "strict": true, "parameters": {"type": "object", "additionalProperties": false,
        "required": ["path", "limit", "encoding"], "properties": {
            "path": {"title": "Path", "type": "string"},
            "limit": {"title": "Limit", "type": "integer", "default": 100},
            "encoding": {"title": "Encoding", "anyOf": [{"type": "string"}, {"type": "null"}]}}}}]),
    ))
}

#[test]
fn an_alias_and_omitted_optionals_are_all_repaired() {
    let call = mender().repair_call("read_file", r#"{"file_path": "/a"}"#);
    assert_eq!(call.status, Status::Repaired, "{:?}", call.error);
    let value: Value = serde_json::from_str(&call.arguments_text).unwrap();
    assert_eq!(value, json!({"path": "/a", "limit": 100, "encoding": null}));
    let kinds: Vec<String> = call
        .repairs
        .iter()
        .map(|r| format!("{}@{}", r.kind, r.path))
        .collect();
    assert_eq!(
        kinds,
        [
            "field_renamed@",
            "strict_default_filled@/limit",
            "strict_null_filled@/encoding"
        ]
    );
    // Each fill is told to the model.
    assert!(
        call.notes.iter().any(|n| n.contains("`limit` was omitted")),
        "{:?}",
        call.notes
    );
    assert!(
        call.notes
            .iter()
            .any(|n| n.contains("`encoding` was omitted")),
        "{:?}",
        call.notes
    );
}

#[test]
fn a_required_member_with_neither_is_never_invented() {
    let call = mender().repair_call("read_file", r#"{"limit": 5}"#);
    assert_eq!(call.status, Status::Invalid);
    assert!(!call.has(RepairKind::StrictNullFilled));
    assert!(call.error.unwrap().contains("path"));
}

#[test]
fn a_complete_strict_call_is_untouched() {
    let sent = r#"{"path": "/a", "limit": 3, "encoding": null}"#;
    let call = mender().repair_call("read_file", sent);
    assert_eq!(
        (call.status, call.arguments_text.as_str()),
        (Status::Valid, sent)
    );
}
