//! The evaluation cost of a schema, bounded before it is compiled (issue #8, item 1).
//!
//! Schemas come from strangers. A 2 KB schema whose `$defs` chain through `anyOf` with two
//! `$ref`s per level makes the validator evaluate 2^depth subschemas at one instance location,
//! and every failing branch builds an error. So before a schema is compiled, the number of
//! subschema evaluations it can cause at *one* instance location is measured, and a schema
//! above [`crate::limits::MAX_SCHEMA_EVALUATIONS`] is refused with an error that names the
//! construct. Work per call is then at most that bound times the instance's size.
//!
//! The measure is an upper bound computed over the schema graph (subschemas and resolved
//! `$ref`s), each node once:
//!
//! - `P(s)`: the schemas evaluated where `s` is (in-place: `$ref`, `allOf` / `anyOf` / `oneOf`,
//!   `not`, `if` / `then` / `else`, `dependentSchemas`), counted with multiplicity, so a node
//!   reached by two paths counts twice;
//! - `G(s)`: for each member label (a property name, "any key", an index, "any index"), the
//!   total bound of the schemas applied to that member, summed over the in-place closure;
//! - `W(s) = max(P(s), G(s) at its worst label)`: the most evaluations at any one location
//!   below `s`. A label map past [`MAX_LABELS`] entries is folded into its wildcard (a larger,
//!   still sound bound).
//!
//! Beside the evaluations, the same walk measures the *key matches* at each location: how many
//! patterns every key of an object there is matched against (each `patternProperties` entry,
//! again for an `additionalProperties` / `unevaluatedProperties` beside them, one for a
//! `propertyNames` schema), summed over the in-place closure with multiplicity. That width is
//! not refused here (16 patterns are fine on a small call); its worst value over the schema is
//! returned, and each call is charged its number of keys times it before validation
//! ([`crate::limits::MAX_CALL_KEY_MATCHES`]).
//!
//! Recursion through members (a tree schema) is linear in the instance when each revolution
//! re-enters the schema at most once per member; a schema whose recursion re-enters itself
//! twice for the same member (so work doubles at each instance level) is refused, and so is a
//! `$ref` cycle that does not descend into the instance at all.

use std::collections::HashMap;

use serde_json::Value;

use crate::limits::{
    MAX_DEPTH, MAX_SCHEMA_ENUM_MEMBERS, MAX_SCHEMA_EVALUATIONS, MAX_SCHEMA_PATTERN_PROPERTIES,
    MAX_SCHEMA_REQUIRED,
};

/// Most member labels one node keeps apart before folding them into wildcards.
const MAX_LABELS: usize = 4096;

/// Which member of an instance a subschema applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Label<'s> {
    /// The property of that name.
    Key(&'s str),
    /// Any property (`additionalProperties`, `patternProperties`, `propertyNames`, …).
    AnyKey,
    /// The item at that index (`prefixItems`, tuple `items`).
    Index(usize),
    /// Any item (`items`, `contains`, …).
    AnyIndex,
}

/// Counts that saturate just past the budget, so the measure never overflows.
fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
        .min(MAX_SCHEMA_EVALUATIONS.saturating_add(1))
}

/// What one instance location costs: subschema evaluations, and pattern matches per key.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Cost {
    /// Subschema evaluations (saturating just past [`MAX_SCHEMA_EVALUATIONS`]).
    evals: u64,
    /// Patterns each key of an object here is matched against (saturating).
    keys: u64,
}

impl Cost {
    /// One evaluation of a schema matching each key against `keys` patterns.
    const fn one(keys: u64) -> Self {
        Self { evals: 1, keys }
    }

    /// Both costs paid at one location.
    fn plus(self, other: Self) -> Self {
        Self {
            evals: add(self.evals, other.evals),
            keys: self.keys.saturating_add(other.keys),
        }
    }

