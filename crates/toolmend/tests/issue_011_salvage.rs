//! Issue #11 §3 (the malformed path reads the text once) and the depth finding of the salvage
//! fuzz target: what each path gives is checked against serde_json, never against itself.

use serde_json::{Value, json};
use toolmend::salvage::{SalvageErrorKind, SalvageOptions, salvage};
use toolmend::{Mender, RepairKind, Status, ToolSet};

fn mender(schema: Value) -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"name": "t", "parameters": schema}]),
    ))
}

fn nested(depth: usize, inner: &str) -> String {
    format!(
        "{{\"a\": {}{inner}{}}}",
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

/// serde_json refuses strict JSON nested 128 deep (its recursion limit): salvage refuses the
/// same nesting, so no text gets a value from salvage that serde_json cannot read back.
#[test]
fn salvage_and_serde_json_agree_at_the_depth_limit() {
    let options = SalvageOptions::default();
    let at_limit = nested(127, "1");
    let over = nested(128, "1");
    assert!(serde_json::from_str::<Value>(&at_limit).is_ok());
    assert!(serde_json::from_str::<Value>(&over).is_err());
    let read = salvage(&at_limit, &options).expect("127 levels are read");
    assert_eq!(
        read.values,
        vec![serde_json::from_str::<Value>(&at_limit).unwrap()]
    );
    assert_eq!(
        salvage(&over, &options).unwrap_err().kind,
        SalvageErrorKind::TooDeep
    );
    // The same nesting with a repair to make: the limit is the same as for strict JSON.
    let comma = nested(127, "1,");
    let value = &salvage(&comma, &options).expect("a trailing comma").values[0];
    assert_eq!(value.to_string(), at_limit.replace(' ', ""));
    let over_comma = nested(128, "1,");
    assert_eq!(
        salvage(&over_comma, &options).unwrap_err().kind,
        SalvageErrorKind::TooDeep
    );
}

/// Through the whole pipeline: a call nested 128 deep is invalid whether or not it is strict
/// JSON, and a repaired call just under the limit has text serde_json reads.
#[test]
fn repair_call_at_the_depth_limit() {
    let mender = mender(json!({"type": "object"}));
    for text in [nested(128, "1"), nested(128, "1,")] {
        let call = mender.repair_call("t", &text);
        assert_eq!(call.status, Status::Invalid, "{:?}", call.repairs);
    }
    let call = mender.repair_call("t", &nested(127, "1,"));
    assert_eq!(call.status, Status::Repaired);
    let again: Value = serde_json::from_str(&call.arguments_text).expect("text reads back");
    assert_eq!(Some(again), call.arguments);
}

/// The fast path hands what it read on: strict JSON that fails the schema is repaired from the
/// text as sent (spliced: the untouched member keeps its spelling), a mark before it is still
/// read, and salvage's text is the value written once.
#[test]
fn the_slow_path_starts_from_what_the_fast_path_read() {
    let mender = mender(
        json!({"type": "object", "required": ["limit"], "properties": {
        "limit": {"type": "integer"}, "ratio": {"type": "number"}}}),
    );
    let call = mender.repair_call("t", r#"{"ratio": 1.50, "limit": "5"}"#);
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"ratio":1.50,"limit":5}"#);

    let call = mender.repair_call("t", "\u{feff}{\"limit\": \"5\"}");
    assert_eq!(call.status, Status::Repaired);
    assert!(call.has(RepairKind::BomRemoved) && call.has(RepairKind::ScalarCoerced));
    assert_eq!(call.arguments, Some(json!({"limit": 5})));

    let call = mender.repair_call("t", "\u{feff}{\"limit\": 5}");
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, "{\"limit\": 5}");

    let call = mender.repair_call("t", "{'limit': 5, 'ratio': 0.25,}");
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"limit":5,"ratio":0.25}"#);

    // Salvaged, then repaired by a rule: the value as sent is what an invalid call reports.
    let call = mender.repair_call("t", "{'limit': 'x',}");
    assert_eq!(call.status, Status::Invalid);
    assert_eq!(call.arguments, Some(json!({"limit": "x"})));
    assert_eq!(call.arguments_text, "{'limit': 'x',}");
    let call = mender.repair_call("t", "{'limit': '7',}");
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"limit":7}"#);
}

/// A salvaged call's text copies the plain strings salvage found already written as serde_json
/// writes them, and writes the rest: byte for byte `serde_json::to_string` of the value either
/// way, whatever the escapes (`\/`, `\u`, raw backslashes, raw newlines), repairs, duplicate keys
/// or rules that changed the value.
#[test]
fn salvaged_text_is_what_serde_json_writes() {
    let any = mender(json!({"type": "object"}));
    let typed = mender(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    let texts = [
        r#"{"content": "a\"b\\c\nd\te\bf\fg\rh", "n": 1,}"#,
        r#"{"content": "slash \/ and \u00e9 and \u0001", "flag": True}"#,
        r#"{"content": "C:\Users\me", "other": "plain \"q\"", "n": 1,}"#,
        "{\"content\": \"raw\nnewline\", \"other\": \"x\\ny\",}",
        r#"{"a": "first", "a": "second", "b": "c",}"#,
        r#"{"a": "x" + "y", "b": "z", 'c': 'w'}"#,
        r#"{"a": {"inner": "x\ny"}, "b": ["p", "q"], "c": "r",}"#,
        r#"Here: {"a": "x", "n": "5"} done"#,
        "```json\n{\"a\": \"é → 日本\", \"n\": 2}\n```",
        r#"{"code": "print("x")", "n": 1,}"#,
    ];
    for text in texts {
        for m in [&any, &typed] {
            let call = m.repair_call("t", text);
            assert_eq!(call.status, Status::Repaired, "{text}: {:?}", call.error);
            let value = call.arguments.as_ref().expect("a value");
            assert_eq!(
                call.arguments_text,
                serde_json::to_string(value).unwrap(),
                "{text}"
            );
        }
    }
}

proptest::proptest! {
    /// The same on generated objects: members whose values are plain, escaped (`\/`, `\u`),
    /// single-quoted, raw or nested strings, Python literals and numbers, with a trailing comma
    /// or prose around them.
    #[test]
    fn salvaged_text_is_what_serde_json_writes_on_generated_calls(
        members in proptest::collection::vec(
            (
                "[a-z]{1,6}",
                proptest::prop_oneof![
                    "\"([a-z \\]\\[{}:,.]|\\\\[\"\\\\/bfnrt]|\\\\u00e9|\\\\u0001){0,24}\"",
                    "'[a-z \"]{0,12}'",
                    "\"[a-z]{0,6}\n[a-z]{0,6}\"",
                    "\"C:\\\\[A-Z][a-z]{0,6}\"",
                    "\\{\"in\": \"[a-z\\\\]{0,8}\"\\}",
                    "(True|False|None|-?[0-9]{1,4}(\\.[0-9]{1,3})?)",
                ],
            ),
            1..6,
        ),
        trailing in proptest::bool::ANY,
        prose in proptest::bool::ANY,
    ) {
        let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let mut text = format!("{{{}{}}}", body.join(", "), if trailing { "," } else { "" });
        if prose {
            text = format!("Sure: {text} done.");
        }
        let call = mender(json!({"type": "object"})).repair_call("t", &text);
        if call.status == Status::Repaired {
            let value = call.arguments.as_ref().expect("a value");
            proptest::prop_assert_eq!(&call.arguments_text, &serde_json::to_string(value).unwrap());
        }
    }
}
