//! The strict read of a call whose text is an object: `serde_json`'s grammar and value, in one
//! pass (issue #11 §3).
//!
//! Every call is read strictly first, and nearly every call is valid JSON, so this read is most
//! of the valid path's cost. `serde_json::from_str` decodes a string with escapes into a scratch
//! buffer that starts empty for every text and grows by doubling (four times for an 84-byte
//! `new_text`), then copies it out. Here a string is decoded straight into the `String`
//! the value keeps: a string without escapes is one exact allocation, as before; one with
//! escapes is one buffer sized from its first run.
//!
//! What it accepts and what it builds are `serde_json::from_str::<Value>`'s, exactly:
//! - the grammar of RFC 8259 as `serde_json` reads it: only ` `, `\t`, `\n`, `\r` are blanks; a
//!   raw control character in a string, an escape JSON does not know, a `\u` that is not four
//!   hex digits, and an unpaired surrogate are errors; a trailing comma is an error;
//! - its recursion limit: a container nested 128 deep is an error;
//! - its value: a key sent twice keeps its first place and its last value; a number is read by
//!   `serde_json` itself from the span this reader found, so it keeps its text
//!   (`arbitrary_precision`);
//! - on failure, the root members completed before the error and where each stands in the
//!   text (for salvage to resume after them), with `serde_json`'s phases: an error between
//!   members (a missing or trailing comma) belongs to the next key, one at a member's colon to
//!   its value. A member the text fails right after is not kept (salvage reads it again), and
//!   whether the text ended there (cut off, every byte before the end strict) or holds a byte
//!   that is not JSON is told apart, for the engine to refuse a mutating tool's cut call
//!   without salvage;
//! - one kind of failure beside these: a text whose only faults are Python literals, trailing
//!   commas and plain `'…'` strings is still refused (never `Ok`), but read whole on past them,
//!   for salvage's result to be made from it (`tolerated.rs`); a read that fails after such a
//!   fault hands over what it handed over when it stopped at the first.
//!
//! It stands on its own below the lenient parser (it uses only `scan`): what it kept before
//! failing leaves as a plain value, `StrictPrefix`, for `seed.rs` to judge.
//!
//! The folder, one concern a file:
//! - `mod.rs`: the value-building read (this one) and what it hands over;
//! - `grammar.rs`: the tokens and limits of `serde_json`'s grammar. Its token readers are
//!   public, [`read_string`] and [`number_span`], so that the Python package's strict path
//!   (which builds Python objects instead of a `Value`) reads strings and numbers the same way;
//! - `noted.rs`: what the strict reads note of the root members they completed, so that the
//!   seed picks what it hands over without walking their text again;
//! - `candidate.rs`: the same read of an object that text may follow (a fence's body, a `{`
//!   among prose), noting its members as it reads;
//! - `tolerated.rs`: the Python literals, trailing commas and plain `'…'` strings this read
//!   reads on past (not a candidate's), the whole object it then hands over, and the prefix it
//!   hands over otherwise;
//! - `ending.rs`: a text whose last bytes show it cannot be strict JSON;
//! - `syntax.rs`: the same grammar read for syntax alone, in place of this read for a mutating
//!   tool's call that does not end with `}`: it hands over no members, only how the text failed
//!   (issue #31: a text whose ending shows it is not JSON is salvaged from its start, cheaper
//!   than building values for a seed).
//!
//! It defers to `serde_json` only where `serde_json`'s own visitor reads an object as something
//! else: a first key `$serde_json::private::Number` or `…::RawValue`. The tests check every
//! answer against `serde_json::from_str` on generated objects, their cuts and one-byte
//! mutations, and token soup, and that salvage resumed after what was kept reads as salvage
//! alone; the syntax-only read and the ending look are checked on the same texts.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{SalvageOptions, scan};

mod candidate;
mod ending;
mod grammar;
mod noted;
mod syntax;
mod tolerated;

pub(super) use candidate::read_candidate;
use ending::Ending;
use grammar::{DEPTH_LIMIT, Escapes, SPECIAL_KEYS, read_string_noting, small_integer};
pub use grammar::{NumberSpan, StringError, number_span, read_string};
use noted::Mark;
pub(super) use noted::Noted;
use syntax::{Failure, Syntax};
use tolerated::{Ended, Faults, Tolerated, Whole};

/// Most root members noted ([`Mark`], on the stack: the valid path allocates nothing more than
/// `serde_json` does). Members past it are read again by salvage. Twice a call's usual eight
/// arguments: their room is zeroed on every read, valid calls' included (issue #31: 32 of them
/// cost ~33 instructions a call more).
const MAX_TRACKED_KEYS: usize = 16;

/// Members the root map is allocated for: most tool calls send at most eight arguments.
const ROOT_CAPACITY: usize = 8;

/// Most root members among which the last member's key is looked for by comparing keys rather
/// than hashing it.
const MAX_COMPARED_KEYS: usize = 16;

/// The members of the root object `serde_json` completed before it failed, in order (none
/// when the syntax-only check read the text), and how it failed.
#[derive(Debug)]
pub(crate) struct StrictPrefix {
    /// The members read (every one, when [`Self::whole`]), but the last one when the text
    /// failed right after it: salvage reads that one again (a seed takes only members a key
    /// follows), so it is not kept (issue #31: inserting it hashed its key for a map that then
    /// dropped it again). Its key is then [`Noted::next_key`], as the key of a member that
    /// failed in its value is. A key sent twice is [`Noted::duplicate`], the last member's
    /// included, kept or not.
    pub(super) noted: Noted,
    /// The text ended inside the root object after a member was completed, every byte before
    /// its end strict JSON.
    cut: bool,
    /// The deepest nesting opened (the root object is 1); below the depth limit (128). Of the
    /// whole object when [`Self::whole`].
    pub(super) deepest: u8,
    /// The whole object, read on past its faults (`tolerated.rs`):
    /// then [`Self::noted`] holds every member, and the text is not cut. (With it the prefix
    /// stays within 120 bytes: past 128 it is copied through `memcpy` on its way up.)
    pub(super) whole: Option<Whole>,
}

// The prefix travels up through the engine in the strict read's `Result`: past 128 bytes it is
// copied through `memcpy` at every step (issue #31).
const _: () = assert!(size_of::<StrictPrefix>() <= 120);

