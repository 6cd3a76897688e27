//! `root_string_wrapped`: the whole arguments are a plain string for a one-field tool.
//!
//! **Detects:** at the root, a JSON string that holds no object (`"ls -la"`), when the schema
//! has exactly one required property and it is of type string. Argument text that is not JSON
//! at all (`ls -la` unquoted, prose, `NaN`) is a syntax error and never reaches this rule.
//!
//! **Does:** wraps it: `"ls -la"` → `{"command": "ls -la"}`.
//!
//! **Never fires when:** the schema has no or several required properties, the one required
//! property is not a string, or the text looks like broken JSON (starts with `{` or `[`): a
//! cut-off object must never become the value of a field, or the string holds a code fence.
//!
//! **Example:** `"ls -la"` for `bash {command}` → `{"command": "ls -la"}`.

use serde_json::{Map, Value};

use super::{Fix, Place, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct RootStringWrapped;

impl Rule for RootStringWrapped {
    fn kind(&self) -> RepairKind {
        RepairKind::RootStringWrapped
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let (Place::Root, Value::String(text)) = (site.place, site.value) else {
            return None;
        };
        if text.trim_start().starts_with(['{', '[']) || text.contains("```") {
            return None;
        }
        let mut required: Vec<&str> = site.view.required_names().collect();
        required.sort_unstable();
        required.dedup();
        let [field] = required[..] else { return None };
        let field_view = site.view.property(field)?;
        if field_view.types() != Types::STRING {
            return None;
        }
        let mut map = Map::new();
        map.insert(field.to_owned(), site.value.clone());
        Some(Fix::Replace(Value::Object(map)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::RootStringWrapped as K, Status};

    fn bash() -> serde_json::Value {
        json!({"type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}, "timeout": {"type": "integer"}}})
    }

    #[test]
    fn fires_on_json_strings() {
        assert_fires(bash(), r#""ls -la""#, K, "", json!({"command": "ls -la"}));
    }

    #[test]
    fn never_fires_on_text_that_is_not_json_or_holds_a_fence() {
        for args in [
            "ls -la",
            "Here is the call: ls",
            "NaN",
            "```json\n```",
            r#""```bash\nls\n```""#,
        ] {
            assert_never_fires(bash(), args, K, Status::Invalid);
        }
    }

    #[test]
    fn never_fires_for_other_schemas_or_broken_json() {
        let two = json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string"}, "b": {"type": "string"}}});
        assert_never_fires(two, "ls", K, Status::Invalid);
        let int =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        assert_never_fires(int, "ls", K, Status::Invalid);
        assert_never_fires(bash(), r#"{"command": "ls"#, K, Status::Invalid);
    }
}
