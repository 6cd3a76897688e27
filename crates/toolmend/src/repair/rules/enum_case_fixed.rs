//! `enum_case_fixed`: an `enum` member spelled with other case or separators.
//!
//! **Detects:** a string not in the `enum` that equals exactly one string member once case and
//! `-` / `_` / space are ignored (`"In Progress"` for `in_progress`).
//!
//! **Does:** replaces it with that member.
//!
//! **Never fires when:** no member or several members match.
//!
//! **Example:** `{"status": "In-Progress"}` → `{"status": "in_progress"}`.

use serde_json::Value;

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct EnumCaseFixed;

impl Rule for EnumCaseFixed {
    fn kind(&self) -> RepairKind {
        RepairKind::EnumCaseFixed
    }

    fn triggers(&self) -> Keywords {
        Keywords::ENUM.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::String(text) = site.value else {
            return None;
        };
        let wanted = fold(text);
        let members = site.view.enum_values();
        if members.iter().any(|m| m.as_str() == Some(text)) {
            return None;
        }
        let mut matching = members
            .iter()
            .filter_map(|m| m.as_str())
            .filter(|m| fold(m) == wanted);
        let member = matching.next()?;
        if matching.any(|other| other != member) {
            return None;
        }
        Some(Fix::Replace(Value::String(member.to_owned())))
    }
}

fn fold(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::EnumCaseFixed as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "status": {"enum": ["pending", "in_progress", "completed"]},
            "mode": {"type": "string", "enum": ["a-b", "A_B"]}}})
    }

    #[test]
    fn fires_on_case_and_separator_variants() {
        assert_fires(
            schema(),
            r#"{"status": "In Progress"}"#,
            K,
            "/status",
            json!({"status": "in_progress"}),
        );
        assert_fires(
            schema(),
            r#"{"status": "COMPLETED"}"#,
            K,
            "/status",
            json!({"status": "completed"}),
        );
    }

    #[test]
    fn never_fires_on_zero_or_several_candidates() {
        assert_never_fires(schema(), r#"{"status": "done"}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"mode": "ab"}"#, K, Status::Invalid);
    }
}
