//! Project-wide invariants (DESIGN §3), as property tests.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolmend::{Mender, Status, ToolSet};

/// A sentinel no generated instance holds (the impossible branch of a `oneOf`).
const NEVER: &str = "\u{1}never";

/// A schema together with an instance that satisfies it.
fn schema_and_instance() -> impl Strategy<Value = (Value, Value)> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 _./\\\\\"{}\\[\\]:,^$é🙂\u{1}\n\t\u{7f}\u{2028}-]{0,12}"
            .prop_map(|s| (json!({"type": "string"}), json!(s))),
        any::<i32>().prop_map(|n| (json!({"type": "integer"}), json!(n))),
        any::<i64>().prop_map(|n| (json!({"type": "integer", "minimum": i64::MIN}), json!(n))),
        (-1.0e6f64..1.0e6).prop_map(|f| (json!({"type": "number"}), json!(f))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| (json!({"type": "number"}), json!(f))),
        any::<bool>().prop_map(|b| (json!({"type": "boolean"}), json!(b))),
        Just((json!({"type": ["string", "null"]}), Value::Null)),
        Just((json!({"enum": ["read", "write"]}), json!("write"))),
        Just((
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            json!("abc")
        )),
        // Hints: a tagged path field runs the opt-in rules even on valid input.
        "[a-z/._-]{1,12}".prop_map(|s| (
            json!({"type": "string", "x-toolmend": {"semantic": "absolute_path"}}),
            json!(format!("/{s}"))
        )),
        "[a-z ]{0,12}".prop_map(|s| (
            json!({"type": "string", "x-toolmend": {"semantic": "content"}}),
            json!(s)
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
            (
                prop::collection::vec((inner.clone(), any::<bool>(), any::<bool>()), 0..5),
                0u8..3,
                any::<i32>()
            )
                .prop_map(|(fields, additional, extra)| {
                    let mut properties = Map::new();
                    let mut required = Vec::new();
                    let mut instance = Map::new();
                    for (i, ((schema, value), is_required, present)) in
                        fields.into_iter().enumerate()
                    {
                        let name = format!("f{i}");
                        properties.insert(name.clone(), schema);
                        if is_required || present {
                            instance.insert(name.clone(), value);
                        }
                        if is_required {
                            required.push(json!(name));
                        }
                    }
                    let mut schema =
                        json!({"type": "object", "properties": properties, "required": required});
                    match additional {
                        0 => schema["additionalProperties"] = json!(false),
                        1 => {
                            schema["additionalProperties"] = json!({"type": "integer"});
                            instance.insert("zz".into(), json!(extra));
                        }
                        _ => {}
                    }
                    (schema, Value::Object(instance))
                }),
            (inner.clone(), inner.clone())
                .prop_map(|((a, instance), (b, _))| (json!({"anyOf": [b, a]}), instance)),
            inner
                .clone()
                .prop_map(|(a, instance)| (json!({"oneOf": [{"const": NEVER}, a]}), instance)),
        ]
    })
}

/// A schema with `$defs` referenced by `$ref`, a hint on the tool, and an instance of it.
fn tool_and_instance() -> impl Strategy<Value = (Value, Value)> {
    (
        schema_and_instance(),
        prop::collection::vec(schema_and_instance(), 0..3),
        any::<bool>(),
    )
        .prop_map(|((schema, instance), defs, mutating)| {
            let mut properties = Map::new();
            let mut definitions = Map::new();
            let mut arguments = Map::new();
            properties.insert("x".into(), schema);
            arguments.insert("x".into(), instance);
            for (i, (schema, instance)) in defs.into_iter().enumerate() {
                definitions.insert(format!("d{i}"), schema);
                properties.insert(format!("r{i}"), json!({"$ref": format!("#/$defs/d{i}")}));
                arguments.insert(format!("r{i}"), instance);
            }
            let root = json!({"type": "object", "properties": properties, "required": ["x"],
                "$defs": definitions, "x-toolmend": {"mutating": mutating}});
            (root, Value::Object(arguments))
        })
}

/// Writes JSON in any legal spelling (RFC 8259): whitespace between tokens, escapes of any
/// character, numbers with fractions and exponents. Never serde_json's own output alone.
struct Speller(u64);

