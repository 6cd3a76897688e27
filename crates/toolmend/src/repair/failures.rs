//! What the validator reported, indexed by instance location.
//!
//! Rules are dispatched on the validator's typed error kinds and instance paths, never on the
//! wording of its messages. Errors inside `anyOf` / `oneOf` branches are indexed too: when no
//! branch matches, a repair that makes some branch match is what is wanted.

use std::collections::{HashMap, HashSet};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::limits::MAX_COLLECTED_ERRORS;

/// The validator keywords that failed at one location, as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Keywords(u16);

impl Keywords {
    pub(crate) const TYPE: Self = Self(1);
    pub(crate) const ENUM: Self = Self(2);
    pub(crate) const PATTERN: Self = Self(4);
    pub(crate) const REQUIRED: Self = Self(8);
    pub(crate) const ADDITIONAL: Self = Self(16);
    /// `anyOf` / `oneOf` with no matching branch.
    pub(crate) const BRANCHES: Self = Self(32);
    pub(crate) const MIN_ITEMS: Self = Self(64);
    pub(crate) const OTHER: Self = Self(128);

    /// The union of two sets.
    pub(crate) const fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether any keyword of `other` failed.
    pub(crate) fn any(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }
}

impl std::ops::BitOr for Keywords {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// Everything that failed at one instance location.
#[derive(Debug, Clone, Default)]
pub(crate) struct Failure {
    pub(crate) keywords: Keywords,
    /// Required properties reported missing here.
    pub(crate) missing: Vec<String>,
    /// Properties reported unexpected here.
    pub(crate) unexpected: Vec<String>,
}

/// The failures of one validation, by JSON Pointer.
///
/// Hash maps, not a sorted map: a wide call fails at thousands of pointers, and a sorted map's
/// insert and lookup cost grows with the logarithm of their number (with a cache miss per
/// level), so a call ×10 as wide took ×13 as long (`growth_ratio retry`).
#[derive(Debug, Default)]
pub(crate) struct Failures {
    by_pointer: HashMap<String, Failure>,
    /// Every pointer that is a failing one or an ancestor of one (`""`, `/a` and `/a/0` for a
    /// failure at `/a/0`), so that [`Failures::within`] is one lookup.
    around: HashSet<String>,
    /// Errors looked at so far, nested branch errors included.
    seen: usize,
    /// Most errors this validation may look at: see [`Failures::collect`].
    cap: usize,
}

/// How many values `value` holds, itself included (an explicit stack: no recursion).
pub(crate) fn node_count(value: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

/// How deep nested `anyOf` / `oneOf` errors are followed.
const MAX_BRANCH_DEPTH: usize = 8;

impl Failures {
    /// Validates `value` and indexes its errors: at most [`MAX_COLLECTED_ERRORS`] plus one per
    /// node of `value`, nested branch errors included, taken lazily from the validator's
    /// iterator (the schema's cost is bounded when the tool set is built, so each error is
    /// bounded work too).
    ///
    /// The cap grows with the value so that a wide call with one mistake per key (1,000
    /// renamed keys) is seen in one round: a fixed cap split it over several rounds, each
    /// validating the whole value again, and time grew faster than the input.
    pub(crate) fn collect(validator: &Validator, value: &Value) -> Self {
        let mut failures = Self {
            cap: MAX_COLLECTED_ERRORS.saturating_add(node_count(value)),
            ..Self::default()
        };
        for error in validator.iter_errors(value) {
            if failures.seen >= failures.cap {
                break;
            }
            failures.add(&error, 0);
        }
        failures
    }

    fn add(&mut self, error: &ValidationError<'_>, depth: usize) {
        if self.seen >= self.cap || depth > MAX_BRANCH_DEPTH {
            return;
        }
        self.seen += 1;
        let pointer = error.instance_path().as_str();
        if !self.by_pointer.contains_key(pointer) {
            self.mark_around(pointer);
        }
        let entry = self.by_pointer.entry(pointer.to_owned()).or_default();
        let keyword = match error.kind() {
            ValidationErrorKind::Type { .. } => Keywords::TYPE,
            ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
                Keywords::ENUM
            }
            ValidationErrorKind::Pattern { .. } => Keywords::PATTERN,
            ValidationErrorKind::Required { property } => {
                if let Some(name) = property.as_str() {
                    entry.missing.push(name.to_owned());
                }
                Keywords::REQUIRED
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                entry.unexpected.extend(unexpected.iter().cloned());
                Keywords::ADDITIONAL
            }
            ValidationErrorKind::MinItems { .. } => Keywords::MIN_ITEMS,
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                entry.keywords = entry.keywords | Keywords::BRANCHES;
                for branch in context {
                    for inner in branch {
                        self.add(inner, depth + 1);
                    }
                }
                return;
            }
            _ => Keywords::OTHER,
        };
        entry.keywords = entry.keywords | keyword;
    }

