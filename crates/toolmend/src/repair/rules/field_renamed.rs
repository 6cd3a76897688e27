//! `field_renamed`: a declared property arrived under a known alias (`file_path` for `path`).
//!
//! **Detects:** at an object where a required property is missing (or, with
//! `additionalProperties` failing, a declared one), exactly one undeclared key that is an alias
//! of it: from the built-in table (`file_path`/`filePath`/`filepath`/`file`/`target_file`/
//! `absolute_path` → `path`; `query`/`regex`/`search` → `pattern`; `cmd`/`shell`/`script` →
//! `command`; `text`/`body`/`contents` → `content`), a snake/camel/kebab variant of the
//! declared name, or an alias the tool author declared (`x-toolmend.aliases`).
//!
//! **Does:** renames the key in place (key order kept).
//!
//! **Never fires when:** the canonical key is present, the alias is itself declared, or two
//! aliases compete for one property (or one alias for two properties).
//!
//! **Example:** `{"file_path": "/a"}` → `{"path": "/a"}`.

use serde_json::{Map, Value};

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;

/// Built-in aliases: canonical name → what models send instead.
const BUILT_IN: &[(&str, &[&str])] = &[
    (
        "path",
        &[
            "file_path",
            "filePath",
            "filepath",
            "file",
            "target_file",
            "absolute_path",
        ],
    ),
    ("pattern", &["query", "regex", "search"]),
    ("command", &["cmd", "shell", "script"]),
    ("content", &["text", "body", "contents"]),
];

/// See the module docs.
#[derive(Debug)]
pub(crate) struct FieldRenamed;

impl Rule for FieldRenamed {
    fn kind(&self) -> RepairKind {
        RepairKind::FieldRenamed
    }

    fn triggers(&self) -> Keywords {
        Keywords::REQUIRED.or(Keywords::ADDITIONAL)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        let mut missing: Vec<&str> = site.failure.missing.iter().map(String::as_str).collect();
        if site.failure.keywords.any(Keywords::ADDITIONAL) {
            missing.extend(site.view.declared_names());
        }
        missing.retain(|name| !map.contains_key(*name));
        missing.sort_unstable();
        missing.dedup();

        let undeclared: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !site.view.declares(k))
            .collect();
        let mut renames: Vec<(&str, &str)> = Vec::new();
        for canonical in &missing {
            let declared_aliases = site
                .view
                .property(canonical)
                .map(|v| v.aliases())
                .unwrap_or_default();
            let candidates: Vec<&str> = undeclared
                .iter()
                .copied()
                .filter(|key| is_alias(key, canonical, &declared_aliases))
                .collect();
            if let [alias] = candidates[..] {
                renames.push((alias, canonical));
            }
        }
        // One alias claimed by two missing properties is ambiguous: drop both claims.
        let claimed_once = |alias: &str| renames.iter().filter(|(a, _)| *a == alias).count() == 1;
        let renames: Vec<(&str, &str)> = renames
            .iter()
            .copied()
            .filter(|(a, _)| claimed_once(a))
            .collect();
        if renames.is_empty() {
            return None;
        }
        let renamed: Map<String, Value> = map
            .iter()
            .map(|(k, v)| {
                let key = renames
                    .iter()
                    .find(|(a, _)| a == k)
                    .map_or(k.as_str(), |(_, c)| c);
                (key.to_owned(), v.clone())
            })
            .collect();
        Some(Fix::Replace(Value::Object(renamed)))
    }
}

/// Whether `key` is an alias of the declared `canonical` name.
fn is_alias(key: &str, canonical: &str, declared: &[&str]) -> bool {
    declared.contains(&key)
        || BUILT_IN
            .iter()
            .any(|(c, aliases)| *c == canonical && aliases.contains(&key))
        || (key != canonical && fold(key) == fold(canonical))
}

/// A name with case and `_`/`-` separators folded away: `filePath` ~ `file_path` ~ `file-path`.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::FieldRenamed as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["path"],
               "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}})
    }

    #[test]
    fn fires_on_built_in_aliases_and_case_variants() {
        for args in [
            r#"{"file_path": "/a"}"#,
            r#"{"filePath": "/a"}"#,
            r#"{"target_file": "/a"}"#,
        ] {
            assert_fires(schema(), args, K, "", json!({"path": "/a"}));
        }
        let snake = json!({"type": "object", "required": ["old_text"], "properties": {"old_text": {"type": "string"}}});
        assert_fires(
            snake,
            r#"{"oldText": "x"}"#,
            K,
            "",
            json!({"old_text": "x"}),
        );
    }

    #[test]
    fn fires_on_declared_aliases_and_keeps_key_order() {
        let schema = json!({"type": "object", "required": ["path"], "properties": {
            "limit": {"type": "integer"},
            "path": {"type": "string", "x-toolmend": {"aliases": ["target"]}}}});
        let (status, value, _) = mend(schema, r#"{"limit": 1, "target": "/a"}"#);
        assert_eq!(status, Status::Repaired);
        let keys: Vec<_> = value
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["limit", "path"]);
    }

    #[test]
    fn never_fires_when_aliases_compete_or_canonical_present() {
        assert_never_fires(
            schema(),
            r#"{"file_path": "/a", "filepath": "/b"}"#,
            K,
            Status::Invalid,
        );
        // `path` present: the extra alias key is none of our business (and valid).
        assert_never_fires(
            schema(),
            r#"{"path": "/a", "file_path": "/b"}"#,
            K,
            Status::Valid,
        );
    }

    #[test]
    fn never_fires_on_a_declared_alias_key() {
        let schema = json!({"type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}, "file": {"type": "string"}}});
        assert_never_fires(schema, r#"{"file": "/a"}"#, K, Status::Invalid);
    }

    #[test]
    fn never_fires_on_unrelated_keys() {
        assert_never_fires(schema(), r#"{"location": "/a"}"#, K, Status::Invalid);
    }
}
