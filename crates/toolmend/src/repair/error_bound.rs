//! An upper bound on the errors the validator builds for a failing call (issue #8, item 1).
//!
//! jsonschema's `iter_errors` builds every error of a value before it yields the first (each
//! with its paths and a copy of its data), and toolmend asks for them twice per failing call:
//! to find the locations to repair and to write the retry message. The schema's own cost is
//! bounded when the tool set is built ([`crate::prepare`]'s evaluation budget), but the errors
//! also grow with the *call*: a `required` list of 1,024 names over 200 empty objects is
//! 204,800 errors (335–419 ms a call), an `anyOf` of 250 branches over 200 items 50,200.
//!
//! So before errors are collected for a call that failed the fast path, the call is walked
//! beside the schema and the errors collection would build are bounded from above; a call over
//! its budget ([`crate::Limits::max_call_errors`] plus one per value of the call) is refused
//! unchecked: `invalid`, never `valid`, with a retry message that says so.
//!
//! The bound is sound: every keyword is charged at least what the validator builds for it.
//!
//! - Exact where that is cheap: `type`, `required`, `const`, an `enum` of at most
//!   [`MAX_COMPARED_MEMBERS`], numeric bounds (a tie, where rounding to `f64` could hide the
//!   difference, is charged), lengths and counts, `dependentRequired`.
//! - One error for a keyword it does not decide (`pattern`, `format`, `multipleOf` on
//!   non-integers, `uniqueItems`, `contains`, `not`, a long `enum`), charged only on values of
//!   the type the keyword applies to, so a charge of 0 means the value certainly passes.
//! - `anyOf`: 0 when some branch is bounded by 0 (it certainly matches, so the validator builds
//!   nothing), else one error plus every branch's bound; `oneOf` the same, and one error when
//!   two branches certainly match. `if`: `then` when `if` certainly matches, else both.
//! - Members: `properties`, `patternProperties` (the tool's compiled patterns; a pattern that
//!   did not compile counts as matching every key), `additionalProperties`, `items`,
//!   `prefixItems`, `propertyNames`, … descend into the call; `$ref` is followed (JSON Pointer
//!   fragments directly, anchors and `$id`s through the document index of the cost check).
//!
//! Work: every count stops at the budget left, and a branch is always bounded at least as far
//! as its first error, so the walk costs about what the validator's own `is_valid` cost (already
//! paid by the fast path) plus the budget. A walk deeper than [`MAX_WALK_DEPTH`] charges the
//! whole budget (fail closed).

use std::cell::OnceCell;

use serde_json::{Map, Value};

use super::failures::node_count;
use super::schema::CompiledPatterns;
use crate::limits::MAX_DEPTH;
use crate::prepare::{SchemaDocument, Tool};

/// Longest `enum` compared member by member; a longer one is charged an error.
pub(crate) const MAX_COMPARED_MEMBERS: usize = 64;
/// Deepest the walk goes (members and in-place hops together) before it charges everything.
pub(crate) const MAX_WALK_DEPTH: usize = 2 * MAX_DEPTH + 64;

/// Bounds the errors of calls against one tool's schema.
pub(crate) struct ErrorBound<'s> {
    root: &'s Value,
    patterns: &'s CompiledPatterns,
    /// The anchors and `$id`s of the schema, indexed on the first reference that needs them.
    document: OnceCell<Option<SchemaDocument<'s>>>,
}

/// A running count that stops at a cap.
struct Tally {
    total: u64,
    cap: u64,
}

impl Tally {
    fn add(&mut self, n: u64) {
        self.total = self.total.saturating_add(n).min(self.cap);
    }

    fn full(&self) -> bool {
        self.total >= self.cap
    }

    /// What may still be charged, at least 1 so that a branch is always looked at as far as
    /// its first error (a bound of 0 must mean "certainly passes").
    fn left(&self) -> u64 {
        (self.cap - self.total).max(1)
    }
}

