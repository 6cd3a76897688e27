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
//! Nodes are for text. A caller that wants values ([`Build::Values`]: `salvage`, the engine's
//! `salvage_after`, documents) has the parser build them while it reads, as it did before the
//! nodes: an object's members go straight into its `serde_json::Map` (one hash a key, the
//! strict read's seed kept as the map it already is), an array's into a `Vec<Value>`, and what
//! the parser hands back is a [`Node::Built`]. Going through nodes and building the values
//! from them afterwards cost 17–23 % more instructions than main's salvage (bench/README
//! Round 10): the nodes' own vectors, the walk, and the seed's keys hashed a second time.
//! [`Object`] and [`Array`] are the containers being read, in either form.
//!
//! Nodes are as deep as the value; depth is bounded by the parser's depth limit, as the
//! `Value`s built from them are.

use std::collections::HashMap;

use serde_json::map::Entry;
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
    /// Content that is `text[start..end]` as it stands; `spelt` says how far that text is
    /// already what serde_json writes for it.
    Span {
        start: usize,
        end: usize,
        spelt: Spelt,
    },
}

/// How the text of a [`Str::Span`] stands against what serde_json writes for its content, as
/// the reader found it: known while reading, so that writing the text needs no escaping pass
/// over a span that has nothing to escape (issue #31: every `'…'` key and string went through
/// one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spelt {
    /// Between `"` in the text, with nothing in it that JSON escapes: `text[start - 1..end + 1]`
    /// is what serde_json writes.
    Quoted,
    /// Between `'` in the text, with nothing in it that JSON escapes: serde_json writes it
    /// between `"` as it stands, so the text with its quotes swapped is what serde_json writes
    /// (a root member's key noted so for the call's text, [`super::MemberText`]).
    Single,
    /// Nothing in it that JSON escapes, not between quotes in the text (a bare key): serde_json
    /// writes it between `"` as it stands.
    Bare,
    /// It may hold bytes JSON escapes (a `"` inside `'…'`): written through the escaping writer.
    Escaped,
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

    /// The content's length in bytes.
    #[inline]
    fn len(&self) -> usize {
        match self {
            Self::Owned(s) => s.len(),
            Self::Span { start, end, .. } => *end - *start,
        }
    }

    /// Where the text of this key or string starts (its opening quote) when it is spelt there
    /// as serde_json spells it, or with `'` for `"` around content serde_json writes as it
    /// stands (see [`Spelt`]): what [`super::MemberText::key`] notes.
    pub(crate) const fn canonical_at(&self) -> Option<usize> {
        match *self {
            Self::Span {
                start,
                spelt: Spelt::Quoted | Spelt::Single,
                ..
            } => Some(start - 1),
            _ => None,
        }
    }

    /// The content, owned and of its exact length.
    #[inline]
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

    /// Writes the content as a JSON string, as serde_json writes it. Inlined into the
    /// container's loop: a key or string costs its copy, not a call as well.
    #[inline(always)]
    fn write(&self, text: &str, out: &mut String) {
        match *self {
            Self::Span {
                start,
                end,
                spelt: Spelt::Quoted,
            } => out.push_str(&text[start - 1..end + 1]),
            Self::Span {
                start,
                end,
                spelt: Spelt::Single | Spelt::Bare,
            } => {
                out.reserve(end - start + 2);
                out.push('"');
                out.push_str(&text[start..end]);
                out.push('"');
            }
            Self::Span {
                start,
                end,
                spelt: Spelt::Escaped,
            } => write::write_string(out, &text[start..end]),
            Self::Owned(ref s) => write::write_string(out, s),
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
    /// Key → place in `entries`, kept once the object passed [`INDEX_FROM`] members; boxed,
    /// so that a node stays the size of a `Value` (72 bytes, not 80: nearly every object never
    /// needs the index, and every node is moved several times).
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<String, usize>>>,
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
    /// `value`, and comes back as `Err` (the earlier value was dropped). Inlined into the
    /// parser's insert: a call of its own moved the key and the value once more.
    #[inline(always)]
    pub(crate) fn insert(&mut self, key: Str, value: Node, text: &str) -> Result<(), Str> {
        let name = key.as_str(text);
        let found = match &self.index {
            Some(index) => index.get(name).copied(),
            // Lengths first: nearly every key differs from the others in length, and that
            // needs no slice of the text (whose bounds and boundaries are checked).
            None => self
                .entries
                .iter()
                .position(|(k, _)| k.len() == name.len() && k.as_str(text) == name),
        };
        if let Some(at) = found {
            self.entries[at].1 = value;
            return Err(key);
        }
        if self.index.is_some() || self.entries.len() == INDEX_FROM {
            self.index_key(name, text);
        }
        self.entries.push((key, value));
        Ok(())
    }

    /// Enters `name`, the key about to be pushed, into the hash index, building the index
    /// first when the object just reached [`INDEX_FROM`] members. Out of line: nearly every
    /// object never has one.
    #[cold]
    #[inline(never)]
    fn index_key(&mut self, name: &str, text: &str) {
        let index = self.index.get_or_insert_with(|| {
            let mut index = HashMap::with_capacity(INDEX_FROM * 2);
            for (at, (k, _)) in self.entries.iter().enumerate() {
                index.insert(k.as_str(text).to_owned(), at);
            }
            Box::new(index)
        });
        index.insert(name.to_owned(), self.entries.len());
    }

    /// Whether there is no member.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What the parser builds while it reads: nodes, written as text afterwards
/// ([`crate::salvage::salvage_to_text`]), or the values themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    /// Nodes, for text.
    Nodes,
    /// `serde_json::Value`s, for every caller that wants values.
    Values,
}

/// An object being read: its members as nodes, or as the map of its value.
#[derive(Debug)]
pub(crate) enum Object {
    /// For text.
    Nodes(Members),
    /// For values: the map itself, each key hashed once, when it is inserted.
    Values(Map<String, Value>),
}

impl Object {
    /// An empty object to read into, with room for `capacity` members.
    pub(crate) fn new(build: Build, capacity: usize) -> Self {
        match build {
            Build::Nodes => Self::Nodes(Members::with_capacity(capacity)),
            Build::Values => Self::Values(Map::with_capacity(capacity)),
        }
    }

    /// The object whose first members the strict read already built (the seed, each key once):
    /// kept as the map it is when building values, so that its keys are not hashed again.
    /// Inlined for the values path (the map kept as it is), with the text path's conversion
    /// out of line: a call that moved the map in and the object out on every seeded run.
    #[inline]
    pub(crate) fn seeded(build: Build, members: Map<String, Value>, text: &str) -> Self {
        match build {
            Build::Values => Self::Values(members),
            Build::Nodes => Self::seeded_nodes(members, text),
        }
    }

    /// [`Self::seeded`] for text: the seed's members as nodes.
    #[inline(never)]
    fn seeded_nodes(members: Map<String, Value>, text: &str) -> Self {
        let mut nodes = Members::with_capacity(members.len() + 4);
        for (key, value) in members {
            // The strict read kept each key once.
            let _ = nodes.insert(Str::Owned(key), Node::from_value(value), text);
        }
        Self::Nodes(nodes)
    }

    /// Adds a member (read from `text`); a key already present keeps its place and takes
    /// `value`, and comes back as `Err` (the earlier value was dropped).
    #[inline]
    pub(crate) fn insert(&mut self, key: Str, value: Node, text: &str) -> Result<(), Str> {
        match self {
            Self::Nodes(members) => members.insert(key, value, text),
            // A key spelt in the text (nearly every key): `Map::insert`, one hash and one probe
            // of the table that finds the key or the slot for it (the entry API probes twice:
            // to look, then to insert). A key sent twice keeps its place and takes `value`, as
            // through an entry; the key that comes back is the same span.
            Self::Values(map) => match key {
                Str::Span { start, end, spelt } => {
                    match map.insert(text[start..end].to_owned(), value.into_built(text)) {
                        None => Ok(()),
                        Some(_) => Err(Str::Span { start, end, spelt }),
                    }
                }
                // One hash of the key: looked up and inserted through the same entry.
                Str::Owned(name) => match map.entry(name) {
                    Entry::Vacant(member) => {
                        member.insert(value.into_built(text));
                        Ok(())
                    }
                    Entry::Occupied(mut member) => {
                        member.insert(value.into_built(text));
                        Err(Str::Owned(member.key().clone()))
                    }
                },
            },
        }
    }

    /// Whether there is no member.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Self::Nodes(members) => members.is_empty(),
            Self::Values(map) => map.is_empty(),
        }
    }

    /// The object read, as a node.
    pub(crate) fn into_node(self) -> Node {
        match self {
            Self::Nodes(members) => Node::Object(members),
            Self::Values(map) => Node::Built(Value::Object(map)),
        }
    }
}