/// Texts up to this size that do not end with a `}` skip the value-building read for a tool
/// that is not mutating (salvage reads them from their start). Not measured past it (the
/// corpus's tools are mutating); trailing commas were, at every size (see [`skipped`]).
const MAX_UNCLOSED_SKIPPED: usize = 256;

/// Texts up to this size that end with a trailing comma are read by the value-building read,
/// for a whole object read on past its faults (`tolerated.rs`); longer ones are salvaged from
/// their start. Measured (callgrind, `repair_call`): 6.95 k against 8.97 k instructions on
/// ~100 B calls, 31.4 k against 33.5 k at 2 KB, 2.38 M against 2.31 M at 200 KB (the strict
/// read's decoding of a long string with escapes costs more a byte than salvage's): even at
/// ~7 KB by those figures, so half of that.
const MAX_COMMA_READ_WHOLE: usize = 4096;

/// Which tool the strict read is for, which decides what it skips of a text whose ending shows
/// it is not strict JSON ([`skipped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precheck {
    /// None of it: the value-building read hands over the members every text completed (the
    /// tests of the seed).
    #[cfg(test)]
    Never,
    /// A tool that is not mutating.
    ReadOnly,
    /// A mutating tool, whose call cut off after a member is refused without salvage
    /// ([`StrictPrefix::cut_after_member`]).
    Mutating,
}

/// `serde_json::from_str::<Value>(text)`, with the same result; on failure, what salvage may
/// start after (see [`StrictPrefix`]). An object is read in one pass by [`read_object`], unless
/// its ending shows it is not strict JSON and `precheck` says what to skip ([`skipped`]): then
/// no prefix, or, from the syntax-only check, one with no members and only how it failed.
pub(crate) fn read_strict(text: &str, precheck: Precheck) -> Result<Value, Option<StrictPrefix>> {
    let first = scan::skip_ws(text.as_bytes(), 0);
    match text.as_bytes().get(first) {
        Some(b'{') => {}
        // No JSON value starts with this byte (a fence, prose), or there is none: serde_json
        // fails at it, and its error is not needed.
        Some(b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
            return serde_json::from_str(text).map_err(|_| None);
        }
        _ => return Err(None),
    }
    // Only a whole object is handed over (see `Skip::UnlessWhole`).
    let whole_only = match skipped(text, first, precheck) {
        Skip::Nothing => false,
        Skip::ValueRead => return Err(None),
        Skip::UnlessWhole => true,
        Skip::ToCheck => match syntax::check_object(text.as_bytes(), first) {
            Syntax::NotJson(failure) => return Err(failure.map(StrictPrefix::unseeded)),
            Syntax::Valid | Syntax::Unsure => false,
        },
    };
    // One call, inlined here: the valid path's.
    match read_object(text, first) {
        Strictly::Value(value) => Ok(value),
        Strictly::NotJson(Some(prefix)) if whole_only && prefix.whole.is_none() => Err(None),
        Strictly::NotJson(prefix) => Err(prefix),
        // A key serde_json's own visitor reads as a number or raw value (never sent by a
        // model, but its answer is the one to match); salvage then reads the whole text.
        Strictly::Defer => serde_json::from_str(text).map_err(|_| None),
    }
}

/// What the strict read of an object text skips.
enum Skip {
    /// Nothing: the value-building read.
    Nothing,
    /// The value-building read: the text cannot be strict JSON, and nothing it would build is
    /// used (salvage reads the text from its start).
    ValueRead,
    /// The value-building read's prefix, unless it read the whole object on past its faults
    /// (`tolerated.rs`): a text that ends with a trailing comma, which salvage otherwise reads
    /// from its start.
    UnlessWhole,
    /// The value-building read for the syntax-only check: the text cannot be strict JSON, and
    /// only how it fails is used (a mutating tool's call cut off after a member is refused).
    ToCheck,
}

/// What the strict read of the object text whose `{` is at `root` skips (see [`Precheck`]).
///
/// A text whose ending shows it is not strict JSON (`ending.rs`) is salvaged from its start
/// with no seed (issue #31): building the values a seed hands over, the seed and salvage of the
/// tail cost more than salvage reading the whole text. Measured (callgrind, `repair_call`, a
/// trailing comma): 10.2 k against 11.3 k instructions on ~100 B calls, 11.1 k against 12.7 k
/// at 300 B, 14.8 k against 15.9 k at 1.2 KB, 34.3 k against 39.6 k at 2 KB, 2.27 M against
/// 2.51 M at 200 KB.
///
/// The syntax-only check runs only where its answer is used: a prefix with no members serves
/// salvage no better than none, and only [`StrictPrefix::cut_after_member`] reads the rest, for
/// a mutating tool's call that does not end with `}`. Handing over no prefix gives the same
/// answer, since salvage reads a text cut after a member as truncated and the engine then
/// refuses a mutating tool's call just the same; the refusal before salvage saves reading it.
#[inline(always)]
fn skipped(text: &str, root: usize, precheck: Precheck) -> Skip {
    #[cfg(test)]
    if precheck == Precheck::Never {
        return Skip::Nothing;
    }
    match (ending::broken_ending(text.as_bytes(), root), precheck) {
        (None, _) => Skip::Nothing,
        // A trailing comma: the check would only tell whether a `,}` is inside a string the
        // text ends in (cut), which salvage tells as well. Read on past it (and past Python
        // literals), the object is nearly always whole: its salvage result is made from the
        // read (issue #31), up to a size (see `MAX_COMMA_READ_WHOLE`).
        (Some(Ending::Comma), _) if text.len() <= MAX_COMMA_READ_WHOLE => Skip::UnlessWhole,
        (Some(Ending::Comma), _) => Skip::ValueRead,
        (Some(Ending::Unclosed), Precheck::Mutating) => Skip::ToCheck,
        (Some(Ending::Unclosed), _) if text.len() <= MAX_UNCLOSED_SKIPPED => Skip::ValueRead,
        (Some(Ending::Unclosed), _) => Skip::Nothing,
    }
}

impl StrictPrefix {
    /// A prefix with no members, for a text the syntax-only read found not strict JSON after
    /// a completed root member: only how it failed, for [`Self::cut_after_member`].
    fn unseeded(failure: Failure) -> Self {
        Self {
            noted: Noted::default(),
            cut: failure.cut,
            // Below the depth limit (128), which the check tests before it opens a container.
            deepest: failure.deepest as u8,
            whole: None,
        }
    }
}

