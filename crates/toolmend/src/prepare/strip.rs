//! Stripping toolmend's own annotations from what is sent to the model.
//!
//! Hints are instructions to toolmend, not to the model (DESIGN §6): the model sees the contract
//! as prose in the description instead, and strict providers reject unknown keywords.

use serde_json::Value;

use super::hints::HINT_KEYS;
use super::walk::for_each_schema_mut;

/// The legacy single-key annotation of the seed (`"x-dirge-kind": "path"`).
const LEGACY_KIND_KEY: &str = "x-dirge-kind";

/// Removes `x-toolmend`, `dirge-hints` and `x-dirge-kind` from every subschema.
///
/// Only schema nodes are touched: a property that is itself *named* `x-toolmend` (a key of
/// `properties`) or data under `enum`/`default` keeps it. Returns whether anything was removed.
pub(crate) fn strip_hints(schema: &mut Value) -> bool {
    let mut changed = false;
    for_each_schema_mut(schema, &mut |node| {
        for key in HINT_KEYS.iter().copied().chain([LEGACY_KIND_KEY]) {
            changed |= node.shift_remove(key).is_some();
        }
    });
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn removes_hints_at_every_depth() {
        let mut schema = json!({
            "type": "object",
            "x-toolmend": {"contract": "c"},
            "dirge-hints": {"mutating": true},
            "properties": {
                "path": {"type": "string", "x-dirge-kind": "path"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {
                    "file": {"type": "string", "x-toolmend": {"semantic": "path"}}}}},
                "mode": {"anyOf": [{"type": "string", "dirge-hints": {}}]}
            }
        });
        assert!(strip_hints(&mut schema));
        let expected = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {
                    "file": {"type": "string"}}}},
                "mode": {"anyOf": [{"type": "string"}]}
            }
        });
        assert_eq!(schema, expected);
    }

    #[test]
    fn keeps_properties_and_data_that_share_the_names() {
        let mut schema = json!({"properties": {"x-toolmend": {"type": "string"}},
            "default": {"x-toolmend": 1}, "examples": [{"dirge-hints": 2}]});
        let before = schema.clone();
        assert!(!strip_hints(&mut schema));
        assert_eq!(schema, before);
    }
}
