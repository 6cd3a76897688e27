//! `strict_default_filled`: an omitted member of a strict-style object whose schema declares a
//! `default`.
//!
//! Strict function calling (OpenAI's `strict: true`, the OpenAI Agents SDK by default) requires
//! `additionalProperties: false` and *every* property in `required`; an optional parameter keeps
//! its `default` in the schema. A model that omits it sends a call the framework itself would
//! accept, but the schema calls it invalid, and then no other repair of the call is kept.
//!
//! **Detects:** at an object whose schema is strict-style (`additionalProperties: false`, every
//! declared property required), a required property reported missing whose schema declares
//! one `default`.
//!
//! **Does:** adds the member with that default (the schema's own value, not a guess), after the
//! other members; each one is its own repair at the member's path, with a note for the model.
//!
//! **Never fires when:** the schema is not strict-style (a required property there means the
//! caller must send it), the property declares no default (or parts disagree on it), or the
//! property is not declared. It runs after `field_renamed` and `unflattened`, so a member sent
//! under an alias or dotted is moved, not shadowed by its default.
//!
//! **Example:** `{"path": "/a"}` with `limit: {"type": "integer", "default": 100}` required →
//! `{"path": "/a", "limit": 100}`.

use super::{Fix, Rule, Site, strict_fill};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct StrictDefaultFilled;

impl Rule for StrictDefaultFilled {
    fn kind(&self) -> RepairKind {
        RepairKind::StrictDefaultFilled
    }

    fn triggers(&self) -> Keywords {
        Keywords::REQUIRED
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        strict_fill(site, |view| view.declared_default().cloned())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::StrictDefaultFilled as K, Status};

    fn strict() -> Value {
        json!({"type": "object", "additionalProperties": false,
            "required": ["path", "limit", "mode"], "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "default": 100},
            "mode": {"type": "string", "enum": ["a", "b"]}}})
    }

    #[test]
    fn fills_the_declared_default() {
        assert_fires(
            strict(),
            r#"{"path": "/a", "mode": "a"}"#,
            K,
            "/limit",
            json!({"path": "/a", "mode": "a", "limit": 100}),
        );
        // Nested strict objects too.
        let schema = json!({"type": "object", "additionalProperties": false,
            "required": ["opts"], "properties": {"opts": strict()}});
        assert_fires(
            schema,
            r#"{"opts": {"path": "/a", "mode": "b"}}"#,
            K,
            "/opts/limit",
            json!({"opts": {"path": "/a", "mode": "b", "limit": 100}}),
        );
    }

    #[test]
    fn never_fires_without_a_default_or_outside_strict_style() {
        // `mode` has no default: the call stays invalid, `limit` is not filled alone.
        assert_never_fires(strict(), r#"{"path": "/a"}"#, K, Status::Invalid);
        // Not strict-style (additionalProperties allowed): required means required.
        let mut open = strict();
        open["additionalProperties"] = json!(true);
        assert_never_fires(open, r#"{"path": "/a", "mode": "a"}"#, K, Status::Invalid);
        // Not every property required.
        let mut loose = strict();
        loose["properties"]["extra"] = json!({"type": "string"});
        assert_never_fires(loose, r#"{"path": "/a", "mode": "a"}"#, K, Status::Invalid);
        // A valid call is never touched.
        let (status, _, repairs) = mend(strict(), r#"{"path": "/a", "limit": 5, "mode": "a"}"#);
        assert_eq!((status, repairs.len()), (Status::Valid, 0));
    }
}
