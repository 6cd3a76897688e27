//! The faults the value-building read reads on past, as the lenient parser repairs them (issue
//! #31): a Python literal (`None`, `True`, `False`) where a value belongs, followed by a blank,
//! `,`, `}` or `]`; a trailing comma before the root object's `}` or an array's `]`; and a plain
//! `'…'` key or string value (the third, below).
//!
//! A call that holds no other fault (`{"cwd": None, "background": False}`) failed the strict
//! read at the first of them, and salvage's parser read the members after it at ~1.6 times the
//! strict read's cost a member, inside an envelope of its own (~3.9 k instructions of a ~9.3 k
//! call). The parser reads such an object as this read does: every string closes where
//! `serde_json` closes it (a closing quote followed by `, "key":`, a `,` and an element, a
//! trailing comma or the closers and then the end of the text is a closer to its look-ahead),
//! strict numbers, strings and literals are read alike, and the two faults are repaired in
//! place (`python_literal` at the literal, `trailing_comma_removed` at the comma), nothing else.
//! So the read goes on past them, noting each kind's first offset, and when it reads the whole
//! text so ([`Whole`]) the call's salvage result is made from it without the parser
//! (`entry/call.rs`), with the spans the parser notes ([`super::noted::whole_spans`]).
//!
//! Whole only where that holds without a doubt: the text is the root object and blanks, no
//! key sent twice, every root key without an escape and among the members marked, no object
//! below the root (its keys, their escapes and a key sent twice there are the parser's to
//! report). Salvage's own limits (size, depth) are checked where they are known, in
//! `entry/call.rs`. Anything else, and a read that fails after such a fault, hands over what the
//! read handed over when it stopped at the first fault ([`as_stopped`]): the same prefix, so
//! the seed and salvage go on as before. Not in a candidate's read (a fence's body, prose):
//! what may follow that object is the parser's to judge.
//!
//! Third, a `'…'` key or string value in its simplest shape (issue #31, `small/single_quotes`):
//! content with no `'`, `"` or control character and only the escapes the parser's plain read
//! decodes alike (`\\` `\n` `\t` `\r` `\b` `\f`), a key followed by blanks and its `:`, a value by
//! blanks and `,`, `}` or `]`, and a key only as the object's first or after a comma. The
//! parser reads it as its plain read does (`quotes_normalized` at the first quote, the content
//! as it stands, the text noted as a `"…"` string's), its look-ahead taking the quote as the
//! closer as it takes a `"`. Read on only in a text of at most 1 KiB ([`MAX_SINGLE_READ`]).

use std::num::NonZeroU32;

use serde_json::{Map, Value};

use super::grammar::Escapes;
use super::noted::{self, Mark, Noted};
use super::{Read, Reader, Stop, StrictPrefix, Strictly};
use crate::salvage::scan;

/// A bit of a root member's [`Mark::escapes`] beside its escapes: its value held a fault read
/// on (a Python literal, a trailing comma in an array, a `'…'` string).
pub(super) const READ_ON: Escapes = 4;

/// A bit of a root member's [`Mark::escapes`]: a trailing comma followed it, before the root
/// object's `}`.
pub(super) const ROOT_COMMA: Escapes = 8;

/// A bit of a root member's [`Mark::escapes`]: the key after it was a `'…'` key read on.
pub(super) const SINGLE_KEY_AFTER: Escapes = 16;

/// The longest text read on past a `'…'` string: a longer one that fails after it is read
/// twice, by this read and by salvage. The ~2 KB `medium/single_quotes` calls hold a `"` in a
/// `'…'` value (not read on): at 4 KiB they cost +6 % (callgrind); the small ones are < 200 B.
pub(super) const MAX_SINGLE_READ: usize = 1024;

/// The faults a read went on past, each kind's first offset (0: none; no fault is at 0, where
/// the root's `{` is at the earliest). Offsets are `u32`: a text past 4 GiB is not read on.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tolerated {
    /// The first Python literal.
    python: u32,
    /// The first trailing comma.
    comma: u32,
    /// The first `'…'` key or string value (`quotes_normalized`).
    single: u32,
    /// The deepest nesting opened when the first fault was read, where the read used to stop.
    deepest: u8,
    /// The first fault was the root object's first key, `'…'`: the read used to hand over
    /// nothing.
    at_first_key: bool,
}

impl Tolerated {
    /// Whether a fault was read on.
    #[inline(always)]
    pub(super) fn any(&self) -> bool {
        self.python | self.comma | self.single != 0
    }

    /// Notes the first fault's nesting, `deepest`, before a fault is noted.
    fn first(&mut self, deepest: usize) {
        if !self.any() {
            // Below the depth limit (128), which the read checks before it opens a container.
            self.deepest = deepest as u8;
        }
    }
}

