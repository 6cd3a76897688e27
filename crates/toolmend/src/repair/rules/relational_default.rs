//! `relational_default` (opt-in hint rule): a declared field group sent incomplete.
//!
//! **Detects:** a tool-level `relational` group (`{"fields": ["offset", "limit"], "default":
//! {…}}`) of which some but not all fields are present at the root.
//!
//! **Does:** fills each missing field that has a default, and produces a `Note:` for the model
//! saying which value was assumed. Runs even when the call validates: the author declared it.
//!
//! **Never fires when:** all or none of the group's fields are present, or the missing field has
//! no (non-null) default.
//!
//! **Example:** `{"path": "/a", "offset": 10}` with defaults `{"offset": 0, "limit": 2000}` →
//! `{"path": "/a", "offset": 10, "limit": 2000}`.

use serde_json::Value;

use crate::pointer;
use crate::prepare::RelationalGroup;
use crate::{Repair, RepairKind};

/// Completes every partially present group of `value`; returns one note per filled field.
pub(crate) fn apply(
    value: &mut Value,
    groups: &[RelationalGroup],
    out: &mut Vec<Repair>,
) -> Vec<String> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for group in groups {
        let present = group.fields.iter().filter(|f| map.contains_key(*f)).count();
        if present == 0 || present == group.fields.len() {
            continue;
        }
        for field in &group.fields {
            if map.contains_key(field) {
                continue;
            }
            let Some(default) = group.defaults.get(field) else {
                continue;
            };
            map.insert(field.clone(), default.clone());
            let mut at = String::new();
            pointer::push(&mut at, field);
            out.push(Repair::new(RepairKind::RelationalDefault, at));
            notes.push(format!(
                "Note: `{field}` was not sent with the rest of its group and was set to its default {default}."
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::mend;
    use crate::Status;

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
            "x-toolmend": {"relational": [{"fields": ["offset", "limit"], "default": {"offset": 0, "limit": 2000}}]}})
    }

    #[test]
    fn fills_a_partial_group() {
        let (status, value, repairs) = mend(schema(), r#"{"path": "/a", "offset": 10}"#);
        assert_eq!(status, Status::Repaired);
        assert_eq!(
            value,
            Some(json!({"path": "/a", "offset": 10, "limit": 2000}))
        );
        assert_eq!(repairs, ["relational_default@/limit"]);
    }

    #[test]
    fn leaves_complete_and_absent_groups() {
        for args in [
            r#"{"path": "/a"}"#,
            r#"{"path": "/a", "offset": 1, "limit": 2}"#,
        ] {
            let (status, _, repairs) = mend(schema(), args);
            assert_eq!((status, repairs.len()), (Status::Valid, 0), "{args}");
        }
    }
}
