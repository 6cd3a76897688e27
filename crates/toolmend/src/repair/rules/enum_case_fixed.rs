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
        let wanted: String = fold(text).collect();
        // A wide `enum` (the only one here) is looked up in its index, built once per tool:
        // comparing every member with every failing item cost enum × items (4,096 members ×
        // 2,000 items: 2.5 s a call).
        if let Some(index) = site.view.only_enum().and_then(|m| site.tool.folded_enum(m)) {
            return match index.get(&wanted) {
                Some(&Folded::One(member)) => {
                    let member = index_member(site.view.only_enum()?, member)?;
                    (member != text).then(|| Fix::Replace(Value::String(member.to_owned())))
                }
                _ => None,
            };
        }
        let members = site.view.enum_values();
        if members.iter().any(|m| m.as_str() == Some(text)) {
            return None;
        }
        // Members are folded lazily and compared as they fold, without a string each: a
        // wide `enum` over many failing items compared (and allocated) enum × items
        // (4,096 members × 2,000 items: 2.5 s a call).
        let mut matching = members
            .iter()
            .filter_map(|m| m.as_str())
            .filter(|m| fold(m).eq(wanted.chars()));
        let member = matching.next()?;
        if matching.any(|other| other != member) {
            return None;
        }
        Some(Fix::Replace(Value::String(member.to_owned())))
    }
}

/// Fewest members an `enum` needs to get an index ([`FoldedEnum`]); smaller ones are scanned.
pub(crate) const INDEXED_ENUM_MEMBERS: usize = 64;

/// What a folded spelling stands for in one `enum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Folded {
    /// The string member at that position (and any repeat of it).
    One(usize),
    /// Several different members.
    Several,
}

/// The string members of one `enum` by folded spelling, built once when the tool set is built.
pub(crate) type FoldedEnum = std::collections::HashMap<String, Folded>;

/// The index of a wide `enum`'s string members.
pub(crate) fn index(members: &[Value]) -> FoldedEnum {
    let mut index = FoldedEnum::new();
    for (position, member) in members.iter().enumerate() {
        let Some(text) = member.as_str() else {
            continue;
        };
        index
            .entry(fold(text).collect())
            .and_modify(|seen| {
                if let Folded::One(first) = *seen
                    && members[first].as_str() != Some(text)
                {
                    *seen = Folded::Several;
                }
            })
            .or_insert(Folded::One(position));
    }
    index
}

fn index_member(members: &[Value], position: usize) -> Option<&str> {
    members.get(position)?.as_str()
}

/// `text` without case and `-` / `_` / space, as it is read.
fn fold(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
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

    /// An `enum` wide enough to be indexed answers as a scanned one: the same member, none
    /// for several candidates, and every failing item of an array.
    #[test]
    fn a_wide_enum_answers_from_its_index() {
        let mut members: Vec<String> = (0..super::INDEXED_ENUM_MEMBERS)
            .map(|i| format!("v{i}"))
            .collect();
        members.extend([
            "in_progress".into(),
            "a-b".into(),
            "A_B".into(),
            "v1".into(),
        ]);
        let schema = json!({"type": "object", "properties": {
            "status": {"enum": members}, "list": {"type": "array", "items": {"enum": members}}}});
        assert_fires(
            schema.clone(),
            r#"{"status": "In Progress"}"#,
            K,
            "/status",
            json!({"status": "in_progress"}),
        );
        assert_fires(
            schema.clone(),
            r#"{"status": "V-1"}"#,
            K,
            "/status",
            json!({"status": "v1"}),
        );
        assert_never_fires(schema.clone(), r#"{"status": "ab"}"#, K, Status::Invalid);
        assert_never_fires(schema.clone(), r#"{"status": "done"}"#, K, Status::Invalid);
        let (status, value, _) =
            super::super::testing::mend(schema, r#"{"list": ["V_2", "IN PROGRESS"]}"#);
        assert_eq!(status, Status::Repaired);
        assert_eq!(value, Some(json!({"list": ["v2", "in_progress"]})));
    }

    #[test]
    fn never_fires_on_zero_or_several_candidates() {
        assert_never_fires(schema(), r#"{"status": "done"}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"mode": "ab"}"#, K, Status::Invalid);
    }
}