impl<'s> ErrorBound<'s> {
    pub(crate) fn new(root: &'s Value, patterns: &'s CompiledPatterns) -> Self {
        Self {
            root,
            patterns,
            document: OnceCell::new(),
        }
    }

    /// The errors validating `value` against the whole schema builds, bounded from above;
    /// the count stops at `cap` (so the result is `min(bound, cap)`).
    pub(crate) fn errors(&self, value: &Value, cap: u64) -> u64 {
        self.at(self.root, value, cap.max(1), 0)
    }

    fn at(&self, schema: &'s Value, value: &Value, cap: u64, depth: usize) -> u64 {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(false) => return 1,
            _ => return 0,
        };
        if depth > MAX_WALK_DEPTH {
            return cap;
        }
        let mut tally = Tally { total: 0, cap };
        for (keyword, argument) in map {
            if tally.full() {
                break;
            }
            let charge = match value {
                Value::Object(object) => {
                    self.object_keyword(map, keyword, argument, (value, object), &tally, depth)
                }
                Value::Array(items) => {
                    self.array_keyword(map, keyword, argument, items, &tally, depth)
                }
                Value::String(text) => string_keyword(keyword, argument, text),
                Value::Number(number) => number_keyword(keyword, argument, number),
                _ => None,
            };
            let charge = match charge {
                Some(charge) => charge,
                None => self.any_keyword(map, keyword, argument, value, &tally, depth),
            };
            tally.add(charge);
        }
        tally.total
    }

    /// The bounds of each (schema, value) pair added up, stopping at `cap`.
    fn sum<V: std::borrow::Borrow<Value>>(
        &self,
        pairs: impl Iterator<Item = (&'s Value, V)>,
        cap: u64,
        depth: usize,
    ) -> u64 {
        let mut sum = Tally { total: 0, cap };
        for (schema, value) in pairs {
            if sum.full() {
                break;
            }
            sum.add(self.at(schema, value.borrow(), sum.left(), depth + 1));
        }
        sum.total
    }

    /// Keywords that apply to every type: `type`, `enum`, `const` and the in-place ones.
    fn any_keyword(
        &self,
        map: &'s Map<String, Value>,
        keyword: &str,
        argument: &'s Value,
        value: &Value,
        tally: &Tally,
        depth: usize,
    ) -> u64 {
        match keyword {
            "type" => u64::from(!type_matches(argument, value)),
            "enum" => match argument {
                Value::Array(members) if members.len() <= MAX_COMPARED_MEMBERS => {
                    u64::from(!members.iter().any(|member| member == value))
                }
                _ => 1,
            },
            "const" => u64::from(argument != value),
            "$ref" | "$dynamicRef" | "$recursiveRef" => match argument {
                Value::String(reference) => match self.resolve(reference) {
                    Some(target) => self.at(target, value, tally.left(), depth + 1),
                    // Unresolved: the cost check refused such a schema, so this is not reached;
                    // were it, nothing is known, and everything is charged.
                    None => tally.left(),
                },
                _ => 0,
            },
            "allOf" => self.sum(
                argument
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|b| (b, value)),
                tally.left(),
                depth,
            ),
            "anyOf" | "oneOf" => self.branches(keyword, argument, value, tally, depth),
            "not" => 1,
            "if" => {
                let then = map.get("then");
                let otherwise = map.get("else");
                if then.is_none() && otherwise.is_none() {
                    return 0;
                }
                let certain = self.at(argument, value, 1, depth + 1) == 0;
                let mut sum = Tally {
                    total: 0,
                    cap: tally.left(),
                };
                if let Some(then) = then {
                    sum.add(self.at(then, value, sum.left(), depth + 1));
                }
                if let Some(otherwise) = otherwise
                    && !certain
                {
                    sum.add(self.at(otherwise, value, sum.left(), depth + 1));
                }
                sum.total
            }
            _ => 0,
        }
    }

    /// `anyOf` / `oneOf`: nothing when some branch certainly matches (one for `oneOf` when
    /// two do), else the error itself and every branch's errors, which it carries.
    fn branches(
        &self,
        keyword: &str,
        argument: &'s Value,
        value: &Value,
        tally: &Tally,
        depth: usize,
    ) -> u64 {
        let Some(branches) = argument.as_array() else {
            return 0;
        };
        let mut sum = Tally {
            total: 1,
            cap: tally.left(),
        };
        let mut matching = 0;
        for branch in branches {
            // Every branch is looked at, even once the sum is over: a later one may match.
            let errors = self.at(branch, value, sum.left(), depth + 1);
            if errors == 0 {
                matching += 1;
                if keyword == "anyOf" || matching > 1 {
                    break;
                }
            }
            sum.add(errors);
        }
        match matching {
            0 => sum.total,
            // `anyOf`, or a `oneOf` of one branch: certainly valid.
            _ if keyword == "anyOf" || branches.len() == 1 => 0,
            // `oneOf`: the other branches may match too (a bound over 0 is not a certain
            // failure), which is one error.
            _ => 1,
        }
    }

    fn object_keyword(
        &self,
        map: &'s Map<String, Value>,
        keyword: &str,
        argument: &'s Value,
        (whole, object): (&Value, &Map<String, Value>),
        tally: &Tally,
        depth: usize,
    ) -> Option<u64> {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let charge = match keyword {
            "required" => {
                let names = argument.as_array()?;
                let mut missing = 0u64;
                for name in names {
                    if missing >= tally.left() {
                        break;
                    }
                    if !name.as_str().is_some_and(|name| object.contains_key(name)) {
                        missing += 1;
                    }
                }
                missing
            }
            "minProperties" => u64::from(argument.as_u64().is_none_or(|n| count(object.len()) < n)),
            "maxProperties" => u64::from(argument.as_u64().is_none_or(|n| count(object.len()) > n)),
            "dependentRequired" | "dependencies" => {
                let mut sum = Tally {
                    total: 0,
                    cap: tally.left(),
                };
                for (key, dependency) in argument.as_object()? {
                    if sum.full() {
                        break;
                    }
                    if !object.contains_key(key) {
                        continue;
                    }
                    match dependency {
                        Value::Array(names) => sum.add(count(
                            names
                                .iter()
                                .filter(|n| !n.as_str().is_some_and(|n| object.contains_key(n)))
                                .count(),
                        )),
                        schema => sum.add(self.at(schema, whole, sum.left(), depth + 1)),
                    }
                }
                sum.total
            }
            "dependentSchemas" => self.sum(
                (argument.as_object()?.iter())
                    .filter(|(key, _)| object.contains_key(*key))
                    .map(|(_, schema)| (schema, whole)),
                tally.left(),
                depth,
            ),
            "properties" => {
                let properties = argument.as_object()?;
                self.sum(
                    (object.iter())
                        .filter_map(|(key, member)| Some((properties.get(key)?, member))),
                    tally.left(),
                    depth,
                )
            }
            "patternProperties" => {
                let patterns = argument.as_object()?;
                self.sum(
                    object.iter().flat_map(|(key, member)| {
                        (patterns.iter())
                            .filter(move |(pattern, _)| self.may_match(pattern, key))
                            .map(move |(_, schema)| (schema, member))
                    }),
                    tally.left(),
                    depth,
                )
            }
            "additionalProperties" | "unevaluatedProperties" => {
                // Keys this schema object neither declares nor matches by pattern: a superset
                // of what the validator finds additional (or unevaluated).
                let declared = map.get("properties").and_then(Value::as_object);
                let patterns = map.get("patternProperties").and_then(Value::as_object);
                let mut others = object.iter().filter(|(key, _)| {
                    !declared.is_some_and(|d| d.contains_key(*key))
                        && !patterns.is_some_and(|p| {
                            p.keys().any(|pattern| self.is_certain_match(pattern, key))
                        })
                });
                match argument {
                    // One error lists every unexpected key.
                    Value::Bool(false) => u64::from(others.next().is_some()),
                    Value::Bool(true) => 0,
                    schema => {
                        let failing = self.sum(
                            others.map(|(_, member)| (schema, member)),
                            tally.left(),
                            depth,
                        );
                        // The failing members' errors, and one that lists them.
                        failing.saturating_add(u64::from(failing > 0))
                    }
                }
            }
            "propertyNames" => self.sum(
                (object.keys()).map(|key| (argument, Value::String(key.clone()))),
                tally.left(),
                depth,
            ),
            _ => return None,
        };
        Some(charge)
    }

    fn array_keyword(
        &self,
        map: &'s Map<String, Value>,
        keyword: &str,
        argument: &'s Value,
        items: &[Value],
        tally: &Tally,
        depth: usize,
    ) -> Option<u64> {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let each = |pairs: &mut dyn Iterator<Item = (&'s Value, &Value)>| {
            self.sum(pairs, tally.left(), depth)
        };
        let prefix = match map.get("prefixItems") {
            Some(Value::Array(tuple)) => tuple.len(),
            _ => 0,
        };
        let charge = match (keyword, argument) {
            ("minItems", _) => u64::from(argument.as_u64().is_none_or(|n| count(items.len()) < n)),
            ("maxItems", _) => u64::from(argument.as_u64().is_none_or(|n| count(items.len()) > n)),
            ("uniqueItems", Value::Bool(true)) => u64::from(items.len() > 1),
            ("contains" | "minContains" | "maxContains", _) => 1,
            ("items" | "prefixItems", Value::Array(tuple)) => each(&mut tuple.iter().zip(items)),
            ("items", schema) => each(&mut items.iter().skip(prefix).map(|item| (schema, item))),
            ("additionalItems", schema) => match map.get("items") {
                Some(Value::Array(tuple)) => {
                    each(&mut items.iter().skip(tuple.len()).map(|item| (schema, item)))
                }
                _ => 0,
            },
            ("unevaluatedItems", Value::Bool(false)) => u64::from(!items.is_empty()),
            ("unevaluatedItems", schema) => {
                let failing = each(&mut items.iter().map(|item| (schema, item)));
                failing.saturating_add(u64::from(failing > 0))
            }
            _ => return None,
        };
        Some(charge)
    }

    /// Whether the validator may find that `key` matches `pattern`: a pattern the linear
    /// engine did not compile may match anything.
    fn may_match(&self, pattern: &str, key: &str) -> bool {
        self.patterns.get(pattern).is_none_or(|re| re.is_match(key))
    }

    /// Whether the validator certainly finds that `key` matches `pattern` (so it is not
    /// additional): only a pattern compiled here, without classes whose meaning differs
    /// between the engines.
    fn is_certain_match(&self, pattern: &str, key: &str) -> bool {
        !has_engine_dependent_class(pattern)
            && self
                .patterns
                .get(pattern)
                .is_some_and(|re| re.is_match(key))
    }

    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        if reference == "#" {
            return Some(self.root);
        }
        if let Some(pointer) = reference.strip_prefix('#')
            && pointer.starts_with('/')
            && !pointer.contains('%')
        {
            return self.root.pointer(pointer);
        }
        self.document
            .get_or_init(|| SchemaDocument::index(self.root).ok())
            .as_ref()?
            .resolve(reference)
    }
}

