//! `unflattened`: nested parameters arrived as dotted keys (`"a.b": 1`).
//!
//! Models shown a flattened schema (`prepare`, DESIGN §7) answer with dot-notation keys; some
//! models do it unprompted.
//!
//! **Detects:** at a failing object, an undeclared key with unescaped dots whose segments each
//! name a declared property, level by level, in the schema (`\.` escapes a dot that belongs to a
//! name).
//!
//! **Does:** re-nests the value under those properties, merging with objects already present.
//!
//! **Never fires when:** the dotted key is itself a declared property, a segment is not
//! declared, or the nested place is already taken by a value.
//!
//! **Example:** `{"options.depth": 2}` → `{"options": {"depth": 2}}`.

use serde_json::Value;

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::prepare::unflatten;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Unflattened;

impl Rule for Unflattened {
    fn kind(&self) -> RepairKind {
        RepairKind::Unflattened
    }

    fn triggers(&self) -> Keywords {
        Keywords::REQUIRED.or(Keywords::ADDITIONAL)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        let schema = site.view.object_schema()?;
        // A conflict (two keys for one field) is left for the validator to report.
        let nested = unflatten(map, schema).ok()??;
        Some(Fix::Replace(Value::Object(nested)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::Unflattened as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["options"], "additionalProperties": false, "properties": {
            "options": {"type": "object", "properties": {
                "depth": {"type": "integer"}, "mode": {"type": "string"}}}}})
    }

    #[test]
    fn fires_on_dotted_keys_and_merges() {
        assert_fires(
            schema(),
            r#"{"options.depth": 2, "options.mode": "x"}"#,
            K,
            "",
            json!({"options": {"depth": 2, "mode": "x"}}),
        );
        assert_fires(
            schema(),
            r#"{"options": {"mode": "x"}, "options.depth": 2}"#,
            K,
            "",
            json!({"options": {"mode": "x", "depth": 2}}),
        );
    }

    #[test]
    fn fires_through_a_ref() {
        let schema = json!({"type": "object", "required": ["o"], "properties": {"o": {"$ref": "#/$defs/o"}},
            "$defs": {"o": {"type": "object", "required": ["a"], "properties": {"a": {"type": "object",
                "required": ["b"], "properties": {"b": {"type": "integer"}}}}}}});
        assert_fires(
            schema,
            r#"{"o": {"a.b": 1}}"#,
            K,
            "/o",
            json!({"o": {"a": {"b": 1}}}),
        );
    }

    #[test]
    fn never_fires_on_undeclared_segments_or_conflicts() {
        assert_never_fires(schema(), r#"{"options.width": 2}"#, K, Status::Invalid);
        assert_never_fires(
            schema(),
            r#"{"options": {"depth": 1}, "options.depth": 2}"#,
            K,
            Status::Invalid,
        );
    }

    #[test]
    fn never_fires_on_a_declared_dotted_name() {
        let schema = json!({"type": "object", "required": ["a.b"], "properties": {
            "a.b": {"type": "integer"}, "a": {"type": "object", "properties": {"b": {"type": "integer"}}}}});
        assert_never_fires(schema, r#"{"a.b": "x"}"#, K, Status::Invalid);
    }
}

#[cfg(test)]
mod prepared {
    use serde_json::json;

    use crate::{Mender, PrepareOptions, Status, ToolSet};

    #[test]
    fn a_prepared_flattened_tool_is_renested_even_when_open() {
        // Open schema, deep enough to be flattened: the dotted keys would validate as they are.
        let tools = json!([{"name": "t", "parameters": {"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "object", "properties": {
                "c": {"type": "integer"}}}}}}}}]);
        let mut set = ToolSet::from_json(&tools);
        set.mark_prepared(&PrepareOptions::default());
        assert!(set.get("t").unwrap().is_flattened());
        let call = Mender::new(set).repair_call("t", r#"{"a.b.c": 1}"#);
        assert_eq!(call.status, Status::Repaired);
        assert_eq!(call.arguments_text, r#"{"a":{"b":{"c":1}}}"#);
        // Unprepared, the same open schema takes the call as valid.
        let plain = Mender::new(ToolSet::from_json(&tools)).repair_call("t", r#"{"a.b.c": 1}"#);
        assert_eq!(plain.status, Status::Valid);
    }
}
