//! Walking a JSON Schema beside an instance.
//!
//! A [`SchemaView`] is every schema object that applies at one instance location: the node
//! itself, with `$ref` followed and `allOf` / `anyOf` / `oneOf` branches expanded. Rules ask it
//! questions ("may this be an array?", "is `limit` required?", "what do the items look like?")
//! and the final validation decides; a view is a union, so it answers "may", never "must".

use std::collections::HashMap;

use serde_json::Value;

use crate::prepare::{FieldSemantic, field_semantic};

/// A tool's patterns compiled once when its set is built, by pattern text.
pub(crate) type CompiledPatterns = HashMap<String, regex::Regex>;

/// How many schema objects one view may hold; a schema that branches more is cut off there.
const MAX_PARTS: usize = 64;
/// How many `$ref` hops or combinator levels one expansion follows.
const MAX_EXPANSION_DEPTH: usize = 16;
/// How many `patternProperties` of one schema object are tried against a key; the rest are
/// left to the validator.
const MAX_PATTERN_PROPERTIES: usize = 16;

/// JSON types as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Types(u8);

impl Types {
    pub(crate) const NULL: Self = Self(1);
    pub(crate) const BOOLEAN: Self = Self(2);
    pub(crate) const INTEGER: Self = Self(4);
    /// `number` includes integers.
    pub(crate) const NUMBER: Self = Self(8 | 4);
    pub(crate) const STRING: Self = Self(16);
    pub(crate) const ARRAY: Self = Self(32);
    pub(crate) const OBJECT: Self = Self(64);
    pub(crate) const ANY: Self = Self(127);
    /// No type at all: a `false` schema.
    pub(crate) const NOTHING: Self = Self(0);
    const NONE: Self = Self(0);

    fn from_name(name: &str) -> Self {
        match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            "array" => Self::ARRAY,
            "object" => Self::OBJECT,
            _ => Self::NONE,
        }
    }

    /// The type of a JSON value (an integral number is an integer).
    pub(crate) fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::INTEGER,
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => Self::INTEGER,
            Value::Number(_) => Self(8),
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }

    /// Whether every type of `other` is in `self`.
    pub(crate) fn contains(self, other: Self) -> bool {
        other.0 != 0 && self.0 & other.0 == other.0
    }

    fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// The schema objects that apply at one instance location.
#[derive(Debug, Clone)]
pub(crate) struct SchemaView<'s> {
    root: &'s Value,
    /// The tool's compiled patterns: `patternProperties` are matched with these, never
    /// compiled per key (a wide call against many patterns would compile keys × patterns).
    compiled: Option<&'s CompiledPatterns>,
    /// Empty means "anything": no schema constrains this location.
    parts: Vec<&'s Value>,
}

impl<'s> SchemaView<'s> {
    /// The view of `node`, a schema inside `root`, matching `patternProperties` by compiling
    /// each pattern (tests; the crate uses [`Self::of_tool`]).
    #[cfg(test)]
    pub(crate) fn new(root: &'s Value, node: &'s Value) -> Self {
        Self::of_nodes(root, None, [node])
    }

    /// The view of a tool's whole schema `root`, matching `patternProperties` with the tool's
    /// compiled patterns; a pattern not among them matches nothing (the validator decides).
    pub(crate) fn of_tool(root: &'s Value, compiled: &'s CompiledPatterns) -> Self {
        Self::of_nodes(root, Some(compiled), [root])
    }

    fn of_nodes(
        root: &'s Value,
        compiled: Option<&'s CompiledPatterns>,
        nodes: impl IntoIterator<Item = &'s Value>,
    ) -> Self {
        let mut view = Self {
            root,
            compiled,
            parts: Vec::new(),
        };
        for node in nodes {
            view.expand(node, 0);
        }
        view
    }

