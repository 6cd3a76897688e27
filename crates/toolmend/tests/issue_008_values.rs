//! Issue #8, items 4 and 5: values are never changed by accident.
//!
//! A repaired call keeps the exact spelling of every number and string it did not touch, a call
//! whose only repair is its name keeps its argument bytes, `1e400` is a number, a byte-order mark
//! is a syntax repair, and a value dropped for a duplicate key is reported.

use serde_json::{Value, json};
use toolmend::{CallResult, Mender, RepairKind, Status, ToolSet};

fn mender(schema: Value) -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"name": "read_file", "parameters": schema}]),
    ))
}

/// Whether the call reports the kind of this catalogue name (names are the stable contract).
fn has(call: &CallResult, name: &str) -> bool {
    call.repairs.iter().any(|r| r.kind.name() == name)
}

/// `n` any number, `s` any string, `tags` an array of strings (a bare string is repaired).
fn tagged() -> Mender {
    mender(json!({"type": "object", "properties": {
        "n": {"type": "number"}, "s": {"type": "string"},
        "opts": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}}}}))
}

#[test]
fn a_big_integer_beside_a_repair_keeps_its_digits() {
    let call = tagged().repair_call(
        "read_file",
        r#"{"n": 12345678901234567890123, "tags": "x"}"#,
    );
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(
        call.arguments_text,
        r#"{"n":12345678901234567890123,"tags":["x"]}"#
    );
}

#[test]
fn a_long_decimal_beside_a_repair_keeps_its_digits() {
    let call = tagged().repair_call(
        "read_file",
        r#"{"tags": "x", "n": 0.1000000000000000055511151231257827}"#,
    );
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(
        call.arguments_text,
        r#"{"tags":["x"],"n":0.1000000000000000055511151231257827}"#
    );
}

#[test]
fn numbers_keep_their_spelling_through_salvage() {
    // Not strict JSON: salvage builds the value, the numbers keep the digits they were read from.
    let call = tagged().repair_call(
        "read_file",
        "{'n': 12345678901234567890123, 'opts': {'a': 1.50, 'b': 1E2, 'c': -0}, 'tags': ['x'],}",
    );
    assert_eq!(call.status, Status::Repaired);
    assert!(call.has(RepairKind::QuotesNormalized));
    assert_eq!(
        call.arguments_text,
        r#"{"n":12345678901234567890123,"opts":{"a":1.50,"b":1e+2,"c":-0},"tags":["x"]}"#
    );
    // Digits are kept as sent; serde_json spells an exponent one way (`1E2` is `1e+2`), which is
    // the one change a number read from text that is not JSON may see.
}

#[test]
fn untouched_strings_and_whitespace_keep_their_spelling() {
    let raw = r#"{"s": "caf\u00e9 \/ \ud83d\ude00", "opts": { "k" : [1.0, "\t"] }, "tags": "x"}"#;
    let call = tagged().repair_call("read_file", raw);
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(
        call.arguments_text,
        r#"{"s":"caf\u00e9 \/ \ud83d\ude00","opts":{ "k" : [1.0, "\t"] },"tags":["x"]}"#
    );
}

#[test]
fn a_key_kept_beside_a_repair_keeps_its_spelling() {
    let call = tagged().repair_call("read_file", r#"{"\u0073": "a", "tags": "x"}"#);
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"\u0073":"a","tags":["x"]}"#);
}

#[test]
fn a_call_whose_only_repair_is_its_name_keeps_its_bytes() {
    let raw =
        "{ \"n\" : 1.50e0, \"s\": \"\\u00e9\", \"opts\": {\"big\": 12345678901234567890123} }";
    let call = tagged().repair_call("functions.read_file", raw);
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.name.as_ref(), "read_file");
    assert!(call.has(RepairKind::NameRepaired));
    assert_eq!(call.arguments_text, raw);
}

