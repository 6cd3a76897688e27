//! `arguments_unwrapped`: the arguments came wrapped in a call envelope.
//!
//! **Detects:** at the root, an object `{"name": <this tool>, "arguments"|"parameters"|"input": {…}}`
//! (optionally with `id` / `type`), or a sole `{"arguments": {…}}` wrapper. The inner value may
//! also be a string holding the object, as OpenAI envelopes carry it.
//!
//! **Does:** replaces the root with the inner object.
//!
//! **Never fires when:** the tool's schema declares the wrapper key that was sent (a tool with
//! an `input` property still has an `arguments` envelope unwrapped) or `name` names another
//! tool.
//!
//! **Example:** `{"name": "read", "arguments": {"path": "/a"}}` → `{"path": "/a"}`.

use serde_json::Value;

use super::{Fix, Place, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

const WRAPPERS: [&str; 3] = ["arguments", "parameters", "input"];

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ArgumentsUnwrapped;

impl Rule for ArgumentsUnwrapped {
    fn kind(&self) -> RepairKind {
        RepairKind::ArgumentsUnwrapped
    }

    fn triggers(&self) -> Keywords {
        Keywords::REQUIRED.or(Keywords::ADDITIONAL)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let (Place::Root, Value::Object(map)) = (site.place, site.value) else {
            return None;
        };
        let wrapper = WRAPPERS.iter().find(|w| map.contains_key(**w))?;
        // Only the wrapper actually sent matters: a tool declaring `input` still has its
        // `{"name": …, "arguments": {…}}` envelope unwrapped.
        if site.view.declares(wrapper) {
            return None;
        }
        let named = match map.get("name") {
            None => map.len() == 1,
            Some(Value::String(name)) => {
                name == site.tool.name()
                    && map
                        .keys()
                        .all(|k| k == "name" || k == wrapper || k == "id" || k == "type")
            }
            Some(_) => false,
        };
        if !named {
            return None;
        }
        match &map[*wrapper] {
            inner @ Value::Object(_) => Some(Fix::Replace(inner.clone())),
            Value::String(text) => match serde_json::from_str::<Value>(text.trim()) {
                Ok(inner @ Value::Object(_)) => Some(Fix::Replace(inner)),
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::ArgumentsUnwrapped as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}})
    }

    #[test]
    fn fires_on_named_envelopes() {
        for args in [
            r#"{"name": "t", "arguments": {"path": "/a"}}"#,
            r#"{"name": "t", "parameters": {"path": "/a"}}"#,
            r#"{"type": "function", "name": "t", "input": {"path": "/a"}}"#,
            r#"{"arguments": {"path": "/a"}}"#,
            r#"{"name": "t", "arguments": "{\"path\": \"/a\"}"}"#,
        ] {
            assert_fires(schema(), args, K, "", json!({"path": "/a"}));
        }
    }

    #[test]
    fn never_fires_for_another_tool_or_a_declared_wrapper() {
        assert_never_fires(
            schema(),
            r#"{"name": "other", "arguments": {"path": "/a"}}"#,
            K,
            Status::Invalid,
        );
        let declared = json!({"type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}, "arguments": {"type": "object"}}});
        assert_never_fires(
            declared,
            r#"{"arguments": {"path": "/a"}}"#,
            K,
            Status::Invalid,
        );
    }

    #[test]
    fn fires_when_another_wrapper_name_is_declared() {
        let declares_input = json!({"type": "object", "required": ["input"],
            "properties": {"input": {"type": "string"}}});
        assert_fires(
            declares_input,
            r#"{"name": "t", "arguments": {"input": "x"}}"#,
            K,
            "",
            json!({"input": "x"}),
        );
    }

    #[test]
    fn never_fires_with_extra_keys() {
        assert_never_fires(
            schema(),
            r#"{"name": "t", "arguments": {"path": "/a"}, "x": 1}"#,
            K,
            Status::Invalid,
        );
    }
}