#[cfg(test)]
impl StrictPrefix {
    /// Members kept and the offsets of their keys' first content byte noted, then the next
    /// key's.
    pub(super) fn parts(&self) -> (usize, Vec<Option<usize>>) {
        let keys = (self.noted.spans.iter().map(|span| span.key))
            .chain([self.noted.next_key()])
            .map(|quote| quote.map(|at| at + 1));
        (self.noted.members.len(), keys.collect())
    }
}

impl StrictPrefix {
    /// Whether salvage would read `text` (which this prefix is of) as cut off, closing its root
    /// object (`truncated`, no error): the text ended inside the root object after a member
    /// was completed (so the closed object keeps something), every byte before the end was
    /// strict JSON, and it is within `options`' size and depth. A mutating tool's call is
    /// refused for that whatever salvage would read, so it need not be read (issue #31).
    pub(crate) fn cut_after_member(&self, text: &str, options: &SalvageOptions) -> bool {
        self.cut && text.len() <= options.max_bytes && usize::from(self.deepest) < options.max_depth
    }
}

/// What the one-pass read of an object text found.
#[derive(Debug)]
pub(super) enum Strictly {
    /// The text is JSON: its value.
    Value(Value),
    /// Not JSON: the root members completed before the error.
    NotJson(Option<StrictPrefix>),
    /// Only `serde_json`'s own reading settles this text (a special first key).
    Defer,
}

/// Why a read stopped.
#[derive(Clone, Copy)]
enum Stop {
    /// The text is not JSON here.
    Syntax,
    /// The text ended where JSON goes on: every byte before the end was strict.
    End,
    /// See [`Strictly::Defer`].
    Defer,
}

type Read<T> = Result<T, Stop>;

/// Reads `text`, whose first byte after blanks, at `root`, is `{`.
pub(super) fn read_object(text: &str, root: usize) -> Strictly {
    let mut reader = Reader::<Tolerated>::new(text, root);
    // Allocated when a member is kept: a text that fails in its first member (`'…'` keys, a
    // raw newline in the first value) needs none.
    let mut members: Option<Map<String, Value>> = None;
    let (mut read, mut duplicate, mut completed) = (0, false, false);
    let mut marks = [Mark::default(); MAX_TRACKED_KEYS];
    // Offsets are noted as `u32`: a text past 4 GiB notes none.
    let noting = if u32::try_from(text.len()).is_ok() {
        MAX_TRACKED_KEYS
    } else {
        0
    };
    // The `"` of the last key whose colon was read, when the key had no escape.
    let mut last_key = None;
    let mut more = reader.open_key(true);
    // The key opened is a `'…'` key read on (`tolerated.rs`).
    let mut single = more.is_err() && reader.single_key_opens(true);
    if single {
        more = Ok(true);
    }
    let stop = loop {
        match more {
            Ok(true) => {}
            Ok(false) => break None,
            Err(stop) => break Some(stop),
        }
        last_key = None;
        let at = reader.pos;
        // Kept borrowed until its value reads: a member failing in its value (a Python
        // literal) allocates nothing for its key (issue #31).
        let (key, after) = if single {
            single = false;
            let (key, after) = tolerated::single_key(text, reader.pos);
            (Cow::Borrowed(key), after)
        } else {
            let Ok((key, after, _)) = read_string_noting(text, at) else {
                break Some(string_stop(reader.bytes, at));
            };
            (key, after)
        };
        reader.pos = after;
        if read == 0 && SPECIAL_KEYS.contains(&key.as_ref()) {
            break Some(Stop::Defer);
        }
        let plain = matches!(key, Cow::Borrowed(_));
        if reader.skip_ws() != Some(b':') {
            break Some(reader.stop());
        }
        last_key = plain.then_some(at - 1);
        reader.pos += 1;
        reader.escapes = 0;
        let value = match reader.value(1) {
            Ok(value) => value,
            Err(stop) => break Some(stop),
        };
        let end = reader.pos;
        completed = true;
        more = reader.open_key(false);
        if more.is_err() && reader.comma_before_brace() {
            // A trailing comma, noted on this member: the object closed.
            more = Ok(false);
        } else if more.is_err() && reader.single_key_opens(false) {
            // A `'…'` key, noted on this member.
            (more, single) = (Ok(true), true);
        } else if more.is_err() {
            // Not kept (see `StrictPrefix::members`), but a key sent twice still counts.
            if let Some(members) = &members {
                duplicate |= if members.len() <= MAX_COMPARED_KEYS {
                    members.keys().any(|k| *k == key)
                } else {
                    members.contains_key(key.as_ref())
                };
            }
            continue;
        }
        if let Some(mark) = marks[..noting].get_mut(read) {
            // `noting` is 0 unless every offset fits.
            *mark = Mark {
                key: if plain { at as u32 } else { 0 },
                end: end as u32,
                escapes: reader.escapes,
            };
        }
        let members = members.get_or_insert_with(|| Map::with_capacity(ROOT_CAPACITY));
        duplicate |= members.insert(key.into_owned(), value).is_some();
        read += 1;
    };
    if reader.faults.any() {
        let ended = Ended {
            members,
            marks: &marks[..read.min(noting)],
            read,
            duplicate,
            last_key,
            stop,
            pos: reader.pos,
            deepest: reader.deepest,
        };
        return tolerated::finish(text, ended, reader.faults);
    }
    let members = members.unwrap_or_default();
    match stop {
        None => {}
        // No member completed (a `'…'` key, a raw newline in the first value): nothing for
        // salvage to start after, since a seed is a member and the key after it
        // (`seed.rs`), so no prefix is built (issue #31: its offsets were an allocation).
        Some(Stop::Syntax | Stop::End) if !completed => return Strictly::NotJson(None),
        Some(stop @ (Stop::Syntax | Stop::End)) => {
            let marked = read.min(noting);
            return Strictly::NotJson(Some(StrictPrefix {
                noted: noted::from_marks(text, members, &marks[..marked], duplicate, last_key),
                cut: matches!(stop, Stop::End),
                // Below the depth limit (128), which the read tests before it opens a container.
                deepest: reader.deepest as u8,
                whole: None,
            }));
        }
        Some(Stop::Defer) => return Strictly::Defer,
    }
    // After the root's `}`: only blanks (`serde_json`'s `end`, which fails after the whole
    // object was read, so nothing is kept).
    if scan::skip_ws(reader.bytes, reader.pos) == reader.bytes.len() {
        Strictly::Value(Value::Object(members))
    } else {
        Strictly::NotJson(None)
    }
}

