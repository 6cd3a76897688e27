//! `json_string_to_object`: an object sent as a string of JSON (`"{\"a\":1}"`).
//!
//! **Detects:** a string where an object is expected (and a string is not allowed), whose
//! trimmed text is `{…}` and parses, strictly or by salvage, as an object.
//!
//! **Does:** replaces the string with the object.
//!
//! **Never fires when:** the text does not parse as an object, or a string is allowed there.
//!
//! **Example:** `{"headers": "{\"Accept\": \"json\"}"}` → `{"headers": {"Accept": "json"}}`.

use serde_json::Value;

use super::{Fix, Rule, Site, parse_embedded};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct JsonStringToObject;

impl Rule for JsonStringToObject {
    fn kind(&self) -> RepairKind {
        RepairKind::JsonStringToObject
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::String(text) = site.value else {
            return None;
        };
        if !site.view.allows(Types::OBJECT) || site.view.allows(Types::STRING) {
            return None;
        }
        parse_embedded(text, Types::OBJECT, site.limits).map(Fix::Replace)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::JsonStringToObject as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "body": {"type": "string"}}})
    }

    #[test]
    fn fires_on_stringified_objects() {
        assert_fires(
            schema(),
            r#"{"headers": "{\"Accept\": \"json\"}"}"#,
            K,
            "/headers",
            json!({"headers": {"Accept": "json"}}),
        );
    }

    #[test]
    fn never_fires_on_malformed_text_or_string_fields() {
        assert_never_fires(
            schema(),
            r#"{"headers": "Accept: json"}"#,
            K,
            Status::Invalid,
        );
        assert_never_fires(schema(), r#"{"body": "{\"a\": 1}"}"#, K, Status::Valid);
    }
}
