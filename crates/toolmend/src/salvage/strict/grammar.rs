//! The tokens and limits of `serde_json`'s grammar, as the strict reads take them: a string,
//! a number, the nesting limit and the keys its own visitor reads as something else.
//!
//! Shared by the value-building read (`mod.rs`), the syntax-only check (`syntax.rs`) and,
//! through [`read_string`] and [`number_span`], the Python package's strict path.

use std::borrow::Cow;

use super::super::scan;

/// The keys `serde_json::Value`'s visitor reads as a number and a raw value when first.
pub(super) const SPECIAL_KEYS: [&str; 2] = [
    "$serde_json::private::Number",
    "$serde_json::private::RawValue",
];

/// The nesting depth at which `serde_json` stops with a recursion error (its limit of 128
/// counts the root).
pub(super) const DEPTH_LIMIT: usize = 128;

/// Unused bytes a decoded string may keep (a quarter of its length when that is more); past
/// that its buffer is shrunk to fit.
pub(super) const MAX_SPARE: usize = 4096;

/// Why [`read_string`] read no string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StringError {
    /// Not a JSON string: a raw control character, an escape JSON does not know, a `\u` that is
    /// not four hex digits, or the end of the text before the closing quote.
    Invalid,
    /// A `\u` surrogate that is not half of a pair: `serde_json` refuses it (and so does
    /// [`read_string`]), while Python's `json` reads it.
    LoneSurrogate,
}

/// Reads the strict JSON string whose content starts at `start` (right after its `"`): the
/// content, borrowed from `text` when it holds no escape, and the index after the closing
/// quote. What it accepts is what `serde_json` accepts in a `&str`.
///
/// A string with escapes is decoded into one buffer sized from its first run (doubling after
/// that), not a scratch buffer that is then copied; a long one gives back spare room over
/// max(4 KiB, a quarter of its length).
///
/// # Errors
///
/// [`StringError`] says why the text holds no string there.
pub fn read_string(text: &str, start: usize) -> Result<(Cow<'_, str>, usize), StringError> {
    read_string_noting(text, start).map(|(content, end, _)| (content, end))
}

/// The escapes of a string that a seed must know of (`seed.rs`): bits of [`SLASH`] and
/// [`UNICODE`].
pub(super) type Escapes = u8;

/// A `\/` escape: `serde_json` writes the `/` alone, so the string's text is not what it writes.
pub(super) const SLASH: Escapes = 1;

/// A `\u` escape: the same, and salvage's plain string reader gives up at one.
pub(super) const UNICODE: Escapes = 2;

/// [`read_string`], noting which of the escapes a seed must know of the string held (issue #31:
/// the seed searched each string's text for them again). They are noted where they are
/// decoded, so a string with no escape pays nothing for it.
///
/// Always inlined: nearly every key and string of a call has no escape, and for those this is
/// the scan and its answer, which cost less than the call and its result through memory
/// (issue #31); a string with an escape is decoded out of line.
#[inline(always)]
pub(super) fn read_string_noting(
    text: &str,
    start: usize,
) -> Result<(Cow<'_, str>, usize, Escapes), StringError> {
    let bytes = text.as_bytes();
    let at = scan::find_string_special(bytes, start, b'"');
    match bytes.get(at) {
        Some(b'"') => Ok((Cow::Borrowed(&text[start..at]), at + 1, 0)),
        Some(b'\\') => decode_escaped(text, start, at),
        _ => Err(StringError::Invalid),
    }
}

/// [`read_string_noting`] of a string whose content starts at `start` and holds an escape at
/// `at`, the first byte the scan stopped at.
#[inline(never)]
fn decode_escaped(
    text: &str,
    start: usize,
    mut at: usize,
) -> Result<(Cow<'_, str>, usize, Escapes), StringError> {
    let bytes = text.as_bytes();
    let mut run = start;
    // One buffer for the whole string: the first run and room for as much again, at least a
    // line's worth; growth after that doubles.
    let mut out = String::with_capacity(2 * (at - run) + 64);
    let mut escapes = 0;
    loop {
        out.push_str(&text[run..at]);
        match bytes.get(at) {
            Some(b'"') => {
                // The value keeps this buffer: doubling may have left up to half of it unused,
                // which a long string gives back.
                if out.capacity() - out.len() > MAX_SPARE.max(out.len() / 4) {
                    out.shrink_to_fit();
                }
                return Ok((Cow::Owned(out), at + 1, escapes));
            }
            Some(b'\\') => {}
            // A raw control character, or the end of the text.
            _ => return Err(StringError::Invalid),
        }
        let (ch, end) = match bytes.get(at + 1) {
            Some(b'"') => ('"', at + 2),
            Some(b'\\') => ('\\', at + 2),
            Some(b'/') => {
                escapes |= SLASH;
                ('/', at + 2)
            }
            Some(b'b') => ('\u{8}', at + 2),
            Some(b'f') => ('\u{c}', at + 2),
            Some(b'n') => ('\n', at + 2),
            Some(b'r') => ('\r', at + 2),
            Some(b't') => ('\t', at + 2),
            Some(b'u') => {
                escapes |= UNICODE;
                unicode_escape(bytes, at + 2)?
            }
            _ => return Err(StringError::Invalid),
        };
        out.push(ch);
        run = end;
        at = scan::find_string_special(bytes, run, b'"');
    }
}

