//! Unflatten: dotted keys re-nested against the original schema (the `unflattened` rule).
//!
//! The inverse of [`super::flatten`], guided by the tool's *original* schema rather than by a
//! record of what was flattened: a key is re-nested only when its segments name declared
//! properties at every level, so the rule also catches models that invent dotted keys on their
//! own, and never touches a key that is itself a declared property.

use serde_json::{Map, Value};

use super::dotted::{may_be_dotted, split_dotted_key};
use crate::limits::MAX_DEPTH;

/// Keys with more segments than this are only read the canonical way (no regrouping search).
const MAX_SEARCH_SEGMENTS: usize = 32;
/// Most steps the regrouping search of one key may take before it gives up.
const MAX_SEARCH_STEPS: usize = 1024;

/// Why dotted keys could not be re-nested. Names keys, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum UnflattenError {
    /// Two keys give a value for the same field (`"a.b"` with `"a": {"b": …}`), or a dotted key
    /// goes through a field that holds something other than an object (`"a.b"` with `"a": 1`).
    #[error("`{key}` gives a value for a field another key already sets")]
    Conflict {
        /// The key whose value could not be placed.
        key: String,
    },
    /// Merging would go deeper than the nesting limit.
    #[error("re-nesting `{key}` goes deeper than the nesting limit")]
    TooDeep {
        /// The key whose value could not be placed.
        key: String,
    },
}

/// Re-nests the dotted keys of one arguments object against the object schema it must match.
///
/// - `args`: the object the model sent (at the root, or at any nested object path);
/// - `schema`: the schema of that object, as the tool declared it (not flattened).
///
/// A key is re-nested when it is not itself a declared property and its segments (split with
/// the escape rule of [`super::dotted`]) name a declared property at every level, following
/// `properties`. When the canonical split does not resolve, because the model dropped the `\.`
/// escape of a name that contains a dot, the segments are regrouped: a unique regrouping that
/// resolves is used, several or none leave the key as it is. Keys that do not resolve are kept
/// unchanged, for the validator to judge. Values go where their path says; objects reached by
/// several keys are merged, in the order the keys came.
///
/// Returns `Ok(None)` when no key resolves (the rule does not fire), `Ok(Some(map))` with the
/// re-nested object otherwise.
///
/// # Errors
///
/// [`UnflattenError::Conflict`] when two keys set the same field or a path runs through a
/// non-object value; [`UnflattenError::TooDeep`] past the nesting limit. Nothing is dropped or
/// overwritten in either case.
pub(crate) fn unflatten(
    args: &Map<String, Value>,
    schema: &Value,
) -> Result<Option<Map<String, Value>>, UnflattenError> {
    let mut paths = Vec::with_capacity(args.len());
    for key in args.keys() {
        paths.push(resolve(key, schema));
    }
    if paths.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut out = Map::new();
    for ((key, value), path) in args.iter().zip(paths) {
        let path = path.unwrap_or_else(|| vec![key.clone()]);
        insert_path(&mut out, &path, value.clone(), key)?;
    }
    Ok(Some(out))
}

/// The declared path a key stands for, if it is a dotted key that resolves in `schema`.
pub(crate) fn resolve(key: &str, schema: &Value) -> Option<Vec<String>> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.contains_key(key) || !may_be_dotted(key) {
        return None;
    }
    let segments = split_dotted_key(key);
    if segments.len() == 1 && segments[0] == key {
        return None;
    }
    if resolves(schema, &segments) {
        return Some(segments);
    }
    if segments.len() > MAX_SEARCH_SEGMENTS {
        return None;
    }
    let mut search = Regroup {
        segments: &segments,
        found: Vec::new(),
        steps: 0,
    };
    search.search(schema, 0, &mut Vec::new());
    match (search.found.len(), search.steps > MAX_SEARCH_STEPS) {
        (1, false) => search.found.pop(),
        _ => None,
    }
}

/// Whether every segment names a declared property of the level above.
fn resolves(schema: &Value, segments: &[String]) -> bool {
    let mut node = schema;
    for segment in segments {
        match node.get("properties").and_then(|p| p.get(segment)) {
            Some(child) => node = child,
            None => return false,
        }
    }
    true
}

/// A bounded search for the ways to regroup segments into declared names (`a`, `b.c` for a
/// property literally named `b.c`). Stops at the second way found: ambiguity is refusal.
struct Regroup<'a> {
    segments: &'a [String],
    found: Vec<Vec<String>>,
    steps: usize,
}

impl Regroup<'_> {
    fn search(&mut self, node: &Value, start: usize, path: &mut Vec<String>) {
        if start == self.segments.len() {
            self.found.push(path.clone());
            return;
        }
        let Some(properties) = node.get("properties").and_then(Value::as_object) else {
            return;
        };
        let mut name = String::new();
        for end in start..self.segments.len() {
            self.steps += 1;
            if self.found.len() > 1 || self.steps > MAX_SEARCH_STEPS {
                return;
            }
            if end > start {
                name.push('.');
            }
            name.push_str(&self.segments[end]);
            if let Some(child) = properties.get(&name) {
                path.push(name.clone());
                self.search(child, end + 1, path);
                path.pop();
            }
        }
    }
}