    /// The worse of two locations, each measure on its own (a sound bound for both).
    fn max(self, other: Self) -> Self {
        Self {
            evals: self.evals.max(other.evals),
            keys: self.keys.max(other.keys),
        }
    }
}

/// The patterns each key of an object is matched against by `node` itself: every
/// `patternProperties` entry, again when `additionalProperties` or `unevaluatedProperties`
/// stands beside them (the validator matches a key against them all to know if it is
/// additional), and one for a `propertyNames` schema.
fn own_key_matches(node: &Value) -> u64 {
    let Value::Object(map) = node else {
        return 0;
    };
    let patterns = map
        .get("patternProperties")
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len) as u64;
    let rematched = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|k| map.contains_key(*k));
    let names = u64::from(map.contains_key("propertyNames"));
    patterns
        .saturating_mul(if rematched { 2 } else { 1 })
        .saturating_add(names)
}

/// Labelled bounds: what each member of an instance location gets evaluated against.
#[derive(Debug, Default, Clone)]
struct Members<'s> {
    by_label: HashMap<Label<'s>, Cost>,
}

impl<'s> Members<'s> {
    fn add(&mut self, label: Label<'s>, amount: Cost) {
        let slot = self.by_label.entry(label).or_default();
        *slot = slot.plus(amount);
        if self.by_label.len() > MAX_LABELS {
            self.fold();
        }
    }

    fn merge(&mut self, other: &Self) {
        for (&label, &amount) in &other.by_label {
            self.add(label, amount);
        }
    }

    /// Folds named keys and indexes into their wildcards: any key then gets at least what
    /// the worst named key got, so the bound stays sound.
    fn fold(&mut self) {
        let (mut keys, mut indexes) = (Cost::default(), Cost::default());
        self.by_label.retain(|label, amount| match label {
            Label::Key(_) => {
                keys = keys.max(*amount);
                false
            }
            Label::Index(_) => {
                indexes = indexes.max(*amount);
                false
            }
            _ => true,
        });
        self.add(Label::AnyKey, keys);
        self.add(Label::AnyIndex, indexes);
    }

    /// The most any one member can cost, each measure on its own.
    fn worst(&self) -> Cost {
        let any_key = self
            .by_label
            .get(&Label::AnyKey)
            .copied()
            .unwrap_or_default();
        let any_index = self
            .by_label
            .get(&Label::AnyIndex)
            .copied()
            .unwrap_or_default();
        self.by_label
            .iter()
            .map(|(label, &amount)| match label {
                Label::Key(_) => amount.plus(any_key),
                Label::Index(_) => amount.plus(any_index),
                _ => amount,
            })
            .fold(Cost::default(), Cost::max)
    }
}

/// Re-entries into a schema still being measured (a recursive `$ref`), by the first member
/// the path descends into (`None` while it has not descended).
type Loops<'s> = HashMap<(usize, Option<Label<'s>>), u64>;

/// What is known about one schema node once measured.
#[derive(Debug, Default)]
struct Measure<'s> {
    /// `P`: evaluations (and key matches) at the node's own location.
    here: Cost,
    /// `G`: evaluations per member.
    members: Members<'s>,
    /// Paths back into nodes still on the stack.
    loops: Loops<'s>,
}

impl Measure<'_> {
    /// `W`: the most evaluations (and key matches) at one location at or below the node.
    fn worst(&self) -> Cost {
        self.here.max(self.members.worst())
    }
}

/// One node being measured: its edges and what its finished children gave so far.
struct Frame<'s> {
    node: &'s Value,
    /// The label of the edge that led here from the frame below.
    via: Option<Label<'s>>,
    edges: Vec<(Option<Label<'s>>, &'s Value)>,
    next: usize,
    measure: Measure<'s>,
    /// Complete paths back into this node, by the first member they descend into.
    revolutions: HashMap<Option<Label<'s>>, u64>,
}

enum State<'s> {
    Active,
    Done(Measure<'s>),
}

