//! `null_stripped`: `null` sent for an optional field that does not allow null.
//!
//! **Detects:** a `null` member value at a failing path, where the schema does not allow null
//! and the parent does not require the field.
//!
//! **Does:** drops the key, so the tool's default applies.
//!
//! **Never fires when:** the field is required (the call is invalid and the message names it),
//! null is allowed (then it validated and no rule runs), or the null is an array item (dropping
//! it would shift the other items).
//!
//! **Example:** `{"path": "/a", "limit": null}` → `{"path": "/a"}`.

use super::{Fix, Place, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct NullStripped;

impl Rule for NullStripped {
    fn kind(&self) -> RepairKind {
        RepairKind::NullStripped
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES).or(Keywords::ENUM)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Place::Member {
            required: false, ..
        } = site.place
        else {
            return None;
        };
        (site.value.is_null() && !site.view.allows_null()).then_some(Fix::Remove)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::NullStripped as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"}, "limit": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"]},
            "edits": {"type": "array", "items": {"type": "object", "properties": {"old": {"type": "string"}}}}}})
    }

    #[test]
    fn fires_on_optional_nulls_at_any_depth() {
        assert_fires(
            schema(),
            r#"{"path": "/a", "limit": null}"#,
            K,
            "/limit",
            json!({"path": "/a"}),
        );
        assert_fires(
            schema(),
            r#"{"path": "/a", "edits": [{"old": null}]}"#,
            K,
            "/edits/0/old",
            json!({"path": "/a", "edits": [{}]}),
        );
    }

    #[test]
    fn never_fires_on_required_nullable_or_items() {
        assert_never_fires(schema(), r#"{"path": null}"#, K, Status::Invalid);
        assert_never_fires(
            schema(),
            r#"{"path": "/a", "note": null}"#,
            K,
            Status::Valid,
        );
        assert_never_fires(
            schema(),
            r#"{"path": "/a", "tags": ["x", null]}"#,
            K,
            Status::Invalid,
        );
    }
}