/// Puts `value` at `path` in `out`, creating intermediate objects and merging objects.
fn insert_path(
    out: &mut Map<String, Value>,
    path: &[String],
    value: Value,
    key: &str,
) -> Result<(), UnflattenError> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut node = out;
    for segment in parents {
        let entry = node
            .entry(segment.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        node = entry.as_object_mut().ok_or_else(|| conflict(key))?;
    }
    match node.get_mut(last) {
        None => {
            node.insert(last.clone(), value);
            Ok(())
        }
        Some(existing) => merge(existing, value, key, path.len()),
    }
}

/// Merges two objects given for the same field; anything else is a conflict.
fn merge(
    existing: &mut Value,
    incoming: Value,
    key: &str,
    depth: usize,
) -> Result<(), UnflattenError> {
    if depth > MAX_DEPTH {
        return Err(UnflattenError::TooDeep {
            key: key.to_owned(),
        });
    }
    let (Value::Object(existing), Value::Object(incoming)) = (existing, incoming) else {
        return Err(conflict(key));
    };
    for (name, value) in incoming {
        match existing.get_mut(&name) {
            None => {
                existing.insert(name, value);
            }
            Some(slot) => merge(slot, value, key, depth + 1)?,
        }
    }
    Ok(())
}

fn conflict(key: &str) -> UnflattenError {
    UnflattenError::Conflict {
        key: key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "user": {"type": "object", "properties": {
                "profile": {"type": "object", "properties": {
                    "name": {"type": "string"}, "age": {"type": "integer"}}},
                "file.name": {"type": "string"}}},
            "a.b": {"type": "string"},
            "plain": {"type": "string"}}})
    }

    fn run(args: Value) -> Result<Option<Value>, UnflattenError> {
        let args = args.as_object().unwrap();
        unflatten(args, &schema()).map(|m| m.map(Value::Object))
    }

    #[test]
    fn re_nests_dotted_keys() {
        let out = run(json!({"user.profile.name": "alice", "user.profile.age": 30})).unwrap();
        assert_eq!(
            out,
            Some(json!({"user": {"profile": {"name": "alice", "age": 30}}}))
        );
    }

    #[test]
    fn keeps_the_order_of_first_appearance() {
        let out =
            run(json!({"plain": "p", "user.profile.age": 1, "a.b": "x", "user.profile.name": "n"}))
                .unwrap()
                .unwrap();
        let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["plain", "user", "a.b"]);
        assert_eq!(out["user"]["profile"], json!({"age": 1, "name": "n"}));
    }

    #[test]
    fn never_fires_without_a_resolving_key() {
        for args in [
            json!({"plain": "x"}),
            json!({"a.b": "declared as is"}),
            json!({"user.nope": 1}),
            json!({"plain.x": 1}),
            json!({r"odd\name": 1}),
        ] {
            assert_eq!(run(args.clone()).unwrap(), None, "{args}");
        }
    }

    #[test]
    fn escaped_names_are_unescaped() {
        let out = run(json!({r"a\.b": "x", r"user.file\.name": "f"})).unwrap();
        assert_eq!(out, Some(json!({"a.b": "x", "user": {"file.name": "f"}})));
    }

    #[test]
    fn a_forgotten_escape_is_recovered_when_unambiguous() {
        let out = run(json!({"user.file.name": "f"})).unwrap();
        assert_eq!(out, Some(json!({"user": {"file.name": "f"}})));
    }

    #[test]
    fn an_ambiguous_regrouping_is_refused() {
        let schema = json!({"properties": {
            "a": {"properties": {"b.c": {}, "b": {"properties": {"c.d": {}}}}},
            "a.b": {"properties": {"c": {"properties": {"d": {}}}}}}});
        // "a.b.c.d" canonically is a → b → c → d, which does not exist; two regroupings do.
        let args = json!({"a.b.c.d": 1});
        assert_eq!(unflatten(args.as_object().unwrap(), &schema).unwrap(), None);
    }

    #[test]
    fn merges_with_nested_objects_already_sent() {
        let out = run(json!({"user": {"profile": {"name": "n"}}, "user.profile.age": 2})).unwrap();
        assert_eq!(
            out,
            Some(json!({"user": {"profile": {"name": "n", "age": 2}}}))
        );
    }

    #[test]
    fn conflicts_are_errors_and_nothing_is_overwritten() {
        for args in [
            json!({"user": {"profile": {"age": 1}}, "user.profile.age": 2}),
            json!({"user": 5, "user.profile.age": 2}),
            json!({"user.profile": "text", "user.profile.age": 2}),
        ] {
            assert!(
                matches!(run(args.clone()), Err(UnflattenError::Conflict { .. })),
                "{args}"
            );
        }
    }

    #[test]
    fn a_schema_without_properties_resolves_nothing() {
        let args = json!({"a.b": 1});
        assert_eq!(
            unflatten(args.as_object().unwrap(), &json!(true)).unwrap(),
            None
        );
        assert_eq!(
            unflatten(args.as_object().unwrap(), &json!({"type": "object"})).unwrap(),
            None
        );
    }

    #[test]
    fn the_regrouping_search_is_bounded() {
        // Every run of one to four `x` is declared at each of six levels: 4^6 groupings to try,
        // none of which covers thirty segments.
        let mut level = json!({});
        for _ in 0..6 {
            let mut properties = Map::new();
            for n in 1..=4 {
                properties.insert(vec!["x"; n].join("."), level.clone());
            }
            level = json!({"properties": properties});
        }
        let key = vec!["x"; 30].join(".");
        let args = json!({ key: 1 });
        assert_eq!(unflatten(args.as_object().unwrap(), &level).unwrap(), None);
    }
}
