//! The syntax-only strict read: whether an object text is strict JSON by `serde_json`'s grammar
//! and, when it is not, what the value-building read (`mod.rs`) would tell of its failure,
//! without building anything (issue #31).
//!
//! A mutating tool's call that does not end with `}` is refused when it was cut off after a
//! complete member (Round 13 of issue #31), and nothing else of the value-building read is
//! used then: salvage reads such a text from its start (see `skipped` in `mod.rs`). So that
//! text is read here instead, for [`Failure`] alone, without allocating a key, a string or a
//! map.
//!
//! It must say what the value-building read would: the same grammar and limits (`grammar.rs`),
//! the same failure classification (the text ended where JSON goes on, or a byte that is not
//! JSON; a string the text ends inside counts as ended only with no escape before the end), a
//! failure noted only after a completed root member, the same deepest nesting. It does not
//! fire where only that read can tell: an object whose first key has an escape or is one of the
//! keys `serde_json`'s visitor reads as something else gives [`Syntax::Unsure`]. The tests check
//! it against that read and `serde_json::from_str` on generated texts, their cuts and mutations.

use super::super::scan;
use super::grammar::{DEPTH_LIMIT, SPECIAL_KEYS, number_span, unicode_escape};

/// What the syntax-only read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    /// The text is strict JSON: its value is still to be read.
    Valid,
    /// Not strict JSON; [`Failure`] when a root member was completed before the failure (the
    /// value-building read hands over a prefix only then).
    NotJson(Option<Failure>),
    /// Only the value-building read settles this text (see the module doc).
    Unsure,
}

/// How a text that is not strict JSON failed, after a completed root member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Failure {
    /// The text ended where JSON goes on: every byte before its end strict.
    pub(super) cut: bool,
    /// The deepest nesting opened (the root object is 1).
    pub(super) deepest: usize,
}

/// Why the check stopped.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// A byte that is not JSON.
    Syntax,
    /// The end of the text where JSON goes on.
    End,
    /// See [`Syntax::Unsure`].
    Unsure,
}

type Check = Result<(), Stop>;

/// Checks `bytes`, whose first byte after blanks, at `root`, is `{`.
pub(super) fn check_object(bytes: &[u8], root: usize) -> Syntax {
    let mut checker = Checker {
        bytes,
        pos: root + 1,
        deepest: 1,
    };
    let mut completed = false;
    let mut first = true;
    let stop = loop {
        match checker.open_key(first) {
            Ok(true) => {}
            Ok(false) => break None,
            Err(stop) => break Some(stop),
        }
        if let Err(stop) = checker.key(first) {
            break Some(stop);
        }
        first = false;
        if let Err(stop) = checker.colon_then_value(1) {
            break Some(stop);
        }
        completed = true;
    };
    match stop {
        // After the root's `}`: only blanks.
        None if scan::skip_ws(bytes, checker.pos) == bytes.len() => Syntax::Valid,
        None => Syntax::NotJson(None),
        Some(Stop::Unsure) => Syntax::Unsure,
        Some(_) if !completed => Syntax::NotJson(None),
        Some(stop) => Syntax::NotJson(Some(Failure {
            cut: matches!(stop, Stop::End),
            deepest: checker.deepest,
        })),
    }
}

/// The checker's position in the text.
struct Checker<'t> {
    bytes: &'t [u8],
    pos: usize,
    /// The deepest nesting opened so far (the root object is 1).
    deepest: usize,
}