#[test]
fn an_exponent_past_f64_is_a_number() {
    // RFC 8259 sets no range on numbers.
    let raw = r#"{"n": 1e400}"#;
    let call = tagged().repair_call("read_file", raw);
    assert_eq!(call.status, Status::Valid, "{:?}", call.error);
    assert_eq!(call.arguments_text, raw);
    let raw = r#"{"n": -1E+400, "tags": "x"}"#;
    let call = tagged().repair_call("read_file", raw);
    assert_eq!(call.status, Status::Repaired, "{:?}", call.error);
    assert_eq!(call.arguments_text, r#"{"n":-1E+400,"tags":["x"]}"#);
}

#[test]
fn big_numbers_are_validated_exactly() {
    // Written as text: `json!` cannot hold a number past 64 bits.
    let schema = serde_json::from_str(
        r#"{"type": "object", "properties": {"id": {"maximum": 12345678901234567890122},
            "big": {"type": "integer"}, "tens": {"multipleOf": 10}}}"#,
    )
    .unwrap();
    let m = mender(schema);
    // An integral float is an integer (JSON Schema), at any size.
    for raw in [
        r#"{"big": 1.0}"#,
        r#"{"big": 12345678901234567890123}"#,
        r#"{"big": 1e400}"#,
    ] {
        let call = m.repair_call("read_file", raw);
        assert_eq!(call.status, Status::Valid, "{raw}: {:?}", call.error);
        assert_eq!(call.arguments_text, raw);
    }
    // A digit past f64's precision decides `maximum` and `multipleOf`.
    let call = m.repair_call("read_file", r#"{"id": 12345678901234567890123}"#);
    assert_eq!(call.status, Status::Invalid);
    let call = m.repair_call("read_file", r#"{"id": 12345678901234567890122}"#);
    assert_eq!(call.status, Status::Valid);
    let call = m.repair_call("read_file", r#"{"tens": 12345678901234567890123}"#);
    assert_eq!(call.status, Status::Invalid);
    let call = m.repair_call("read_file", r#"{"tens": 12345678901234567890120}"#);
    assert_eq!(call.status, Status::Valid);
    let call = m.repair_call("read_file", r#"{"big": 1.5}"#);
    assert_eq!(call.status, Status::Invalid);
}

#[test]
fn a_byte_order_mark_is_a_syntax_repair() {
    let m = tagged();
    let call = m.repair_call("read_file", "\u{feff}{\"n\": 1.50}");
    assert_eq!(call.status, Status::Repaired);
    assert!(has(&call, "bom_removed"), "{:?}", call.repairs);
    assert_eq!(call.arguments_text, "{\"n\": 1.50}");
    // With other syntax repairs: reported beside them.
    let call = m.repair_call("read_file", "\u{feff}{'n': 1,}");
    assert_eq!(call.status, Status::Repaired);
    assert!(has(&call, "bom_removed"), "{:?}", call.repairs);
    assert!(call.has(RepairKind::TrailingCommaRemoved));
    assert_eq!(call.arguments_text, "{\"n\":1}");
    // BOM alone as the arguments: empty.
    let call = m.repair_call("read_file", "\u{feff}");
    assert!(has(&call, "bom_removed") && call.has(RepairKind::EmptyArguments));
}

#[test]
fn a_dropped_duplicate_value_is_reported_by_key() {
    let m = tagged();
    // Strict JSON, repaired elsewhere: the object is rebuilt and keeps the last value of `s`.
    let call = m.repair_call(
        "read_file",
        r#"{"s": "first", "opts": {"k": 1, "k": 2}, "s": "second", "tags": "x"}"#,
    );
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(
        call.arguments_text,
        r#"{"s":"second","opts":{"k": 1, "k": 2},"tags":["x"]}"#
    );
    let dropped: Vec<&str> = call
        .repairs
        .iter()
        .filter(|r| r.kind.name() == "duplicate_key_dropped")
        .map(|r| r.path.as_str())
        .collect();
    // `opts` is untouched and passes as sent, both members included: nothing was dropped there.
    assert_eq!(dropped, ["/s"]);
    assert!(
        call.notes
            .iter()
            .any(|n| n.contains("`s`") && !n.contains("first")),
        "{:?}",
        call.notes
    );
    // Salvaged text: the parser keeps the last value and reports the key.
    let call = m.repair_call("read_file", "{'opts': {'a/b': 1, 'a/b': 2}, 's': 'x',}");
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments_text, r#"{"opts":{"a/b":2},"s":"x"}"#);
    let dropped: Vec<&str> = call
        .repairs
        .iter()
        .filter(|r| r.kind.name() == "duplicate_key_dropped")
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(dropped, ["/opts/a~1b"]);
}

#[test]
fn a_valid_call_with_duplicate_keys_passes_as_sent() {
    let raw = r#"{"s": "a", "s": "b"}"#;
    let call = tagged().repair_call("read_file", raw);
    assert_eq!(call.status, Status::Valid);
    assert_eq!(call.arguments_text, raw);
}

#[test]
fn salvage_reports_a_byte_order_mark_and_dropped_keys() {
    use toolmend::salvage::{SalvageOptions, salvage};
    let s = salvage(
        "\u{feff}{'a': [{'k': 1, 'k': 2}], 'a': 3}",
        &SalvageOptions::default(),
    )
    .unwrap();
    assert_eq!(s.values, vec![json!({"a": 3})]);
    assert_eq!(s.repairs[0].kind.name(), "bom_removed");
    assert!(
        s.repairs
            .iter()
            .any(|r| r.kind.name() == "duplicate_key_dropped")
    );
    // Inside the array, then at the top: each key by its pointer, in text order.
    assert_eq!(s.dropped_keys, ["/a/0/k", "/a"]);
}
