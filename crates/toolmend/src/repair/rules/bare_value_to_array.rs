//! `bare_value_to_array`: one item sent bare where an array of such items is expected.
//!
//! **Detects:** a string, number or boolean where an array is expected, when items of the
//! value's type are allowed.
//!
//! **Does:** wraps it: `"a"` → `["a"]`. When the items want another scalar type that the value
//! converts to without loss, the wrap comes first and `scalar_coerced` converts the item in the
//! next round: `"5"` for an array of integers → `["5"]` → `[5]`.
//!
//! **Never fires when:** the string looks like an array but did not parse (it starts with `[`,
//! ends with `]` or holds a code fence: `"[a, b]"`, a cut-off `"[\"a\", \"b\""`): that is a
//! malformed array, and wrapping it would silently corrupt it; the call is invalid instead. Also
//! not when the items may not be of the value's type and the value does not convert losslessly
//! to it (`"5x"` for an array of integers).
//!
//! **Example:** `{"paths": "src/main.rs"}` → `{"paths": ["src/main.rs"]}`.

use serde_json::Value;

use super::{Fix, Rule, Site, scalar_coerced};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct BareValueToArray;

impl Rule for BareValueToArray {
    fn kind(&self) -> RepairKind {
        RepairKind::BareValueToArray
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        match site.value {
            Value::String(text) => {
                let trimmed = text.trim();
                // A broken, cut-off or fenced array is never wrapped as one item.
                if trimmed.starts_with('[') || trimmed.ends_with(']') || trimmed.contains("```") {
                    return None;
                }
            }
            Value::Number(_) | Value::Bool(_) => {}
            _ => return None,
        }
        if !site.wants_array_instead() {
            return None;
        }
        // The item may be of the value's type, or become one by a lossless coercion that the
        // next round makes (`"5"` for an array of integers: `["5"]`, then `[5]`).
        let items = site.view.item(0);
        if items.is_some_and(|items| {
            !items.allows(Types::of(site.value))
                && scalar_coerced::coerce(site.value, &items).is_none()
        }) {
            return None;
        }
        Some(Fix::Replace(Value::Array(vec![site.value.clone()])))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::BareValueToArray as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "ratios": {"type": "array", "items": {"type": "number"}}}})
    }

    #[test]
    fn fires_on_bare_primitives() {
        assert_fires(
            schema(),
            r#"{"paths": "src/main.rs"}"#,
            K,
            "/paths",
            json!({"paths": ["src/main.rs"]}),
        );
        assert_fires(schema(), r#"{"ids": 7}"#, K, "/ids", json!({"ids": [7]}));
    }

    #[test]
    fn never_wraps_a_malformed_array_or_a_wrong_item_type() {
        for args in [
            r#"{"paths": "[a, b]"}"#,
            r#"{"paths": "[\"a.rs\", \"b.rs\""}"#,
            r#"{"paths": "[a.rs, b.rs"}"#,
            r#"{"paths": "a.rs, b.rs]"}"#,
            r#"{"paths": "```\na.rs\n```"}"#,
        ] {
            assert_never_fires(schema(), args, K, Status::Invalid);
        }
        assert_never_fires(schema(), r#"{"ids": true}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"ids": "5x"}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"ids": "007"}"#, K, Status::Invalid);
    }

    #[test]
    fn composes_with_scalar_coercion_of_the_item() {
        for (args, expected) in [
            (r#"{"ids": "5"}"#, json!({"ids": [5]})),
            (r#"{"ratios": "42"}"#, json!({"ratios": [42]})),
        ] {
            let (status, value, repairs) = mend(schema(), args);
            assert_eq!(status, Status::Repaired, "{args}");
            assert_eq!(value, Some(expected), "{args}");
            let path = if args.contains("ids") {
                "/ids"
            } else {
                "/ratios"
            };
            assert_eq!(
                repairs,
                [
                    format!("bare_value_to_array@{path}"),
                    format!("scalar_coerced@{path}/0")
                ],
                "{args}"
            );
        }
    }
}