/// The anchors and ids of the document, for `$ref`.
pub(crate) struct Document<'s> {
    root: &'s Value,
    anchors: HashMap<&'s str, &'s Value>,
    ids: Vec<(&'s str, &'s Value)>,
}

fn address(node: &Value) -> usize {
    std::ptr::from_ref(node) as usize
}

impl<'s> Document<'s> {
    pub(crate) fn index(root: &'s Value) -> Result<Self, String> {
        let mut document = Self {
            root,
            anchors: HashMap::new(),
            ids: Vec::new(),
        };
        // Pointers are built for error messages only, lazily: a pointer string per schema
        // object was most of this walk's allocations on a 10,000-property schema.
        let mut stack = vec![(root, 0usize)];
        while let Some((node, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(format!(
                    "the schema is nested deeper than {MAX_DEPTH} levels"
                ));
            }
            match node {
                Value::Object(map) => {
                    if let Err(keyword) = too_wide(map) {
                        return Err(keyword.describe(&document.pointer(node)));
                    }
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(Value::String(name)) = map.get(key) {
                            document.anchors.insert(name, node);
                        }
                    }
                    if let Some(Value::String(id)) = map.get("$id").or_else(|| map.get("id")) {
                        document.ids.push((id, node));
                    }
                    for child in map.values() {
                        if child.is_object() || child.is_array() {
                            stack.push((child, depth + 1));
                        }
                    }
                }
                Value::Array(items) => {
                    for child in items {
                        if child.is_object() || child.is_array() {
                            stack.push((child, depth + 1));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(document)
    }

    /// `#` and the JSON Pointer of `node` in the document, found by a search from the root
    /// (only an error message needs it).
    fn pointer(&self, node: &Value) -> String {
        let wanted = address(node);
        let mut stack = vec![(self.root, String::new(), 0usize)];
        while let Some((here, pointer, depth)) = stack.pop() {
            if address(here) == wanted {
                return format!("#{pointer}");
            }
            if depth > MAX_DEPTH {
                continue;
            }
            match here {
                Value::Object(map) => {
                    for (key, child) in map {
                        let mut at = pointer.clone();
                        crate::pointer::push(&mut at, key);
                        stack.push((child, at, depth + 1));
                    }
                }
                Value::Array(items) => {
                    for (index, child) in items.iter().enumerate() {
                        stack.push((child, format!("{pointer}/{index}"), depth + 1));
                    }
                }
                _ => {}
            }
        }
        "?".to_owned()
    }

    /// The schema a reference names: a JSON Pointer or anchor fragment, optionally after the
    /// `$id` of a schema embedded in the document.
    pub(crate) fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let scope = if base.is_empty() {
            self.root
        } else {
            self.ids
                .iter()
                .find(|(id, _)| {
                    let id = id.split('#').next().unwrap_or_default();
                    id == base || id.ends_with(&format!("/{base}"))
                })
                .map(|(_, node)| *node)?
        };
        if fragment.is_empty() {
            return Some(scope);
        }
        if fragment.starts_with('/') {
            return scope.pointer(&percent_decode(fragment));
        }
        self.anchors.get(fragment).copied()
    }
}

/// `%25`-style escapes of a URI fragment, decoded (invalid escapes are kept as they are).
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The subschemas `node` applies, with the member each applies to (`None`: in place).
fn edges<'s>(
    document: &Document<'s>,
    node: &'s Value,
) -> Result<Vec<(Option<Label<'s>>, &'s Value)>, String> {
    let Value::Object(map) = node else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, value) in map {
        match (key.as_str(), value) {
            ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(reference)) => {
                let Some(target) = document.resolve(reference) else {
                    return Err(format!(
                        "the `{key}` at `{}` names a schema outside the document",
                        document.pointer(node)
                    ));
                };
                out.push((None, target));
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(branches)) => {
                out.extend(branches.iter().map(|b| (None, b)));
            }
            ("not" | "if" | "then" | "else", _) => out.push((None, value)),
            ("dependentSchemas" | "dependencies", Value::Object(schemas)) => {
                out.extend(
                    schemas
                        .values()
                        .filter(|s| !s.is_array())
                        .map(|s| (None, s)),
                );
            }
            ("properties", Value::Object(properties)) => {
                out.extend(properties.iter().map(|(k, s)| (Some(Label::Key(k)), s)));
            }
            ("patternProperties", Value::Object(schemas)) => {
                out.extend(schemas.values().map(|s| (Some(Label::AnyKey), s)));
            }
            ("additionalProperties" | "unevaluatedProperties" | "propertyNames", _) => {
                out.push((Some(Label::AnyKey), value));
            }
            ("items" | "prefixItems", Value::Array(tuple)) => {
                out.extend(
                    tuple
                        .iter()
                        .enumerate()
                        .map(|(i, s)| (Some(Label::Index(i)), s)),
                );
            }
            ("items" | "additionalItems" | "unevaluatedItems" | "contains", _) => {
                out.push((Some(Label::AnyIndex), value));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A keyword over its width limit, described once its schema's pointer is known.
struct TooWide {
    keyword: &'static str,
    width: usize,
    limit: usize,
}

impl TooWide {
    /// The error naming the keyword at `pointer` (`#/…`, the schema object holding it).
    fn describe(&self, pointer: &str) -> String {
        let mut at = pointer.to_owned();
        crate::pointer::push(&mut at, self.keyword);
        let (keyword, width, limit) = (self.keyword, self.width, self.limit);
        format!(
            "the `{keyword}` at `{at}` has {width} entries, more than the {limit} toolmend \
             allows (each call would be checked against every one)"
        )
    }
}

/// Refuses a keyword whose width multiplies the work of every call: an `enum`, a `required`
/// list or a `patternProperties` object over its limit.
fn too_wide(map: &serde_json::Map<String, Value>) -> Result<(), TooWide> {
    let widths = [
        (
            "enum",
            map.get("enum").and_then(Value::as_array).map(Vec::len),
            MAX_SCHEMA_ENUM_MEMBERS,
        ),
        (
            "required",
            map.get("required").and_then(Value::as_array).map(Vec::len),
            MAX_SCHEMA_REQUIRED,
        ),
        (
            "patternProperties",
            map.get("patternProperties")
                .and_then(Value::as_object)
                .map(serde_json::Map::len),
            MAX_SCHEMA_PATTERN_PROPERTIES,
        ),
    ];
    for (keyword, width, limit) in widths {
        if let Some(width) = width
            && width > limit
        {
            return Err(TooWide {
                keyword,
                width,
                limit,
            });
        }
    }
    Ok(())
}

/// What [`check`] measured of a schema it accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Widths {
    /// The most patterns one key of the instance can be matched against at any location (see
    /// the module documentation); 0 when the schema matches keys against no pattern.
    pub(crate) key_matches: u64,
}

/// Checks that `schema` causes at most [`MAX_SCHEMA_EVALUATIONS`] subschema evaluations at any
/// one instance location, and that its recursion stays linear. The error names the construct.
/// Returns the widths a call is charged for ([`Widths`]).
///
/// # Errors
///
/// A message naming the JSON Pointer of the schema that is over the budget, recursive in a way
/// that doubles work per level, or that refers outside the document.
pub(crate) fn check(schema: &Value) -> Result<Widths, String> {
    let document = Document::index(schema)?;
    let mut states: HashMap<usize, State<'_>> = HashMap::new();
    let mut stack: Vec<Frame<'_>> = Vec::new();
    if !schema.is_object() {
        return Ok(Widths::default());
    }
    let mut widths = Widths::default();
    stack.push(open(&document, &mut states, schema, None)?);
    while let Some(top) = stack.last_mut() {
        let Some(&(label, child)) = top.edges.get(top.next) else {
            let frame = stack.pop().expect("the loop holds a frame");
            let (node, via) = (frame.node, frame.via);
            let measure = finish(&document, frame)?;
            widths.key_matches = widths.key_matches.max(measure.worst().keys);
            if let Some(parent) = stack.last_mut() {
                absorb(parent, via, &measure, &states);
            }
            states.insert(address(node), State::Done(measure));
            continue;
        };
        top.next += 1;
        if !child.is_object() {
            // `true` / `false`: one evaluation, nothing below.
            match label {
                None => top.measure.here = top.measure.here.plus(Cost::one(0)),
                Some(label) => top.measure.members.add(label, Cost::one(0)),
            }
            continue;
        }
        match states.get(&address(child)) {
            None => {
                let frame = open(&document, &mut states, child, label)?;
                stack.push(frame);
            }
            Some(State::Active) => {
                // A recursive `$ref`: one more path back into a node on the stack.
                if address(child) == address(top.node) {
                    let slot = top.revolutions.entry(label).or_insert(0);
                    *slot = add(*slot, 1);
                } else {
                    let slot = top
                        .measure
                        .loops
                        .entry((address(child), label))
                        .or_insert(0);
                    *slot = add(*slot, 1);
                }
                // The node's own key matches: what it adds below is counted where it was
                // first measured, one revolution up.
                let again = Cost::one(own_key_matches(child));
                match label {
                    None => top.measure.here = top.measure.here.plus(again),
                    Some(label) => top.measure.members.add(label, again),
                }
            }
            Some(State::Done(measure)) => absorb(top, label, measure, &states),
        }
    }
    Ok(widths)
}

/// Starts measuring `node`.
fn open<'s>(
    document: &Document<'s>,
    states: &mut HashMap<usize, State<'s>>,
    node: &'s Value,
    via: Option<Label<'s>>,
) -> Result<Frame<'s>, String> {
    states.insert(address(node), State::Active);
    Ok(Frame {
        node,
        via,
        edges: edges(document, node)?,
        next: 0,
        measure: Measure {
            here: Cost::one(own_key_matches(node)),
            ..Measure::default()
        },
        revolutions: HashMap::new(),
    })
}

/// Adds a measured child, reached through `label`, to `frame`.
fn absorb<'s>(
    frame: &mut Frame<'s>,
    label: Option<Label<'s>>,
    child: &Measure<'s>,
    states: &HashMap<usize, State<'s>>,
) {
    match label {
        None => {
            frame.measure.here = frame.measure.here.plus(child.here);
            frame.measure.members.merge(&child.members);
        }
        Some(label) => frame.measure.members.add(label, child.worst()),
    }
    let own = address(frame.node);
    for (&(head, first), &count) in &child.loops {
        let first = label.or(first);
        if head == own {
            let slot = frame.revolutions.entry(first).or_insert(0);
            *slot = add(*slot, count);
        } else if matches!(states.get(&head), Some(State::Active)) {
            let slot = frame.measure.loops.entry((head, first)).or_insert(0);
            *slot = add(*slot, count);
        }
    }
}

