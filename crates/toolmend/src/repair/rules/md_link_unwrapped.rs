//! `md_link_unwrapped` (opt-in hint rule): a path sent as a Markdown auto-link.
//!
//! DeepSeek models sometimes write a path as `[notes.md](http://notes.md)`, the way chat UIs
//! auto-link file names.
//!
//! **Detects:** in a field its author tagged path-shaped (`x-toolmend.semantic` is
//! `absolute_path`, `relative_path` or `path`), a whole value `[text](http(s)://url)` where
//! `text` equals the URL without its scheme, or the URL's path ends in `/text`.
//!
//! **Does:** replaces the value with `text`. Runs even when the call validates: a link is a
//! valid string, and the author opted the field in.
//!
//! **Never fires when:** the field is untagged, the text and URL differ (a real link), or the
//! link is only part of the value.
//!
//! **Example:** `{"path": "[src/main.rs](https://src/main.rs)"}` → `{"path": "src/main.rs"}`.

use serde_json::Value;

use crate::pointer;
use crate::repair::schema::SchemaView;
use crate::{Repair, RepairKind};

/// Unwraps every tagged auto-link in `value`, recording a repair for each.
pub(crate) fn apply(
    value: &mut Value,
    view: &SchemaView<'_>,
    at: &mut String,
    depth: usize,
    out: &mut Vec<Repair>,
) {
    if depth > crate::limits::MAX_DEPTH {
        return;
    }
    match value {
        Value::String(text) => {
            if view.semantic().is_some_and(|s| s.is_path())
                && let Some(inner) = unwrap_link(text)
            {
                *text = inner.to_owned();
                out.push(Repair::new(RepairKind::MdLinkUnwrapped, at.clone()));
            }
        }
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if let Some(child_view) = view.property(key) {
                    let len = at.len();
                    pointer::push(at, key);
                    apply(child, &child_view, at, depth + 1, out);
                    at.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter_mut().enumerate() {
                if let Some(child_view) = view.item(index) {
                    let len = at.len();
                    pointer::push_index(at, index);
                    apply(child, &child_view, at, depth + 1, out);
                    at.truncate(len);
                }
            }
        }
        _ => {}
    }
}

/// The link text of a whole-value auto-link, if `text` is one.
fn unwrap_link(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('[')?;
    let (label, rest) = rest.split_once("](")?;
    let url = rest.strip_suffix(')')?;
    let bare = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    if label.is_empty() || label.contains(['[', ']']) || url.contains(char::is_whitespace) {
        return None;
    }
    let label_path = label.trim_start_matches('/');
    let same = bare == label || bare.trim_end_matches('/') == label_path;
    let ends = bare.ends_with(&format!("/{label_path}"));
    (same || ends).then_some(label)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::mend;
    use super::unwrap_link;
    use crate::Status;

    #[test]
    fn recognises_auto_links_only() {
        assert_eq!(unwrap_link("[notes.md](http://notes.md)"), Some("notes.md"));
        assert_eq!(
            unwrap_link("[src/main.rs](https://src/main.rs)"),
            Some("src/main.rs")
        );
        assert_eq!(
            unwrap_link("[main.rs](https://github.com/o/r/blob/x/src/main.rs)"),
            Some("main.rs")
        );
        assert_eq!(unwrap_link("[docs](https://example.com/guide)"), None);
        assert_eq!(unwrap_link("see [a.md](http://a.md)"), None);
        assert_eq!(unwrap_link("[a.md](ftp://a.md)"), None);
    }

    #[test]
    fn fires_on_tagged_fields_even_when_valid() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string", "x-toolmend": {"semantic": "path"}},
            "body": {"type": "string"}}});
        let (status, value, repairs) = mend(
            schema,
            r#"{"path": "[a.rs](http://a.rs)", "body": "[a.rs](http://a.rs)"}"#,
        );
        assert_eq!(status, Status::Repaired);
        assert_eq!(
            value,
            Some(json!({"path": "a.rs", "body": "[a.rs](http://a.rs)"}))
        );
        assert_eq!(repairs, ["md_link_unwrapped@/path"]);
    }

    #[test]
    fn never_fires_on_untagged_fields() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let (status, _, repairs) = mend(schema, r#"{"path": "[a.rs](http://a.rs)"}"#);
        assert_eq!((status, repairs.len()), (Status::Valid, 0));
    }
}