/// The reader's position in the text, and the faults it read on past (`F`: `()` for a read
/// that stops at them, as a candidate's does; [`Tolerated`] for one that reads on).
struct Reader<'t, F = ()> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    /// The deepest nesting opened so far (the root object is 1).
    deepest: usize,
    /// The escapes a seed must know of that the strings read since it was cleared held (a
    /// root member's value: see `noted.rs`), and the faults read on in it (`tolerated.rs`).
    escapes: Escapes,
    /// The faults read on so far (see [`Faults`]).
    faults: F,
}

impl<'t, F: Faults> Reader<'t, F> {
    /// A reader of `text` inside the object whose `{` is at `root`.
    fn new(text: &'t str, root: usize) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: root + 1,
            deepest: 1,
            escapes: 0,
            faults: F::default(),
        }
    }

    fn skip_ws(&mut self) -> Option<u8> {
        self.pos = scan::skip_ws(self.bytes, self.pos);
        self.bytes.get(self.pos).copied()
    }

    /// Why the read stops at the position, where a byte it cannot take is (or the text ended).
    fn stop(&self) -> Stop {
        if self.pos < self.bytes.len() {
            Stop::Syntax
        } else {
            Stop::End
        }
    }

    /// The next key of an object whose `{` was read, or `None` at its `}` (consumed): the key,
    /// whether it had no escape, and the offset of its first content byte. `first` is for the
    /// first key, which no comma precedes.
    fn next_key(&mut self, first: bool) -> Read<Option<(String, bool, usize)>> {
        if !self.open_key(first)? {
            return Ok(None);
        }
        let at = self.pos;
        let (key, plain) = self.string()?;
        Ok(Some((key, plain, at)))
    }

    /// Reads up to the next key's content (its `"` consumed), or the object's `}` (consumed,
    /// `false`). `first` is for the first key, which no comma precedes.
    #[inline(always)]
    fn open_key(&mut self, first: bool) -> Read<bool> {
        match self.skip_ws() {
            Some(b'}') => {
                self.pos += 1;
                return Ok(false);
            }
            Some(b'"') if first => {}
            Some(b',') if !first => {
                self.pos += 1;
                if self.skip_ws() != Some(b'"') {
                    return Err(self.stop());
                }
            }
            _ => return Err(self.stop()),
        }
        self.pos += 1;
        Ok(true)
    }

    /// A member's `:` and value, in an object at `depth`.
    fn colon_then_value(&mut self, depth: usize) -> Read<Value> {
        if self.skip_ws() != Some(b':') {
            return Err(self.stop());
        }
        self.pos += 1;
        self.value(depth)
    }

    /// The value at the position (after blanks), in a container at `depth`.
    fn value(&mut self, depth: usize) -> Read<Value> {
        match self.skip_ws() {
            Some(b'"') => {
                self.pos += 1;
                Ok(Value::String(self.string()?.0))
            }
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            // A Python literal: read on past it (`tolerated.rs`), or refused.
            Some(b'N' | b'T' | b'F') if F::READ_ON => self.python_literal(),
            // A `'…'` string: read on past it (`tolerated.rs`), or refused.
            Some(b'\'') if F::READ_ON => self.single_value(),
            _ => Err(self.stop()),
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8], value: Value) -> Read<Value> {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else if word.starts_with(rest) {
            // `tru` at the end of the text.
            Err(Stop::End)
        } else {
            Err(Stop::Syntax)
        }
    }

    /// A number: its span by [`number_span`] (as `serde_json` scans it, so an error is at the
    /// same member), its value by `serde_json`'s `Number` from that span (its text kept as written).
    fn number(&mut self) -> Read<Value> {
        let start = self.pos;
        let span = number_span(self.bytes, start).ok_or(Stop::Syntax)?;
        self.pos = span.end;
        if let Some(number) = small_integer(&self.bytes[start..span.end], span) {
            return Ok(Value::Number(number));
        }
        // `Number`'s own parse: the text kept as written, without a `Value` deserializer.
        self.text[start..span.end]
            .parse::<serde_json::Number>()
            .map(Value::Number)
            .map_err(|_| Stop::Syntax)
    }

    fn object(&mut self, depth: usize) -> Read<Value> {
        if depth >= DEPTH_LIMIT {
            return Err(Stop::Syntax);
        }
        self.deepest = self.deepest.max(depth);
        self.pos += 1;
        let mut map = Map::new();
        let mut first = true;
        while let Some((key, _, _)) = self.next_key(first)? {
            if first && SPECIAL_KEYS.contains(&key.as_str()) {
                return Err(Stop::Defer);
            }
            first = false;
            let value = self.colon_then_value(depth)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn array(&mut self, depth: usize) -> Read<Value> {
        if depth >= DEPTH_LIMIT {
            return Err(Stop::Syntax);
        }
        self.deepest = self.deepest.max(depth);
        self.pos += 1;
        let mut items = Vec::new();
        if self.skip_ws() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        // The last comma read (none before the first element, whose `]` is taken above).
        let mut comma = 0;
        loop {
            match self.value(depth) {
                Ok(item) => items.push(item),
                Err(_) if F::READ_ON && comma != 0 && self.comma_before_bracket(comma) => {
                    return Ok(Value::Array(items));
                }
                Err(stop) => return Err(stop),
            }
            match self.skip_ws() {
                Some(b',') => {
                    comma = self.pos;
                    self.pos += 1;
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.stop()),
            }
        }
    }

    /// The string whose content starts at the position (after its `"`), decoded, and whether
    /// it had no escape; the position ends after its closing quote.
    #[inline(always)]
    fn string(&mut self) -> Read<(String, bool)> {
        let Ok((content, end, escapes)) = read_string_noting(self.text, self.pos) else {
            return Err(string_stop(self.bytes, self.pos));
        };
        self.pos = end;
        self.escapes |= escapes;
        Ok(match content {
            Cow::Borrowed(plain) => (plain.to_owned(), true),
            Cow::Owned(decoded) => (decoded, false),
        })
    }
}

/// Why the string whose content starts at `start` was refused: [`Stop::End`] when the text
/// ends inside it before any escape or control character. A string cut after an escape is
/// left to salvage: it reads a cut `…\",` as a string that may have ended there, and may refuse
/// the text. Out of line: the reader's path keeps its size.
#[cold]
#[inline(never)]
fn string_stop(bytes: &[u8], start: usize) -> Stop {
    if scan::find_string_special(bytes, start, b'"') == bytes.len() {
        Stop::End
    } else {
        Stop::Syntax
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{SalvageOptions, salvage_after};
    use super::grammar::MAX_SPARE;
    use super::*;

    /// The one-pass read agrees with `serde_json` on `text` (the same value, or both refuse),
    /// with and without the syntax-only check, salvage resumed after what it kept reads as
    /// salvage alone, and the syntax-only check says what the one-pass read says.
    fn agrees(text: &str) -> Result<(), String> {
        syntax_agrees(text)?;
        let reference = serde_json::from_str::<Value>(text).ok();
        if ending::broken_ending(text.as_bytes(), scan::skip_ws(text.as_bytes(), 0)).is_some()
            && text.trim_start().starts_with('{')
            && reference.is_some()
        {
            return Err(format!("{text:?}: its ending said not JSON"));
        }
        for check in [Precheck::Never, Precheck::ReadOnly, Precheck::Mutating] {
            match read_strict(text, check) {
                Ok(value) if Some(&value) == reference.as_ref() => {}
                Err(prefix) if reference.is_none() => {
                    let options = SalvageOptions::default();
                    let resumed = salvage_after(text, &options, prefix);
                    // Salvage alone, noting the members' text as the resumed run does.
                    let alone = salvage_after(text, &options, None);
                    if resumed != alone {
                        return Err(format!("{text:?}: resumed {resumed:?}, alone {alone:?}"));
                    }
                }
                fast => {
                    return Err(format!(
                        "{text:?} ({check:?}): {fast:?} but serde_json {reference:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The syntax-only check of an object text says what the one-pass read found: valid, or
    /// refused with the same prefix's failure (whether cut, the deepest nesting); unsure only
    /// where a key has an escape or is a special one.
    fn syntax_agrees(text: &str) -> Result<(), String> {
        let root = scan::skip_ws(text.as_bytes(), 0);
        if text.as_bytes().get(root) != Some(&b'{') {
            return Ok(());
        }
        let checked = syntax::check_object(text.as_bytes(), root);
        let expected = match read_object(text, root) {
            // Read whole on past its faults (`tolerated.rs`): never in place of the syntax-only
            // check, which ends with the first fault, not cut (the text ends with `}`).
            Strictly::NotJson(Some(prefix)) if prefix.whole.is_some() => {
                return match checked {
                    Syntax::NotJson(None | Some(Failure { cut: false, .. })) => Ok(()),
                    _ => Err(format!("{text:?}: syntax-only {checked:?}, read whole")),
                };
            }
            Strictly::Value(_) => Syntax::Valid,
            Strictly::NotJson(prefix) => Syntax::NotJson(prefix.map(|prefix| Failure {
                cut: prefix.cut,
                deepest: usize::from(prefix.deepest),
            })),
            Strictly::Defer => Syntax::Unsure,
        };
        let may_be_unsure = text.contains('\\') || text.contains("$serde_json::private::");
        if checked == expected || (checked == Syntax::Unsure && may_be_unsure) {
            Ok(())
        } else {
            Err(format!(
                "{text:?}: syntax-only {checked:?}, one-pass {expected:?}"
            ))
        }
    }

    /// The members kept when `text` is refused (read, duplicates included), and their keys.
    fn kept(text: &str) -> (usize, Vec<Option<usize>>) {
        match read_object(text, 0) {
            Strictly::NotJson(Some(prefix)) => prefix.parts(),
            // No member completed: no prefix.
            Strictly::NotJson(None) => (0, Vec::new()),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn an_error_between_members_is_in_the_next_key_and_one_at_a_colon_in_the_value() {
        // serde_json's phases: the comma, the next key's quote and the key itself belong to
        // the key; the colon belongs to the value.
        // A member the text fails right after is not kept: its key is where the next one's is.
        // (Text after the object: not read whole on past the trailing comma, `tolerated.rs`.)
        assert_eq!(kept(r#"{"a": 1,} x"#), (0, vec![Some(2)]));
        assert_eq!(kept(r#"{"a": 1 "b": 2}"#), (0, vec![Some(2)]));
        assert_eq!(kept(r#"{"a": 1, "b": 2,} x"#), (1, vec![Some(2), Some(10)]));
        // A key whose colon was not read is no key a seed can stop before.
        assert_eq!(kept(r#"{"a": 1, "b" 2}"#), (1, vec![Some(2), None]));
        assert_eq!(kept(r#"{"a": 1, "b": x}"#), (1, vec![Some(2), Some(10)]));
        // Read on past a Python literal, then failed: what the read kept at the literal.
        assert_eq!(
            kept(r#"{"a": 1, "b": True, "c": x}"#),
            (1, vec![Some(2), Some(10)])
        );
        assert_eq!(
            kept(r#"{"a": 1, "b": 2,, "c": 3}"#),
            (1, vec![Some(2), Some(10)])
        );
        assert_eq!(kept(r#"{"a": [True, 2,], "b": x}"#), (0, vec![]));
        assert_eq!(
            kept(r#"{"a": 1, "b": [2,], "c": x}"#),
            (1, vec![Some(2), Some(10)])
        );
        assert_eq!(kept(r#"{"a": 1, "\u0062": x}"#), (1, vec![Some(2), None]));
        assert_eq!(kept(r#"{"a": 1e}"#), (0, vec![]));
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            r#"{"path": "a.txt", "content": "line\n\t\"q\" \\ \/ \b\f\r", "n": -1.5e+3}"#,
            r#"  {"a": [1, 2, {"b": null}], "c": true, "d": false, "e": {}, "f": []} "#,
            r#"{"u": "\u00e9\u65E5\ud83d\ude00 é", "k\"ey": 0, "a": "x", "a": "y"}"#,
            r#"{"big": 123456789012345678901234567890, "f": 0.10, "e": 1E400, "z": -0}"#,
            "{\"a\":1}",
            "{}",
        ] {
            agrees(text).unwrap();
            assert!(matches!(
                read_object(text, scan::skip_ws(text.as_bytes(), 0)),
                Strictly::Value(_)
            ));
        }
    }

    /// Integers read without `serde_json`'s parse are its `Number`s, text included, at every
    /// length around the 18-digit cut and at the `i64` and `u64` bounds.
    #[test]
    fn small_integers_are_serde_jsons_numbers() {
        let mut texts: Vec<String> = ["0", "-0", "7", "-7", "10", "-10", "30000"]
            .map(str::to_owned)
            .to_vec();
        for digits in 1..=21 {
            texts.push("9".repeat(digits));
            texts.push(format!("-{}", "9".repeat(digits)));
            texts.push(format!("1{}", "0".repeat(digits - 1)));
        }
        texts.extend([
            i64::MIN.to_string(),
            i64::MAX.to_string(),
            u64::MAX.to_string(),
        ]);
        for number in texts {
            let text = format!(r#"{{"n": {number}}}"#);
            agrees(&text).unwrap();
            let read = read_strict(&text, Precheck::Mutating).expect("strict JSON");
            assert_eq!(read["n"].to_string(), number, "{text}");
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for text in [
            r#"{"a": 1, "b": 2,}"#,
            r#"{"a": 1 "b": 2}"#,
            r#"{"a": "x", "b" 2}"#,
            r#"{"a": "x", "b": True}"#,
            r#"{"a": "raw	tab"}"#,
            r#"{"a": "\x"}"#,
            r#"{"a": "\u12"}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": "\ud800\u0041"}"#,
            r#"{"a": "\udc00"}"#,
            r#"{"a": "\udfff"}"#,
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": 1e}"#,
            r#"{"a": -}"#,
            r#"{"a": 1-2}"#,
            r#"{"a": [1,]}"#,
            r#"{"a": [1 2]}"#,
            r#"{"a": tru}"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1}}"#,
            r#"{,"a": 1}"#,
            r#"{'a': 1}"#,
            r#"{"a": "cut"#,
            r#"{"a": 1, "#,
            "{\"a\": \"x\"}\u{feff}",
        ] {
            agrees(text).unwrap();
        }
    }

    #[test]
    fn a_string_borrows_when_it_can_and_says_why_it_cannot() {
        let text = r#""plain" "a\nb" "\ud800x" "\q" "cut"#;
        let (plain, end) = read_string(text, 1).unwrap();
        assert!(matches!(plain, Cow::Borrowed("plain")), "{plain:?}");
        assert_eq!(end, 7);
        let (decoded, _) = read_string(text, 9).unwrap();
        assert!(
            matches!(decoded, Cow::Owned(ref s) if s == "a\nb"),
            "{decoded:?}"
        );
        assert_eq!(read_string(text, 16), Err(StringError::LoneSurrogate));
        assert_eq!(read_string(text, 26), Err(StringError::Invalid));
        assert_eq!(read_string(text, 31), Err(StringError::Invalid));
    }

    #[test]
    fn a_number_span_has_serde_json_s_grammar_and_shape() {
        let span =
            |t: &str| number_span(t.as_bytes(), 0).map(|s| (s.end, s.integer_digits, s.is_float));
        assert_eq!(span("-120,"), Some((4, 3, false)));
        assert_eq!(span("0.5e-3]"), Some((6, 1, true)));
        assert_eq!(span("1E9"), Some((3, 1, true)));
        for bad in ["01", "1.", "1e", "1e+", "-", "-a", ".5", ""] {
            assert_eq!(span(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_long_decoded_string_keeps_little_spare_room() {
        for len in [100, 5_000, 100_000] {
            let content = "ab\\n\\\"".repeat(len / 4);
            let text = format!("{{\"content\": \"{content}\"}}");
            let Strictly::Value(value) = read_object(&text, 0) else {
                panic!("{len}: not read");
            };
            let Some(Value::String(read)) = value.get("content") else {
                panic!("{len}: no string");
            };
            let spare = read.capacity() - read.len();
            assert!(spare <= MAX_SPARE.max(read.len() / 4), "{len}: {spare}");
        }
    }

    #[test]
    fn the_depth_limit_is_serde_json_s() {
        for depth in [126, 127, 128, 129] {
            let text = format!(
                "{{\"a\": {}{}}}",
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            );
            agrees(&text).unwrap();
        }
        let deep = format!("{{\"a\": {}1{}}}", "{\"b\":".repeat(130), "}".repeat(130));
        agrees(&deep).unwrap();
    }

    #[test]
    fn special_keys_are_left_to_serde_json() {
        for text in [
            r#"{"$serde_json::private::Number": "1"}"#,
            r#"{"a": {"$serde_json::private::Number": "1"}}"#,
            r#"{"a": {"$serde_json::private::RawValue": "1"}}"#,
        ] {
            assert!(matches!(read_object(text, 0), Strictly::Defer), "{text}");
            agrees(text).unwrap();
        }
    }

    /// Whether the strict read found `text` cut after a member within `options`; when it did,
    /// salvage must read it as truncated, with no error (the engine then refuses a mutating
    /// tool's call without reading it).
    fn cut_reads_truncated(text: &str, options: &SalvageOptions) -> Result<bool, String> {
        syntax_agrees(text)?;
        let members = read_strict(text, Precheck::Never).err().flatten();
        let cut = |prefix: &Option<StrictPrefix>| {
            prefix
                .as_ref()
                .is_some_and(|prefix| prefix.cut_after_member(text, options))
        };
        for precheck in [Precheck::ReadOnly, Precheck::Mutating] {
            let checked = read_strict(text, precheck).err().flatten();
            // With no prefix, salvage decides (checked below to read the cut as truncated).
            if checked.is_some() && cut(&members) != cut(&checked) {
                return Err(format!(
                    "{text:?}: cut {members:?} but {precheck:?} {checked:?}"
                ));
            }
        }
        let Some(prefix) = members else {
            return Ok(false);
        };
        if !prefix.cut_after_member(text, options) {
            return Ok(false);
        }
        match salvage_after(text, options, None) {
            Ok(salvaged) if salvaged.truncated => Ok(true),
            other => Err(format!(
                "{text:?}: cut after a member, salvage gave {other:?}"
            )),
        }
    }

    /// Every cut of `text` (at each character boundary), under each of a few limits: how many
    /// the strict read found cut after a member.
    fn every_cut_reads_truncated(text: &str) -> Result<usize, String> {
        let limits = [
            SalvageOptions::default(),
            SalvageOptions::default().with_max_depth(1),
            SalvageOptions::default().with_max_depth(2),
            SalvageOptions::default().with_max_depth(3),
            SalvageOptions::default().with_max_bytes(text.len() / 2),
        ];
        let mut found = 0;
        for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
            for options in &limits {
                found += usize::from(cut_reads_truncated(&text[..end], options)?);
            }
        }
        Ok(found)
    }

    #[test]
    fn a_text_cut_after_a_member_salvages_as_truncated() {
        let mut texts = crate::salvage::corpus_objects();
        assert!(texts.len() > 300, "{} corpus objects", texts.len());
        texts.extend(
            [
                r#"{"a": "x\u00e9\ud83d\ude00\"q\" \\ \/", "b": -12.5e+3, "c": [true, false, null]}"#,
                r#"{"a": {"b": {"c": [1, [2, {"d": "}]"}]]}}, "e": "say \"hi\", \"k\": 1"}"#,
                "{\n  \"path\": \"a.txt\",\n  \"lines\": [\n    1,\n    2\n  ],\n  \"ok\": true\n}",
                r#"{"a": 1, "a": 2, "b": "x", "c": 0}"#,
                r#"{"a": "", "b": [], "c": {}, "d": "\\", "e": -0, "f": 1E9}"#,
                r#"{"a": "it's “quoted” ‘so’ ```json {x} [y] // /* # */ NaN None True", "b": 1}"#,
                r#"{"cmd": "echo '}' ] } {", "n": 1, "k": "a: b, c: 'd'", "z": "```"}"#,
                r#"{"a": [{"b": "x", "c": [null, "y"]}, {"d": "}, {"}], "e": {"f": "]"}}"#,
            ]
            .map(str::to_owned),
        );
        let mut found = 0;
        for text in &texts {
            found += every_cut_reads_truncated(text).unwrap();
        }
        // The test can fail: many cuts take the short way.
        assert!(found > 10_000, "{found} cuts after a member");
        // Not cut after a member: nothing completed, a byte that is not JSON, or not cut.
        let options = SalvageOptions::default();
        for text in [
            r#"{"a": "x"#,
            r#"{"a": 1, "b": x"#,
            r#"{"a": 1, "b": -"#,
            r#"{"a": 1, "b": "\ud83d"#,
            r#"{"a": 1, "b": "x\u00"#,
            r#"{"a": 1, "b": "x\","#,
            r#"{"a": 1}"#,
            r#"{"a": 1,}"#,
        ] {
            assert!(!cut_reads_truncated(text, &options).unwrap(), "{text}");
        }
        assert!(cut_reads_truncated(r#"{"a": 1, "b": "x y"#, &options).unwrap());
        assert!(cut_reads_truncated(r#"{"a": 1, "b": tr"#, &options).unwrap());
    }

    /// `text` (JSON) with, outside its strings, the `n`-th `true`, `false` or `null` spelt as
    /// Python's where bit `n % 64` of `python` is set, a comma put before the `n`-th `}` or
    /// `]` that follows a value where bit `n % 64` of `commas` is set, and the `n`-th string
    /// (key or value) quoted `'…'`, its content as it stands, where bit `n % 64` of `singles`
    /// is set.
    fn with_faults(text: &str, python: u64, commas: u64, singles: u64) -> String {
        let bit = |bits: u64, n: usize| bits >> (n % 64) & 1 == 1;
        let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
        let (mut literals, mut closers, mut strings, mut single) = (0, 0, 0, false);
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            let mut len = c.len_utf8();
            if in_string {
                let closes = !escaped && c == '"';
                (in_string, escaped) = (escaped || c != '"', !escaped && c == '\\');
                out.push(if closes && single { '\'' } else { c });
            } else if c == '"' {
                in_string = true;
                single = bit(singles, strings);
                strings += 1;
                out.push(if single { '\'' } else { c });
            } else if let Some((json, python_word)) =
                [("true", "True"), ("false", "False"), ("null", "None")]
                    .into_iter()
                    .find(|(json, _)| rest.starts_with(json))
            {
                out.push_str(if bit(python, literals) {
                    python_word
                } else {
                    json
                });
                literals += 1;
                len = json.len();
            } else {
                if matches!(c, '}' | ']') {
                    let after_value =
                        !matches!(out.trim_end().chars().last(), Some('{' | '[' | ','));
                    if after_value && bit(commas, closers) {
                        out.push(',');
                    }
                    closers += 1;
                }
                out.push(c);
            }
            rest = &rest[len..];
        }
        out
    }

    #[test]
    fn faults_read_on_are_read_whole_as_salvage_reads_them() {
        let whole = |text: &str| {
            matches!(
                read_strict(text, Precheck::ReadOnly),
                Err(Some(prefix)) if prefix.whole.is_some()
            )
        };
        for text in [
            r#"{"command": "ls", "timeout_ms": 30000, "cwd": None, "background": False}"#,
            r#"{"query": "x", "num_results": 8, "safe": True, "lang": "en",}"#,
            r#"{"a": "x", "tags": ["b", "c",],}"#,
            r#"{"a": [None, True, [False,],], "b": "\u00e9", "c": "d\/", "e": "f"}"#,
            "{\n  \"a\": None ,\n  \"b\": [1 ,\n ] ,\n}\n",
            r#"{"a": 1, "b": None}"#,
            r#"{"a": 1, "b": None, "$serde_json::private::Number": 2}"#,
            r#"{"a": 1, "b": None, 'c': 2}"#,
            // `'…'` keys and root string values (`quotes_normalized`).
            r#"{'command': 'set -e\ncd src\npytest -x -q tests/', 'timeout_ms': 30000, 'cwd': null, 'background': false}"#,
            r#"{"a": 'x', 'b': "y", "c": None,}"#,
            "{\n  'a': 'x' ,\n  'b' : 1\n}\n",
            r#"{'a': 'tab\t \\ \r\b\f', 'b': [], 'c': 'é'}"#,
            r#"{"a": "\u00e9", 'b': 'c'}"#,
            r#"{"a": ['x'], 'b': ['c', "d", ['e' , 'f\n'],], 'g': []}"#,
        ] {
            agrees(text).unwrap();
            assert!(whole(text), "{text}");
        }
        // Past `MAX_COMMA_READ_WHOLE`, a text ending with a trailing comma is salvaged from
        // its start, as before.
        let long = format!(
            r#"{{"a": "{}", "b": None,}}"#,
            "x\\n".repeat(MAX_COMMA_READ_WHOLE / 3)
        );
        agrees(&long).unwrap();
        assert!(!whole(&long));
        assert!(whole(&long.replace(",}", "}")));
        // Past `MAX_SINGLE_READ`, a `'…'` string is not read on.
        let pad = "x".repeat(tolerated::MAX_SINGLE_READ);
        let long = format!(r#"{{"a": "{pad}", 'b': 'c'}}"#);
        agrees(&long).unwrap();
        assert!(!whole(&long));
        let half = format!(r#"{{"a": "{}", 'b': 'c'}}"#, &pad[..pad.len() / 2]);
        assert!(whole(&half));
        // Not whole: read as before, from the prefix before the first fault.
        for text in [
            r#"{"a": None, "b": {"c": 1}}"#,
            r#"{"a": 1, "b": None, "a": 2}"#,
            r#"{"a": 1, "b": None} and more"#,
            r#"{"a": 1, "b": [1, None"#,
            r#"{"a": 1, "b": Nonesuch}"#,
            r#"{"a": 1, "b": None1, "c": 2}"#,
            r#"{"a": 1, "b": None"#,
            r#"{"a": 1, "b": [1,,]}"#,
            r#"{"a": 1, "b": {"c": 1,}}"#,
            r#"{"a": 1,, }"#,
            r#"{"\u0061": 1, "b": None}"#,
            r#"{"a": 1, "b": None, "c": "x" "d": 2}"#,
            r#"{"a": 1, "b": [{"$serde_json::private::Number": "1"}, None]}"#,
            // `'…'` strings the parser may read otherwise, or that are not a root member's.
            r#"{'a': 'it's'}"#,
            r#"{'a': 'x' + 'y'}"#,
            r#"{'a': 'say "hi"'}"#,
            r#"{'a"': 1}"#,
            r#"{'a': 'x\/'}"#,
            r#"{'a': 'x\u00e9'}"#,
            r#"{'a': 'it\'s'}"#,
            r#"{'a': 'x\"y'}"#,
            "{'a': 'raw\nline'}",
            r#"{'a\b': 1}"#,
            r#"{"a": 1 'b': 2}"#,
            r#"{'a' 'b'}"#,
            r#"{'a' 1}"#,
            r#"{"a": {'b': 1}}"#,
            r#"{"a": {"b": 'c'}}"#,
            r#"{'a': 'x'} tail"#,
            r#"{'a': 'x', 'a': 'y'}"#,
            r#"{'a': 'x'"#,
            r#"{'a': 'x"#,
            r#"{'a"#,
            r#"{"a": 'x' "b": 1}"#,
        ] {
            agrees(text).unwrap();
            assert!(!whole(text), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Valid objects with Python literals, trailing commas and `'…'` strings put in, whole
        /// and cut.
        #[test]
        fn agrees_with_the_faults_read_on(
            value in arb_object(),
            python in any::<u64>(),
            commas in any::<u64>(),
            singles in prop_oneof![Just(0), any::<u64>(), Just(u64::MAX)],
            cut in any::<prop::sample::Index>(),
        ) {
            for text in [
                serde_json::to_string(&value).unwrap(),
                serde_json::to_string_pretty(&value).unwrap(),
            ] {
                let faulty = with_faults(&text, python, commas, singles);
                prop_assert!(agrees(&faulty).is_ok(), "{}", agrees(&faulty).unwrap_err());
                let mut end = cut.index(faulty.len() + 1);
                while !faulty.is_char_boundary(end) {
                    end -= 1;
                }
                let cut = &faulty[..end];
                prop_assert!(agrees(cut).is_ok(), "{}", agrees(cut).unwrap_err());
            }
        }

        /// Texts made of JSON's tokens and near misses, in any order.
        #[test]
        fn agrees_on_token_soup(
            parts in prop::collection::vec(prop::sample::select(vec![
                "{", "}", "[", "]", ",", ":", " ", "\n", "\"k\"", "\"a\\\"b\"", "\"\\u00e9\"",
                "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\q\"", "\"\t\"", "1", "-0.5e3", "01",
                "1.", "true", "tru", "null", "\"", "'x'", "\\",
            ]), 0..24),
        ) {
            let text = format!("{{{}", parts.concat());
            prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
        }

        /// Valid objects, then each cut short and each with one byte changed.
        #[test]
        fn agrees_on_valid_objects_and_their_mutations(
            value in arb_object(),
            cut in any::<prop::sample::Index>(),
            at in any::<prop::sample::Index>(),
            byte in prop::sample::select(b"\"\\,:{}[] \ntfn0-.eu/x'".to_vec()),
        ) {
            let text = serde_json::to_string(&value).unwrap();
            prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            prop_assert!(agrees(&pretty).is_ok(), "{}", agrees(&pretty).unwrap_err());
            let mut cut_text = text.clone();
            let mut end = cut.index(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            cut_text.truncate(end);
            prop_assert!(agrees(&cut_text).is_ok(), "{}", agrees(&cut_text).unwrap_err());
            let options = SalvageOptions::default();
            let mut pretty_end = end.min(pretty.len());
            while !pretty.is_char_boundary(pretty_end) {
                pretty_end -= 1;
            }
            for cut in [&cut_text, &pretty[..pretty_end]] {
                let truncated = cut_reads_truncated(cut, &options);
                prop_assert!(truncated.is_ok(), "{}", truncated.unwrap_err());
            }
            let mut bytes = text.into_bytes();
            let i = at.index(bytes.len());
            if bytes[i].is_ascii() {
                bytes[i] = byte;
                let changed = String::from_utf8(bytes).unwrap();
                prop_assert!(agrees(&changed).is_ok(), "{}", agrees(&changed).unwrap_err());
            }
        }
    }

    fn arb_object() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
            "[a-z \"'\\\\/\n\té日😀\u{1}]{0,12}".prop_map(Value::String),
        ];
        let tree = leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"\\\\]{0,4}", inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        });
        prop::collection::vec(("[a-z\"']{0,4}", tree), 0..6)
            .prop_map(|members| Value::Object(members.into_iter().collect()))
    }
}
