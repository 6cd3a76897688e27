//! What a strict read notes of the root members it completed, for a seed (issue #31): each
//! member's key and value text, and the escapes in it, noted while reading, so that `seed.rs`
//! picks the members it hands over without walking their text again (the walk, and a search
//! of each string for its escapes, cost a ~100 B call ~1 k instructions).
//!
//! The value-building read (`mod.rs`) notes its members on the stack as [`Mark`]s (the valid
//! path allocates nothing for them) and makes them [`Noted`] only when it fails; the candidate
//! read (`candidate.rs`) notes into [`Noted`] as it reads.

use std::num::NonZeroU32;

use serde_json::{Map, Value};

use super::ROOT_CAPACITY;
use super::grammar::{Escapes, SLASH, UNICODE};
use crate::salvage::{MemberText, scan};

/// The root members a strict read completed, and where each stands in the text. Small: the
/// value-building read's prefix travels up through the engine in its `Result`, which is
/// copied through `memcpy` past 128 bytes.
#[derive(Debug, Default)]
pub(in crate::salvage) struct Noted {
    /// The members read, in order (the last value of a key sent twice).
    pub(in crate::salvage) members: Map<String, Value>,
    /// Per member noted, in order (duplicates included), as a seed hands it over: where its
    /// key's `"` is, when the key has no escape, and its value's text when it is what
    /// `serde_json` writes and salvage notes (see [`Self::note`]).
    pub(in crate::salvage) spans: Vec<MemberText>,
    /// The `"` of the key after the last member noted, when that key has no escape and its
    /// colon was read (the read failed in its value, or right after it).
    next_key: Option<NonZeroU32>,
    /// The first member noted whose value holds a `\u` escape: salvage's plain string reader
    /// gives up at one, and reads the strings after it the long way.
    first_unicode: Option<u8>,
    /// A key was sent twice.
    pub(in crate::salvage) duplicate: bool,
}

impl Noted {
    /// No member yet, with room for a call's members (and for the ones the lenient run reads
    /// after a seed). Out of line: inlined into the candidate's read, its allocations were not
    /// (issue #31: +50 instructions a fenced call).
    #[inline(never)]
    pub(super) fn with_room() -> Self {
        Self {
            members: Map::with_capacity(ROOT_CAPACITY),
            spans: Vec::with_capacity(ROOT_CAPACITY),
            next_key: None,
            first_unicode: None,
            duplicate: false,
        }
    }

    /// Every member of a root object read whole (`tolerated.rs`), `spans` noted for each.
    pub(super) fn whole(members: Map<String, Value>, spans: Vec<MemberText>) -> Self {
        Self {
            members,
            spans,
            next_key: None,
            first_unicode: None,
            duplicate: false,
        }
    }

    /// The `"` of the key after the last member noted (see the field).
    pub(in crate::salvage) fn next_key(&self) -> Option<usize> {
        self.next_key.map(|at| at.get() as usize)
    }

    /// Notes `at` as [`Self::next_key`] (a key's `"` is never at 0: the object's `{` is
    /// before it; past 4 GiB none is noted).
    pub(super) fn set_next_key(&mut self, at: Option<usize>) {
        self.next_key = at.and_then(|at| NonZeroU32::new(u32::try_from(at).ok()?));
    }

    /// Notes the next member (whose index is `spans.len()`, below 256): its key's `"` and, when
    /// its value is a string, `string` (its text) and the `escapes` it held; `escapes` of an
    /// array's strings count too. The value's text is kept only where salvage would note it: no
    /// `\/` or `\u` escape (their text is not what `serde_json` writes) and no `\u` escape in
    /// a member before it.
    #[inline(always)]
    pub(super) fn note(
        &mut self,
        key: Option<usize>,
        string: Option<std::ops::Range<usize>>,
        escapes: Escapes,
    ) {
        note(
            &mut self.spans,
            &mut self.first_unicode,
            key,
            string,
            escapes,
        );
    }

    /// Whether a member among the first `handed` held a `\u` escape.
    pub(in crate::salvage) fn unicode_before(&self, handed: usize) -> bool {
        self.first_unicode
            .is_some_and(|first| usize::from(first) < handed)
    }
}