impl Checker<'_> {
    /// The byte at the position after blanks; most tokens follow the last with none.
    #[inline(always)]
    fn skip_ws(&mut self) -> Option<u8> {
        match self.bytes.get(self.pos) {
            Some(&b) if b > b' ' => Some(b),
            // One space, as after `:` and `,` in most calls.
            Some(b' ') if self.bytes.get(self.pos + 1).is_some_and(|&b| b > b' ') => {
                self.pos += 1;
                Some(self.bytes[self.pos])
            }
            _ => {
                self.pos = scan::skip_ws(self.bytes, self.pos);
                self.bytes.get(self.pos).copied()
            }
        }
    }

    /// Why the check stops at the position, where a byte it cannot take is (or the text ended).
    fn stop(&self) -> Stop {
        if self.pos < self.bytes.len() {
            Stop::Syntax
        } else {
            Stop::End
        }
    }

    /// Checks up to the next key's content (its `"` consumed), or the object's `}` (consumed,
    /// `false`). `first` is for the first key, which no comma precedes.
    #[inline(always)]
    fn open_key(&mut self, first: bool) -> Result<bool, Stop> {
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

    /// A key whose content starts at the position; an object's first key must be plain and
    /// none of the special keys.
    #[inline(always)]
    fn key(&mut self, first: bool) -> Check {
        let start = self.pos;
        let plain = self.string()?;
        if first
            && (!plain
                || SPECIAL_KEYS
                    .iter()
                    .any(|k| k.as_bytes() == self.content(start)))
        {
            return Err(Stop::Unsure);
        }
        Ok(())
    }

    /// The content of the string that started at `start` and was just checked.
    fn content(&self, start: usize) -> &[u8] {
        &self.bytes[start..self.pos - 1]
    }

    /// A member's `:` and value, in an object at `depth`.
    fn colon_then_value(&mut self, depth: usize) -> Check {
        if self.skip_ws() != Some(b':') {
            return Err(self.stop());
        }
        self.pos += 1;
        self.value(depth)
    }

    /// The value at the position (after blanks), in a container at `depth`. Inline: most
    /// values are scalars, and a call per value was a fifth of the check.
    #[inline(always)]
    fn value(&mut self, depth: usize) -> Check {
        match self.skip_ws() {
            Some(b'"') => {
                self.pos += 1;
                self.string().map(|_| ())
            }
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                // With `arbitrary_precision`, `serde_json` reads every number of this grammar.
                self.pos = number_span(self.bytes, self.pos).ok_or(Stop::Syntax)?.end;
                Ok(())
            }
            _ => Err(self.stop()),
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Check {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else if word.starts_with(rest) {
            // `tru` at the end of the text.
            Err(Stop::End)
        } else {
            Err(Stop::Syntax)
        }
    }

    #[inline(never)]
    fn object(&mut self, depth: usize) -> Check {
        if depth >= DEPTH_LIMIT {
            return Err(Stop::Syntax);
        }
        self.deepest = self.deepest.max(depth);
        self.pos += 1;
        let mut first = true;
        while self.open_key(first)? {
            self.key(first)?;
            first = false;
            self.colon_then_value(depth)?;
        }
        Ok(())
    }

    #[inline(never)]
    fn array(&mut self, depth: usize) -> Check {
        if depth >= DEPTH_LIMIT {
            return Err(Stop::Syntax);
        }
        self.deepest = self.deepest.max(depth);
        self.pos += 1;
        if self.skip_ws() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value(depth)?;
            match self.skip_ws() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.stop()),
            }
        }
    }

    /// The string whose content starts at the position (after its `"`), as `read_string`
    /// accepts it, and whether it had no escape; the position ends after its closing quote.
    /// Refused, it stops as the value-building read does: at the end of the text only when no
    /// escape came before it.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, Stop> {
        let bytes = self.bytes;
        let mut at = scan::find_string_special(bytes, self.pos, b'"');
        if bytes.get(at) == Some(&b'"') {
            self.pos = at + 1;
            return Ok(true);
        }
        if at == bytes.len() {
            return Err(Stop::End);
        }
        loop {
            match bytes.get(at) {
                Some(b'"') => {
                    self.pos = at + 1;
                    return Ok(false);
                }
                Some(b'\\') => {}
                // A raw control character, or the end of the text after an escape.
                _ => return Err(Stop::Syntax),
            }
            let end = match bytes.get(at + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at + 2,
                Some(b'u') => unicode_escape(bytes, at + 2).map_err(|_| Stop::Syntax)?.1,
                _ => return Err(Stop::Syntax),
            };
            at = scan::find_string_special(bytes, end, b'"');
        }
    }
}
