//! Issue #11 §1: a string that lacks or hides a quote must not swallow structure. Each rule is
//! checked on a hand-written text with its hand-written value, and where the two readings of a
//! text both parse, through the whole pipeline with the schema choosing.

use serde_json::{Value, json};
use toolmend::salvage::{
    DocumentOptions, SalvageErrorKind, SalvageOptions, salvage, salvage_document,
};
use toolmend::{Mender, RepairKind, Status, ToolSet};

fn one(text: &str) -> (Value, toolmend::salvage::Salvaged) {
    let s = salvage(text, &SalvageOptions::default()).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(s.values.len(), 1, "{text}");
    (s.values[0].clone(), s)
}

fn refused(text: &str) -> SalvageErrorKind {
    match salvage(text, &SalvageOptions::default()) {
        Ok(s) => panic!("{text} read as {:?}", s.values),
        Err(e) => e.kind,
    }
}

fn document(text: &str) -> Value {
    salvage_document(text, &DocumentOptions::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .into_value()
}

fn mender(schema: Value) -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"name": "t", "parameters": schema}]),
    ))
}

/// A read-only tool: a call the text may have cut off is closed rather than refused.
fn reader(schema: Value) -> Mender {
    let mut tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]));
    assert!(tools.set_mutating("t", false));
    Mender::new(tools)
}

