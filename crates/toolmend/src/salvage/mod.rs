//! Stage 3: turn a call's raw argument text into a JSON value when the strict parse fails.
//!
//! The fast path never comes here: the engine first tries `serde_json`. Salvage handles text
//! that is not strict JSON: empty arguments, a double-encoded object, Markdown fences, prose
//! around the object, lenient syntax (DESIGN §5.1) and truncation. Every change is reported as a
//! [`SyntaxRepair`] with the byte offset where it was made.
//!
//! Salvage knows nothing about schemas: whether `{}` or a closed truncated value may be used is
//! decided by the caller.
//!
//! # What comes back
//!
//! - Every value found, in order: `{…}{…}` and NDJSON give several (the turn stage splits them
//!   into calls); text is never cut down to its first object.
//! - Each syntax kind once, at the byte offset of its first occurrence.
//! - `truncated` when the text ended inside a value: it was closed, or, after complete values,
//!   dropped because it kept nothing (`{"a": 1}{"b`): a call may have been lost either way, so the
//!   flag stays set. A first value that kept nothing (`{"pa`) is an error instead.
//! - `alternative` when a string value's end was ambiguous: `"New York, "gender": "male"}`
//!   reads with the closing quote inserted before `, "gender":` (`quote_inserted`), and the
//!   reading where the quotes are content travels along; the caller's schema decides. The same
//!   for a string the text ends inside right before the closers of every open container
//!   (`{"key": ["value]}` → `["value"]`), which stays `truncated`.
//! - Typed errors: [`SalvageErrorKind::NoJson`] for prose, [`SalvageErrorKind::Syntax`] for
//!   broken JSON, [`SalvageErrorKind::NonFinite`] for `NaN`/`Infinity`, and the size and depth
//!   limits. Garbage never becomes `{}`.
//!
//! Content is kept as written: an escape JSON does not know keeps its backslash (`C:\Users`),
//! `\\\"` is a backslash and a quote, raw control characters stay the characters they are, and
//! an unescaped quote inside a value is content unless a bounded look-ahead finds what JSON
//! allows after a value. `'a' + 'b'` is joined (`quotes_normalized`). A string with an unknown
//! escape holds raw backslashes, so its `\n`, `\t`, `\b`, `\f`, `\r` keep their backslash too
//! (`C:\Users\new`). An invalid escape or lone
//! surrogate kept as text is reported as `control_char_escaped`, the kind for characters escaped
//! inside strings; an unescaped quote kept as content, and `\'`, as `quotes_normalized` (except
//! the shell idiom `'\''`, whose backslash is kept).
//!
//! # How it reads
//!
//! One pass over the bytes builds the value directly, with an explicit stack (no recursion) and
//! a bounded look-ahead for every heuristic, so time is linear in the input.
//!
//! # How the files stand (issue #30)
//!
//! The data flows one way, down; nothing below calls back up, and no import circle crosses a
//! folder (`.ci/salvage_imports.py` checks the `use` lines):
//!
//! - `entry/`: the top. `call.rs` ([`salvage`], and `salvage_call_after` for the engine: salvage
//!   after a strict prefix): size guard, empty arguments, double encoding; `document.rs`
//!   ([`salvage_document`]): any root, for the Python and Node drop-ins;
//! - `extract`: where the JSON is (at the start, in a fence, among prose);
//! - `parser/`: the lenient parser, a folder because its files implement one type: `mod.rs`
//!   (the `Parser` struct and its main loop), `strings`, `plain`, `numbers`, `lookahead`,
//!   `truncation`, `scratch`. A circle between the type and those files stays inside the folder;
//! - `document/`: document mode as a layer, below the parser, which consults it only through
//!   its switches (`Readings`, here) at named decision points; off for calls;
//! - `seed`: where the first run starts when the strict read failed late, from the plain
//!   prefix value `strict` hands over; `strict/`: the strict one-pass reader, on its own (a
//!   folder: the value-building read, its grammar, a syntax-only read and a look at the
//!   text's ending that decide when the first is skipped);
//! - `scan` (bytes), `memo`, `repairs` (the repair log): the ground floor of the stage.
//!
//! This file holds the stage's vocabulary: options, results, errors. Salvage knows no schema
//! and imports nothing from `repair/`; JSON Pointers are the crate's (`crate::pointer`).
//!
//! Conventions: a new document-only reading goes under `document/` behind a switch of
//! `Readings`, called from one named decision point of the parser, never threaded through it;
//! a new part of the parser goes under `parser/`; each file's opening comment says what it
//! owns.