/// What a read notes of the faults it reads on past: nothing, for one that stops at them (`()`,
/// a candidate's read, whose code stays as it was), or [`Tolerated`].
pub(super) trait Faults: Default {
    /// Whether the read reads on past a Python literal, a trailing comma or a `'…'` string.
    const READ_ON: bool;

    /// Notes a Python literal at `at`, `deepest` the nesting then.
    fn python(&mut self, at: u32, deepest: usize);

    /// Notes a trailing comma at `at`, `deepest` the nesting then.
    fn comma(&mut self, at: u32, deepest: usize);

    /// Notes a `'…'` key or string value opened at `at`, `deepest` the nesting then.
    fn single(&mut self, at: u32, deepest: usize);

    /// Notes that the first fault is the root object's first key (before it is noted).
    fn at_first_key(&mut self);
}

impl Faults for () {
    const READ_ON: bool = false;

    fn python(&mut self, _: u32, _: usize) {}

    fn comma(&mut self, _: u32, _: usize) {}

    fn single(&mut self, _: u32, _: usize) {}

    fn at_first_key(&mut self) {}
}

impl Faults for Tolerated {
    const READ_ON: bool = true;

    fn python(&mut self, at: u32, deepest: usize) {
        self.first(deepest);
        if self.python == 0 {
            self.python = at;
        }
    }

    fn comma(&mut self, at: u32, deepest: usize) {
        self.first(deepest);
        if self.comma == 0 {
            self.comma = at;
        }
    }

    fn single(&mut self, at: u32, deepest: usize) {
        self.first(deepest);
        if self.single == 0 {
            self.single = at;
        }
    }

    fn at_first_key(&mut self) {
        if !self.any() {
            self.at_first_key = true;
        }
    }
}

/// A root object read whole past the faults of [`Tolerated`] (see the module doc), as a
/// [`StrictPrefix`] carries it: what the call's salvage result is made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Whole {
    /// The first Python literal.
    python: Option<NonZeroU32>,
    /// The first trailing comma.
    comma: Option<NonZeroU32>,
    /// The first `'…'` key or string value (a text read on past one is at most
    /// [`MAX_SINGLE_READ`] long; a `u16` keeps the prefix within its size).
    single: Option<u16>,
}

impl Whole {
    /// Where the first Python literal is (`python_literal`).
    pub(crate) fn python_literal(&self) -> Option<usize> {
        self.python.map(|at| at.get() as usize)
    }

    /// Where the first trailing comma is (`trailing_comma_removed`).
    pub(crate) fn trailing_comma(&self) -> Option<usize> {
        self.comma.map(|at| at.get() as usize)
    }

    /// Where the first `'…'` key or string value opens (`quotes_normalized`).
    pub(crate) fn single_quotes(&self) -> Option<usize> {
        self.single.map(usize::from)
    }
}

impl<F: Faults> Reader<'_, F> {
    /// The Python literal at the position, where a value belongs, when a blank, `,`, `}` or `]`
    /// follows it (`literal_at` of the parser reads it so, and reads on after it as after any
    /// value); otherwise the read stops there, as it did. Offsets are noted as `u32`: a text
    /// past 4 GiB is not read on.
    #[cold]
    #[inline(never)]
    pub(super) fn python_literal(&mut self) -> Read<Value> {
        if u32::try_from(self.bytes.len()).is_err() {
            return Err(Stop::Syntax);
        }
        let at = self.pos as u32;
        let rest = &self.bytes[self.pos..];
        let (len, value) = match rest.first_chunk::<4>() {
            Some(b"None") => (4, Value::Null),
            Some(b"True") => (4, Value::Bool(true)),
            Some(b"Fals") if rest.get(4) == Some(&b'e') => (5, Value::Bool(false)),
            _ => return Err(Stop::Syntax),
        };
        if !matches!(
            rest.get(len),
            Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']')
        ) {
            return Err(Stop::Syntax);
        }
        self.faults.python(at, self.deepest);
        self.escapes |= READ_ON;
        self.pos += len;
        Ok(value)
    }

    /// Whether the element the read failed at, at the position, is an array's `]` right after
    /// the comma at `comma`: a trailing comma, noted, the `]` consumed.
    #[cold]
    #[inline(never)]
    pub(super) fn comma_before_bracket(&mut self, comma: usize) -> bool {
        if self.bytes.get(self.pos) != Some(&b']')
            || scan::skip_ws(self.bytes, comma + 1) != self.pos
            || !self.note_comma(comma)
        {
            return false;
        }
        self.escapes |= READ_ON;
        self.pos += 1;
        true
    }

    /// Whether the key the root object failed at, at the position, is its `}` after a comma
    /// (`open_key` took the comma and found no `"`): a trailing comma, noted on the member
    /// before it ([`ROOT_COMMA`]), the `}` consumed.
    #[cold]
    #[inline(never)]
    pub(super) fn comma_before_brace(&mut self) -> bool {
        if !F::READ_ON || self.bytes.get(self.pos) != Some(&b'}') {
            return false;
        }
        // `open_key` fails at a `}` only after a comma: a `}` after a value closes the object.
        let comma = scan::back_over_ws(self.bytes, 0, self.pos) - 1;
        if !self.note_comma(comma) {
            return false;
        }
        self.escapes |= ROOT_COMMA;
        self.pos += 1;
        true
    }

    /// Notes the trailing comma at `comma`; `false`, noting nothing, in a text past 4 GiB.
    fn note_comma(&mut self, comma: usize) -> bool {
        if u32::try_from(self.bytes.len()).is_err() {
            return false;
        }
        self.faults.comma(comma as u32, self.deepest);
        true
    }
}