/// Checks a node once all its edges are measured.
fn finish<'s>(document: &Document<'s>, frame: Frame<'s>) -> Result<Measure<'s>, String> {
    let at = || document.pointer(frame.node);
    let revolutions = &frame.revolutions;
    if revolutions.contains_key(&None) {
        return Err(format!(
            "the schema at `{}` refers back to itself without descending into the instance \
             (a `$ref` cycle that never ends)",
            at()
        ));
    }
    let count = |label: Label<'s>| revolutions.get(&Some(label)).copied().unwrap_or(0);
    let (any_key, any_index) = (count(Label::AnyKey), count(Label::AnyIndex));
    let doubling = revolutions.keys().flatten().find(|label| {
        let n = match label {
            Label::Key(_) => add(count(**label), any_key),
            Label::Index(_) => add(count(**label), any_index),
            _ => count(**label),
        };
        n >= 2
    });
    if let Some(label) = doubling {
        let member = match label {
            Label::Key(name) => format!("property `{}`", crate::feedback::escape_name(name)),
            Label::AnyKey => "any property".to_owned(),
            Label::Index(i) => format!("item {i}"),
            Label::AnyIndex => "any item".to_owned(),
        };
        return Err(format!(
            "the schema at `{}` recurses into itself along several paths for {member}, so \
             validation work would double at every level of the instance",
            at()
        ));
    }
    let worst = frame.measure.worst().evals;
    if worst > MAX_SCHEMA_EVALUATIONS {
        let construct = [
            "anyOf",
            "oneOf",
            "allOf",
            "$ref",
            "not",
            "if",
            "properties",
            "items",
        ]
        .into_iter()
        .find(|k| frame.node.get(k).is_some())
        .unwrap_or("schema");
        return Err(format!(
            "the `{construct}` at `{}` expands to more than {MAX_SCHEMA_EVALUATIONS} subschema \
             evaluations at one instance location (branches through shared `$ref`s multiply)",
            at()
        ));
    }
    Ok(frame.measure)
}