mod document;
mod entry;
mod extract;
mod memo;
mod node;
mod parser;
mod repairs;
mod scan;
mod seed;
pub mod strict;
pub(crate) mod write;

use serde_json::Value;

use crate::RepairKind;
use node::{Node, Roots};

pub use document::{Document, DocumentOptions, MAX_DOCUMENT_BYTES, TruncationPolicy};
#[cfg(test)]
pub(crate) use entry::salvage_after;
pub(crate) use entry::salvage_call_after;
pub use entry::{salvage, salvage_broken_document, salvage_document, salvage_to_text};
pub(crate) use strict::{Precheck, StrictPrefix, read_strict};

/// Options for one salvage run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SalvageOptions {
    /// Text longer than this is refused with [`SalvageErrorKind::TooLarge`].
    pub max_bytes: usize,
    /// Nesting deeper than this is refused with [`SalvageErrorKind::TooDeep`].
    pub max_depth: usize,
    /// The document-only readings ([`DocumentOptions`]); off for calls.
    readings: Readings,
}

impl Default for SalvageOptions {
    fn default() -> Self {
        Self {
            max_bytes: crate::limits::MAX_SALVAGE_BYTES,
            max_depth: crate::limits::MAX_DEPTH,
            readings: Readings::CALL,
        }
    }
}

impl SalvageOptions {
    /// Options taken from a [`crate::Limits`].
    #[must_use]
    pub fn from_limits(limits: &crate::Limits) -> Self {
        Self {
            max_bytes: limits.max_salvage_bytes,
            max_depth: limits.max_depth,
            readings: Readings::CALL,
        }
    }

    /// These options with another [`Self::max_bytes`].
    #[must_use]
    pub const fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// These options with another [`Self::max_depth`].
    #[must_use]
    pub const fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }
}

/// The switches of the document layer (`document/`), carried to the parser inside
/// [`SalvageOptions`]; off for calls. Defined here, with the options that carry them, so that
/// the options and the layer do not name each other.
///
/// The parser consults them, and the functions `document/mod.rs` re-exports, at its named
/// decision points only (see that module's doc); with [`Self::CALL`] none of them fires.
///
/// They carry one switch that is not the document layer's: what the parser builds
/// ([`node::Build`]), values unless the caller asked for text ([`salvage_to_text`]); here
/// because it travels the same way, from the entry point to every parser of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Readings {
    /// [`DocumentOptions::trim_layout`].
    trim_layout: bool,
    /// [`DocumentOptions::lenient_scalars`].
    lenient_scalars: bool,
    /// [`DocumentOptions::trim_cut_strings`].
    trim_cut_strings: bool,
    /// What the parser builds: values, or nodes for text.
    build: node::Build,
    /// Whether the parser notes where the root members' text is already what serde_json
    /// writes ([`Salvaged::spans`]): only the engine's `salvage_call_after` writes the call's text
    /// from them, so `salvage` and `salvage_to_text` skip the vector.
    member_text: bool,
}

impl Readings {
    /// Call salvage: content as written, JSON's own scalars.
    const CALL: Self = Self {
        trim_layout: false,
        lenient_scalars: false,
        trim_cut_strings: false,
        build: node::Build::Values,
        member_text: false,
    };

    /// Whether every document reading is off (the call grammar), whatever is built.
    fn is_call(self) -> bool {
        !self.trim_layout && !self.lenient_scalars && !self.trim_cut_strings
    }
}

/// One syntax repair and where in the input text it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntaxRepair {
    /// Always a syntax kind ([`RepairKind::is_syntax`]).
    pub kind: RepairKind,
    /// Byte offset in the input text.
    pub offset: usize,
}

/// What salvage made of a text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Salvaged {
    /// The values found, in text order; never empty. More than one means the text held several
    /// complete values back to back (`{…}{…}` or NDJSON), which the turn stage splits into calls.
    pub values: Vec<Value>,
    /// The repairs made, in text order: each kind once, at the offset of its first occurrence
    /// (the engine reports each kind once per call).
    pub repairs: Vec<SyntaxRepair>,
    /// The pointers of keys sent twice in one object whose earlier value was dropped (reported
    /// as `duplicate_key_dropped`), in text order, at most
    /// [`crate::limits::MAX_REPORTED_DUPLICATE_KEYS`]. The parser keeps a key's last value, as
    /// serde_json does.
    pub dropped_keys: Vec<String>,
    /// The text ended inside a value, which was closed (DESIGN §5.1 `truncation_closed`), or,
    /// after complete values, dropped because it kept nothing: a call may be missing either way.
    /// Like serde_json's `Category::Eof`: the caller decides whether a closed value may be used.
    pub truncated: bool,
    /// Another reading of the one value, when a string's end was ambiguous: `values` holds the
    /// reading where a missing closing quote was inserted before `, "key":`
    /// ([`RepairKind::QuoteInserted`]), this one the reading where the string swallowed what
    /// follows. The schema decides: the caller takes this one only when it alone validates.
    pub alternative: Option<Value>,
    /// When [`Self::values`] is one object: per member, in order, where in the text its key and
    /// its value are already written as serde_json writes them (a plain string with no `\/` or
    /// `\u` escape, read without repair), or would be with their `'…'` quotes swapped, so that
    /// the call's text copies them (issue #11 §3, #31).
    /// Empty when it does not line up with the object (several values, a root key sent twice, a
    /// text other than the input).
    pub(crate) spans: Vec<MemberText>,
}