/// An array being read: its elements as nodes, or as values.
#[derive(Debug)]
pub(crate) enum Array {
    /// For text.
    Nodes(Vec<Node>),
    /// For values.
    Values(Vec<Value>),
}

impl Array {
    /// An empty array to read into.
    pub(crate) const fn new(build: Build) -> Self {
        match build {
            Build::Nodes => Self::Nodes(Vec::new()),
            Build::Values => Self::Values(Vec::new()),
        }
    }

    /// Adds an element read from `text`.
    #[inline]
    pub(crate) fn push(&mut self, item: Node, text: &str) {
        match self {
            Self::Nodes(items) => items.push(item),
            Self::Values(items) => items.push(item.into_built(text)),
        }
    }

    /// How many elements were read.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Nodes(items) => items.len(),
            Self::Values(items) => items.len(),
        }
    }

    /// Whether no element was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The one element read, when it is a string, taken out (the array is then empty).
    pub(crate) fn take_lone_string(&mut self) -> Option<Str> {
        match self {
            Self::Nodes(items) => match items.as_mut_slice() {
                [Node::Str(s)] => {
                    let s = std::mem::take(s);
                    items.clear();
                    Some(s)
                }
                _ => None,
            },
            Self::Values(items) => match items.as_mut_slice() {
                [Value::String(s)] => {
                    let s = std::mem::take(s);
                    items.clear();
                    Some(Str::Owned(s))
                }
                _ => None,
            },
        }
    }

    /// The array read, as a node.
    pub(crate) fn into_node(self) -> Node {
        match self {
            Self::Nodes(items) => Node::Array(items),
            Self::Values(items) => Node::Built(Value::Array(items)),
        }
    }
}

