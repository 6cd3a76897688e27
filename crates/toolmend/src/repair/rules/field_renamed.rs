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

use std::collections::{HashMap, HashSet};

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
        // Deduplicated in one pass (the order of `missing` decides nothing): a sort made a wide
        // object's repair n log n (`growth_ratio repair`).
        let mut seen = HashSet::with_capacity(missing.len());
        missing.retain(|name| !map.contains_key(*name) && seen.insert(*name));

        if missing.is_empty() {
            return None;
        }

        // Each undeclared key is folded once and found by its folded form, so a wide object
        // costs linear time, not missing × undeclared folds.
        // Sized once, as is `claims`: a table grown by doubling rehashes its keys at each step.
        let mut undeclared: HashSet<&str> = HashSet::with_capacity(map.len());
        let mut by_fold: HashMap<String, Vec<&str>> = HashMap::with_capacity(map.len());
        for key in map.keys().filter(|k| !site.view.declares(k)) {
            undeclared.insert(key);
            by_fold.entry(fold(key)).or_default().push(key);
        }
        if undeclared.is_empty() {
            return None;
        }
        // Declared aliases are read once per object, not by a view per missing name: a wide
        // schema or a branchy one (64 parts) made that missing × parts × lookups.
        let mut aliases_of: HashMap<&str, Vec<&str>> = HashMap::new();
        for (alias, canonical) in site.view.declared_aliases() {
            if undeclared.contains(alias) {
                aliases_of.entry(canonical).or_default().push(alias);
            }
        }
        let mut renames: Vec<(&str, &str)> = Vec::new();
        let mut claims: HashMap<&str, usize> = HashMap::with_capacity(missing.len());
        let mut folded_canonical = String::new();
        for &canonical in &missing {
            let declared_aliases = aliases_of.get(canonical).into_iter().flatten().copied();
            let built_in = BUILT_IN
                .iter()
                .filter(|(c, _)| *c == canonical)
                .flat_map(|(_, aliases)| aliases.iter().copied());
            fold_into(canonical, &mut folded_canonical);
            let folded = by_fold
                .get(folded_canonical.as_str())
                .into_iter()
                .flatten()
                .copied();
            let mut candidates: Vec<&str> = declared_aliases
                .chain(built_in)
                .filter(|alias| undeclared.contains(alias))
                .chain(folded.filter(|key| *key != canonical))
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            if let [alias] = candidates[..] {
                renames.push((alias, canonical));
                *claims.entry(alias).or_default() += 1;
            }
        }
        // One alias claimed by two missing properties is ambiguous: drop both claims.
        let renames: HashMap<&str, &str> = renames
            .into_iter()
            .filter(|(alias, _)| claims.get(alias) == Some(&1))
            .collect();
        if renames.is_empty() {
            return None;
        }
        let renamed: Map<String, Value> = map
            .iter()
            .map(|(k, v)| {
                let key = renames.get(k.as_str()).map_or(k.as_str(), |c| c);
                (key.to_owned(), v.clone())
            })
            .collect();
        Some(Fix::Replace(Value::Object(renamed)))
    }
}

/// A name with case and `_`/`-` separators folded away: `filePath` ~ `file_path` ~ `file-path`.
fn fold(name: &str) -> String {
    let mut folded = String::new();
    fold_into(name, &mut folded);
    folded
}

/// [`fold`] into a buffer reused across names.
fn fold_into(name: &str, folded: &mut String) {
    #[cfg(test)]
    tests::FOLDS.with(|n| n.set(n.get() + 1));
    folded.clear();
    folded.extend(
        name.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase),
    );
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires, mend};
    use crate::{RepairKind::FieldRenamed as K, Status};

    thread_local! {
        /// How many names `fold` folded on this thread.
        pub(super) static FOLDS: Cell<usize> = const { Cell::new(0) };
    }

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

    // Issue #8 item 8: each key is folded once per round, not once per missing property.
    #[test]
    fn a_wide_object_folds_each_name_a_bounded_number_of_times() {
        let n = 300;
        let mut properties = serde_json::Map::new();
        let mut args = serde_json::Map::new();
        for i in 0..n {
            properties.insert(format!("key_{i}"), json!({"type": "integer"}));
            args.insert(format!("key-{i}"), json!(i));
        }
        let required: Vec<String> = properties.keys().cloned().collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        FOLDS.with(|f| f.set(0));
        let (status, value, repairs) = mend(schema, &serde_json::Value::Object(args).to_string());
        assert_eq!(status, Status::Repaired);
        assert_eq!(value.unwrap()["key_7"], 7);
        assert_eq!(repairs, ["field_renamed@"]);
        // Two names per property (its key and its canonical name) in the round that renames.
        let folds = FOLDS.with(Cell::get);
        assert!(folds <= 4 * n, "{folds} folds for {n} keys");
    }
}
