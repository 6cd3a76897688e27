//! Untyped XML values → JSON values, using the tool's schema (GRAMMARS §1.8).
//!
//! The recommended behaviour of GRAMMARS §1.8: Qwen3-Coder-style coercion by the parameter's
//! type, with list types, `anyOf`/`oneOf`/`allOf` and `enum` gathered the way vLLM's MiniMax-M2
//! parser does. Conservative on purpose:
//! - without a schema for the parameter, the value stays a string (a number the tool did not ask
//!   for is worse than a string it can parse itself);
//! - text that is not a boolean never becomes `false`, text that is not a number never becomes
//!   one: when no declared type fits, the raw text is kept and validation reports it.

use serde_json::{Number, Value};

/// Nesting of `anyOf`/`oneOf`/`allOf` and local `$ref`s followed when gathering types.
const MAX_SCHEMA_DEPTH: usize = 8;

/// The JSON value for the raw text `raw` of parameter `key`, given the tool's parameters schema.
pub(crate) fn coerce(schema: Option<&Value>, key: &str, raw: &str) -> Value {
    let (Some(root), Some(prop)) = (schema, schema.and_then(|s| property(s, key))) else {
        return Value::String(raw.to_owned());
    };
    let mut types = Types::default();
    types.gather(root, prop, 0);
    convert(&types, raw).unwrap_or_else(|| Value::String(raw.to_owned()))
}

/// The schema of `key`: under `properties`, or in the schema itself when it has no
/// `properties` (GRAMMARS §1.8 rule 3).
pub(crate) fn property<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    match schema.get("properties") {
        Some(props) => props.get(key),
        None => schema.get(key).filter(|v| v.is_object()),
    }
}

/// The types a parameter admits, and its enum values.
#[derive(Debug, Default)]
struct Types {
    names: Vec<String>,
    enum_values: Vec<Value>,
}

impl Types {
    /// Gathers what `schema` admits; `root` is the tool's parameters schema, which local
    /// `$ref`s (`#/$defs/…`, `#/definitions/…`: Pydantic writes one for every enum and nested
    /// model) point into.
    fn gather(&mut self, root: &Value, schema: &Value, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            return;
        }
        if let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        {
            self.gather(root, target, depth + 1);
        }
        match schema.get("type") {
            Some(Value::String(t)) => self.names.push(t.to_ascii_lowercase()),
            Some(Value::Array(list)) => {
                self.names.extend(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_ascii_lowercase),
                );
            }
            _ => {
                // No `type`: the shape keywords still say what the value is.
                if schema.get("properties").is_some() {
                    self.names.push("object".into());
                }
                if schema.get("items").is_some() {
                    self.names.push("array".into());
                }
            }
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            self.enum_values.extend(values.iter().cloned());
        }
        if let Some(value) = schema.get("const") {
            self.enum_values.push(value.clone());
        }
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(members)) = schema.get(keyword) {
                for member in members {
                    self.gather(root, member, depth + 1);
                }
            }
        }
    }

    fn has(&self, prefixes: &[&str]) -> bool {
        self.names
            .iter()
            .any(|t| prefixes.iter().any(|p| t.starts_with(p)))
    }
}

/// Tries the admitted types in the MiniMax-M2 priority order; `None` keeps the raw string.
fn convert(types: &Types, raw: &str) -> Option<Value> {
    let text = raw.trim();
    // An enum value written exactly wins: `"1"` in `enum: ["1", "2"]` stays a string.
    if let Some(v) = types
        .enum_values
        .iter()
        .find(|v| v.as_str() == Some(raw) || v.as_str() == Some(text))
    {
        return Some(v.clone());
    }
    if text.eq_ignore_ascii_case("null") && allows_null(types) {
        return Some(Value::Null);
    }
    if let Some(number) = types
        .enum_values
        .iter()
        .find(|v| v.is_number() && number_text(text).as_ref() == Some(*v))
    {
        return Some(number.clone());
    }
    if types.has(&["int", "uint", "long", "short", "unsigned"]) {
        if let Some(n) = integer(text) {
            return Some(n);
        }
    }
    if types.has(&["num", "float", "double", "decimal"]) {
        if let Some(n) = number_text(text) {
            return Some(n);
        }
    }
    if types.has(&["bool", "binary"]) {
        if text.eq_ignore_ascii_case("true") {
            return Some(Value::Bool(true));
        }
        if text.eq_ignore_ascii_case("false") {
            return Some(Value::Bool(false));
        }
    }
    if types.has(&["object", "dict"]) {
        if let Some(v @ Value::Object(_)) = structured(text) {
            return Some(v);
        }
    }
    if types.has(&["array", "arr", "list"]) {
        if let Some(v @ Value::Array(_)) = structured(text) {
            return Some(v);
        }
    }
    None
}

