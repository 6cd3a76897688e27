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
//! A key or string with nothing to decode is a span of the input text ([`Str::Span`]), not a
//! copy: the text is written from it (quotes included, when it is already spelt as serde_json
//! spells it), and a `String` of exactly its length is made only when values are built. So
//! every function that reads a node takes the text it was read from.
//!
//! Nodes are as deep as the value; depth is bounded by the parser's depth limit, as the
//! `Value`s built from them are.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::write;

/// How many members an object holds before a key sent twice is looked up through a hash index
/// instead of comparing keys one by one.
const INDEX_FROM: usize = 16;

/// A key or string value read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Str {
    /// Decoded content.
    Owned(String),
    /// Content that is `text[start..end]` as it stands; `canonical` when the quotes around it are
    /// `"` and nothing in it is escaped in JSON, so that `text[start - 1..end + 1]` is what
    /// serde_json writes for it.
    Span {
        start: usize,
        end: usize,
        canonical: bool,
    },
}

impl Default for Str {
    fn default() -> Self {
        Self::Owned(String::new())
    }
}

impl Str {
    /// The content.
    pub(crate) fn as_str<'t>(&'t self, text: &'t str) -> &'t str {
        match self {
            Self::Owned(s) => s,
            Self::Span { start, end, .. } => &text[*start..*end],
        }
    }

    /// The content, owned and of its exact length.
    pub(crate) fn into_string(self, text: &str) -> String {
        match self {
            Self::Owned(s) => s,
            Self::Span { start, end, .. } => text[start..end].to_owned(),
        }
    }

    /// The content, made owned so that it can be changed.
    pub(crate) fn to_mut(&mut self, text: &str) -> &mut String {
        if let Self::Span { start, end, .. } = *self {
            *self = Self::Owned(text[start..end].to_owned());
        }
        match self {
            Self::Owned(s) => s,
            Self::Span { .. } => unreachable!("made owned above"),
        }
    }

    /// Writes the content as a JSON string, as serde_json writes it.
    fn write(&self, text: &str, out: &mut String) {
        match self {
            Self::Span {
                start,
                end,
                canonical: true,
            } => out.push_str(&text[start - 1..end + 1]),
            other => write::write_string(out, other.as_str(text)),
        }
    }
}

/// One value read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// A value already built: `null`, a boolean, a number, or a member the strict read handed
    /// over (the seed).
    Built(Value),
    /// An integer spelt at `text[start..end]` as serde_json writes it (`-12`, no leading zero,
    /// at most 18 digits).
    Int {
        value: i64,
        start: usize,
        end: usize,
    },
    /// A string.
    Str(Str),
    /// An array's elements.
    Array(Vec<Node>),
    /// An object's members.
    Object(Members),
}