impl<F: Faults> Reader<'_, F> {
    /// Whether the key the root object failed to open, at the position, is a `'…'` key the
    /// parser reads as this read does (`read_plain_key_span`: `quotes_normalized` at its quote,
    /// the content as it stands): content with no `'`, `"`, `\` or control character, then
    /// blanks and its `:`. `first`: the object's first key; otherwise one after a comma (not
    /// one where a comma is missing). Noted (on the member before it, [`SINGLE_KEY_AFTER`]),
    /// the position after its opening quote; the key is read by [`Self::single_key`].
    #[cold]
    #[inline(never)]
    pub(super) fn single_key_opens(&mut self, first: bool) -> bool {
        let bytes = self.bytes;
        if !F::READ_ON
            || bytes.len() > MAX_SINGLE_READ
            || bytes.get(self.pos) != Some(&b'\'')
            || (!first && bytes.get(scan::back_over_ws(bytes, 0, self.pos) - 1) != Some(&b','))
        {
            return false;
        }
        let open = self.pos;
        let close = scan::find_single_special(bytes, open + 1);
        if bytes.get(close) != Some(&b'\'')
            || bytes.get(scan::skip_ws(bytes, close + 1)) != Some(&b':')
        {
            return false;
        }
        if first {
            self.faults.at_first_key();
        } else {
            self.escapes |= SINGLE_KEY_AFTER;
        }
        self.faults.single(open as u32, self.deepest);
        self.pos = open + 1;
        true
    }

    /// The `'…'` string value at the position (a root member's, or an array's element), where
    /// the parser's plain read reads it as this read does: content with no `'`, `"` or control
    /// character and only the escapes `\\` `\n` `\t` `\r` `\b` `\f` (decoded alike; `\/`, `\u`,
    /// `\'` and `\"` are not read), `quotes_normalized` at its quote, its text noted as a `"…"`
    /// string's is. Its closing quote is the first `'`; what follows must read on as after any
    /// value, where the parser's look-ahead takes it as the closer. Otherwise the read stops.
    #[cold]
    #[inline(never)]
    pub(super) fn single_value(&mut self) -> Read<Value> {
        let bytes = self.bytes;
        if bytes.len() > MAX_SINGLE_READ {
            return Err(Stop::Syntax);
        }
        let open = self.pos;
        let mut decoded = String::new();
        let (mut from, mut copied) = (open + 1, open + 1);
        let close = loop {
            let i = scan::find_single_special(bytes, from);
            match bytes.get(i) {
                Some(b'\'') => break i,
                Some(b'\\') => {
                    let ch = match bytes.get(i + 1) {
                        Some(b'\\') => '\\',
                        Some(b'n') => '\n',
                        Some(b't') => '\t',
                        Some(b'r') => '\r',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        _ => return Err(Stop::Syntax),
                    };
                    decoded.push_str(&self.text[copied..i]);
                    decoded.push(ch);
                    copied = i + 2;
                    from = copied;
                }
                _ => return Err(Stop::Syntax),
            }
        };
        if !matches!(
            bytes.get(scan::skip_ws(bytes, close + 1)),
            Some(b',' | b'}' | b']')
        ) {
            return Err(Stop::Syntax);
        }
        self.faults.single(open as u32, self.deepest);
        self.escapes |= READ_ON;
        self.pos = close + 1;
        let content = &self.text[copied..close];
        Ok(Value::String(if copied == open + 1 {
            content.to_owned()
        } else {
            decoded.push_str(content);
            decoded
        }))
    }
}

