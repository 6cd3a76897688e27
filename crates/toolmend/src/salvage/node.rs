//! What the parser builds: a light tree of what it read, turned into a `serde_json::Value`
//! only when a caller asks for values, or written straight as compact JSON text (issue #31).
//!
//! A `serde_json::Map` hashes every key with SipHash (its hasher is fixed) and keeps an
//! `IndexMap` table beside its entries; on a ~100-byte call that was about half of salvage's
//! instructions. Here an object is its members in a `Vec`, in text order, and a key sent twice
//! is found by comparing keys: one by one while the object is small, through a hash index past
//! [`INDEX_FROM`] members, so the work stays linear on an object of 10 000 keys. A key sent
//! twice keeps its first place and takes its last value, as `serde_json::Map` does.
//!
//! Nodes are as deep as the value; depth is bounded by the parser's depth limit, as the
//! `Value`s built from them are.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::write;

/// How many members an object holds before a key sent twice is looked up through a hash index
/// instead of comparing keys one by one.
const INDEX_FROM: usize = 16;

/// One value read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A value already built: `null`, a boolean, a number, or a member the strict read handed
    /// over (the seed).
    Built(Value),
    /// A string.
    Str(String),
    /// An array's elements.
    Array(Vec<Node>),
    /// An object's members.
    Object(Members),
}

/// An object's members in text order, each key once.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Members {
    entries: Vec<(String, Node)>,
    /// Key → place in `entries`, kept once the object passed [`INDEX_FROM`] members.
    index: Option<HashMap<String, usize>>,
}

impl Members {
    /// No members, with room for `capacity`.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    /// Adds a member; a key already present keeps its place and takes `value`, and comes back
    /// as `Err` (the earlier value was dropped).
    pub(crate) fn insert(&mut self, key: String, value: Node) -> Result<(), String> {
        if let Some(at) = self.find(&key) {
            self.entries[at].1 = value;
            return Err(key);
        }
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.entries.len());
        } else if self.entries.len() == INDEX_FROM {
            let mut index = HashMap::with_capacity(INDEX_FROM * 2);
            for (at, (k, _)) in self.entries.iter().enumerate() {
                index.insert(k.clone(), at);
            }
            index.insert(key.clone(), self.entries.len());
            self.index = Some(index);
        }
        self.entries.push((key, value));
        Ok(())
    }

    /// Where `key` is among the members.
    fn find(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    /// Whether there is no member.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Node {
    /// An empty object.
    pub(crate) fn empty_object() -> Self {
        Self::Object(Members::default())
    }

    /// A value read by someone else (the strict read): strings as strings, anything else kept
    /// built.
    pub(crate) fn from_value(value: Value) -> Self {
        match value {
            Value::String(s) => Self::Str(s),
            other => Self::Built(other),
        }
    }

    /// Whether this is an object.
    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Self::Object(_) | Self::Built(Value::Object(_)))
    }

    /// Whether this is an array.
    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Self::Array(_) | Self::Built(Value::Array(_)))
    }

    /// The `serde_json::Value` of this node, every map and vector made at its final size.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Self::Built(value) => value,
            Self::Str(s) => Value::String(s),
            Self::Array(items) => Value::Array(items.into_iter().map(Self::into_value).collect()),
            Self::Object(members) => {
                let mut map = Map::with_capacity(members.entries.len());
                for (key, value) in members.entries {
                    map.insert(key, value.into_value());
                }
                Value::Object(map)
            }
        }
    }

    /// Writes this node as compact JSON: the bytes `serde_json::to_string` writes for
    /// [`Self::into_value`].
    pub(crate) fn write_compact(&self, out: &mut String) {
        match self {
            Self::Built(value) => write::write_compact(out, value),
            Self::Str(s) => write::write_string(out, s),
            Self::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(out);
                }
                out.push(']');
            }
            Self::Object(members) => {
                out.push('{');
                for (i, (key, item)) in members.entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write::write_string(out, key);
                    out.push(':');
                    item.write_compact(out);
                }
                out.push('}');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_sent_twice_keeps_its_place_and_its_last_value() {
        for n in [3, INDEX_FROM + 5] {
            let mut members = Members::default();
            for i in 0..n {
                assert!(
                    members
                        .insert(format!("k{i}"), Node::Str(i.to_string()))
                        .is_ok()
                );
            }
            assert_eq!(
                members.insert("k1".into(), Node::Str("last".into())),
                Err("k1".to_owned())
            );
            let value = Node::Object(members).into_value();
            let map = value.as_object().expect("object");
            assert_eq!(map.len(), n);
            assert_eq!(map.keys().nth(1).map(String::as_str), Some("k1"));
            assert_eq!(map["k1"], "last");
        }
    }

    #[test]
    fn text_is_what_serde_json_writes() {
        let mut members = Members::default();
        let _ = members.insert("a\"\u{1}é".into(), Node::Str("x\n\u{7f}\\".into()));
        let _ = members.insert(
            "b".into(),
            Node::Array(vec![
                Node::Built(Value::Null),
                Node::Built(serde_json::json!(1.5)),
                Node::Built(serde_json::json!({"c": [true]})),
            ]),
        );
        let node = Node::Object(members);
        let mut text = String::new();
        node.write_compact(&mut text);
        assert_eq!(text, node.into_value().to_string());
    }
}
