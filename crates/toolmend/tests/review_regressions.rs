//! Regressions found by the first code review of the engine (each test names its finding).

use serde_json::{Value, json};
use toolmend::{Mender, RepairKind, Status, ToolSet};

fn mender(schema: Value) -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"name": "t", "parameters": schema}]),
    ))
}

/// Finding 5: the opt-in hint rules see fields that a shape repair created.
#[test]
fn hint_rules_run_after_a_rename() {
    let schema = json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "x-toolmend": {"semantic": "absolute_path"}}}});
    let call = mender(schema).repair_call("t", r#"{"file_path": "[a.rs](http://a.rs)"}"#);
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"path":"a.rs"}"#);
    assert!(call.has(RepairKind::FieldRenamed) && call.has(RepairKind::MdLinkUnwrapped));
}

/// Findings 6 and 7: an invalid call reports the value as sent, no repair, and a message about
/// what was sent (not a half-repaired attempt).
#[test]
fn an_invalid_call_reports_what_was_sent() {
    let schema = json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string"}, "paths": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer"}}});
    let mender = mender(schema);
    let call = mender.repair_call("t", r#"{"file_path": "/a", "limit": "x"}"#);
    assert_eq!(call.status, Status::Invalid);
    assert_eq!(
        call.arguments,
        Some(json!({"file_path": "/a", "limit": "x"}))
    );
    assert!(call.repairs.is_empty(), "{:?}", call.repairs);
    assert!(mender.stats().snapshot().kinds.is_empty());
    let ints: Vec<u32> = (0..5000).collect();
    let raw = json!({"path": "/a", "paths": ints, "limit": "x"}).to_string();
    let error = mender.repair_call("t", &raw).error.unwrap();
    assert!(
        error.contains("`/paths/0` must be a string, but an integer was sent"),
        "{error}"
    );
}

/// Finding 8: one call's arguments never split into more calls than the recovery bound.
#[test]
fn splitting_is_bounded() {
    let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": {"type": "object"}}]));
    let mender = Mender::new(tools);
    let mut session = toolmend::Session::new();
    let mut turn = toolmend::AssistantTurn::default();
    let many: String = (0..100).map(|i| format!("{{\"n\": {i}}}")).collect();
    turn.tool_calls
        .push(toolmend::ToolCall::new("c", "t", many));
    let result = mender.run_turn(&mut session, &turn);
    assert_eq!(result.calls.len(), 1);
    assert_eq!(result.calls[0].status, Status::Invalid);
    assert!(
        result.calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("several JSON objects")
    );
}

/// Finding 11: a valid root null or string is passed through like any valid input.
#[test]
fn a_valid_root_null_or_string_is_untouched() {
    let nullable = mender(json!({"type": ["object", "null"]}));
    let call = nullable.repair_call("t", "null");
    assert_eq!(
        (call.status, call.arguments_text.as_str()),
        (Status::Valid, "null")
    );
    let anything = mender(json!({}));
    let text = r#""{\"a\": 1}""#;
    let call = anything.repair_call("t", text);
    assert_eq!(
        (call.status, call.arguments_text.as_str()),
        (Status::Valid, text)
    );
}

/// Finding 14: a `propertyNames` failure never quotes the key.
#[test]
fn property_names_failures_do_not_quote_keys() {
    let schema = json!({"type": "object", "properties": {"env": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}}});
    let error = mender(schema)
        .repair_call("t", r#"{"env": {"SECRET_TOKEN": "x"}}"#)
        .error
        .unwrap();
    assert!(!error.contains("SECRET_TOKEN"), "{error}");
    assert!(error.contains("propertyNames"), "{error}");
}
