//! `anchor_stripped`: regex anchors that bled from a schema `pattern` into the value.
//!
//! Some models (Kimi K2, MiniMax, GLM) copy the `^`…`$` of a `pattern` into the value they send.
//!
//! **Detects:** a string failing its `pattern` that passes every `pattern` of the field once a
//! leading `^` and/or a trailing `$` is removed.
//!
//! **Does:** replaces it with the stripped string.
//!
//! **Never fires when:** the field has no `pattern` (grep patterns and other regex arguments
//! keep their anchors), the stripped value still fails, the field is tagged regex, command or
//! content, or a pattern does not compile under the linear-time engine.
//!
//! **Example:** `{"id": "^abc-123$"}` with `pattern: "^[a-z]+-[0-9]+$"` → `{"id": "abc-123"}`.

use serde_json::Value;

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct AnchorStripped;

impl Rule for AnchorStripped {
    fn kind(&self) -> RepairKind {
        RepairKind::AnchorStripped
    }

    fn triggers(&self) -> Keywords {
        Keywords::PATTERN
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::String(text) = site.value else {
            return None;
        };
        if site.is_verbatim() {
            return None;
        }
        let stripped = text.strip_prefix('^').unwrap_or(text);
        let stripped = stripped.strip_suffix('$').unwrap_or(stripped);
        let patterns = site.view.patterns();
        if stripped.len() == text.len() || patterns.is_empty() {
            return None;
        }
        for pattern in patterns {
            // Compiled with the tool; a pattern past the per-tool cap is compiled here.
            let fresh;
            let regex = match site.tool.pattern(pattern) {
                Some(regex) => regex,
                None => {
                    fresh = regex::RegexBuilder::new(pattern)
                        .size_limit(crate::prepare::REGEX_SIZE_LIMIT)
                        .build()
                        .ok()?;
                    &fresh
                }
            };
            if !regex.is_match(stripped) {
                return None;
            }
        }
        Some(Fix::Replace(Value::String(stripped.to_owned())))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::AnchorStripped as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "id": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"},
            "grep": {"type": "string"}}})
    }

    #[test]
    fn fires_on_bled_anchors() {
        assert_fires(
            schema(),
            r#"{"id": "^abc-123$"}"#,
            K,
            "/id",
            json!({"id": "abc-123"}),
        );
        assert_fires(
            schema(),
            r#"{"id": "abc-123$"}"#,
            K,
            "/id",
            json!({"id": "abc-123"}),
        );
    }

    #[test]
    fn never_fires_without_a_pattern_or_when_still_failing() {
        assert_never_fires(schema(), r#"{"grep": "^fn main$"}"#, K, Status::Valid);
        assert_never_fires(schema(), r#"{"id": "^ABC$"}"#, K, Status::Invalid);
    }
}
