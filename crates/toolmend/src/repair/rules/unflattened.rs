//! `unflattened`: nested parameters arrived as dotted keys (`"a.b": 1`).
//!
//! Models shown a flattened schema (`prepare`, DESIGN §7) answer with dot-notation keys; some
//! models do it unprompted.
//!
//! **Detects:** at a failing object, an undeclared key with unescaped dots whose segments each
//! name a declared property, level by level, in the schema (`\.` escapes a dot that belongs to a
//! name).
//!
//! **Does:** re-nests the value under those properties, merging with objects already present.
//!
//! **Never fires when:** the dotted key is itself a declared property, a segment is not
//! declared, or the nested place is already taken by a value.
//!
//! **Example:** `{"options.depth": 2}` → `{"options": {"depth": 2}}`.

use serde_json::{Map, Value};

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::schema::SchemaView;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Unflattened;

impl Rule for Unflattened {
    fn kind(&self) -> RepairKind {
        RepairKind::Unflattened
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        let mut out = Map::with_capacity(map.len());
        let mut changed = false;
        for (key, value) in map {
            let segments = if site.view.declares(key) {
                None
            } else {
                split_dotted_key(key)
            };
            match segments {
                Some(segments) if resolves(site.view, &segments) => {
                    if !insert(&mut out, &segments, value.clone()) {
                        return None;
                    }
                    changed = true;
                }
                _ => {
                    if out.contains_key(key) {
                        return None;
                    }
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        changed.then(|| Fix::Replace(Value::Object(out)))
    }
}

/// Splits `a.b\.c` into `["a", "b.c"]`; `None` when there is no unescaped dot.
pub(crate) fn split_dotted_key(key: &str) -> Option<Vec<String>> {
    let mut segments = vec![String::new()];
    let mut chars = key.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped @ ('.' | '\\')) => segments.last_mut()?.push(escaped),
                Some(other) => {
                    let last = segments.last_mut()?;
                    last.push('\\');
                    last.push(other);
                }
                None => segments.last_mut()?.push('\\'),
            },
            '.' => segments.push(String::new()),
            c => segments.last_mut()?.push(c),
        }
    }
    (segments.len() > 1 && segments.iter().all(|s| !s.is_empty())).then_some(segments)
}

/// Whether every segment is a declared property of the level above.
fn resolves(view: &SchemaView<'_>, segments: &[String]) -> bool {
    let mut level = view.clone();
    for segment in segments {
        if !level.declares(segment) {
            return false;
        }
        match level.property(segment) {
            Some(next) => level = next,
            None => return false,
        }
    }
    true
}

/// Inserts `value` at `segments`, creating objects; false when the place is taken.
fn insert(map: &mut Map<String, Value>, segments: &[String], value: Value) -> bool {
    let (last, parents) = segments
        .split_last()
        .expect("split_dotted_key gives two or more");
    let mut level = map;
    for parent in parents {
        let slot = level
            .entry(parent.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        match slot {
            Value::Object(inner) => level = inner,
            _ => return false,
        }
    }
    if level.contains_key(last) {
        return false;
    }
    level.insert(last.clone(), value);
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use super::split_dotted_key;
    use crate::{RepairKind::Unflattened as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "required": ["options"], "additionalProperties": false, "properties": {
            "options": {"type": "object", "properties": {
                "depth": {"type": "integer"}, "mode": {"type": "string"}}}}})
    }

    #[test]
    fn splits_with_escapes() {
        assert_eq!(split_dotted_key("a.b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            split_dotted_key(r"a\.b.c"),
            Some(vec!["a.b".into(), "c".into()])
        );
        assert_eq!(split_dotted_key("ab"), None);
        assert_eq!(split_dotted_key("a..b"), None);
        assert_eq!(split_dotted_key(r"a\.b"), None);
    }

    #[test]
    fn fires_on_dotted_keys_and_merges() {
        assert_fires(
            schema(),
            r#"{"options.depth": 2, "options.mode": "x"}"#,
            K,
            "",
            json!({"options": {"depth": 2, "mode": "x"}}),
        );
        assert_fires(
            schema(),
            r#"{"options": {"mode": "x"}, "options.depth": 2}"#,
            K,
            "",
            json!({"options": {"mode": "x", "depth": 2}}),
        );
    }

    #[test]
    fn never_fires_on_undeclared_segments_or_conflicts() {
        assert_never_fires(schema(), r#"{"options.width": 2}"#, K, Status::Invalid);
        assert_never_fires(
            schema(),
            r#"{"options": {"depth": 1}, "options.depth": 2}"#,
            K,
            Status::Invalid,
        );
    }

    #[test]
    fn never_fires_on_a_declared_dotted_name() {
        let schema = json!({"type": "object", "required": ["a.b"], "properties": {
            "a.b": {"type": "integer"}, "a": {"type": "object", "properties": {"b": {"type": "integer"}}}}});
        assert_never_fires(schema, r#"{"a.b": "x"}"#, K, Status::Invalid);
    }
}