/// A call refused before its errors were collected: validating it could build more errors
/// than its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ErrorCost {
    /// The bound on the errors (counting stops just past the budget: at least this many).
    pub(crate) errors: u64,
    /// [`crate::Limits::max_call_errors`] plus one per value of the call.
    pub(crate) budget: u64,
}

/// Whether validating `value` against `tool`'s schema could build more errors than the call's
/// budget: `max_call_errors` ([`crate::Limits::max_call_errors`]) plus one per value of the call (so
/// a wide call with one mistake per value is still repaired in one round).
pub(crate) fn over_budget(tool: &Tool, value: &Value, max_call_errors: u64) -> Option<ErrorCost> {
    let schema = tool.schema()?;
    let budget =
        max_call_errors.saturating_add(u64::try_from(node_count(value)).unwrap_or(u64::MAX));
    let errors = ErrorBound::new(schema, tool.patterns()).errors(value, budget.saturating_add(1));
    (errors > budget).then_some(ErrorCost { errors, budget })
}

/// `pattern`, `format`, `minLength`, `maxLength` on a string.
fn string_keyword(keyword: &str, argument: &Value, text: &str) -> Option<u64> {
    let length = || u64::try_from(text.chars().count()).unwrap_or(u64::MAX);
    let charge = match keyword {
        // The validator's regex dialect may differ from the one compiled here.
        "pattern" | "format" => 1,
        "minLength" => u64::from(argument.as_u64().is_none_or(|n| length() < n)),
        "maxLength" => u64::from(argument.as_u64().is_none_or(|n| length() > n)),
        _ => return None,
    };
    Some(charge)
}

