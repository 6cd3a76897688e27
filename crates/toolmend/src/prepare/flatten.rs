//! Flatten: nested parameters presented as one level of dot-notation keys.
//!
//! Models fill deep or wide schemas badly (Reasonix's observation, ported by dirge): they drop
//! levels, misplace fields, or send `"a.b"` keys on their own. A schema with more than 10 leaf
//! parameters or a depth over 2 is shown to them flat: `{"user.profile.name": {…}}` instead of
//! three nested objects. The `unflattened` repair rule re-nests what they send (see
//! [`super::unflatten`]) and the call is then validated against the *original* schema, so the
//! flat form only has to be a faithful presentation, never a validator.
//!
//! # What is flattened through
//!
//! Only plain nested objects: a property schema with non-empty `properties`, `type` `"object"` or
//! none, a boolean (or absent) `additionalProperties`, every `required` name declared, and no
//! keyword beyond those, `title`, `description`, `$comment` and the hint keys. Anything else
//! (arrays, arrays of objects, nullable objects, `anyOf`, `patternProperties`, `minProperties`,
//! `default`, …) is a leaf and is shown as it is, because its meaning does not survive being cut
//! into dotted keys. A required object none of whose properties is required is a leaf too: the
//! flat form could not express "present but empty". A schema with a `$ref` that is not into the
//! root's `$defs`/`definitions` is never flattened, because moving subschemas would break it.
//!
//! # Keys, `required`, descriptions
//!
//! Keys are written with the escape rule of [`super::dotted`] (`\.` for a dot inside a name, `\\`
//! for a backslash). A leaf is required only if every level on its path is required. A leaf keeps
//! its own description; the description of an intermediate object is prepended, once, to the
//! first leaf under it as `<object key>: <description>` on its own line. The flat schema is closed
//! (`additionalProperties: false`) only if the root and every flattened object were.

use serde_json::{Map, Value};

use super::dotted::join_dotted_key;
use super::hints::HINT_KEYS;
use crate::limits::MAX_DEPTH;

/// Keywords a nested object may carry and still be flattened through (the hint keys are
/// accepted too: they are stripped from what is sent anyway).
const OBJECT_KEYWORDS: [&str; 8] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "title",
    "description",
    "$comment",
    "x-dirge-kind",
];

/// Keywords only the root may carry besides [`OBJECT_KEYWORDS`]; they stay on the flat root.
const ROOT_KEYWORDS: [&str; 4] = ["$schema", "$id", "$defs", "definitions"];

/// When to flatten: more than `leaves_over` leaves or a depth over `depth_over`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FlattenThresholds {
    /// Flatten when the schema has more leaves than this (default 10).
    pub(crate) leaves_over: usize,
    /// Flatten when a leaf is deeper than this many levels (default 2).
    pub(crate) depth_over: usize,
}

impl Default for FlattenThresholds {
    fn default() -> Self {
        Self {
            leaves_over: 10,
            depth_over: 2,
        }
    }
}

/// One leaf of the flat form.
#[derive(Debug)]
struct Leaf {
    path: Vec<String>,
    schema: Value,
    required: bool,
    /// Descriptions of the intermediate objects first reached at this leaf, outermost first.
    context: Vec<String>,
}

/// The flat presentation of `schema`, or `None` when it is not to be flattened.
///
/// `None` when the schema is not a plain object schema (see the module docs), when it has no
/// nested object to lift (a wide but one-level schema is already flat), or when it is within the
/// thresholds. The result is itself a valid JSON Schema whose keys are dotted paths.
pub(crate) fn flatten_schema(schema: &Value, thresholds: FlattenThresholds) -> Option<Value> {
    let root = schema.as_object()?;
    if !root
        .keys()
        .all(|k| is_plain_keyword(k) || ROOT_KEYWORDS.contains(&k.as_str()))
        || !is_plain_object(root)
        || has_foreign_ref(schema)
    {
        return None;
    }
    let mut walk = Walk {
        leaves: Vec::new(),
        closed: closed(root),
        pending: Vec::new(),
    };
    walk.object(root, &mut Vec::new(), true, 0);
    let depth = walk.leaves.iter().map(|l| l.path.len()).max().unwrap_or(0);
    let over = walk.leaves.len() > thresholds.leaves_over || depth > thresholds.depth_over;
    if depth < 2 || !over || shadows_a_declared_name(root, &walk.leaves) {
        return None;
    }
    Some(build(root, walk))
}

/// The state of one pass over the nested objects.
struct Walk {
    leaves: Vec<Leaf>,
    /// Whether the root and every flattened object so far are closed.
    closed: bool,
    /// Descriptions of objects entered but not yet attached to a leaf.
    pending: Vec<String>,
}