#[cfg(test)]
mod tests {
    #[test]
    fn refuses_keywords_wider_than_their_limit_and_names_them() {
        use serde_json::json;
        let members: Vec<usize> = (0..=super::MAX_SCHEMA_ENUM_MEMBERS).collect();
        let error = super::check(&json!({"properties": {"x": {"enum": members}}})).unwrap_err();
        assert!(error.contains("`enum` at `#/properties/x/enum`"), "{error}");
        let names: Vec<String> = (0..=super::MAX_SCHEMA_REQUIRED)
            .map(|i| format!("k{i}"))
            .collect();
        let error = super::check(&json!({"required": names})).unwrap_err();
        assert!(error.contains("`required` at `#/required`"), "{error}");
        let patterns: serde_json::Map<String, serde_json::Value> = (0
            ..=super::MAX_SCHEMA_PATTERN_PROPERTIES)
            .map(|i| (format!("^p{i}"), json!({})))
            .collect();
        let error = super::check(&json!({"patternProperties": patterns})).unwrap_err();
        assert!(
            error.contains("`patternProperties` at `#/patternProperties`"),
            "{error}"
        );
        // At the limit, accepted.
        let members: Vec<usize> = (0..super::MAX_SCHEMA_ENUM_MEMBERS).collect();
        assert!(super::check(&json!({"enum": members})).is_ok());
    }