/// Numeric bounds on a number. A value or bound that is not a finite `f64`, a tie (two
/// different numbers may round to the same `f64`) and `multipleOf` on non-integers are
/// charged: 0 only when the value certainly passes.
fn number_keyword(keyword: &str, argument: &Value, number: &serde_json::Number) -> Option<u64> {
    let passes = |check: fn(f64, f64) -> bool| {
        let (Some(value), Some(bound)) = (number.as_f64(), argument.as_f64()) else {
            return false;
        };
        value.is_finite() && bound.is_finite() && check(value, bound)
    };
    let charge = match keyword {
        "minimum" => !passes(|v, b| v > b),
        "maximum" => !passes(|v, b| v < b),
        "exclusiveMinimum" => !passes(|v, b| v > b),
        "exclusiveMaximum" => !passes(|v, b| v < b),
        "multipleOf" => !match (number.as_u64(), argument.as_u64()) {
            (Some(value), Some(step)) if step > 0 => value % step == 0,
            _ => false,
        },
        _ => return None,
    };
    Some(u64::from(charge))
}

/// Whether `value` certainly has one of the types `argument` names (`integer` only for a
/// number stored as an integer: a float with no fraction is charged).
fn type_matches(argument: &Value, value: &Value) -> bool {
    let one = |name: &Value| match (name.as_str(), value) {
        (Some("null"), Value::Null)
        | (Some("boolean"), Value::Bool(_))
        | (Some("number"), Value::Number(_))
        | (Some("string"), Value::String(_))
        | (Some("array"), Value::Array(_))
        | (Some("object"), Value::Object(_)) => true,
        (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    match argument {
        Value::Array(names) => names.iter().any(one),
        name => one(name),
    }
}

/// Whether `pattern` uses a class whose meaning differs between regex dialects (`\d` is
/// ASCII in ECMA 262 and Unicode in Rust's `regex`).
fn has_engine_dependent_class(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    bytes.windows(2).any(|pair| {
        pair[0] == b'\\'
            && matches!(
                pair[1],
                b'd' | b'D' | b'w' | b'W' | b's' | b'S' | b'b' | b'B' | b'p' | b'P'
            )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The errors jsonschema actually builds for `value`, nested branch errors included.
    fn built(schema: &Value, value: &Value) -> u64 {
        try_built(schema, value).expect("the schema compiles")
    }

    /// [`built`], or `None` for a schema the validator refuses.
    fn try_built(schema: &Value, value: &Value) -> Option<u64> {
        fn count(error: &jsonschema::ValidationError<'_>) -> u64 {
            use jsonschema::error::ValidationErrorKind;
            1 + match error.kind() {
                ValidationErrorKind::AnyOf { context }
                | ValidationErrorKind::OneOfNotValid { context } => {
                    context.iter().flatten().map(count).sum()
                }
                _ => 0,
            }
        }
        let validator = jsonschema::validator_for(schema).ok()?;
        Some(validator.iter_errors(value).map(|e| count(&e)).sum())
    }

    fn bound(schema: &Value, value: &Value) -> u64 {
        let patterns = CompiledPatterns::new();
        ErrorBound::new(schema, &patterns).errors(value, u64::MAX)
    }

    /// Each case: the bound is at least what the validator builds, and 0 exactly when the
    /// value is valid for the exact keywords.
    #[test]
    fn bounds_what_the_validator_builds() {
        let cases = [
            (json!({"required": ["a", "b", "c"]}), json!({"b": 1})),
            (json!({"type": "integer"}), json!(1.5)),
            (json!({"type": ["integer", "null"]}), json!(null)),
            (
                json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false}),
                json!({"a": 1, "x": 2, "y": 3}),
            ),
            (
                json!({"items": {"anyOf": [{"type": "object", "required": ["k"]}, {"type": "string", "minLength": 3}]}}),
                json!([{"none": 1}, "ab", "abc", {"k": 1}]),
            ),
            (
                json!({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 2}]}),
                json!("ab"),
            ),
            (
                json!({"$defs": {"n": {"type": "object", "required": ["v"], "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}),
                json!({"next": {"next": {"v": 1, "next": {}}}}),
            ),
            (
                json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer", "minimum": 0}}),
                json!(["a", 1, -1, "x", 0]),
            ),
            (
                json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]}}),
                json!({"d": 1}),
            ),
            (
                json!({"allOf": [{"minProperties": 2}, {"maxProperties": 0}]}),
                json!({"a": 1}),
            ),
            (json!({"enum": [1, "a", null]}), json!("b")),
            (json!({"exclusiveMaximum": 3}), json!(3)),
            (json!({"not": {"type": "string"}}), json!("s")),
        ];
        for (schema, value) in &cases {
            let (bound, built) = (bound(schema, value), built(schema, value));
            assert!(
                bound >= built,
                "{schema} / {value}: bound {bound} < built {built}"
            );
            assert!(
                built > 0 || bound <= 1,
                "{schema} / {value}: a valid value bounded by {bound}"
            );
        }
    }

    #[test]
    fn a_valid_value_of_exact_keywords_is_bounded_by_zero() {
        let schema = json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string", "minLength": 1},
            "ids": {"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}},
            "mode": {"enum": ["r", "w"]}}, "additionalProperties": false});
        let value = json!({"path": "/a", "ids": [1, null, 3], "mode": "w"});
        assert_eq!(built(&schema, &value), 0);
        assert_eq!(bound(&schema, &value), 0);
    }

    #[test]
    fn wide_required_over_many_objects_is_counted_up_to_the_cap() {
        let names: Vec<String> = (0..1024).map(|i| format!("f{i}")).collect();
        let schema = json!({"type": "array", "items": {"type": "object", "required": names}});
        let value = Value::Array(vec![json!({}); 200]);
        let patterns = CompiledPatterns::new();
        let walk = ErrorBound::new(&schema, &patterns);
        assert_eq!(walk.errors(&value, u64::MAX), 204_800);
        assert_eq!(walk.errors(&value, 5_000), 5_000);
    }

    #[test]
    fn an_any_of_with_a_certain_branch_builds_nothing() {
        let branches: Vec<Value> = (0..250)
            .map(|i| json!({"type": "object", "required": [format!("k{i}")]}))
            .collect();
        let schema = json!({"type": "array", "items": {"anyOf": branches}});
        let failing = Value::Array(vec![json!({"none": 1}); 200]);
        assert_eq!(bound(&schema, &failing), built(&schema, &failing));
        let passing = Value::Array(vec![json!({"k249": 1}); 200]);
        assert_eq!(bound(&schema, &passing), 0);
    }

    #[test]
    fn anchors_and_ids_are_resolved_through_the_document() {
        let schema = json!({"$defs": {"n": {"$anchor": "node", "required": ["a", "b"]}},
                            "items": {"$ref": "#node"}});
        assert_eq!(bound(&schema, &json!([{}, {"a": 1}])), 3);
    }

    #[test]
    fn engine_dependent_classes_are_never_certain() {
        assert!(has_engine_dependent_class(r"^\d+$"));
        assert!(!has_engine_dependent_class(r"^[0-9]+\.x$"));
    }

    mod props {
        use proptest::prelude::*;
        use serde_json::{Value, json};

        use super::{bound, try_built};

        /// Values over a small alphabet of keys, so that schemas and values meet.
        fn value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                (-3i64..4).prop_map(|n| json!(n)),
                Just(json!(1.5)),
                Just(json!(2.0)),
                "[ab1]{0,3}".prop_map(Value::String),
            ];
            leaf.prop_recursive(3, 24, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    prop::collection::vec(("[abc]", inner), 0..4)
                        .prop_map(|members| Value::Object(members.into_iter().collect())),
                ]
            })
        }

        /// Schemas from the keywords the bound knows, nested through applicators; with
        /// `with_ref`, some parts are `{"$ref": "#/$defs/d"}`.
        fn schema(with_ref: bool) -> impl Strategy<Value = Value> {
            let types = prop::sample::select(vec![
                "null", "boolean", "integer", "number", "string", "array", "object",
            ]);
            let leaf = prop_oneof![
                Just(json!(true)),
                Just(json!(false)),
                types.prop_map(|t| json!({"type": t})),
                prop::collection::vec("[abc]", 0..3).prop_map(|r| json!({"required": r})),
                (0u64..3).prop_map(|n| json!({"minLength": n, "maxItems": n, "maxProperties": n})),
                (-2i64..3).prop_map(|n| json!({"minimum": n, "exclusiveMaximum": n + 2})),
                (1u64..3).prop_map(|n| json!({"multipleOf": n})),
                Just(json!({"enum": [1, "a", null, [1]]})),
                Just(json!({"const": {"a": 1}})),
                Just(json!({"pattern": "^a", "format": "email"})),
                Just(json!({"uniqueItems": true, "contains": {"type": "string"}})),
                Just(json!({"dependentRequired": {"a": ["b", "c"]}})),
                Just(if with_ref {
                    json!({"$ref": "#/$defs/d"})
                } else {
                    json!({"type": "string"})
                }),
            ];
            leaf.prop_recursive(3, 32, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 1..4).prop_map(|b| json!({"anyOf": b})),
                    prop::collection::vec(inner.clone(), 1..4).prop_map(|b| json!({"oneOf": b})),
                    prop::collection::vec(inner.clone(), 1..4).prop_map(|b| json!({"allOf": b})),
                    inner.clone().prop_map(|s| json!({"not": s})),
                    (inner.clone(), inner.clone(), inner.clone())
                        .prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
                    (inner.clone(), inner.clone()).prop_map(|(a, extra)| json!({
                        "properties": {"a": a}, "additionalProperties": extra})),
                    (inner.clone(), inner.clone()).prop_map(|(a, extra)| json!({
                        "patternProperties": {"^b": a}, "unevaluatedProperties": extra})),
                    inner.clone().prop_map(|s| json!({"propertyNames": s})),
                    (inner.clone(), inner.clone())
                        .prop_map(|(first, rest)| json!({"prefixItems": [first], "items": rest})),
                    inner.prop_map(|s| json!({"unevaluatedItems": s})),
                ]
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2_000))]

            /// The bound is never below what the validator builds, so a call within the
            /// budget never makes the validator build more.
            #[test]
            fn never_below_what_the_validator_builds(
                main in schema(true),
                definition in schema(false),
                value in value(),
            ) {
                let schema = json!({"$defs": {"d": definition}, "allOf": [main]});
                let built = try_built(&schema, &value);
                prop_assume!(built.is_some(), "a schema the validator refuses");
                let (bound, built) = (bound(&schema, &value), built.unwrap_or_default());
                prop_assert!(bound >= built, "{} / {}: bound {} < built {}", schema, value, bound, built);
            }
        }
    }
}