impl Walk {
    /// Collects the leaves of one object; `all_required` says whether every level above is.
    fn object(
        &mut self,
        object: &Map<String, Value>,
        path: &mut Vec<String>,
        all_required: bool,
        depth: usize,
    ) {
        let Some(Value::Object(properties)) = object.get("properties") else {
            return;
        };
        let required = required_names(object);
        for (name, child) in properties {
            let is_required = required.contains(&name.as_str());
            path.push(name.clone());
            match child
                .as_object()
                .filter(|c| depth < MAX_DEPTH && is_expandable(c, is_required))
            {
                Some(child) => {
                    self.closed &= closed(child);
                    if let Some(description) = child.get("description").and_then(Value::as_str) {
                        self.pending
                            .push(format!("{}: {description}", join_dotted_key(path)));
                    }
                    self.object(child, path, all_required && is_required, depth + 1);
                }
                None => self.leaves.push(Leaf {
                    path: path.clone(),
                    schema: child.clone(),
                    required: all_required && is_required,
                    context: std::mem::take(&mut self.pending),
                }),
            }
            path.pop();
        }
    }
}

/// Whether a flat key is literally the name of a different root property (`a.b` for the path
/// `a` → `b` next to a property named `a.b`). The `unflattened` rule never re-nests a key that
/// is itself declared, so such a key could not be read back as the path it stands for.
fn shadows_a_declared_name(root: &Map<String, Value>, leaves: &[Leaf]) -> bool {
    let Some(Value::Object(properties)) = root.get("properties") else {
        return false;
    };
    leaves.iter().any(|leaf| {
        let key = join_dotted_key(&leaf.path);
        !matches!(leaf.path.as_slice(), [only] if *only == key) && properties.contains_key(&key)
    })
}

/// Assembles the flat schema: the root's own keywords in their order, flat `properties`.
fn build(root: &Map<String, Value>, walk: Walk) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for leaf in walk.leaves {
        let key = join_dotted_key(&leaf.path);
        if leaf.required {
            required.push(Value::String(key.clone()));
        }
        properties.insert(key, with_context(leaf.schema, &leaf.context));
    }
    let mut flat = root.clone();
    flat.insert("properties".to_owned(), Value::Object(properties));
    if required.is_empty() {
        flat.shift_remove("required");
    } else {
        flat.insert("required".to_owned(), Value::Array(required));
    }
    if walk.closed {
        flat.insert("additionalProperties".to_owned(), Value::Bool(false));
    } else {
        flat.shift_remove("additionalProperties");
    }
    Value::Object(flat)
}

/// A leaf schema with the descriptions of the objects above it prepended to its own.
fn with_context(schema: Value, context: &[String]) -> Value {
    if context.is_empty() {
        return schema;
    }
    let mut map = match schema {
        Value::Object(map) => map,
        // `true` accepts anything, as `{}` does; `false` (an impossible field) is shown as is.
        Value::Bool(true) => Map::new(),
        other => return other,
    };
    let mut description = context.join("\n");
    if let Some(own) = map.get("description").and_then(Value::as_str) {
        description.push('\n');
        description.push_str(own);
    }
    map.insert("description".to_owned(), Value::String(description));
    Value::Object(map)
}

/// Whether a keyword may sit on an object that is flattened through.
fn is_plain_keyword(key: &str) -> bool {
    OBJECT_KEYWORDS.contains(&key) || HINT_KEYS.contains(&key)
}

/// Whether an object schema is plain: `type` object or none, non-empty `properties`, a boolean
/// `additionalProperties`, and every `required` name declared.
fn is_plain_object(object: &Map<String, Value>) -> bool {
    let typed_object = match object.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
    };
    let Some(Value::Object(properties)) = object.get("properties") else {
        return false;
    };
    let required_ok = match object.get("required") {
        None => true,
        Some(Value::Array(names)) => names.iter().all(|name| {
            name.as_str()
                .is_some_and(|name| properties.contains_key(name))
        }),
        Some(_) => false,
    };
    typed_object
        && !properties.is_empty()
        && required_ok
        && matches!(
            object.get("additionalProperties"),
            None | Some(Value::Bool(_))
        )
}

/// Whether a nested property is flattened through (see the module docs).
fn is_expandable(object: &Map<String, Value>, is_required: bool) -> bool {
    object.keys().all(|k| is_plain_keyword(k))
        && is_plain_object(object)
        && (!is_required || !required_names(object).is_empty())
}

