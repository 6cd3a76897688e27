//! `strict_null_filled`: an omitted member of a strict-style object whose type admits `null`.
//!
//! In strict function calling every property is required, and `null` is how an optional one
//! says "not given" (`"type": ["string", "null"]`, or `anyOf` with `{"type": "null"}`). A model
//! that omits such a member meant exactly that; the schema calls the call invalid and blocks
//! every other repair of it.
//!
//! **Detects:** at an object whose schema is strict-style (`additionalProperties: false`, every
//! declared property required), a required property reported missing whose schema allows
//! `null` and declares no `default` (that is `strict_default_filled`'s).
//!
//! **Does:** adds the member as `null`, after the other members; each one is its own repair at
//! the member's path, with a note for the model.
//!
//! **Never fires when:** the schema is not strict-style, the property does not allow null, or
//! it is not declared. It runs after `field_renamed` and `unflattened`, so a member sent under
//! an alias or dotted is moved, not shadowed by a null.
//!
//! **Example:** `{"path": "/a"}` with `note: {"type": ["string", "null"]}` required →
//! `{"path": "/a", "note": null}`.

use serde_json::Value;

use super::{Fix, Rule, Site, strict_fill};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct StrictNullFilled;

impl Rule for StrictNullFilled {
    fn kind(&self) -> RepairKind {
        RepairKind::StrictNullFilled
    }

    fn triggers(&self) -> Keywords {
        Keywords::REQUIRED
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        strict_fill(site, |view| {
            (view.declared_default().is_none() && view.allows_null()).then_some(Value::Null)
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::StrictNullFilled as K, Status};

    fn strict() -> Value {
        json!({"type": "object", "additionalProperties": false,
            "required": ["path", "note", "tag"], "properties": {
            "path": {"type": "string"},
            "note": {"type": ["string", "null"]},
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}]}}})
    }

    #[test]
    fn fills_null_where_the_type_admits_it() {
        assert_fires(
            strict(),
            r#"{"path": "/a", "tag": "x"}"#,
            K,
            "/note",
            json!({"path": "/a", "tag": "x", "note": null}),
        );
        assert_fires(
            strict(),
            r#"{"path": "/a", "note": "n"}"#,
            K,
            "/tag",
            json!({"path": "/a", "note": "n", "tag": null}),
        );
    }

    #[test]
    fn lets_a_rename_in_the_same_call_through() {
        // The OpenAI Agents SDK's shape: an alias of `path` and an omitted nullable.
        let (status, value, repairs) = mend(strict(), r#"{"file_path": "/a", "tag": "x"}"#);
        assert_eq!(status, Status::Repaired, "{repairs:?}");
        assert_eq!(value, Some(json!({"path": "/a", "tag": "x", "note": null})));
        assert_eq!(repairs, ["field_renamed@", "strict_null_filled@/note"]);
    }

    #[test]
    fn never_fires_on_non_nullable_or_outside_strict_style() {
        // `path` does not admit null: it is never invented.
        assert_never_fires(
            strict(),
            r#"{"note": null, "tag": null}"#,
            K,
            Status::Invalid,
        );
        let mut open = strict();
        open.as_object_mut().unwrap().remove("additionalProperties");
        assert_never_fires(open, r#"{"path": "/a", "tag": "x"}"#, K, Status::Invalid);
        // An unknown key beside the omitted member keeps the call invalid.
        let (status, _, _) = mend(strict(), r#"{"path": "/a", "tag": "x", "nota": "n"}"#);
        assert_eq!(status, Status::Invalid);
    }
}