/// [`Noted::note`] on its two fields, for a caller that reads its map meanwhile.
#[inline(always)]
fn note(
    spans: &mut Vec<MemberText>,
    first_unicode: &mut Option<u8>,
    key: Option<usize>,
    string: Option<std::ops::Range<usize>>,
    escapes: Escapes,
) {
    let index = spans.len() as u8;
    let value = string.filter(|_| escapes & (SLASH | UNICODE) == 0 && first_unicode.is_none());
    if escapes & UNICODE != 0 && first_unicode.is_none() {
        *first_unicode = Some(index);
    }
    spans.push(MemberText { key, value });
}

/// Where a root member of the value-building read stands, noted on the stack while it reads
/// (offsets as `u32`: a text past 4 GiB notes none).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mark {
    /// Its key's first content byte; 0 (where no key's content is) when the key had an escape.
    pub(super) key: u32,
    /// The byte after its value (where the value starts is found again from the key, for a
    /// string only: one offset less to note on the valid path).
    pub(super) end: u32,
    /// The escapes its value's strings held, and the faults read on in it or after it
    /// (`tolerated.rs`).
    pub(super) escapes: Escapes,
}

/// The members `members` of a value-building read of `text` that failed, whose first ones
/// `marks` notes (one each), `next_key` the `"` of the key after the last one (see
/// [`Noted::next_key`]). Noted up to the first member whose value is an object or an array,
/// which a seed does not hand over: its key is then the next key. With a key sent twice the
/// marks no longer line up with the map: none are noted (no seed is made then).
pub(super) fn from_marks(
    text: &str,
    members: Map<String, Value>,
    marks: &[Mark],
    duplicate: bool,
    next_key: Option<usize>,
) -> Noted {
    // Built around `members` (a default map would read the thread's hash keys for nothing).
    let mut noted = Noted {
        members,
        spans: Vec::new(),
        next_key: None,
        first_unicode: None,
        duplicate,
    };
    if duplicate {
        return noted;
    }
    let count = noted.members.len();
    // Room for the members the lenient run reads after a seed, too.
    noted.spans = Vec::with_capacity((count + 1).max(ROOT_CAPACITY));
    // Past the marks, the key after the last one noted is not known.
    let mut next_key = next_key.filter(|_| marks.len() >= count);
    for (mark, (key, value)) in marks.iter().zip(&noted.members) {
        let key_quote = (mark.key != 0).then(|| mark.key as usize - 1);
        let string = match value {
            // Only a key with no escape is handed over: its text is its content.
            Value::String(_) if mark.key != 0 => {
                let bytes = text.as_bytes();
                let colon = scan::skip_ws(bytes, mark.key as usize + key.len() + 1);
                Some(scan::skip_ws(bytes, colon + 1)..mark.end as usize)
            }
            Value::Object(_) | Value::Array(_) => {
                next_key = key_quote;
                break;
            }
            _ => None,
        };
        let (spans, first_unicode) = (&mut noted.spans, &mut noted.first_unicode);
        note(spans, first_unicode, key_quote, string, mark.escapes);
    }
    noted.set_next_key(next_key);
    noted
}

/// The spans the lenient parser notes for the members `members` of a root object that the
/// value-building read of `text` read whole (`tolerated.rs`), each marked in `marks` with a key
/// with no escape: each key's `"`, and a string value's text where the parser's plain read
/// notes it, as [`Noted::note`] picks it (no `\/` or `\u` escape, no `\u` in a value before
/// it, an array's strings included); nothing for any other value. `None` when a value is or
/// holds an object, which is not read whole (`tolerated.rs`).
pub(super) fn whole_spans(
    text: &str,
    members: &Map<String, Value>,
    marks: &[Mark],
) -> Option<Vec<MemberText>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::with_capacity(marks.len());
    let mut unicode = false;
    for (mark, (key, value)) in marks.iter().zip(members) {
        let value = match value {
            Value::String(_) if mark.escapes & (SLASH | UNICODE) == 0 && !unicode => {
                let colon = scan::skip_ws(bytes, mark.key as usize + key.len() + 1);
                Some(scan::skip_ws(bytes, colon + 1)..mark.end as usize)
            }
            Value::Object(_) => return None,
            Value::Array(items) if items.iter().any(holds_object) => return None,
            _ => None,
        };
        unicode |= mark.escapes & UNICODE != 0;
        spans.push(MemberText {
            key: Some(mark.key as usize - 1),
            value,
        });
    }
    Some(spans)
}

/// Whether `value` is or holds an object.
fn holds_object(value: &Value) -> bool {
    match value {
        Value::Object(_) => true,
        Value::Array(items) => items.iter().any(holds_object),
        _ => false,
    }
}