#[test]
fn a_string_cut_before_the_closers_of_every_container_ends_there() {
    let (value, s) = one(r#"{"key": ["value]}"#);
    assert_eq!(value, json!({"key": ["value"]}));
    assert!(s.has(RepairKind::QuoteInserted));
    // The text may as well have been cut inside the string: still flagged, and the cut reading
    // travels along.
    assert!(s.truncated);
    assert_eq!(s.alternative, Some(json!({"key": ["value]}"]})));
    // Blanks before the closers are not content.
    let (value, _) = one(r#"{"lorem_ipsum": "sic tamet, quick brown fox. }"#);
    assert_eq!(value, json!({"lorem_ipsum": "sic tamet, quick brown fox."}));
    // Quotes taken as content stay content.
    let (value, _) = one(r#"{"key": "lorem ipsum ... "sic " tamet. ...}"#);
    assert_eq!(value, json!({"key": "lorem ipsum ... \"sic \" tamet. ..."}));
}

#[test]
fn a_cut_string_keeps_closers_that_are_not_exactly_the_open_containers() {
    // Code that opened a brace it did not close: the `}` is content, the text was cut.
    let (value, s) = one(r#"{"code": "function() { return 1; }"#);
    assert_eq!(value, json!({"code": "function() { return 1; }"}));
    assert!(!s.has(RepairKind::QuoteInserted) && s.alternative.is_none());
    // One closer short of the open containers.
    let (value, s) = one(r#"{"key": ["value}"#);
    assert_eq!(value, json!({"key": ["value}"]}));
    assert!(!s.has(RepairKind::QuoteInserted));
}

#[test]
fn the_schema_chooses_between_the_closed_and_the_cut_reading() {
    let text = r#"{"key": ["value]}"#;
    let items = reader(json!({
        "type": "object",
        "properties": {"key": {"type": "array", "items": {"enum": ["value"]}}}
    }));
    let call = items.repair_call("t", text);
    assert_eq!(call.arguments, Some(json!({"key": ["value"]})));
    let cut = reader(json!({
        "type": "object",
        "properties": {"key": {"type": "array", "items": {"enum": ["value]}"]}}}
    }));
    let call = cut.repair_call("t", text);
    assert_eq!(call.arguments, Some(json!({"key": ["value]}"]})));
    // A tool that may change the world: either reading may be a cut call, so it is refused.
    let call = mender(json!({"type": "object"})).repair_call("t", text);
    assert_eq!(call.status, Status::Invalid);
}

#[test]
fn a_missing_closing_quote_before_a_bare_key_is_inserted() {
    let (value, s) = one(r#"{"a": "first, b: "second"}"#);
    assert_eq!(value, json!({"a": "first", "b": "second"}));
    assert!(s.has(RepairKind::QuoteInserted));
    assert_eq!(s.alternative, Some(json!({"a": "first, b: \"second"})));
    // Not a whole string after the colon: content.
    let (value, _) = one(r#"{"a": "ratio, b: "x" y"}"#);
    assert_eq!(value, json!({"a": "ratio, b: \"x\" y"}));
}

#[test]
fn an_element_missing_its_opening_quote_is_read() {
    let (value, s) = one(r#"{"k": ["value1" value2", "value3"]}"#);
    assert_eq!(value, json!({"k": ["value1", "value2", "value3"]}));
    assert!(s.has(RepairKind::QuoteInserted));
    let (value, _) = one(r#"{"k": ["value1", value2", "value3"]}"#);
    assert_eq!(value, json!({"k": ["value1", "value2", "value3"]}));
    let (value, _) = one(r#"{"bad": ["Lorem", "consectetur" comment" ], "good": ["elit"]}"#);
    assert_eq!(
        value,
        json!({"bad": ["Lorem", "consectetur", "comment"], "good": ["elit"]})
    );
    // After a quote taken as content, the same shape is quoted prose.
    let (value, _) = one(r#"{"k": ["say "hi" there"]}"#);
    assert_eq!(value, json!({"k": ["say \"hi\" there"]}));
}

#[test]
fn strings_whose_commas_are_missing_end_before_a_number() {
    assert_eq!(document(r#"["a" "b" "c" 1"#), json!(["a", "b", "c", 1]));
    let (value, _) = one(r#"{"k": ["a" "b" 2]}"#);
    assert_eq!(value, json!({"k": ["a", "b", 2]}));
}

#[test]
fn structure_a_string_would_swallow_is_refused() {
    // An array where a key belongs.
    for text in [
        r#"{ "key": ["arrayvalue"], "key3": "value3", ["arrayvalue1"] }"#,
        r#"{ "key": ["arrayvalue"], ["arrayvalue1"], ["arrayvalue2"], "key3": "value3" }"#,
        r#"{"rows": [["r2a", "r2b"], "r3a", "r3b"], ["r4a", "r4b"]]}"#,
        r#"{ "key": [[1, 2, 3], "a", "b"], [[4, 5, 6], [7, 8, 9]] }"#,
    ] {
        assert_eq!(refused(text), SalvageErrorKind::Syntax, "{text}");
    }
    // A key inside an array: an object missing its `{`, or two strings missing their comma.
    for text in [r#"["key":"value"]"#, r#"{"a": [ "key": "value"]}"#] {
        assert_eq!(refused(text), SalvageErrorKind::Syntax, "{text}");
    }
    // A bare word between members, and one ending an array.
    for text in [
        r#"[{"key": "value", COMMENT "notes": "lorem "ipsum", sic." }]"#,
        r#"{"bad": ["Lorem","consectetur" comment],"good": ["elit","sed"]}"#,
    ] {
        assert_eq!(refused(text), SalvageErrorKind::Syntax, "{text}");
    }
    // Through the pipeline: invalid, never a string that swallowed `, [`.
    let call = mender(json!({"type": "object"})).repair_call(
        "t",
        r#"{ "key": ["arrayvalue"], "key3": "value3", ["arrayvalue1"] }"#,
    );
    assert_eq!(call.status, Status::Invalid);
}

#[test]
fn code_in_a_string_keeps_its_brackets_and_quotes() {
    // `, [` in code goes on with something other than a member after its `]`.
    let (value, _) = one(r#"{"code": "print("a", ["b"])"}"#);
    assert_eq!(value, json!({"code": "print(\"a\", [\"b\"])"}));
    let (value, _) = one(r#"{"code": "f("a", ["b", "c"], 1)"}"#);
    assert_eq!(value, json!({"code": "f(\"a\", [\"b\", \"c\"], 1)"}));
    let (value, _) = one(r#"{"code": "x = ["a", ["b"], ["c"]]"}"#);
    assert_eq!(value, json!({"code": "x = [\"a\", [\"b\"], [\"c\"]]"}));
    let (value, _) = one(r#"{"text": "He said "go" now, then left"}"#);
    assert_eq!(value, json!({"text": "He said \"go\" now, then left"}));
    let (value, _) = one(r#"{"k": ["hello, "world"]}"#);
    assert_eq!(value, json!({"k": ["hello", "world"]}));
}

#[test]
fn a_closer_of_the_other_kind_matching_the_container_below_closes_both() {
    let (value, s) = one(r#"{"array":[{"key": "value"], "key2": "value2"}"#);
    assert_eq!(
        value,
        json!({"array": [{"key": "value"}], "key2": "value2"})
    );
    assert!(!s.truncated && s.has(RepairKind::ExtraCloserRemoved));
    let (value, s) = one(r#"{"name": [{"prefix": ["Mrs."}, {"prefix": ["Ms."]}]}"#);
    assert_eq!(
        value,
        json!({"name": [{"prefix": ["Mrs."]}, {"prefix": ["Ms."]}]})
    );
    assert!(!s.truncated);
}