/// The content of the `'…'` key of `text` whose content starts at `at`, found by
/// [`Reader::single_key_opens`], and the position after its closing quote.
pub(super) fn single_key(text: &str, at: usize) -> (&str, usize) {
    let close = scan::find_single_special(text.as_bytes(), at);
    (&text[at..close], close + 1)
}

/// How a root object read ended, with what it read: for [`finish`].
pub(super) struct Ended<'m> {
    /// The members read, in order (none allocated when none was kept).
    pub(super) members: Option<Map<String, Value>>,
    /// Each member kept, noted (the first ones only).
    pub(super) marks: &'m [Mark],
    /// How many members were kept.
    pub(super) read: usize,
    /// A key was sent twice.
    pub(super) duplicate: bool,
    /// The `"` of the last key whose colon was read, when the key had no escape.
    pub(super) last_key: Option<usize>,
    /// Why the read stopped; `None` at the root's `}`.
    pub(super) stop: Option<Stop>,
    /// Where the read is (after the root's `}` when it closed).
    pub(super) pos: usize,
    /// The deepest nesting opened.
    pub(super) deepest: usize,
}

/// What the read of `text` that went on past `tolerated` hands over: the whole object
/// ([`Whole`]) when the module doc's conditions hold, otherwise what it handed over when it
/// stopped at the first fault ([`as_stopped`]).
#[cold]
#[inline(never)]
pub(super) fn finish(text: &str, ended: Ended<'_>, tolerated: Tolerated) -> Strictly {
    let bytes = text.as_bytes();
    let whole = ended.stop.is_none()
        && scan::skip_ws(bytes, ended.pos) == bytes.len()
        && !ended.duplicate
        && ended.marks.len() == ended.read
        && ended.marks.iter().all(|mark| mark.key != 0);
    // Within `MAX_SINGLE_READ` (0: none).
    let single = u16::try_from(tolerated.single).ok();
    let members = ended.members.unwrap_or_default();
    if whole
        && let Some(single) = single
        && let Some(spans) = noted::whole_spans(text, &members, ended.marks)
    {
        let noted = Noted::whole(members, spans);
        return Strictly::NotJson(Some(StrictPrefix {
            noted,
            cut: false,
            // Below the depth limit (128), which the read checks before it opens a container.
            deepest: ended.deepest as u8,
            whole: Some(Whole {
                python: NonZeroU32::new(tolerated.python),
                comma: NonZeroU32::new(tolerated.comma),
                single: (single != 0).then_some(single),
            }),
        }));
    }
    as_stopped(
        text,
        Ended {
            members: Some(members),
            ..ended
        },
        tolerated,
    )
}

/// What the read handed over when it stopped at the first fault of `tolerated`, as it did
/// before it read on: the members completed before it, the key of the member it is in (or, at
/// a root trailing comma, of the member before it, completed and not kept), not cut, the
/// nesting then. The marks tell which member that is (the first with a fault bit, or the one
/// the read failed in, which was not kept); where they cannot tell it, or a key was sent twice
/// (the map no longer holds what it held then), no member is handed over, which salvage reads
/// alike, only from the start.
fn as_stopped(text: &str, ended: Ended<'_>, tolerated: Tolerated) -> Strictly {
    if tolerated.at_first_key {
        // No member was completed then.
        return Strictly::NotJson(None);
    }
    let marks = ended.marks;
    let key_of = |mark: &Mark| (mark.key != 0).then(|| mark.key as usize - 1);
    // The members kept then, whether one was completed, and the next key.
    let (kept, completed, next_key) = match marks
        .iter()
        .position(|mark| mark.escapes & (READ_ON | ROOT_COMMA | SINGLE_KEY_AFTER) != 0)
    {
        Some(k) => (
            Some(k),
            k > 0 || marks[k].escapes & READ_ON == 0,
            key_of(&marks[k]),
        ),
        // In the member the read failed in, which was not kept.
        None if marks.len() == ended.read => (Some(ended.read), ended.read > 0, ended.last_key),
        // In a member past the marks.
        None => (None, true, None),
    };
    if !completed {
        return Strictly::NotJson(None);
    }
    let mut members = ended.members.unwrap_or_default();
    let noted = match kept.filter(|_| !ended.duplicate) {
        Some(kept) => {
            if members.len() > kept {
                let mut count = 0;
                members.retain(|_, _| {
                    count += 1;
                    count <= kept
                });
            }
            noted::from_marks(text, members, &marks[..kept], false, next_key)
        }
        None => {
            members.clear();
            noted::from_marks(text, members, &[], ended.duplicate, None)
        }
    };
    Strictly::NotJson(Some(StrictPrefix {
        noted,
        cut: false,
        deepest: tolerated.deepest,
        whole: None,
    }))
}
