//! Common type-name mistakes in tool declarations, read as the JSON Schema type they name.
//!
//! - Detects: a `type` keyword (a string, or a string in a `type` array) of a subschema that
//!   spells a JSON Schema type the way a programming language does: `float`, `int`, `str`,
//!   `bool`, `dict`, `list` (tool authors write Python type names; such a schema does not
//!   compile, so before this every call of the tool was `unvalidated`).
//! - Does: rewrites it to `number`, `integer`, `string`, `boolean`, `object`, `array` in the
//!   schema the tool is compiled from, and leaves a note on the tool
//!   ([`super::Tool::schema_notes`]) for each spelling read.
//! - Never fires when: the name is anything else (an unknown `type` still fails closed: the
//!   tool's calls stay `unvalidated`), or the `type` key is data (a property named `type`, an
//!   `enum` or `default` value): only subschemas are visited ([`super::walk`]).
//! - Example: `{"properties": {"x": {"type": "float"}}}` validates `{"x": 1.5}`.

use serde_json::Value;

use super::walk::for_each_schema_mut;

/// Each mistaken spelling and the JSON Schema type it names.
const ALIASES: [(&str, &str); 6] = [
    ("float", "number"),
    ("int", "integer"),
    ("str", "string"),
    ("bool", "boolean"),
    ("dict", "object"),
    ("list", "array"),
];

fn json_type(name: &str) -> Option<&'static str> {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, t)| *t)
}

/// Whether `node`'s `type` holds a mistaken spelling.
fn has_alias(node: &Value) -> bool {
    match node {
        Value::String(name) => json_type(name).is_some(),
        Value::Array(names) => names
            .iter()
            .any(|n| n.as_str().and_then(json_type).is_some()),
        _ => false,
    }
}

/// The schema with every mistaken type spelling read as its JSON Schema type, and a note for
/// each distinct spelling; `None` when it has none.
pub(super) fn normalized(schema: &Value) -> Option<(Value, Vec<String>)> {
    // Only a schema that mentions an alias somewhere is copied and walked.
    if !mentions_alias(schema, 0) {
        return None;
    }
    let mut fixed = schema.clone();
    let mut notes: Vec<String> = Vec::new();
    let mut found = false;
    for_each_schema_mut(&mut fixed, &mut |map| {
        let Some(node) = map.get_mut("type") else {
            return;
        };
        if !has_alias(node) {
            return;
        }
        found = true;
        let mut rewrite = |name: &mut String| {
            if let Some(t) = json_type(name) {
                let note = format!("the schema's type `{name}` was read as `{t}`");
                if !notes.contains(&note) {
                    notes.push(note);
                }
                *name = t.to_owned();
            }
        };
        match node {
            Value::String(name) => rewrite(name),
            Value::Array(names) => names.iter_mut().for_each(|n| {
                if let Value::String(name) = n {
                    rewrite(name);
                }
            }),
            _ => {}
        }
    });
    found.then_some((fixed, notes))
}

/// A cheap over-approximation: any `type` key anywhere whose value is an alias.
fn mentions_alias(node: &Value, depth: usize) -> bool {
    if depth > crate::limits::MAX_DEPTH {
        return false;
    }
    match node {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| (k == "type" && has_alias(v)) || mentions_alias(v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| mentions_alias(v, depth + 1)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn python_type_names_are_read_as_json_schema_types() {
        let schema = json!({"type": "dict", "properties": {
            "x": {"type": "float"}, "n": {"type": ["int", "null"]},
            "tags": {"type": "list", "items": {"type": "str"}}, "f": {"type": "bool"}}});
        let (fixed, notes) = normalized(&schema).unwrap();
        assert_eq!(
            fixed,
            json!({"type": "object", "properties": {
                "x": {"type": "number"}, "n": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}}, "f": {"type": "boolean"}}})
        );
        assert_eq!(notes.len(), 6);
    }

    #[test]
    fn data_and_unknown_names_are_left_alone() {
        // A property named `type`, a default holding `type: int`, an unknown name.
        let schema = json!({"type": "object", "properties": {
            "type": {"type": "string", "default": {"type": "int"}},
            "y": {"type": "decimal"}}});
        assert_eq!(normalized(&schema), None);
        let clean = json!({"type": "object", "properties": {"x": {"type": "number"}}});
        assert_eq!(normalized(&clean), None);
    }
}
