//! Tells a schema that accepts every JSON object and nothing else (`{"type": "object"}`, with
//! at most annotations and an empty `properties`), so that a call of its tool is checked by its
//! type alone, without running the validator (issue #31: ~100 instructions on a ~100-byte call).
//!
//! It must not fire on a schema with any keyword that could refuse an object: every keyword
//! outside the short list below (a `required`, an `additionalProperties`, a `$ref`, a
//! `properties` with a member, anything unknown) leaves the schema to the validator, which
//! then answers as before. The answer is the validator's for every value either way: an object
//! validates, anything else does not.

use serde_json::Value;

/// Keywords that never refuse a value: annotations, and the draft a schema is written in
/// (`type: "object"` means the same in every draft).
const ANNOTATIONS: [&str; 5] = ["title", "description", "$comment", "$schema", "examples"];

/// Whether `schema` is `{"type": "object"}` with nothing that could refuse an object: beside
/// `type`, only [`ANNOTATIONS`] and an empty `properties`.
pub(crate) fn accepts_every_object(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type").and_then(Value::as_str) == Some("object")
        && map.iter().all(|(key, value)| match key.as_str() {
            "type" => true,
            "properties" => value.as_object().is_some_and(serde_json::Map::is_empty),
            key => ANNOTATIONS.contains(&key),
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_schema_that_refuses_no_object_is_open() {
        for open in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}, "description": "no arguments"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        ] {
            assert!(accepts_every_object(&open), "{open}");
        }
        for closed in [
            json!({}),
            json!(true),
            json!({"type": ["object", "null"]}),
            json!({"type": "object", "required": []}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"type": "object", "additionalProperties": false}),
            json!({"type": "object", "maxProperties": 0}),
            json!({"type": "object", "$ref": "#/definitions/x"}),
            json!({"type": "object", "properties": []}),
            json!({"type": "string"}),
        ] {
            assert!(!accepts_every_object(&closed), "{closed}");
        }
    }

    #[test]
    fn an_open_schema_agrees_with_its_validator() {
        let schema = json!({"type": "object", "properties": {}, "title": "t"});
        let validator = jsonschema::validator_for(&schema).expect("compiles");
        for value in [
            json!({}),
            json!({"a": [1, {"b": null}]}),
            json!([]),
            json!("{}"),
            json!(null),
            json!(1),
        ] {
            assert_eq!(validator.is_valid(&value), value.is_object(), "{value}");
        }
    }
}
