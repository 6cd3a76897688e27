//! The flatten → model → unflatten round trip, over generated nested schemas.
//!
//! A model fills the flat schema `prepare` showed it; `unflatten` must turn what it sent back
//! into arguments that validate against the schema the tool declared. The expected nested
//! arguments and their flat spelling are built here from the generated tree, with this file's
//! own spelling of the escape rule, never by the code under test.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::unflatten::unflatten;
use super::{PrepareOptions, ToolSet, prepare_tools};

/// A generated parameter: a typed leaf or a nested object.
#[derive(Debug, Clone)]
enum Node {
    Leaf(Kind),
    Object { fields: Vec<Field>, closed: bool },
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Text,
    Count,
    Flag,
    Paths,
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    node: Node,
    required: bool,
}

impl Node {
    fn schema(&self) -> Value {
        match self {
            Node::Leaf(Kind::Text) => json!({"type": "string", "description": "text"}),
            Node::Leaf(Kind::Count) => json!({"type": "integer"}),
            Node::Leaf(Kind::Flag) => json!({"type": "boolean"}),
            Node::Leaf(Kind::Paths) => json!({"type": "array", "items": {"type": "string"}}),
            Node::Object { fields, closed } => {
                let properties: Map<String, Value> = fields
                    .iter()
                    .map(|f| (f.name.clone(), f.node.schema()))
                    .collect();
                let required: Vec<&str> = fields
                    .iter()
                    .filter(|f| f.required)
                    .map(|f| f.name.as_str())
                    .collect();
                let mut schema = json!({"type": "object", "properties": properties,
                    "description": "an object", "x-toolmend": {"contract": "nested"}});
                if !required.is_empty() {
                    schema["required"] = json!(required);
                }
                if *closed {
                    schema["additionalProperties"] = json!(false);
                }
                schema
            }
        }
    }

    /// Arguments a careful model would send: every required field of every object it sends,
    /// the optional ones the bits pick, and never an empty object (sending an optional object
    /// means sending some of its fields).
    fn args(&self, bits: &mut impl Iterator<Item = bool>) -> Value {
        match self {
            Node::Leaf(Kind::Text) => json!("a.b\\c"),
            Node::Leaf(Kind::Count) => json!(3),
            Node::Leaf(Kind::Flag) => json!(true),
            Node::Leaf(Kind::Paths) => json!(["/x", "/y"]),
            Node::Object { fields, .. } => {
                let mut out = Map::new();
                for field in fields {
                    if field.required || bits.next().unwrap_or(false) {
                        out.insert(field.name.clone(), field.node.args(bits));
                    }
                }
                if out.is_empty() {
                    if let Some(first) = fields.first() {
                        out.insert(first.name.clone(), first.node.args(bits));
                    }
                }
                Value::Object(out)
            }
        }
    }
}

/// This file's spelling of the escape rule: `\` → `\\`, `.` → `\.`, segments joined by `.`.
fn spell(path: &[&str]) -> String {
    path.iter()
        .map(|s| s.replace('\\', "\\\\").replace('.', "\\."))
        .collect::<Vec<_>>()
        .join(".")
}

/// The arguments as the model writes them against the flat schema: a value goes under its path
/// when the flat schema declares that key, else its object is opened.
fn spell_args<'a>(
    value: &'a Value,
    path: &mut Vec<&'a str>,
    flat: &Map<String, Value>,
    out: &mut Map<String, Value>,
) {
    let Value::Object(map) = value else {
        panic!("no flat key for {path:?}")
    };
    for (name, child) in map {
        path.push(name);
        let key = spell(path);
        if flat.contains_key(&key) {
            out.insert(key, child.clone());
        } else {
            spell_args(child, path, flat, out);
        }
        path.pop();
    }
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        Just(Kind::Text),
        Just(Kind::Count),
        Just(Kind::Flag),
        Just(Kind::Paths)
    ]
    .prop_map(Node::Leaf);
    leaf.prop_recursive(4, 48, 6, |inner| {
        (
            prop::collection::vec((name(), inner, any::<bool>()), 1..6),
            any::<bool>(),
        )
            .prop_map(|(fields, closed)| Node::Object {
                fields: dedup(fields),
                closed,
            })
    })
}