    fn expand(&mut self, node: &'s Value, depth: usize) {
        if depth > MAX_EXPANSION_DEPTH || self.parts.len() >= MAX_PARTS {
            return;
        }
        let Value::Object(map) = node else {
            // `true` allows anything and adds nothing; `false` allows nothing.
            if node == &Value::Bool(false) {
                self.parts.push(node);
            }
            return;
        };
        if self.parts.iter().any(|p| std::ptr::eq(*p, node)) {
            return;
        }
        self.parts.push(node);
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            self.expand(target, depth + 1);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.expand(branch, depth + 1);
            }
        }
    }

    /// Resolves a local reference (`#`, `#/$defs/x`); remote references resolve to nothing
    /// because toolmend never fetches.
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let fragment = reference.strip_prefix('#')?;
        if fragment.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(fragment)
    }

    /// Parts that constrain the type, i.e. not pure containers of `$ref`/combinators.
    fn typed_parts(&self) -> impl Iterator<Item = (&'s Value, Types)> + '_ {
        self.parts.iter().filter_map(|part| {
            let Value::Object(map) = part else {
                return Some((*part, Types::NONE));
            };
            let types = match map.get("type") {
                Some(Value::String(name)) => Types::from_name(name),
                Some(Value::Array(names)) => names
                    .iter()
                    .filter_map(Value::as_str)
                    .fold(Types::NONE, |acc, n| acc.union(Types::from_name(n))),
                _ => {
                    let mut inferred = Types::NONE;
                    if ["properties", "required", "additionalProperties"]
                        .iter()
                        .any(|k| map.contains_key(*k))
                    {
                        inferred = inferred.union(Types::OBJECT);
                    }
                    if ["items", "prefixItems", "minItems", "maxItems"]
                        .iter()
                        .any(|k| map.contains_key(*k))
                    {
                        inferred = inferred.union(Types::ARRAY);
                    }
                    for value in enum_members(map) {
                        inferred = inferred.union(Types::of(value));
                    }
                    if inferred == Types::NONE {
                        return None;
                    }
                    inferred
                }
            };
            Some((*part, types))
        })
    }

    /// Every type some part allows; `ANY` when no part constrains the type.
    pub(crate) fn types(&self) -> Types {
        let mut any_typed = false;
        let mut types = Types::NONE;
        for (_, t) in self.typed_parts() {
            any_typed = true;
            types = types.union(t);
        }
        if any_typed { types } else { Types::ANY }
    }

    /// Whether a value of type `t` may stand here.
    pub(crate) fn allows(&self, t: Types) -> bool {
        self.types().contains(t)
    }

    /// Whether null may stand here (by type, enum or const).
    pub(crate) fn allows_null(&self) -> bool {
        self.allows(Types::NULL)
    }

    /// The view of property `key` of an object here: the parts that declare it and those of
    /// `patternProperties` whose pattern matches it; when there are none, the
    /// `additionalProperties` schemas. `None` when nothing covers the key.
    pub(crate) fn property(&self, key: &str) -> Option<Self> {
        let mut applying: Vec<&'s Value> = self
            .object_parts()
            .filter_map(|map| map.get("properties")?.get(key))
            .collect();
        for map in self.object_parts() {
            let Some(patterns) = map.get("patternProperties").and_then(Value::as_object) else {
                continue;
            };
            for (pattern, schema) in patterns.iter().take(MAX_PATTERN_PROPERTIES) {
                if self.pattern_matches(pattern, key) {
                    applying.push(schema);
                }
            }
        }
        if !applying.is_empty() {
            return Some(Self::of_nodes(self.root, self.compiled, applying));
        }
        let additional: Vec<&'s Value> = self
            .object_parts()
            .filter_map(|map| map.get("additionalProperties"))
            .filter(|v| v.is_object())
            .collect();
        (!additional.is_empty()).then(|| Self::of_nodes(self.root, self.compiled, additional))
    }

    /// Whether some part declares property `key`.
    pub(crate) fn declares(&self, key: &str) -> bool {
        self.object_parts()
            .any(|map| map.get("properties").and_then(|p| p.get(key)).is_some())
    }

    /// Every declared property name, in declaration order, without repeats. Linear in the
    /// number of names: one part's names are taken as they are (a map has no repeats), and
    /// only names of several parts go through a hash set (a schema may declare 40 000).
    pub(crate) fn declared_names(&self) -> Vec<&'s str> {
        let mut declaring = self.object_parts().filter_map(properties_of);
        let Some(first) = declaring.next() else {
            return Vec::new();
        };
        let mut names: Vec<&'s str> = first.keys().map(String::as_str).collect();
        let mut seen: Option<std::collections::HashSet<&'s str>> = None;
        for more in declaring {
            let seen = seen.get_or_insert_with(|| names.iter().copied().collect());
            for name in more.keys() {
                if seen.insert(name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The first `limit` names of [`Self::declared_names`], found without walking the rest:
    /// a retry message draws a few fields of a schema that may declare 40 000. Each part adds
    /// distinct names, so at most `limit` names of one part repeat earlier ones, and the scan
    /// per part stops after `2 × limit` names.
    pub(crate) fn first_declared_names(&self, limit: usize) -> Vec<&'s str> {
        let mut names: Vec<&'s str> = Vec::new();
        for properties in self.object_parts().filter_map(properties_of) {
            for name in properties.keys() {
                if names.len() >= limit {
                    return names;
                }
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// Whether some part lists `key` in `required`.
    pub(crate) fn is_required(&self, key: &str) -> bool {
        self.required_names().any(|name| name == key)
    }

    /// Every required name (repeats possible).
    pub(crate) fn required_names(&self) -> impl Iterator<Item = &'s str> + '_ {
        self.object_parts()
            .filter_map(|map| map.get("required").and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_str)
    }

    /// The view of item `index` of an array here.
    pub(crate) fn item(&self, index: usize) -> Option<Self> {
        let nodes: Vec<&'s Value> = self
            .object_parts()
            .filter_map(|map| {
                if let Some(prefix) = map.get("prefixItems").and_then(Value::as_array) {
                    return prefix.get(index).or_else(|| map.get("items"));
                }
                match map.get("items") {
                    Some(Value::Array(tuple)) => {
                        tuple.get(index).or_else(|| map.get("additionalItems"))
                    }
                    other => other,
                }
            })
            .collect();
        (!nodes.is_empty()).then(|| Self::of_nodes(self.root, self.compiled, nodes))
    }

    /// The largest `minItems` of any part.
    pub(crate) fn min_items(&self) -> u64 {
        self.object_parts()
            .filter_map(|map| map.get("minItems")?.as_u64())
            .max()
            .unwrap_or(0)
    }

    /// Every `enum` member and `const` value of any part.
    pub(crate) fn enum_values(&self) -> Vec<&'s Value> {
        self.object_parts().flat_map(enum_members).collect()
    }

    /// The members of the one `enum` here, when exactly one part constrains the value by
    /// `enum` and none by `const` (an index built for it then answers for the whole view).
    pub(crate) fn only_enum(&self) -> Option<&'s [Value]> {
        let mut found = None;
        for map in self.object_parts() {
            if map.contains_key("const") {
                return None;
            }
            if let Some(members) = map.get("enum").and_then(Value::as_array) {
                if found.is_some() {
                    return None;
                }
                found = Some(members.as_slice());
            }
        }
        found
    }

    /// Every `pattern` of any part.
    pub(crate) fn patterns(&self) -> Vec<&'s str> {
        self.object_parts()
            .filter_map(|map| map.get("pattern")?.as_str())
            .collect()
    }

    /// The first schema object here that declares `properties` (after `$ref` and branches).
    pub(crate) fn object_schema(&self) -> Option<&'s Value> {
        self.parts
            .iter()
            .copied()
            .find(|p| p.get("properties").is_some_and(Value::is_object))
    }

    /// The semantic tag of the field, if its author gave one.
    pub(crate) fn semantic(&self) -> Option<FieldSemantic> {
        self.parts.iter().find_map(|part| field_semantic(part))
    }

    /// Every alias the author declared for a property of an object here, with its property:
    /// `(alias, canonical)`. One pass over the declared properties; a property schema is
    /// expanded (`$ref`, branches) only when it has such keywords.
    pub(crate) fn declared_aliases(&self) -> Vec<(&'s str, &'s str)> {
        let mut pairs = Vec::new();
        for properties in self.object_parts().filter_map(properties_of) {
            for (name, schema) in properties {
                let plain = schema.as_object().is_none_or(|map| {
                    !["$ref", "allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|k| map.contains_key(*k))
                });
                if plain {
                    pairs.extend(crate::prepare::field_aliases(schema).map(|a| (a, name.as_str())));
                } else {
                    let view = Self::of_nodes(self.root, self.compiled, [schema]);
                    pairs.extend(view.aliases().into_iter().map(|a| (a, name.as_str())));
                }
            }
        }
        pairs
    }

    /// Aliases the field's author declared.
    pub(crate) fn aliases(&self) -> Vec<&'s str> {
        self.parts
            .iter()
            .flat_map(|part| crate::prepare::field_aliases(part))
            .collect()
    }

    /// Whether the object here is strict-style, as OpenAI's strict function calling requires:
    /// some part says `additionalProperties: false` and every declared property is required.
    pub(crate) fn is_strict_style(&self) -> bool {
        let closed = self
            .object_parts()
            .any(|map| map.get("additionalProperties") == Some(&Value::Bool(false)));
        if !closed {
            return false;
        }
        let required: std::collections::HashSet<&str> = self.required_names().collect();
        let declared = self.declared_names();
        !declared.is_empty() && declared.iter().all(|name| required.contains(name))
    }

    /// The `default` the schema declares here, when its parts declare exactly one (parts that
    /// disagree declare none).
    pub(crate) fn declared_default(&self) -> Option<&'s Value> {
        let mut found: Option<&'s Value> = None;
        for default in self.object_parts().filter_map(|map| map.get("default")) {
            match found {
                Some(seen) if seen != default => return None,
                _ => found = Some(default),
            }
        }
        found
    }

    fn object_parts(&self) -> impl Iterator<Item = &'s serde_json::Map<String, Value>> + '_ {
        self.parts.iter().filter_map(|p| p.as_object())
    }
}