/// Whether an object forbids undeclared keys.
fn closed(object: &Map<String, Value>) -> bool {
    object.get("additionalProperties") == Some(&Value::Bool(false))
}

/// The names listed in an object schema's `required`.
fn required_names(object: &Map<String, Value>) -> Vec<&str> {
    match object.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether the schema holds a reference that moving subschemas could break: any `$ref` not
/// into the root's `$defs`/`definitions`, or any dynamic reference. Data is scanned too, which
/// can only make the answer "yes" where "no" was possible: never flattening is always safe.
fn has_foreign_ref(schema: &Value) -> bool {
    let mut stack = vec![(schema, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return true;
        }
        match node {
            Value::Object(map) => {
                for (key, value) in map {
                    let foreign = match (key.as_str(), value) {
                        ("$ref", Value::String(target)) => {
                            !(target.starts_with("#/$defs/")
                                || target.starts_with("#/definitions/"))
                        }
                        ("$dynamicRef" | "$recursiveRef", _) => true,
                        _ => false,
                    };
                    if foreign {
                        return true;
                    }
                    stack.push((value, depth + 1));
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn flatten(schema: &Value) -> Option<Value> {
        flatten_schema(schema, FlattenThresholds::default())
    }

    fn keys(flat: &Value) -> Vec<&str> {
        flat["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// `user (required) → profile (required) → {name (required), age}`: Reasonix's round-trip
    /// case.
    fn user_schema() -> Value {
        json!({"type": "object", "required": ["user"], "properties": {
            "user": {"type": "object", "required": ["profile"], "properties": {
                "profile": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "description": "Full name"},
                    "age": {"type": "integer"}}}}}}})
    }

    #[test]
    fn shallow_schemas_are_left_alone() {
        assert_eq!(
            flatten(&json!({"type": "object", "properties": {"a": {}, "b": {}}})),
            None
        );
        let nested = json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"b": {"type": "string"}}}}});
        assert_eq!(
            flatten(&nested),
            None,
            "depth 2 with few leaves is within the thresholds"
        );
    }

    #[test]
    fn wide_but_one_level_schemas_are_already_flat() {
        let properties: Map<String, Value> = (0..12)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert_eq!(
            flatten(&json!({"type": "object", "properties": properties})),
            None
        );
    }

    #[test]
    fn deep_schemas_become_dotted_keys_with_required_carried_over() {
        let flat = flatten(&user_schema()).unwrap();
        assert_eq!(keys(&flat), ["user.profile.name", "user.profile.age"]);
        assert_eq!(flat["required"], json!(["user.profile.name"]));
        assert_eq!(
            flat["properties"]["user.profile.name"]["description"],
            "Full name"
        );
        assert_eq!(flat["type"], "object");
        assert!(flat.get("additionalProperties").is_none());
    }

    #[test]
    fn a_leaf_under_an_optional_level_is_optional() {
        let mut schema = user_schema();
        schema["required"] = json!([]);
        let flat = flatten(&schema).unwrap();
        assert_eq!(keys(&flat), ["user.profile.name", "user.profile.age"]);
        assert!(flat.get("required").is_none(), "{flat}");
    }

    #[test]
    fn wide_two_level_schemas_are_flattened() {
        let inner: Map<String, Value> = (0..10)
            .map(|i| (format!("f{i}"), json!({"type": "integer"})))
            .collect();
        let schema = json!({"type": "object", "properties": {
            "top": {"type": "string"}, "opts": {"type": "object", "properties": inner}}});
        let flat = flatten(&schema).unwrap();
        assert_eq!(keys(&flat).len(), 11);
        assert_eq!(keys(&flat)[..2], ["top", "opts.f0"]);
    }

    #[test]
    fn dots_in_real_names_are_escaped() {
        let schema = json!({"type": "object", "properties": {
            "a.b": {"type": "string"},
            "cfg": {"type": "object", "properties": {"x": {"type": "object", "properties": {
                "file.name": {"type": "string"}, r"back\slash": {"type": "string"}}}}}}});
        let flat = flatten(&schema).unwrap();
        assert_eq!(
            keys(&flat),
            [r"a\.b", r"cfg.x.file\.name", r"cfg.x.back\\slash"]
        );
    }

    #[test]
    fn a_flat_key_that_is_a_declared_name_blocks_flattening() {
        let mut schema = user_schema();
        schema["properties"]["user.profile.age"] = json!({"type": "integer"});
        assert_eq!(flatten(&schema), None);
        let mut schema = user_schema();
        schema["properties"][r"user\.x"] = json!({"type": "integer"});
        assert!(
            flatten(&schema).is_some(),
            "no flat key is spelled like that name"
        );
    }

    #[test]
    fn arrays_and_unusual_objects_are_leaves() {
        let schema = json!({"type": "object", "properties": {
            "edits": {"type": "array", "items": {"type": "object", "properties": {
                "old": {"type": "object", "properties": {"a": {"type": "object",
                    "properties": {"b": {}}}}}}}},
            "maybe": {"type": ["object", "null"], "properties": {"x": {}}},
            "either": {"type": "object", "properties": {"x": {}}, "anyOf": [{"required": ["x"]}]},
            "open": {"type": "object", "properties": {"x": {}}, "additionalProperties": {"type": "string"}},
            "deep": {"type": "object", "properties": {"a": {"type": "object", "properties": {
                "b": {"type": "string"}}}}}
        }});
        let flat = flatten(&schema).unwrap();
        assert_eq!(
            keys(&flat),
            ["edits", "maybe", "either", "open", "deep.a.b"]
        );
        assert_eq!(flat["properties"]["edits"], schema["properties"]["edits"]);
        assert_eq!(flat["properties"]["open"], schema["properties"]["open"]);
    }

    #[test]
    fn a_required_object_without_required_fields_is_a_leaf() {
        let schema = json!({"type": "object", "required": ["a", "d"], "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "d": {"type": "object", "required": ["e"], "properties": {"e": {"type": "object",
                "properties": {"f": {"type": "string"}}}}},
            "deep": {"type": "object", "properties": {"y": {"type": "object", "properties": {
                "x": {}}}}}}});
        let flat = flatten(&schema).unwrap();
        assert_eq!(keys(&flat), ["a", "d.e", "deep.y.x"]);
        assert_eq!(flat["required"], json!(["a", "d.e"]));
    }

    #[test]
    fn intermediate_descriptions_go_to_the_first_leaf() {
        let mut schema = user_schema();
        schema["properties"]["user"]["description"] = json!("The user");
        schema["properties"]["user"]["properties"]["profile"]["description"] = json!("Profile");
        let flat = flatten(&schema).unwrap();
        assert_eq!(
            flat["properties"]["user.profile.name"]["description"],
            "user: The user\nuser.profile: Profile\nFull name"
        );
        assert_eq!(
            flat["properties"]["user.profile.age"],
            json!({"type": "integer"})
        );
    }

    #[test]
    fn closed_only_if_every_level_is_closed() {
        let closed_schema = |inner: bool| {
            json!({"type": "object", "additionalProperties": false, "properties": {
                "a": {"type": "object", "additionalProperties": false, "properties": {
                    "b": {"type": "object", "additionalProperties": inner, "properties": {
                        "c": {"type": "string"}}}}}}})
        };
        assert_eq!(
            flatten(&closed_schema(false)).unwrap()["additionalProperties"],
            false
        );
        assert!(
            flatten(&closed_schema(true))
                .unwrap()
                .get("additionalProperties")
                .is_none()
        );
    }

    #[test]
    fn refs_into_defs_are_kept_and_other_refs_block() {
        let mut schema = user_schema();
        schema["$defs"] = json!({"n": {"type": "string"}});
        schema["properties"]["user"]["properties"]["profile"]["properties"]["name"] =
            json!({"$ref": "#/$defs/n"});
        let flat = flatten(&schema).unwrap();
        assert_eq!(flat["$defs"], schema["$defs"]);
        assert_eq!(
            flat["properties"]["user.profile.name"],
            json!({"$ref": "#/$defs/n"})
        );
        schema["properties"]["user"]["properties"]["profile"]["properties"]["name"] =
            json!({"$ref": "#/properties/user"});
        assert_eq!(flatten(&schema), None);
    }

    #[test]
    fn roots_that_are_not_plain_objects_are_left_alone() {
        for root in [
            json!(true),
            json!({"type": "object", "anyOf": [], "properties": {"a": {"type": "object",
                "properties": {"b": {"type": "object", "properties": {"c": {}}}}}}}),
            json!({"type": "object", "required": ["zz"], "properties": {"a": {"type": "object",
                "properties": {"b": {"type": "object", "properties": {"c": {}}}}}}}),
        ] {
            assert_eq!(flatten(&root), None, "{root}");
        }
    }

    #[test]
    fn the_flat_schema_compiles() {
        let flat = flatten(&user_schema()).unwrap();
        assert!(jsonschema::is_valid(
            &flat,
            &json!({"user.profile.name": "a"})
        ));
        assert!(!jsonschema::is_valid(
            &flat,
            &json!({"user.profile.age": 3})
        ));
    }
}
