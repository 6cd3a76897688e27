//! Visiting every subschema of a JSON Schema, and only subschemas.
//!
//! Rewrites of what is sent (hint stripping, anchor stripping) must touch schema nodes, never
//! data: a property *named* `pattern` or `x-toolmend`, or an `enum`/`default` value that happens
//! to hold such a key, is left as it is. So the walk follows the applicator keywords of JSON
//! Schema (2020-12 and the older `definitions`/`dependencies`/array `items` forms) instead of
//! every object in the document.

use serde_json::{Map, Value};

use crate::limits::MAX_DEPTH;

/// Keywords whose value is one subschema.
const SINGLE: [&str; 12] = [
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];

/// Keywords whose value is an array of subschemas (`items` in its pre-2020 tuple form too).
const LISTS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Keywords whose value maps names to subschemas.
const MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Calls `f` on every schema object in `schema`, parents before children.
///
/// Nodes deeper than [`MAX_DEPTH`] are not visited: the walk is bounded whatever the input.
pub(crate) fn for_each_schema_mut(schema: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    visit(schema, 0, f);
}

fn visit(node: &mut Value, depth: usize, f: &mut impl FnMut(&mut Map<String, Value>)) {
    if depth > MAX_DEPTH {
        return;
    }
    let Value::Object(map) = node else { return };
    f(map);
    for key in SINGLE {
        if let Some(child @ Value::Object(_)) = map.get_mut(key) {
            visit(child, depth + 1, f);
        }
    }
    for key in LISTS {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            for child in children {
                visit(child, depth + 1, f);
            }
        }
    }
    for key in MAPS {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            // `dependencies` also holds arrays of names (the old `dependentRequired`); `visit`
            // skips anything that is not an object.
            for child in children.values_mut() {
                visit(child, depth + 1, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn marks(mut schema: Value) -> Value {
        for_each_schema_mut(&mut schema, &mut |node| {
            node.insert("seen".into(), json!(true));
        });
        schema
    }

    #[test]
    fn visits_subschemas_of_every_applicator() {
        let schema = json!({
            "properties": {"a": {}},
            "items": [{}],
            "anyOf": [{}],
            "not": {},
            "$defs": {"d": {}},
            "dependencies": {"x": ["y"], "z": {}}
        });
        let seen = marks(schema);
        for pointer in [
            "",
            "/properties/a",
            "/items/0",
            "/anyOf/0",
            "/not",
            "/$defs/d",
            "/dependencies/z",
        ] {
            assert_eq!(
                seen.pointer(&format!("{pointer}/seen")),
                Some(&json!(true)),
                "{pointer}"
            );
        }
        assert_eq!(seen.pointer("/dependencies/x"), Some(&json!(["y"])));
    }

    #[test]
    fn leaves_data_alone() {
        let schema = json!({"enum": [{"pattern": "^x$"}], "default": {"a": {}}, "const": {}});
        let seen = marks(schema);
        assert_eq!(seen["enum"], json!([{"pattern": "^x$"}]));
        assert_eq!(seen["default"], json!({"a": {}}));
        assert_eq!(seen["const"], json!({}));
    }

    #[test]
    fn stops_at_the_depth_limit() {
        let mut schema = json!({});
        for _ in 0..MAX_DEPTH + 10 {
            schema = json!({"not": schema});
        }
        let mut count = 0;
        for_each_schema_mut(&mut schema, &mut |_| count += 1);
        assert_eq!(count, MAX_DEPTH + 1);
    }
}