/// Where one member of the root object is already written in the text as serde_json writes
/// it, or would be with its quotes swapped (see [`Salvaged::spans`]).
///
/// A noted text starts with `"` (copied as it stands) or `'` (a `'…'` string whose content is
/// what serde_json writes between `"`: copied between `"`); JSON text never starts with `'`, so
/// its first byte tells which. [`Self::key_text`] and [`Self::value_text`] read it so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MemberText {
    /// Where its key's text starts, quotes included: `"` or `'`, the key as it stands (nothing
    /// in it escaped or to escape), the same quote. Its length is the key's, plus two.
    pub(crate) key: Option<usize>,
    /// Its value's text.
    pub(crate) value: Option<std::ops::Range<usize>>,
}

/// A noted text of a member ([`MemberText`]) as it is copied into the call's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Noted<'t> {
    /// What serde_json writes, as it stands.
    Copied(&'t str),
    /// What serde_json writes between `"`: the content of a `'…'` string.
    Quoted(&'t str),
}

impl Noted<'_> {
    /// Appends what serde_json writes.
    #[inline(always)]
    pub(crate) fn push_to(self, out: &mut String) {
        match self {
            Self::Copied(text) => out.push_str(text),
            Self::Quoted(content) => {
                out.push('"');
                out.push_str(content);
                out.push('"');
            }
        }
    }
}

impl MemberText {
    /// The noted text of the key, whose content is `len` bytes long, in `text`. (The call's
    /// text is written from the key itself, between `"`: its content is the key, as it stands.)
    #[cfg(test)]
    pub(crate) fn key_text<'t>(&self, text: &'t str, len: usize) -> Option<Noted<'t>> {
        noted(text, self.key?, self.key? + len + 2)
    }

    /// The noted text of the value in `text`.
    #[inline(always)]
    pub(crate) fn value_text<'t>(&self, text: &'t str) -> Option<Noted<'t>> {
        let span = self.value.as_ref()?;
        noted(text, span.start, span.end)
    }
}

/// `text[start..end]`, a noted text, as it is copied (see [`MemberText`]).
#[inline(always)]
fn noted(text: &str, start: usize, end: usize) -> Option<Noted<'_>> {
    if text.as_bytes().get(start) == Some(&b'\'') {
        // One byte each side: the quotes.
        text.get(start + 1..end.checked_sub(1)?).map(Noted::Quoted)
    } else {
        text.get(start..end).map(Noted::Copied)
    }
}

impl Salvaged {
    /// Whether the given kind was among the repairs.
    #[must_use]
    pub fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }
}

/// What salvage made of a text, written as text: [`Salvaged`] without the `serde_json::Value`
/// tree, for callers that want the repaired JSON text and no values ([`salvage_to_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SalvagedText {
    /// The values found, in text order, each written as compact JSON (the bytes
    /// `serde_json::to_string` writes for the value [`salvage`] returns), one per line: a line
    /// break never occurs inside compact JSON.
    pub text: String,
    /// How many values [`Self::text`] holds; never 0.
    pub count: usize,
    /// As [`Salvaged::repairs`].
    pub repairs: Vec<SyntaxRepair>,
    /// As [`Salvaged::dropped_keys`].
    pub dropped_keys: Vec<String>,
    /// As [`Salvaged::truncated`].
    pub truncated: bool,
    /// [`Salvaged::alternative`], written as compact JSON.
    pub alternative: Option<String>,
}

impl SalvagedText {
    /// Whether the given kind was among the repairs.
    #[must_use]
    pub fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }
}