/// The top-level values a run read, in order: nodes, or the values themselves, so that
/// values built while reading come back as they are (no second vector, no conversion).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Roots {
    /// For text: the values read, none yet (an empty vector holds no allocation) or more than
    /// one.
    Nodes(Vec<Node>),
    /// The one value read, as a run nearly always reads (no vector to allocate and free on
    /// every call, issue #31): for values, a [`Node::Built`], and a second value read makes
    /// both [`Self::Nodes`] (each made a value by [`Self::into_values`]).
    One(Node),
    /// For values: none yet (an empty vector holds no allocation), or given so.
    Values(Vec<Value>),
}

impl Roots {
    /// None yet.
    pub(crate) fn new(build: Build) -> Self {
        match build {
            Build::Nodes => Self::Nodes(Vec::new()),
            Build::Values => Self::Values(Vec::new()),
        }
    }

    /// The nodes read, for text.
    fn nodes(&self) -> &[Node] {
        match self {
            Self::Nodes(nodes) => nodes,
            Self::One(node) => std::slice::from_ref(node),
            Self::Values(_) => &[],
        }
    }

    /// Adds a value read from `text`.
    pub(crate) fn push(&mut self, node: Node, text: &str) {
        match self {
            Self::Nodes(nodes) if nodes.is_empty() => {
                // The empty vector holds no allocation: nothing to drop.
                std::mem::forget(std::mem::replace(self, Self::One(node)));
            }
            Self::Nodes(nodes) => nodes.push(node),
            Self::One(_) => {
                if let Self::One(first) = std::mem::replace(self, Self::Nodes(Vec::new())) {
                    *self = Self::Nodes(vec![first, node]);
                }
            }
            Self::Values(values) if values.is_empty() => {
                // The empty vector holds no allocation: nothing to drop.
                let one = Node::Built(node.into_built(text));
                std::mem::forget(std::mem::replace(self, Self::One(one)));
            }
            Self::Values(values) => values.push(node.into_built(text)),
        }
    }