impl Speller {
    fn pick(&mut self, n: u64) -> u64 {
        // xorshift64: the choices follow from the proptest-chosen seed.
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn ws(&mut self, out: &mut String) {
        out.push_str(["", "", "", " ", "\n  ", "\t\r\n "][self.pick(6) as usize]);
    }

    fn value(&mut self, value: &Value, out: &mut String) {
        match value {
            Value::Number(n) => self.number(&n.to_string(), out),
            Value::String(s) => self.string(s, out),
            Value::Array(items) => {
                out.push('[');
                self.ws(out);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.ws(out);
                        out.push(',');
                        self.ws(out);
                    }
                    self.value(item, out);
                }
                self.ws(out);
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                self.ws(out);
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.ws(out);
                        out.push(',');
                        self.ws(out);
                    }
                    self.string(key, out);
                    self.ws(out);
                    out.push(':');
                    self.ws(out);
                    self.value(item, out);
                }
                self.ws(out);
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    fn string(&mut self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            let short = match c {
                '"' => Some('"'),
                '\\' => Some('\\'),
                '/' => Some('/'),
                '\u{8}' => Some('b'),
                '\u{c}' => Some('f'),
                '\n' => Some('n'),
                '\r' => Some('r'),
                '\t' => Some('t'),
                _ => None,
            };
            let must = c < ' ' || c == '"' || c == '\\';
            match (self.pick(3), short) {
                (0, Some(e)) => {
                    out.push('\\');
                    out.push(e);
                }
                (1, _) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let hex = format!("\\u{unit:04x}");
                        out.push_str(&if self.pick(2) == 0 {
                            hex.to_uppercase().replace("\\U", "\\u")
                        } else {
                            hex
                        });
                    }
                }
                (_, Some(e)) if must => {
                    out.push('\\');
                    out.push(e);
                }
                (_, None) if must => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                _ => out.push(c),
            }
        }
        out.push('"');
    }

    fn number(&mut self, text: &str, out: &mut String) {
        out.push_str(text);
        let exponent = text.contains(['e', 'E']);
        match self.pick(4) {
            1 if text.contains('.') && !exponent => out.push('0'),
            1 if !exponent => out.push_str(".0"),
            2 if !exponent => {
                out.push_str(["e0", "E0", "e+0", "E-0", "e-00"][self.pick(5) as usize])
            }
            3 if !exponent && !text.contains('.') => out.push_str("0e-1"),
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Invariant 1: valid input is never touched, whatever its spelling and its schema.
    #[test]
    fn valid_arguments_come_back_byte_identical((root, instance) in tool_and_instance(), seed in any::<u64>()) {
        let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": root}]));
        prop_assert!(tools.rejected().is_empty());
        let mut raw = String::new();
        let mut speller = Speller(seed | 1);
        speller.ws(&mut raw);
        speller.value(&instance, &mut raw);
        speller.ws(&mut raw);
        // Strict JSON by construction, in a spelling of its own.
        prop_assert!(serde_json::from_str::<Value>(&raw).is_ok(), "{}", raw);
        let call = Mender::new(tools).repair_call("t", &raw);
        prop_assert_eq!(call.status, Status::Valid, "{}\n{}", raw, call.error.unwrap_or_default());
        prop_assert_eq!(call.arguments_text, raw);
        prop_assert!(call.repairs.is_empty());
    }

    /// Invariant 1 inside a repaired call: what no rule touched keeps its bytes (escapes, number
    /// forms, whitespace); only the repaired member is rewritten.
    #[test]
    fn untouched_members_of_a_repaired_call_keep_their_bytes(
        (schema, instance) in schema_and_instance(),
        seed in any::<u64>(),
    ) {
        let root = json!({"type": "object", "required": ["x"], "properties": {
            "x": schema, "tags": {"type": "array", "items": {"type": "string"}}}});
        let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": root}]));
        let mut speller = Speller(seed | 1);
        let mut x = String::new();
        speller.value(&instance, &mut x);
        // `tags` is a bare string where an array is expected: `bare_value_to_array` fixes it.
        let raw = format!("{{ \"x\" : {x} ,\n \"tags\": \"t\" }}");
        let call = Mender::new(tools).repair_call("t", &raw);
        prop_assert_eq!(call.status, Status::Repaired, "{}\n{}", raw, call.error.unwrap_or_default());
        prop_assert_eq!(call.arguments_text, format!(r#"{{"x":{x},"tags":["t"]}}"#));
    }

    /// Invariant 7: any text is handled without a panic, and a dispatchable result validates.
    #[test]
    fn any_text_never_panics(raw in "\\PC{0,300}|[\\[\\]{}\",:a-z0-9 nulltruefalse'\\\\.eE+-]{0,300}") {
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