/// Field names, with dots and backslashes often enough to exercise the escape.
fn name() -> impl Strategy<Value = String> {
    "[ab.\\\\]{1,3}"
}

fn dedup(fields: Vec<(String, Node, bool)>) -> Vec<Field> {
    let mut seen = std::collections::HashSet::new();
    fields
        .into_iter()
        .filter(|(name, _, _)| seen.insert(name.clone()))
        .map(|(name, node, required)| Field {
            name,
            node,
            required,
        })
        .collect()
}

fn root() -> impl Strategy<Value = Node> {
    (
        prop::collection::vec((name(), node(), any::<bool>()), 1..14),
        any::<bool>(),
    )
        .prop_map(|(fields, closed)| Node::Object {
            fields: dedup(fields),
            closed,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn flat_arguments_re_nest_into_valid_original_arguments(
        tree in root(),
        bits in prop::collection::vec(any::<bool>(), 64),
    ) {
        let original = tree.schema();
        let tools = json!([{"name": "t", "parameters": original}]);
        let nested = tree.args(&mut bits.into_iter());
        let declared = ToolSet::from_json(&tools);
        prop_assert!(declared.get("t").unwrap().is_valid(&nested), "generator: {nested}");

        let sent = prepare_tools(&tools, "glm-4.6", &PrepareOptions::default()).unwrap();
        let shown = ToolSet::from_json(&sent);
        prop_assert!(shown.rejected().is_empty(), "{:?}", shown.rejected());
        let flat_schema = &sent[0]["parameters"];
        let flat_keys = flat_schema["properties"].as_object().unwrap();

        // Not flattened: the model sends the nested arguments as they are.
        let flattened = !flat_keys.keys().eq(original["properties"].as_object().unwrap().keys());
        let mut flat_args = Map::new();
        if flattened {
            spell_args(&nested, &mut Vec::new(), flat_keys, &mut flat_args);
        } else {
            flat_args = nested.as_object().unwrap().clone();
        }
        let flat_args_value = Value::Object(flat_args.clone());
        prop_assert!(shown.get("t").unwrap().is_valid(&flat_args_value),
            "flat args {flat_args_value} against {flat_schema}");

        let renested = match unflatten(&flat_args, &original).unwrap() {
            Some(map) => Value::Object(map),
            None => flat_args_value,
        };
        prop_assert_eq!(&renested, &nested);
        prop_assert!(declared.get("t").unwrap().is_valid(&renested));
    }
}

#[test]
fn a_deep_schema_is_really_flattened() {
    // Guards the property above against passing only because nothing was ever flattened.
    let tree = Node::Object {
        fields: vec![Field {
            name: "a.b".into(),
            node: Node::Object {
                fields: vec![Field {
                    name: "c".into(),
                    node: Node::Object {
                        fields: vec![Field {
                            name: r"d\".into(),
                            node: Node::Leaf(Kind::Paths),
                            required: true,
                        }],
                        closed: true,
                    },
                    required: true,
                }],
                closed: false,
            },
            required: true,
        }],
        closed: false,
    };
    let tools = json!([{"name": "t", "parameters": tree.schema()}]);
    let sent = prepare_tools(&tools, "m", &PrepareOptions::default()).unwrap();
    let flat = &sent[0]["parameters"];
    assert_eq!(flat["required"], json!([r"a\.b.c.d\\"]));
    let args = json!({r"a\.b.c.d\\": ["/x"]});
    let renested = unflatten(args.as_object().unwrap(), &tree.schema())
        .unwrap()
        .unwrap();
    assert_eq!(
        Value::Object(renested),
        json!({"a.b": {"c": {r"d\": ["/x"]}}})
    );
}
