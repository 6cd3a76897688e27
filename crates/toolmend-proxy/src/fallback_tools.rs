//! `--tools FILE` as a fallback for calls of tools a request lacks, not only for requests
//! without tools.
//!
//! Some clients send a tools array that is not the conversation's: LiteLLM puts a
//! `dummy_tool` into an Anthropic request that has none, so the request's tools win and the
//! model's real calls name a tool the proxy has no schema for. The set a request is repaired
//! with is its own tools followed by the `--tools` set: a call of a request tool is checked
//! against the request's schema as before (on a name in both, the request's tool wins: the
//! set keeps the first of a name), a call of a tool only `--tools` has against that schema.

use std::borrow::Cow;

/// The request's own tools followed by the `--tools` set (both raw JSON arrays, joined as
/// text: each element is read on its own shape, Chat, Anthropic or Responses). `own` as it is
/// when either is not an array (an MCP `{"tools": [...]}` file is not merged) or the
/// fallback is empty.
pub(crate) fn with_fallback<'a>(own: &'a str, fallback: &str) -> Cow<'a, str> {
    let (Some(items), Some(extra)) = (array_items(own), array_items(fallback)) else {
        return Cow::Borrowed(own);
    };
    if extra.trim().is_empty() {
        return Cow::Borrowed(own);
    }
    if items.trim().is_empty() {
        return Cow::Owned(format!("[{extra}]"));
    }
    Cow::Owned(format!("[{items},{extra}]"))
}

/// The text between a JSON array's brackets.
fn array_items(text: &str) -> Option<&str> {
    text.trim().strip_prefix('[')?.strip_suffix(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_follows_the_request_tools() {
        let own = r#"[{"name": "dummy_tool", "input_schema": {}}]"#;
        let fallback = r#" [{"type": "function", "function": {"name": "read_file"}}] "#;
        let merged = with_fallback(own, fallback);
        let value: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(value[0]["name"], "dummy_tool");
        assert_eq!(value[1]["function"]["name"], "read_file");
    }

    #[test]
    fn anything_but_two_arrays_keeps_the_request_tools() {
        let own = r#"[{"name": "a"}]"#;
        assert_eq!(with_fallback(own, r#"{"tools": []}"#), own);
        assert_eq!(with_fallback(own, "[ ]"), own);
        assert_eq!(with_fallback("{}", r#"[{"name": "b"}]"#), "{}");
    }
}