    /// How many values were read.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Values(values) => values.len(),
            nodes => nodes.nodes().len(),
        }
    }

    /// Whether none was read.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every value is an array.
    pub(crate) fn all_arrays(&self) -> bool {
        match self {
            Self::Values(values) => values.iter().all(Value::is_array),
            nodes => nodes.nodes().iter().all(Node::is_array),
        }
    }

    /// Whether every value is an object.
    pub(crate) fn all_objects(&self) -> bool {
        match self {
            Self::Values(values) => values.iter().all(Value::is_object),
            nodes => nodes.nodes().iter().all(Node::is_object),
        }
    }

    /// Whether any value is an object.
    pub(crate) fn any_object(&self) -> bool {
        match self {
            Self::Values(values) => values.iter().any(Value::is_object),
            nodes => nodes.nodes().iter().any(Node::is_object),
        }
    }

    /// A copy of the one value read, when there is one only.
    pub(crate) fn lone(&self) -> Option<Node> {
        match self {
            Self::One(node) => Some(node.clone()),
            Self::Nodes(_) => None,
            Self::Values(values) => match values.as_slice() {
                [value] => Some(Node::Built(value.clone())),
                _ => None,
            },
        }
    }

    /// These values with every span made owned (see [`Node::detach`]).
    pub(crate) fn detach(self, text: &str) -> Self {
        match self {
            Self::Nodes(nodes) => Self::Nodes(nodes.into_iter().map(|n| n.detach(text)).collect()),
            Self::One(node) => Self::One(node.detach(text)),
            values @ Self::Values(_) => values,
        }
    }

    /// The one value read from `text`, or `Err` with these values when there are none or
    /// several: a call's arguments, taken without a vector (issue #31).
    pub(crate) fn into_one(self, text: &str) -> Result<Value, Self> {
        match self {
            // Built while reading (the values path): no call to convert it.
            Self::One(Node::Built(value)) => Ok(value),
            Self::One(node) => Ok(node.into_value(text)),
            several => Err(several),
        }
    }

    /// The values read from `text`.
    pub(crate) fn into_values(self, text: &str) -> Vec<Value> {
        match self {
            // A node is the size of a value, so they are collected in the nodes' own buffer.
            Self::Nodes(nodes) => nodes.into_iter().map(|n| n.into_value(text)).collect(),
            Self::One(node) => vec![node.into_value(text)],
            Self::Values(values) => values,
        }
    }

    /// Writes the values read from `text` as compact JSON, one a line.
    pub(crate) fn write_lines(&self, text: &str, out: &mut String) {
        match self {
            Self::Values(values) => {
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    write::write_compact(out, value);
                }
            }
            nodes => {
                for (i, node) in nodes.nodes().iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    node.write_compact(text, out);
                }
            }
        }
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
            // Collected in the nodes' own buffer (a node is the size of a value).
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

    /// [`Self::into_value`] for a node read while building values, which is never an
    /// unbuilt container: inlined into the insert, where the recursive one is a call and two
    /// copies of the value on every member.
    #[inline(always)]
    fn into_built(self, text: &str) -> Value {
        match self {
            Self::Built(value) => value,
            Self::Str(s) => Value::String(s.into_string(text)),
            Self::Int { value, .. } => {
                // Nothing to drop: forgotten, not dropped through the whole node's drop glue
                // (a call on every integer member, issue #31).
                std::mem::forget(self);
                Value::from(value)
            }
            container => container.into_value(text),
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
                    item.write_item(text, out);
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
                    item.write_item(text, out);
                }
                out.push('}');
            }
        }
    }

    /// [`Self::write_compact`] for an element or a member's value: the common scalars written
    /// in the container's own loop, a container (or a number's text) through the call.
    #[inline(always)]
    fn write_item(&self, text: &str, out: &mut String) {
        match self {
            Self::Str(s) => s.write(text, out),
            Self::Int { start, end, .. } => out.push_str(&text[*start..*end]),
            Self::Built(Value::Null) => out.push_str("null"),
            Self::Built(Value::Bool(true)) => out.push_str("true"),
            Self::Built(Value::Bool(false)) => out.push_str("false"),
            other => other.write_compact(text, out),
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
        let span = |start, end, spelt| Str::Span { start, end, spelt };
        let mut members = Members::default();
        let owned = Str::Owned("a\"\u{1}é".into());
        let _ = members.insert(owned, Node::Str(Str::Owned("x\n\u{7f}\\".into())), text);
        let _ = members.insert(
            span(2, 7, Spelt::Quoted),
            Node::Str(span(11, 15, Spelt::Escaped)),
            text,
        );
        let _ = members.insert(
            span(19, 20, Spelt::Quoted),
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