/// JSON text; or, only when that fails, the same text escaped once too often (`{\"a\": 1}`,
/// GLM 4.5/4.7), read once unescaped. Correctly escaped text is never rewritten.
fn structured(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    if !text.contains("\\\"") {
        return None;
    }
    serde_json::from_str::<String>(&format!("\"{text}\""))
        .ok()
        .and_then(|once| serde_json::from_str(&once).ok())
}

/// `null` becomes JSON null when the schema allows null, or when no admitted type is a string.
fn allows_null(types: &Types) -> bool {
    types.has(&["null"])
        || (!types.names.is_empty()
            && !types.has(&["string", "str", "text", "char", "varchar", "enum"]))
}

/// An integer: `42`, `-3`, or an integral number such as `5.0`.
fn integer(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(Value::from(u));
    }
    let f = number_text(text)?.as_f64()?;
    #[allow(clippy::cast_possible_truncation, clippy::float_cmp)] // checked integral and in range
    let whole = (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64));
    whole
}

/// A JSON number written as JSON (no `NaN`, no `+1`, no `0x`).
fn number_text(text: &str) -> Option<Value> {
    match serde_json::from_str::<Number>(text) {
        Ok(n) => Some(Value::Number(n)),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "opt": {"type": ["integer", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "cfg": {"type": "object"},
            "s": {"type": "string"},
            "mode": {"enum": ["1", "2"]},
            "level": {"enum": [1, 2]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        }})
    }

    #[test]
    fn converts_by_declared_type() {
        let s = schema();
        let cases = [
            ("n", "4", json!(4)),
            ("n", " 5.0 ", json!(5)),
            ("x", "2.5", json!(2.5)),
            ("flag", "True", json!(true)),
            ("flag", "false", json!(false)),
            ("opt", "null", json!(null)),
            ("opt", "7", json!(7)),
            ("tags", r#"["a", "b"]"#, json!(["a", "b"])),
            ("cfg", r#"{"k": 1}"#, json!({"k": 1})),
            ("s", "10", json!("10")),
            ("s", "null", json!("null")),
            ("mode", "1", json!("1")),
            ("level", "2", json!(2)),
            ("either", "3", json!(3)),
            ("either", "three", json!("three")),
        ];
        for (key, raw, expected) in cases {
            assert_eq!(coerce(Some(&s), key, raw), expected, "{key} = {raw:?}");
        }
    }

    #[test]
    fn never_turns_a_non_boolean_into_false() {
        assert_eq!(coerce(Some(&schema()), "flag", "maybe"), json!("maybe"));
        assert_eq!(
            coerce(Some(&schema()), "n", "2026-01-15"),
            json!("2026-01-15")
        );
        assert_eq!(coerce(Some(&schema()), "tags", "a, b"), json!("a, b"));
    }

    #[test]
    fn follows_local_refs() {
        let schema = json!({
            "type": "object",
            "$defs": {"Mode": {"type": "integer"}, "Loop": {"$ref": "#/$defs/Loop"}},
            "definitions": {"Flag": {"type": "boolean"}},
            "properties": {
                "m": {"$ref": "#/$defs/Mode"},
                "f": {"$ref": "#/definitions/Flag"},
                "l": {"$ref": "#/$defs/Loop"},
                "x": {"$ref": "https://example.com/other"}
            }
        });
        assert_eq!(coerce(Some(&schema), "m", "3"), json!(3));
        assert_eq!(coerce(Some(&schema), "f", "true"), json!(true));
        assert_eq!(coerce(Some(&schema), "l", "3"), json!("3"));
        assert_eq!(coerce(Some(&schema), "x", "3"), json!("3"));
    }

    #[test]
    fn keeps_strings_without_a_schema() {
        assert_eq!(coerce(None, "n", "10"), json!("10"));
        assert_eq!(coerce(Some(&schema()), "undeclared", "10"), json!("10"));
        assert_eq!(
            coerce(Some(&json!({"n": {"type": "integer"}})), "n", "10"),
            json!(10)
        );
    }
}
