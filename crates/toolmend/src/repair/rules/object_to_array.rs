//! `object_to_array`: `{}` sent where an array is expected.
//!
//! **Detects:** an empty object where an array is expected.
//!
//! **Does:** an optional member is dropped (the weakest claim: the tool's default applies); a
//! required member or an array item becomes `[]` when `minItems` allows an empty array.
//!
//! **Never fires when:** the object is not empty (see `single_key_object_to_array`), an object
//! is allowed there, or `minItems` > 0 for a required field.
//!
//! **Example:** `{"path": "/a", "tags": {}}` → `{"path": "/a"}`.

use serde_json::Value;

use super::{Fix, Place, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ObjectToArray;

impl Rule for ObjectToArray {
    fn kind(&self) -> RepairKind {
        RepairKind::ObjectToArray
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        if !map.is_empty() || !site.wants_array_instead() {
            return None;
        }
        match site.place {
            Place::Member {
                required: false, ..
            } => Some(Fix::Remove),
            Place::Member { required: true, .. } | Place::Item if site.view.min_items() == 0 => {
                Some(Fix::Replace(Value::Array(Vec::new())))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::ObjectToArray as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["todos"], "properties": {
            "todos": {"type": "array"}, "tags": {"type": "array"},
            "ids": {"type": "array", "minItems": 1}}})
    }

    #[test]
    fn drops_optional_and_empties_required() {
        assert_fires(
            schema(),
            r#"{"todos": [], "tags": {}}"#,
            K,
            "/tags",
            json!({"todos": []}),
        );
        assert_fires(
            schema(),
            r#"{"todos": {}}"#,
            K,
            "/todos",
            json!({"todos": []}),
        );
    }

    #[test]
    fn never_fires_on_non_empty_objects_or_min_items() {
        assert_never_fires(
            schema(),
            r#"{"todos": {"a": 1, "b": 2}}"#,
            K,
            Status::Invalid,
        );
        let required_min = json!({"type": "object", "required": ["ids"],
            "properties": {"ids": {"type": "array", "minItems": 1}}});
        assert_never_fires(required_min, r#"{"ids": {}}"#, K, Status::Invalid);
    }
}
