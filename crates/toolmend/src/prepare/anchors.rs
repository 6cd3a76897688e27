//! Anchor strip: `pattern` without `^`/`$` for models that copy anchors into values.
//!
//! Kimi K2, MiniMax and GLM read `"pattern": "^/.*$"` as part of the value's format and send
//! `"^/src/main.rs$"`. The schema they are shown loses its leading `^` and trailing `$`; the
//! schema calls are validated against keeps them (so a stripped presentation only ever loosens
//! what the model sees, never what is accepted), and the `anchor_stripped` repair rule cleans
//! values that still carry them.

use serde_json::Value;

use super::walk::for_each_schema_mut;

/// The model-id substrings (case-insensitive) that get anchor-free patterns by default.
pub const DEFAULT_ANCHOR_MODELS: [&str; 3] = ["kimi-k2", "minimax", "glm"];

/// Whether `model` contains one of `patterns`, ignoring ASCII case.
pub(crate) fn model_matches<S: AsRef<str>>(model: &str, patterns: &[S]) -> bool {
    let model = model.to_ascii_lowercase();
    patterns
        .iter()
        .map(AsRef::as_ref)
        .any(|p| !p.is_empty() && model.contains(&p.to_ascii_lowercase()))
}

/// Removes the anchors from every `pattern` of every subschema.
///
/// A pattern that was nothing but anchors (`^$`) is removed: the empty pattern matches
/// everything, so the key would only be noise. Returns whether anything changed.
pub(crate) fn strip_schema_anchors(schema: &mut Value) -> bool {
    let mut changed = false;
    for_each_schema_mut(schema, &mut |node| {
        let Some(Value::String(pattern)) = node.get("pattern") else {
            return;
        };
        let stripped = strip_anchors(pattern);
        if stripped.len() == pattern.len() {
            return;
        }
        changed = true;
        if stripped.is_empty() {
            node.remove("pattern");
        } else {
            let stripped = stripped.to_owned();
            node.insert("pattern".to_owned(), Value::String(stripped));
        }
    });
    changed
}

/// The pattern without its leading `^`s and trailing unescaped `$`s.
///
/// A `$` preceded by an odd number of backslashes is a literal dollar (`price\$`), not an
/// anchor, and stays; `\\$` is an escaped backslash followed by an anchor.
pub(crate) fn strip_anchors(pattern: &str) -> &str {
    let mut rest = pattern.trim_start_matches('^');
    while let Some(body) = rest.strip_suffix('$') {
        let backslashes = body.bytes().rev().take_while(|&b| b == b'\\').count();
        if backslashes % 2 == 1 {
            break;
        }
        rest = body;
    }
    rest
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strips_leading_carets_and_trailing_dollars() {
        let table = [
            ("^foo$", "foo"),
            ("^foo", "foo"),
            ("foo$", "foo"),
            ("^^/a$$", "/a"),
            ("^(foo|bar)$", "(foo|bar)"),
            ("foo|bar", "foo|bar"),
            ("a^b$c", "a^b$c"),
            ("^$", ""),
        ];
        for (pattern, expected) in table {
            assert_eq!(strip_anchors(pattern), expected, "{pattern}");
        }
    }

    #[test]
    fn an_escaped_dollar_is_not_an_anchor() {
        let table = [
            (r"^price\$", r"price\$"),
            (r"^a\\$", r"a\\"),
            (r"a\\\$", r"a\\\$"),
            (r"^\$$", r"\$"),
            (r"\$", r"\$"),
        ];
        for (pattern, expected) in table {
            assert_eq!(strip_anchors(pattern), expected, "{pattern}");
        }
    }

    #[test]
    fn rewrites_patterns_at_every_depth_but_never_data() {
        let mut schema = json!({"type": "object", "properties": {
            "path": {"type": "string", "pattern": "^/.*$"},
            "pattern": {"type": "string", "default": "^keep$"},
            "items": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
            "only": {"type": "string", "pattern": "^$"}
        }, "enum": [{"pattern": "^data$"}]});
        assert!(strip_schema_anchors(&mut schema));
        assert_eq!(
            schema.pointer("/properties/path/pattern"),
            Some(&json!("/.*"))
        );
        assert_eq!(
            schema.pointer("/properties/pattern/default"),
            Some(&json!("^keep$"))
        );
        assert_eq!(
            schema.pointer("/properties/items/items/pattern"),
            Some(&json!("[a-z]+"))
        );
        assert_eq!(
            schema.pointer("/properties/only"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(schema["enum"], json!([{"pattern": "^data$"}]));
    }

    #[test]
    fn reports_no_change_for_unanchored_schemas() {
        let mut schema = json!({"properties": {"a": {"pattern": r"[0-9]+\$"}}});
        let before = schema.clone();
        assert!(!strip_schema_anchors(&mut schema));
        assert_eq!(schema, before);
    }

    #[test]
    fn matches_model_ids_by_substring_ignoring_case() {
        for model in [
            "moonshotai/Kimi-K2-Instruct",
            "MiniMax-M1",
            "zai-org/GLM-4.5",
            "glm-4",
        ] {
            assert!(model_matches(model, &DEFAULT_ANCHOR_MODELS), "{model}");
        }
        for model in ["gpt-4o", "claude-sonnet-4", "kimi-k1.5", ""] {
            assert!(!model_matches(model, &DEFAULT_ANCHOR_MODELS), "{model}");
        }
        assert!(!model_matches("anything", &[""]));
    }
}