/// An object's members in text order, each key once.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Members {
    entries: Vec<(Str, Node)>,
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

    /// Adds a member (read from `text`); a key already present keeps its place and takes
    /// `value`, and comes back as `Err` (the earlier value was dropped).
    pub(crate) fn insert(&mut self, key: Str, value: Node, text: &str) -> Result<(), Str> {
        let name = key.as_str(text);
        let found = match &self.index {
            Some(index) => index.get(name).copied(),
            None => self
                .entries
                .iter()
                .position(|(k, _)| k.as_str(text) == name),
        };
        if let Some(at) = found {
            self.entries[at].1 = value;
            return Err(key);
        }
        if let Some(index) = &mut self.index {
            index.insert(name.to_owned(), self.entries.len());
        } else if self.entries.len() == INDEX_FROM {
            let mut index = HashMap::with_capacity(INDEX_FROM * 2);
            for (at, (k, _)) in self.entries.iter().enumerate() {
                index.insert(k.as_str(text).to_owned(), at);
            }
            index.insert(name.to_owned(), self.entries.len());
            self.index = Some(index);
        }
        self.entries.push((key, value));
        Ok(())
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
            Value::String(s) => Self::Str(Str::Owned(s)),
            other => Self::Built(other),
        }
    }

    /// This node with every span made owned, for nodes read from a text that does not outlive
    /// them (the decoded inner text of a double-encoded call).
    pub(crate) fn detach(self, text: &str) -> Self {
        match self {
            Self::Built(value) => Self::Built(value),
            Self::Int { value, .. } => Self::Built(Value::from(value)),
            Self::Str(s) => Self::Str(Str::Owned(s.into_string(text))),
            Self::Array(items) => Self::Array(items.into_iter().map(|n| n.detach(text)).collect()),
            Self::Object(members) => Self::Object(Members {
                entries: (members.entries.into_iter())
                    .map(|(k, v)| (Str::Owned(k.into_string(text)), v.detach(text)))
                    .collect(),
                index: members.index,
            }),
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

    /// The `serde_json::Value` of this node read from `text`, every map, vector and string
    /// made at its final size.
    pub(crate) fn into_value(self, text: &str) -> Value {
        match self {
            Self::Built(value) => value,
            Self::Int { value, .. } => Value::from(value),
            Self::Str(s) => Value::String(s.into_string(text)),
            Self::Array(items) => {
                Value::Array(items.into_iter().map(|n| n.into_value(text)).collect())
            }
            Self::Object(members) => {
                let mut map = Map::with_capacity(members.entries.len());
                for (key, value) in members.entries {
                    map.insert(key.into_string(text), value.into_value(text));
                }
                Value::Object(map)
            }
        }
    }

    /// Writes this node read from `text` as compact JSON: the bytes `serde_json::to_string`
    /// writes for [`Self::into_value`].
    pub(crate) fn write_compact(&self, text: &str, out: &mut String) {
        match self {
            Self::Built(value) => write::write_compact(out, value),
            Self::Int { start, end, .. } => out.push_str(&text[*start..*end]),
            Self::Str(s) => s.write(text, out),
            Self::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_compact(text, out);
                }
                out.push(']');
            }
            Self::Object(members) => {
                out.push('{');
                for (i, (key, item)) in members.entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    key.write(text, out);
                    out.push(':');
                    item.write_compact(text, out);
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
            let owned = |s: &str| Str::Owned(s.to_owned());
            for i in 0..n {
                let (key, value) = (owned(&format!("k{i}")), owned(&i.to_string()));
                assert!(members.insert(key, Node::Str(value), "").is_ok());
            }
            let again = members.insert(owned("k1"), Node::Str(owned("last")), "");
            assert_eq!(again, Err(owned("k1")));
            let value = Node::Object(members).into_value("");
            let map = value.as_object().expect("object");
            assert_eq!(map.len(), n);
            assert_eq!(map.keys().nth(1).map(String::as_str), Some("k1"));
            assert_eq!(map["k1"], "last");
        }
    }

    #[test]
    fn text_is_what_serde_json_writes() {
        let text = r#"{"plain": 'it"s', "b": 1}"#;
        let span = |start, end, canonical| Str::Span {
            start,
            end,
            canonical,
        };
        let mut members = Members::default();
        let owned = Str::Owned("a\"\u{1}é".into());
        let _ = members.insert(owned, Node::Str(Str::Owned("x\n\u{7f}\\".into())), text);
        let _ = members.insert(span(2, 7, true), Node::Str(span(11, 15, false)), text);
        let _ = members.insert(
            span(19, 20, true),
            Node::Array(vec![
                Node::Built(Value::Null),
                Node::Int {
                    value: 1,
                    start: 23,
                    end: 24,
                },
                Node::Built(serde_json::json!(1.5)),
                Node::Built(serde_json::json!({"c": [true]})),
            ]),
            text,
        );
        let node = Node::Object(members);
        let mut written = String::new();
        node.write_compact(text, &mut written);
        assert_eq!(written, node.into_value(text).to_string());
        assert!(written.contains(r#""plain":"it\"s""#), "{written}");
    }
}