/// Where a strict JSON number ends, and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NumberSpan {
    /// The index after its last byte.
    pub end: usize,
    /// The digits of its integer part.
    pub integer_digits: usize,
    /// It has a fraction or an exponent.
    pub is_float: bool,
}

/// The strict JSON number starting at `start` (`-`, then `0` or a digit run without a leading
/// zero, then an optional fraction and exponent, each with a digit), scanned as `serde_json`
/// scans it; `None` when the bytes there are no number by that grammar (`01`, `1.`, `1e`, `-`).
#[must_use]
pub fn number_span(bytes: &[u8], start: usize) -> Option<NumberSpan> {
    let digits = |mut p: usize| {
        while bytes.get(p).is_some_and(u8::is_ascii_digit) {
            p += 1;
        }
        p
    };
    let integer = start + usize::from(bytes.get(start) == Some(&b'-'));
    let mut p = match bytes.get(integer) {
        // One leading zero, and no digit after it.
        Some(b'0') if bytes.get(integer + 1).is_some_and(u8::is_ascii_digit) => return None,
        Some(b'0') => integer + 1,
        Some(b'1'..=b'9') => digits(integer + 1),
        _ => return None,
    };
    let integer_digits = p - integer;
    let mut is_float = false;
    if bytes.get(p) == Some(&b'.') {
        let end = digits(p + 1);
        if end == p + 1 {
            return None;
        }
        (p, is_float) = (end, true);
    }
    if matches!(bytes.get(p), Some(b'e' | b'E')) {
        p += 1;
        if matches!(bytes.get(p), Some(b'+' | b'-')) {
            p += 1;
        }
        let end = digits(p);
        if end == p {
            return None;
        }
        (p, is_float) = (end, true);
    }
    Some(NumberSpan {
        end: p,
        integer_digits,
        is_float,
    })
}

/// The integer `digits` (a strict number's whole text, [`NumberSpan`] `span`) as `serde_json`
/// reads it, without its deserializer (issue #31: most arguments' numbers are small integers,
/// and the parse cost more than the rest of the number): `None` for a fraction, an exponent,
/// more than 18 digits, or `-0` (which `serde_json` does not read as the integer 0), which
/// are left to `serde_json`.
///
/// The same `Number`: with `arbitrary_precision` it keeps the text, and an integer of JSON's
/// grammar (no leading zero, no `+`) is written back digit for digit; without it, the same
/// `u64` or `i64`.
pub(super) fn small_integer(digits: &[u8], span: NumberSpan) -> Option<serde_json::Number> {
    const MAX_DIGITS: usize = 18;
    if span.is_float || span.integer_digits > MAX_DIGITS {
        return None;
    }
    let (negative, magnitude) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    let mut value: u64 = 0;
    for &d in magnitude {
        value = value * 10 + u64::from(d - b'0');
    }
    if !negative {
        return Some(value.into());
    }
    // 18 digits fit an `i64`; `-0` is not the integer 0 to `serde_json`.
    let value = i64::try_from(value).ok().filter(|&v| v != 0)?;
    Some((-value).into())
}

/// The character of the `\u` escape whose hex digits start at `p`, with the index after it:
/// a leading surrogate must be followed by `\u` and a trailing one, which is never alone (as
/// `serde_json` reads a `&str`).
pub(super) fn unicode_escape(bytes: &[u8], p: usize) -> Result<(char, usize), StringError> {
    let first = hex4(bytes, p).ok_or(StringError::Invalid)?;
    let code = match first {
        0xDC00..=0xDFFF => return Err(StringError::LoneSurrogate),
        0xD800..=0xDBFF => {
            if bytes.get(p + 4..p + 6) != Some(b"\\u") {
                return Err(StringError::LoneSurrogate);
            }
            let second = hex4(bytes, p + 6).ok_or(StringError::Invalid)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return Err(StringError::LoneSurrogate);
            }
            (
                0x1_0000 + ((first - 0xD800) << 10) + (second - 0xDC00),
                p + 10,
            )
        }
        _ => (first, p + 4),
    };
    // Every code unit outside the surrogates, and every pair, is a character.
    let ch = char::from_u32(code.0).ok_or(StringError::Invalid)?;
    Ok((ch, code.1))
}

/// The four hex digits at `p`, either case.
fn hex4(bytes: &[u8], p: usize) -> Option<u32> {
    let digits = bytes.get(p..p + 4)?;
    digits
        .iter()
        .try_fold(0u32, |n, &b| Some(n * 16 + char::from(b).to_digit(16)?))
}