    use serde_json::{Map, json};

    use super::*;

    /// `depth` levels of `combinator` with two branches into the next level.
    fn chain(combinator: &str, depth: usize) -> Value {
        let mut defs = Map::new();
        for level in 0..depth {
            let next = json!({"$ref": format!("#/$defs/d{}", level + 1)});
            defs.insert(
                format!("d{level}"),
                json!({combinator: [next, {"not": next}]}),
            );
        }
        defs.insert(format!("d{depth}"), json!({"type": "string"}));
        json!({"properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs})
    }

    #[test]
    fn shallow_chains_pass_and_deep_ones_are_refused_by_name() {
        assert!(check(&chain("anyOf", 5)).is_ok());
        let error = check(&chain("oneOf", 16)).unwrap_err();
        assert!(error.contains("the `oneOf` at `#/$defs/d"), "{error}");
        assert!(
            error.contains(&MAX_SCHEMA_EVALUATIONS.to_string()),
            "{error}"
        );
    }

    #[test]
    fn branches_that_multiply_across_levels_are_refused() {
        // Both branches send member `a` to the next level: 2^depth schemas at `/a/a/…/a`.
        let mut defs = Map::new();
        for level in 0..16 {
            let next = json!({"properties": {"a": {"$ref": format!("#/$defs/d{}", level + 1)}}});
            defs.insert(format!("d{level}"), json!({"anyOf": [next, next]}));
        }
        defs.insert("d16".to_owned(), json!({"type": "string"}));
        let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
        assert!(check(&schema).is_err());
    }

    #[test]
    fn wide_and_tree_shaped_schemas_pass() {
        let properties: Map<String, Value> = (0..40_000)
            .map(|i| (format!("f{i}"), json!({"type": "string"})))
            .collect();
        assert!(check(&json!({"properties": properties})).is_ok());
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {
            "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"});
        assert!(check(&tree).is_ok());
        let json_value = json!({"anyOf": [{"type": "string"},
            {"type": "array", "items": {"$ref": "#"}},
            {"type": "object", "additionalProperties": {"$ref": "#"}}]});
        assert!(check(&json_value).is_ok());
    }

    #[test]
    fn recursion_that_doubles_per_level_is_refused() {
        let doubling = json!({"anyOf": [{"properties": {"c": {"$ref": "#"}}},
                                        {"properties": {"c": {"$ref": "#"}}}]});
        let error = check(&doubling).unwrap_err();
        assert!(error.contains("property `c`"), "{error}");
        let through_shared = json!({"$defs": {"s": {"properties": {"c": {"$ref": "#"}}}},
            "anyOf": [{"$ref": "#/$defs/s"}, {"$ref": "#/$defs/s"}]});
        assert!(check(&through_shared).is_err());
    }

    #[test]
    fn cycles_that_never_descend_are_refused() {
        assert!(
            check(&json!({"$ref": "#"}))
                .unwrap_err()
                .contains("never ends")
        );
        let mutual = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a"});
        assert!(check(&mutual).is_err());
    }

    #[test]
    fn key_matches_are_the_worst_location_with_multiplicity() {
        let key_matches = |schema: Value| check(&schema).map(|w| w.key_matches);
        let patterns = |n: usize| -> Map<String, Value> {
            (0..n).map(|i| (format!("^p{i}"), json!({}))).collect()
        };
        assert_eq!(key_matches(json!({"properties": {"a": {}}})), Ok(0));
        assert_eq!(
            key_matches(json!({"patternProperties": patterns(16)})),
            Ok(16)
        );
        // Beside `additionalProperties`, every key is matched again; `propertyNames` adds one.
        let both = json!({"patternProperties": patterns(16), "additionalProperties": false,
                          "propertyNames": {"pattern": "^p"}});
        assert_eq!(key_matches(both), Ok(33));
        // Two `$ref`s to one patterned schema at one location: counted twice; the deeper
        // location is the worst one.
        let shared = json!({"$defs": {"p": {"patternProperties": patterns(3)}},
            "patternProperties": patterns(1),
            "properties": {"x": {"allOf": [{"$ref": "#/$defs/p"}, {"$ref": "#/$defs/p"}]}}});
        assert_eq!(key_matches(shared), Ok(6));
        // A member reached by a declared name and a pattern gets both.
        let member = json!({"properties": {"x": {"patternProperties": patterns(2)}},
            "patternProperties": {"^x": {"patternProperties": patterns(5)}}});
        assert_eq!(key_matches(member), Ok(7));
    }

    #[test]
    fn refs_resolve_by_pointer_anchor_and_id() {
        let schema = json!({"$defs": {
            "a~b": {"$anchor": "thing", "type": "string"},
            "c": {"$id": "https://example.com/c.json", "type": "integer"}},
            "properties": {"p": {"$ref": "#/$defs/a~0b"}, "q": {"$ref": "#thing"},
                           "r": {"$ref": "https://example.com/c.json"}}});
        assert!(check(&schema).is_ok());
        let outside = json!({"properties": {"p": {"$ref": "#/$defs/missing"}}});
        assert!(
            check(&outside)
                .unwrap_err()
                .contains("outside the document")
        );
    }
}
