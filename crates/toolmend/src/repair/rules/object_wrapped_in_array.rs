//! `object_wrapped_in_array`: one item object sent bare where an array of such objects is
//! expected.
//!
//! **Detects:** a non-empty object where an array is expected (and an object is not allowed),
//! when the object has the shape of an item: the items' schema declares properties, every key
//! of the object is one of them, and every property the items require is present. The commonest
//! array mistake of editing tools: `{"edits": {"old_string": …, "new_string": …}}`.
//!
//! **Does:** wraps it: `{…}` → `[{…}]`. Repairs inside the item (a coerced scalar, a stripped
//! null) follow in the next rounds, and the whole value must validate at the end.
//!
//! **Never fires when:** a key of the object is not an item property (`{"a": 1, "b": 2}` for an
//! array of `{path}` is a map, not an item), a required item property is missing, the items'
//! schema declares no properties (nothing shows the object is an item), or an object is allowed
//! there.
//!
//! **Example:** `{"edits": {"old_string": "a", "new_string": "b"}}` →
//! `{"edits": [{"old_string": "a", "new_string": "b"}]}`.

use serde_json::Value;

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ObjectWrappedInArray;

impl Rule for ObjectWrappedInArray {
    fn kind(&self) -> RepairKind {
        RepairKind::ObjectWrappedInArray
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        if map.is_empty() || !site.wants_array_instead() {
            return None;
        }
        let items = site.view.item(0)?;
        if !items.allows(Types::OBJECT) {
            return None;
        }
        let declared = items.declared_names();
        if declared.is_empty() || !map.keys().all(|k| declared.contains(&k.as_str())) {
            return None;
        }
        if !items.required_names().all(|name| map.contains_key(name)) {
            return None;
        }
        Some(Fix::Replace(Value::Array(vec![site.value.clone()])))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::ObjectWrappedInArray as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["path", "edits"], "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object",
                "required": ["old_string", "new_string"], "additionalProperties": false,
                "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean"}}}}}})
    }

    #[test]
    fn fires_on_an_item_sent_bare() {
        assert_fires(
            schema(),
            r#"{"path": "/a", "edits": {"old_string": "a", "new_string": "b"}}"#,
            K,
            "/edits",
            json!({"path": "/a", "edits": [{"old_string": "a", "new_string": "b"}]}),
        );
    }

    #[test]
    fn fires_inside_any_of_and_refs() {
        let schema = json!({"type": "object", "properties": {"children": {"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/block"}}, {"type": "string"}]}},
            "$defs": {"block": {"type": "object", "required": ["type"],
                "properties": {"type": {"type": "string"}, "text": {"type": "string"}}}}});
        assert_fires(
            schema,
            r#"{"children": {"type": "paragraph", "text": "hi"}}"#,
            K,
            "/children",
            json!({"children": [{"type": "paragraph", "text": "hi"}]}),
        );
    }

    #[test]
    fn composes_with_repairs_inside_the_item() {
        let (status, value, repairs) = mend(
            schema(),
            r#"{"path": "/a", "edits": {"old_string": "a", "new_string": "b", "replace_all": "true"}}"#,
        );
        assert_eq!(status, Status::Repaired);
        assert_eq!(
            value.unwrap()["edits"],
            json!([{"old_string": "a", "new_string": "b", "replace_all": true}])
        );
        assert_eq!(
            repairs,
            [
                "object_wrapped_in_array@/edits",
                "scalar_coerced@/edits/0/replace_all"
            ]
        );
    }

    #[test]
    fn never_fires_on_maps_or_incomplete_items() {
        for args in [
            // A key that is not an item property: a map, not an item.
            r#"{"path": "/a", "edits": {"old_string": "a", "new_string": "b", "x": 1}}"#,
            // A required item property is missing.
            r#"{"path": "/a", "edits": {"old_string": "a"}}"#,
        ] {
            assert_never_fires(schema(), args, K, Status::Invalid);
        }
        let untyped_items = json!({"type": "object", "properties": {
            "todos": {"type": "array", "items": {"type": "object"}}}});
        assert_never_fires(untyped_items, r#"{"todos": {"a": 1}}"#, K, Status::Invalid);
        let object_allowed = json!({"type": "object", "properties": {"x": {"anyOf": [
            {"type": "array", "items": {"type": "object", "properties": {"a": {}}}},
            {"type": "object"}]}}});
        assert_never_fires(object_allowed, r#"{"x": {"a": 1}}"#, K, Status::Valid);
    }
}