impl SchemaView<'_> {
    /// Whether a `patternProperties` pattern matches `key`: with the tool's compiled pattern
    /// when the view has them (a pattern missing there did not compile and matches nothing),
    /// else compiled here by the linear-time engine with the schema pattern size bound.
    fn pattern_matches(&self, pattern: &str, key: &str) -> bool {
        if let Some(compiled) = self.compiled {
            return compiled
                .get(pattern)
                .is_some_and(|regex| regex.is_match(key));
        }
        regex::RegexBuilder::new(pattern)
            .size_limit(crate::prepare::REGEX_SIZE_LIMIT)
            .build()
            .is_ok_and(|regex| regex.is_match(key))
    }
}

/// The `properties` object of a schema object, if it has one.
fn properties_of(map: &serde_json::Map<String, Value>) -> Option<&serde_json::Map<String, Value>> {
    map.get("properties").and_then(Value::as_object)
}

fn enum_members(map: &serde_json::Map<String, Value>) -> impl Iterator<Item = &Value> {
    map.get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(map.get("const"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn types_of(schema: &Value) -> Types {
        SchemaView::new(schema, schema).types()
    }

    #[test]
    fn types_come_from_type_inference_and_branches() {
        assert_eq!(types_of(&json!({"type": "string"})), Types::STRING);
        assert!(types_of(&json!({"type": ["string", "null"]})).contains(Types::NULL));
        assert_eq!(types_of(&json!({"properties": {}})), Types::OBJECT);
        assert_eq!(types_of(&json!({"enum": ["a", "b"]})), Types::STRING);
        assert_eq!(types_of(&json!({"description": "anything"})), Types::ANY);
        let any_of = json!({"anyOf": [{"type": "array"}, {"type": "null"}]});
        assert!(types_of(&any_of).contains(Types::ARRAY));
        assert!(types_of(&any_of).contains(Types::NULL));
        assert!(!types_of(&any_of).contains(Types::STRING));
        assert!(Types::NUMBER.contains(Types::INTEGER));
        assert!(!Types::INTEGER.contains(Types::of(&json!(1.5))));
    }

    #[test]
    fn follows_local_refs_and_properties() {
        let root = json!({"type": "object",
            "properties": {"edit": {"$ref": "#/$defs/edit"}},
            "$defs": {"edit": {"type": "object", "required": ["old"], "properties": {"old": {"type": "string"}}}}});
        let view = SchemaView::new(&root, &root);
        let edit = view.property("edit").unwrap();
        assert!(edit.is_required("old"));
        assert_eq!(edit.property("old").unwrap().types(), Types::STRING);
        assert!(view.property("missing").is_none());
    }

    #[test]
    fn pattern_properties_apply_before_additional_properties() {
        let root = json!({"type": "object",
            "patternProperties": {"^x-": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"}});
        let view = SchemaView::new(&root, &root);
        assert_eq!(view.property("x-a").unwrap().types(), Types::INTEGER);
        assert_eq!(view.property("other").unwrap().types(), Types::BOOLEAN);
    }

    #[test]
    fn recursive_refs_terminate() {
        let root = json!({"$ref": "#", "properties": {"a": {"$ref": "#"}}});
        let view = SchemaView::new(&root, &root);
        assert!(view.property("a").unwrap().declares("a"));
    }

    #[test]
    fn items_prefix_items_and_tuples() {
        let root = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(
            SchemaView::new(&root, &root).item(5).unwrap().types(),
            Types::INTEGER
        );
        let tuple = json!({"prefixItems": [{"type": "string"}], "items": {"type": "boolean"}});
        let view = SchemaView::new(&tuple, &tuple);
        assert_eq!(view.item(0).unwrap().types(), Types::STRING);
        assert_eq!(view.item(1).unwrap().types(), Types::BOOLEAN);
    }
}
