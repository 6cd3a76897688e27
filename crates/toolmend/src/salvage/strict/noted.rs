//! What a strict read notes of the root members it completed, for a seed (issue #31): each
//! member's key and value text and the escapes in it, noted while reading, so that `seed.rs`
//! picks the members it hands over without walking their text again (the walk, and a search
//! of each string for its escapes, cost a ~100 B call ~1 k instructions).
//!
//! The value-building read (`mod.rs`) notes its members on the stack as [`Mark`]s (the valid
//! path allocates nothing for them) and makes them [`Noted`] only when it fails; the candidate
//! read (`candidate.rs`) notes into [`Noted`] as it reads.

use serde_json::{Map, Value};

use super::ROOT_CAPACITY;
use super::grammar::{Escapes, SLASH, UNICODE};
use crate::salvage::{MemberText, scan};

/// One bit per member (`1 << index`).
pub(in crate::salvage) type Bits = u64;

/// The root members a strict read completed, and where each stands in the text.
#[derive(Debug, Default)]
pub(in crate::salvage) struct Noted {
    /// The members read, in order (the last value of a key sent twice).
    pub(in crate::salvage) members: Map<String, Value>,
    /// Per member noted, in order (duplicates included): where its key's `"` is, when the key
    /// has no escape, and its value's text when the value is a string (or, in a candidate, an
    /// array of scalars).
    pub(in crate::salvage) spans: Vec<MemberText>,
    /// Members whose value (a string, or an array's strings) holds a `\/` escape.
    pub(in crate::salvage) slashes: Bits,
    /// Members whose value holds a `\u` escape.
    pub(in crate::salvage) unicodes: Bits,
    /// Members whose value is a container a seed does not hand over: an object, or an array
    /// other than a candidate's array of scalars.
    pub(in crate::salvage) containers: Bits,
    /// Members whose value is an array of scalars (a candidate's): its text is in `spans`.
    pub(in crate::salvage) arrays: Bits,
    /// A key was sent twice.
    pub(in crate::salvage) duplicate: bool,
    /// The `"` of the key after the last member noted, when that key has no escape and its
    /// colon was read (the read failed in its value, or right after it).
    pub(in crate::salvage) next_key: Option<usize>,
}

impl Noted {
    /// Notes `escapes` of the member at `bit`.
    #[inline(always)]
    pub(super) fn note_escapes(&mut self, bit: Bits, escapes: Escapes) {
        if escapes & SLASH != 0 {
            self.slashes |= bit;
        }
        if escapes & UNICODE != 0 {
            self.unicodes |= bit;
        }
    }
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
    /// The escapes its value's strings held.
    pub(super) escapes: Escapes,
}

/// The members `members` of a value-building read of `text` that failed, whose first ones
/// `marks` notes (one each), `next_key` the `"` of the key after the last one (see
/// [`Noted::next_key`]). With a key sent twice the marks no longer line up with the map: none
/// are noted (no seed is made then).
pub(super) fn from_marks(
    text: &str,
    members: Map<String, Value>,
    marks: &[Mark],
    duplicate: bool,
    next_key: Option<usize>,
) -> Noted {
    let mut noted = Noted {
        duplicate,
        // Past the marks, the key after the last one noted is not known.
        next_key: next_key.filter(|_| marks.len() >= members.len()),
        ..Noted::default()
    };
    if !duplicate {
        // Room for the members the lenient run reads after a seed, too.
        noted.spans = Vec::with_capacity((members.len() + 1).max(ROOT_CAPACITY));
        for (i, (mark, (key, value))) in marks.iter().zip(&members).enumerate() {
            let bit: Bits = 1 << i;
            let value = match value {
                // Only a key with no escape is handed over: its text is its content.
                Value::String(_) if mark.key != 0 => {
                    let bytes = text.as_bytes();
                    let colon = scan::skip_ws(bytes, mark.key as usize + key.len() + 1);
                    Some(scan::skip_ws(bytes, colon + 1)..mark.end as usize)
                }
                Value::Object(_) | Value::Array(_) => {
                    noted.containers |= bit;
                    None
                }
                _ => None,
            };
            noted.note_escapes(bit, mark.escapes);
            noted.spans.push(MemberText {
                key: (mark.key != 0).then(|| mark.key as usize - 1),
                value,
            });
        }
    }
    noted.members = members;
    noted
}
