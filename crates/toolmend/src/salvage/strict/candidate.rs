//! The strict read of an object that text may follow: a fence's body or a `{` among prose
//! (issue #31), with where each root member stands, for the seed of the lenient run there
//! (`seed.rs`). Nearly every such object is strict JSON, which this read builds at a fraction
//! of the lenient parser's cost.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::grammar::{SPECIAL_KEYS, read_string};
use super::{ROOT_CAPACITY, Reader};
use crate::salvage::{MemberText, scan};

/// Most root members of a candidate object noted (see [`Candidate`]); past it no seed is made.
const MAX_CANDIDATE_MEMBERS: usize = 64;

/// What the strict read of an object that text may follow found (see [`read_candidate`]).
#[derive(Debug)]
pub(in crate::salvage) struct Candidate {
    /// The members read, in order (the last value of a key sent twice).
    pub(in crate::salvage) members: Map<String, Value>,
    /// Per member read, duplicates included: where its key's text starts (its `"`), when the
    /// key has no escape, and its value's text when the value is a string.
    pub(in crate::salvage) spans: Vec<MemberText>,
    /// One bit per member (`1 << index`) whose value is a string with an escape.
    pub(in crate::salvage) escaped: u64,
    /// One bit per member whose value is an object or an array holding a container.
    pub(in crate::salvage) containers: u64,
    /// One bit per member whose value is an array of scalars; its text is in `spans` too.
    pub(in crate::salvage) arrays: u64,
    /// The closing quote of the last string of the last member's value, when the value is one
    /// or an array of scalars that ends with one.
    pub(in crate::salvage) last_quote: Option<usize>,
    /// [`Self::last_quote`] closes an element of that array.
    pub(in crate::salvage) last_in_array: bool,
    /// A key was sent twice.
    pub(in crate::salvage) duplicate: bool,
    /// The object closed right before this offset; `None` when the read failed.
    pub(in crate::salvage) end: Option<usize>,
    /// When the read failed inside the value of a member whose key (with no escape) and colon
    /// were read: where that key's `"` is.
    pub(in crate::salvage) failed_key: Option<usize>,
}

/// Reads the object whose `{` is at `root` of `text`, which may go on after it (a fence's
/// body, a `{` among prose, issue #31), noting where each root member stands, for the seed of
/// the lenient run there (`seed.rs`). `None` when no member was read, the object has more than
/// [`MAX_CANDIDATE_MEMBERS`], or only `serde_json`'s own reading settles it (a special first
/// key).
///
/// Each member is read as [`read_object`] reads it, by the same token readers.
pub(in crate::salvage) fn read_candidate(text: &str, root: usize) -> Option<Candidate> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: root + 1,
        deepest: 1,
    };
    let mut members = Map::new();
    let mut spans: Vec<MemberText> = Vec::new();
    let (mut escaped, mut containers, mut arrays) = (0u64, 0u64, 0u64);
    let (mut last_quote, mut last_in_array, mut duplicate) = (None, false, false);
    let (end, failed_key) = loop {
        match reader.open_key(spans.is_empty()) {
            Ok(true) => {}
            Ok(false) => break (Some(reader.pos), None),
            Err(_) => break (None, None),
        }
        let key_at = reader.pos;
        // Kept borrowed until its value reads: a member failing in its value (a Python literal)
        // allocates nothing for its key.
        let Ok((key, after_key)) = read_string(text, key_at) else {
            break (None, None);
        };
        reader.pos = after_key;
        if spans.is_empty() && SPECIAL_KEYS.contains(&key.as_ref()) {
            return None;
        }
        let plain = matches!(key, Cow::Borrowed(_));
        if reader.skip_ws() != Some(b':') {
            break (None, None);
        }
        reader.pos += 1;
        reader.skip_ws();
        let start = reader.pos;
        let Ok(value) = reader.value(1) else {
            break (None, plain.then_some(key_at - 1));
        };
        let index = spans.len();
        if index == MAX_CANDIDATE_MEMBERS {
            return None;
        }
        let bit = 1u64 << index;
        last_in_array = false;
        let span = match &value {
            Value::String(s) => {
                // Every escape is longer than what it decodes to.
                if s.len() + 2 != reader.pos - start {
                    escaped |= bit;
                }
                last_quote = Some(reader.pos - 1);
                Some(start..reader.pos)
            }
            Value::Array(items) if !items.iter().any(|i| i.is_object() || i.is_array()) => {
                arrays |= bit;
                // Its last element's closing quote, when a string: the last byte before `]`.
                let close = reader.pos - 1;
                let mut q = close;
                while q > start && scan::is_ws(reader.bytes[q - 1]) {
                    q -= 1;
                }
                last_in_array = items.last().is_some_and(Value::is_string);
                last_quote = last_in_array.then(|| q - 1);
                Some(start..reader.pos)
            }
            Value::Object(_) | Value::Array(_) => {
                containers |= bit;
                last_quote = None;
                None
            }
            _ => {
                last_quote = None;
                None
            }
        };
        if index == 0 {
            members = Map::with_capacity(ROOT_CAPACITY);
            // Room for the members the lenient run reads after a seed, too.
            spans.reserve(ROOT_CAPACITY);
        }
        spans.push(MemberText {
            key: plain.then_some(key_at - 1),
            value: span,
        });
        duplicate |= members.insert(key.into_owned(), value).is_some();
    };
    (!spans.is_empty()).then_some(Candidate {
        members,
        spans,
        escaped,
        containers,
        arrays,
        last_quote,
        last_in_array,
        duplicate,
        end,
        failed_key,
    })
}
