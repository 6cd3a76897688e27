//! `json_string_to_array`: an array sent as a string of JSON (`"[\"a\",\"b\"]"`).
//!
//! **Detects:** a string where an array is expected (and a string is not allowed), whose
//! trimmed text is `[…]` and parses, strictly or by salvage, as an array.
//!
//! **Does:** replaces the string with the array.
//!
//! **Never fires when:** the text does not parse as an array; then `bare_value_to_array`
//! refuses to wrap it either, and the call is invalid (a malformed `"[a, b]"` is never wrapped
//! as `["[a, b]"]`).
//!
//! **Example:** `{"paths": "[\"a\",\"b\"]"}` → `{"paths": ["a","b"]}`.

use serde_json::Value;

use super::{Fix, Rule, Site, parse_embedded};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct JsonStringToArray;

impl Rule for JsonStringToArray {
    fn kind(&self) -> RepairKind {
        RepairKind::JsonStringToArray
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::String(text) = site.value else {
            return None;
        };
        if !site.wants_array_instead() {
            return None;
        }
        parse_embedded(text, Types::ARRAY, site.limits).map(Fix::Replace)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::JsonStringToArray as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "name": {"type": "string"}}})
    }

    #[test]
    fn fires_on_stringified_arrays() {
        assert_fires(
            schema(),
            r#"{"paths": "[\"a\",\"b\"]"}"#,
            K,
            "/paths",
            json!({"paths": ["a", "b"]}),
        );
        assert_fires(
            schema(),
            r#"{"paths": " [] "}"#,
            K,
            "/paths",
            json!({"paths": []}),
        );
    }

    #[test]
    fn composes_with_scalar_coercion_of_the_items() {
        let schema = json!({"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "integer"}}}});
        let (status, value, repairs) = mend(schema, r#"{"ids": "[\"1\",\"2\"]"}"#);
        assert_eq!(status, Status::Repaired);
        assert_eq!(value, Some(json!({"ids": [1, 2]})));
        assert_eq!(
            repairs,
            [
                "json_string_to_array@/ids",
                "scalar_coerced@/ids/0",
                "scalar_coerced@/ids/1"
            ]
        );
    }

    #[test]
    fn never_fires_on_malformed_or_string_fields() {
        assert_never_fires(schema(), r#"{"paths": "[a, b]"}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"name": "[\"a\"]"}"#, K, Status::Valid);
    }
}
