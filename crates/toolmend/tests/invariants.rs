//! Project-wide invariants (DESIGN §3), as property tests.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolmend::{Mender, Status, ToolSet};

/// A schema together with an instance that satisfies it.
fn schema_and_instance() -> impl Strategy<Value = (Value, Value)> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 _./\\\\\"{}\\[\\]:,^$é🙂-]{0,12}"
            .prop_map(|s| (json!({"type": "string"}), json!(s))),
        any::<i32>().prop_map(|n| (json!({"type": "integer"}), json!(n))),
        (-1.0e6f64..1.0e6).prop_map(|f| (json!({"type": "number"}), json!(f))),
        any::<bool>().prop_map(|b| (json!({"type": "boolean"}), json!(b))),
        Just((json!({"type": ["string", "null"]}), Value::Null)),
        Just((json!({"enum": ["read", "write"]}), json!("write"))),
        Just((
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!("abc")
        )),
    ];
    leaf.prop_recursive(4, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| {
                // An array of the first item's schema, holding the items of that schema.
                match items.first() {
                    Some((schema, _)) => {
                        let values: Vec<Value> = items
                            .iter()
                            .filter(|(s, _)| s == schema)
                            .map(|(_, v)| v.clone())
                            .collect();
                        (
                            json!({"type": "array", "items": schema}),
                            Value::Array(values),
                        )
                    }
                    None => (json!({"type": "array"}), json!([])),
                }
            }),
            prop::collection::vec((inner, any::<bool>(), any::<bool>()), 0..5).prop_map(|fields| {
                let mut properties = Map::new();
                let mut required = Vec::new();
                let mut instance = Map::new();
                for (i, ((schema, value), is_required, present)) in fields.into_iter().enumerate() {
                    let name = format!("f{i}");
                    properties.insert(name.clone(), schema);
                    if is_required || present {
                        instance.insert(name.clone(), value);
                    }
                    if is_required {
                        required.push(json!(name));
                    }
                }
                let schema =
                    json!({"type": "object", "properties": properties, "required": required});
                (schema, Value::Object(instance))
            }),
        ]
    })
}

/// Serialises `value` in one of several spellings: compact, pretty, or with odd spaces.
fn spelled(value: &Value, style: u8) -> String {
    match style % 3 {
        0 => value.to_string(),
        1 => serde_json::to_string_pretty(value).unwrap(),
        _ => value.to_string().replace(',', " ,\t").replace(':', " :  "),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Invariant 1: valid input is never touched.
    #[test]
    fn valid_arguments_come_back_byte_identical((schema, instance) in schema_and_instance(), style in any::<u8>()) {
        let root = json!({"type": "object", "properties": {"x": schema}, "required": ["x"]});
        let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": root}]));
        prop_assert!(tools.rejected().is_empty());
        let raw = spelled(&json!({"x": instance}), style);
        // Odd spacing inside strings would change the value: only use it when it does not.
        prop_assume!(serde_json::from_str::<Value>(&raw).ok() == Some(json!({"x": instance})));
        let call = Mender::new(tools).repair_call("t", &raw);
        prop_assert_eq!(call.status, Status::Valid, "{}", call.error.unwrap_or_default());
        prop_assert_eq!(call.arguments_text, raw);
        prop_assert!(call.repairs.is_empty());
    }

    /// Invariant 7: any text is handled without a panic, and a dispatchable result validates.
    #[test]
    fn any_text_never_panics(raw in "\\PC{0,64}|[\\[\\]{}\",:a-z0-9 nulltruefalse']{0,64}") {
        let schema = json!({"type": "object", "required": ["paths"], "properties": {
            "paths": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}}});
        let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema.clone()}]));
        let call = Mender::new(tools).repair_call("t", &raw);
        if call.is_dispatchable() {
            let value: Value = serde_json::from_str(&call.arguments_text).unwrap();
            prop_assert!(jsonschema::is_valid(&schema, &value));
        } else {
            prop_assert!(call.error.is_some());
        }
    }
}

/// Invariant 3: all or nothing — an unsaveable call keeps its original text.
#[test]
fn an_unsaveable_call_keeps_its_original_text() {
    let schema = json!({"type": "object", "required": ["paths", "mode"], "properties": {
        "paths": {"type": "array", "items": {"type": "string"}}, "mode": {"enum": ["a", "b"]}}});
    let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]));
    // `paths` alone could be repaired, `mode` cannot: nothing is emitted half-repaired.
    let raw = r#"{"paths": "x", "mode": "zzz"}"#;
    let call = Mender::new(tools).repair_call("t", raw);
    assert_eq!(call.status, Status::Invalid);
    assert_eq!(call.arguments_text, raw);
    let error = call.error.unwrap();
    assert!(error.contains("`/mode`"), "{error}");
}

/// Invariant 5: `json_string_to_array` runs before `bare_value_to_array`.
#[test]
fn stringified_arrays_are_parsed_not_wrapped() {
    let schema = json!({"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}});
    let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]));
    let call = Mender::new(tools).repair_call("t", r#"{"paths": "[\"a\"]"}"#);
    assert_eq!(call.arguments_text, r#"{"paths":["a"]}"#);
}
