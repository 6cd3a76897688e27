//! The strict read of an object that text may follow: a fence's body or a `{` among prose
//! (issue #31), with where each root member stands, for the seed of the lenient run there
//! (`seed.rs`). Nearly every such object is strict JSON, which this read builds at a fraction
//! of the lenient parser's cost.

use std::borrow::Cow;

use serde_json::Value;

use super::grammar::{SPECIAL_KEYS, read_string_noting};
use super::{Noted, Reader};
use crate::salvage::scan;

/// Most root members of a candidate object noted (see [`Candidate`]); past it no seed is made.
const MAX_CANDIDATE_MEMBERS: usize = 64;

/// What the strict read of an object that text may follow found (see [`read_candidate`]).
#[derive(Debug)]
pub(in crate::salvage) struct Candidate {
    /// The members read and where each stands; the next key is the key of a member that
    /// failed in its value.
    pub(in crate::salvage) noted: Noted,
    /// The first member whose value is an object or an array holding a container.
    pub(in crate::salvage) first_container: Option<usize>,
    /// The first member whose value is an array of scalars (handed over like a scalar).
    pub(in crate::salvage) first_array: Option<usize>,
    /// The closing quote of the last string of the last member's value, when the value is one
    /// or an array of scalars that ends with one.
    pub(in crate::salvage) last_quote: Option<usize>,
    /// [`Self::last_quote`] closes an element of that array.
    pub(in crate::salvage) last_in_array: bool,
    /// The object closed right before this offset; `None` when the read failed.
    pub(in crate::salvage) end: Option<usize>,
}

/// Reads the object whose `{` is at `root` of `text`, which may go on after it (a fence's
/// body, a `{` among prose, issue #31), noting where each root member stands, for the seed of
/// the lenient run there (`seed.rs`). `None` when no member was read, the object has more than
/// [`MAX_CANDIDATE_MEMBERS`], or only `serde_json`'s own reading settles it (a special first
/// key).
///
/// Each member is read as [`read_object`] reads it, by the same token readers. Always inlined
/// into its one caller (the seed): returned from a call, the ~180-byte candidate was copied
/// out through `memcpy` (`mixed` +37 instructions a call out of line).
#[inline(always)]
pub(in crate::salvage) fn read_candidate(text: &str, root: usize) -> Option<Candidate> {
    // One that stops at a Python literal, a trailing comma or a `'…'` string: what may follow
    // this object is the lenient parser's to judge.
    let mut reader = Reader::<()>::new(text, root);
    // Made at the first member read: an object failing in its first member (prose braces)
    // allocates nothing.
    let mut noted: Option<Noted> = None;
    // Members noted so far.
    let mut index = 0;
    let (mut last_quote, mut last_in_array) = (None, false);
    let (mut first_container, mut first_array) = (None, None);
    let (end, failed_key) = loop {
        match reader.open_key(index == 0) {
            Ok(true) => {}
            Ok(false) => break (Some(reader.pos), None),
            Err(_) => break (None, None),
        }
        let key_at = reader.pos;
        // Kept borrowed until its value reads: a member failing in its value (a Python literal)
        // allocates nothing for its key.
        let Ok((key, after_key, _)) = read_string_noting(text, key_at) else {
            break (None, None);
        };
        reader.pos = after_key;
        if index == 0 && SPECIAL_KEYS.contains(&key.as_ref()) {
            return None;
        }
        let plain = matches!(key, Cow::Borrowed(_));
        if reader.skip_ws() != Some(b':') {
            break (None, None);
        }
        reader.pos += 1;
        reader.skip_ws();
        let start = reader.pos;
        reader.escapes = 0;
        let Ok(value) = reader.value(1) else {
            break (None, plain.then_some(key_at - 1));
        };
        if index == MAX_CANDIDATE_MEMBERS {
            return None;
        }
        last_in_array = false;
        let (string, escapes) = match &value {
            Value::String(_) => {
                last_quote = Some(reader.pos - 1);
                (Some(start..reader.pos), reader.escapes)
            }
            Value::Array(items) if !items.iter().any(|i| i.is_object() || i.is_array()) => {
                first_array = first_array.or(Some(index));
                // Its last element's closing quote, when a string: the last byte before `]`.
                let close = reader.pos - 1;
                let mut q = close;
                while q > start && scan::is_ws(reader.bytes[q - 1]) {
                    q -= 1;
                }
                last_in_array = items.last().is_some_and(Value::is_string);
                last_quote = last_in_array.then(|| q - 1);
                // Its strings' escapes count as a string's (a `\u` sends later strings the
                // long way); its text is not noted.
                (None, reader.escapes)
            }
            Value::Object(_) | Value::Array(_) => {
                first_container = first_container.or(Some(index));
                last_quote = None;
                (None, 0)
            }
            _ => {
                last_quote = None;
                (None, 0)
            }
        };
        let noted = noted.get_or_insert_with(Noted::with_room);
        noted.note(plain.then_some(key_at - 1), string, escapes);
        noted.duplicate |= noted.members.insert(key.into_owned(), value).is_some();
        index += 1;
    };
    let mut noted = noted?;
    noted.set_next_key(failed_key);
    Some(Candidate {
        noted,
        first_container,
        first_array,
        last_quote,
        last_in_array,
        end,
    })
}