/// What salvage made of a call's arguments ([`entry::salvage_call_after`]): a [`Salvaged`]
/// whose values are `one` when it read one value, [`Salvaged::values`] then empty.
#[derive(Debug)]
pub(crate) struct SalvagedCall {
    /// The value read, when there is one only.
    pub(crate) one: Option<Value>,
    /// The rest; its values only when `one` is `None`.
    pub(crate) salvaged: Salvaged,
}

impl SalvagedCall {
    /// The [`Salvaged`] of [`crate::salvage::salvage`], the one value put back among the values.
    pub(crate) fn into_salvaged(self) -> Salvaged {
        let mut salvaged = self.salvaged;
        if let Some(one) = self.one {
            salvaged.values = vec![one];
        }
        salvaged
    }
}

/// What a salvage run found, before it is built into values or written as text: the fields of
/// [`Salvaged`], with the values as the parser's nodes.
#[derive(Debug)]
pub(crate) struct Found {
    values: Roots,
    repairs: Vec<SyntaxRepair>,
    dropped_keys: Vec<String>,
    truncated: bool,
    /// Boxed: nearly always `None`, and a `Found` is moved several times on every call (kept
    /// under the size moved without a `memcpy` call).
    alternative: Option<Box<Node>>,
    spans: Vec<MemberText>,
}

impl Found {
    /// Whether the given kind was among the repairs.
    fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }

    /// The values, read from `text`, as `serde_json::Value`s.
    fn into_salvaged(self, text: &str) -> Salvaged {
        self.into_call(text).into_salvaged()
    }

    /// [`Self::into_salvaged`], the one value (nearly every call's) apart: [`Salvaged::values`]
    /// then stays empty, a vector neither allocated nor freed (issue #31).
    #[inline(always)]
    fn into_call(self, text: &str) -> SalvagedCall {
        let (one, values) = match self.values.into_one(text) {
            Ok(value) => (Some(value), Vec::new()),
            Err(values) => (None, values.into_values(text)),
        };
        SalvagedCall {
            one,
            salvaged: Salvaged {
                values,
                repairs: self.repairs,
                dropped_keys: self.dropped_keys,
                truncated: self.truncated,
                alternative: self.alternative.map(|node| (*node).into_value(text)),
                spans: self.spans,
            },
        }
    }

    /// The values, read from `text`, written as compact JSON.
    fn into_text(self, text: &str) -> SalvagedText {
        let mut out = String::with_capacity(text.len() + 8);
        self.values.write_lines(text, &mut out);
        SalvagedText {
            text: out,
            count: self.values.len(),
            repairs: self.repairs,
            dropped_keys: self.dropped_keys,
            truncated: self.truncated,
            alternative: self.alternative.map(|alternative| {
                let mut out = String::new();
                alternative.write_compact(text, &mut out);
                out
            }),
        }
    }
}

/// Why salvage gave up on a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SalvageErrorKind {
    /// The text is longer than [`SalvageOptions::max_bytes`].
    TooLarge,
    /// The nesting is deeper than [`SalvageOptions::max_depth`].
    TooDeep,
    /// The text holds no JSON object or array at all (plain prose, a bare word).
    NoJson,
    /// The text looks like JSON but cannot be read even leniently.
    Syntax,
    /// `NaN` or `Infinity` as a number: JSON has no such value.
    NonFinite,
}

/// A typed salvage failure with its position, modelled on serde_json's errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?} at byte {offset} (line {line}, column {column})")]
pub struct SalvageError {
    /// What went wrong.
    pub kind: SalvageErrorKind,
    /// Byte offset in the input where it went wrong.
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    /// 1-based column (in bytes) of `offset`; 0 before the first byte of a line.
    pub column: usize,
}

impl SalvageError {
    /// An error of `kind` at `offset` in `text`, with line and column computed.
    #[must_use]
    pub fn at(kind: SalvageErrorKind, text: &str, offset: usize) -> Self {
        let offset = offset.min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        Self {
            kind,
            offset,
            line,
            column: offset - line_start,
        }
    }
}

/// The argument texts of the bundled corpus's calls that are objects: the strict read's and
/// the seed's tests cut and wrap each of them.
#[cfg(test)]
fn corpus_objects() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(dir).expect("corpus/") {
        let path = entry.expect("a corpus file").path();
        if path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        let lines = std::fs::read_to_string(&path).expect("a corpus file");
        for line in lines.lines().filter(|line| !line.trim().is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).expect("a corpus line");
            let calls = case["message"]["tool_calls"].as_array().cloned();
            for call in calls.unwrap_or_default() {
                if let Some(text) = call["function"]["arguments"].as_str()
                    && text.trim_start().starts_with('{')
                {
                    texts.push(text.to_owned());
                }
            }
        }
    }
    texts
}