    /// Adds `pointer` and its ancestors to [`Failures::around`], from the deepest up to the
    /// first already there (whose own ancestors are then there too): each pointer once.
    fn mark_around(&mut self, pointer: &str) {
        let mut at = pointer;
        loop {
            if !self.around.insert(at.to_owned()) {
                return;
            }
            match at.rfind('/') {
                Some(slash) => at = &at[..slash],
                None => return,
            }
        }
    }

    /// The failure at exactly `pointer`.
    pub(crate) fn at(&self, pointer: &str) -> Option<&Failure> {
        self.by_pointer.get(pointer)
    }

    /// Whether anything failed at `pointer` or below it.
    pub(crate) fn within(&self, at: &str) -> bool {
        self.around.contains(at)
    }

    /// Whether nothing failed.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_pointer.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn failures(schema: Value, value: Value) -> Failures {
        Failures::collect(&jsonschema::validator_for(&schema).unwrap(), &value)
    }

    #[test]
    fn indexes_typed_errors_by_pointer() {
        let schema = json!({"type": "object", "required": ["path"], "additionalProperties": false,
            "properties": {"path": {"type": "string"}, "paths": {"type": "array"}}});
        let f = failures(schema, json!({"paths": "x", "file_path": "a"}));
        let root = f.at("").unwrap();
        assert!(root.keywords.any(Keywords::REQUIRED) && root.keywords.any(Keywords::ADDITIONAL));
        assert_eq!(root.missing, ["path"]);
        assert_eq!(root.unexpected, ["file_path"]);
        assert!(f.at("/paths").unwrap().keywords.any(Keywords::TYPE));
        assert!(f.within("") && f.within("/paths") && !f.within("/path"));
    }

    #[test]
    fn within_is_a_failing_pointer_or_an_ancestor_of_one() {
        let schema = json!({"properties": {"a": {"items": {"properties": {
            "b": {"type": "string"}, "b/c": {"type": "string"}}}}}});
        let f = failures(
            schema,
            json!({"a": [{"b": "x"}, {"b": 1, "b/c": 2}], "ab": 1}),
        );
        for at in ["", "/a", "/a/1", "/a/1/b", "/a/1/b~1c"] {
            assert!(f.within(at), "{at}");
        }
        // Siblings, a prefix that is not a whole token, and the escaped key's parts.
        for at in [
            "/a/0", "/a/0/b", "/ab", "/a/", "/a/1/b/c", "/a/1/bb", "/a/1/b~1",
        ] {
            assert!(!f.within(at), "{at}");
        }
    }

    #[test]
    fn indexes_errors_inside_branches() {
        let schema = json!({"properties": {"x": {"anyOf": [
            {"type": "array", "items": {"type": "string"}}, {"type": "null"}]}}});
        let f = failures(schema, json!({"x": ["a", 3]}));
        assert!(f.at("/x").unwrap().keywords.any(Keywords::BRANCHES));
        assert!(f.at("/x/1").unwrap().keywords.any(Keywords::TYPE));
    }

    #[test]
    fn collection_is_capped_with_nested_branch_errors_counted() {
        // 600 failing items, each failing both branches of an `anyOf`: 1800 errors in all, over
        // the cap of 256 + 601 nodes.
        let schema =
            json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}});
        let f = failures(schema, Value::Array(vec![json!(1); 600]));
        assert_eq!(f.seen, MAX_COLLECTED_ERRORS + 601);
        assert!(f.by_pointer.len() < MAX_COLLECTED_ERRORS + 601);
        assert!(f.at("/0").unwrap().keywords.any(Keywords::BRANCHES));
    }

    #[test]
    fn valid_values_have_no_failures() {
        assert!(failures(json!({"type": "object"}), json!({})).is_empty());
    }
}
