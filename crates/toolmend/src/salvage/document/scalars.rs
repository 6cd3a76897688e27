//! Document readings of scalars JSON does not spell: Python's number spellings, literals in
//! another case, bare tokens that start with a digit, unquoted words as a string value.

use serde_json::{Number, Value};

use crate::salvage::scan;

/// Whether `b` may be part of a bare scalar token (`1_000`, `1/3`, a UUID).
pub(in crate::salvage) const fn in_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'+' | b'/')
}

/// The value of the bare token starting at `start` (a digit, a sign or a dot) and where it
/// ends, when it names one value: a Python number spelling as the number, a token that starts
/// with a digit and is no number as its text; a number whose exponent has no digits (`1e`) as
/// its mantissa. `None` (the caller refuses it) when something other than `,`, `}`, `]` or the
/// end follows it, it looks cut (`10-`), it is a number JSON cannot hold, or it would be text
/// and the text ends in it (it may be cut).
pub(in crate::salvage) fn lenient_number(text: &str, start: usize) -> Option<(Value, usize)> {
    let bytes = text.as_bytes();
    let mut end = start;
    while end < bytes.len() && in_token(bytes[end]) {
        end += 1;
    }
    if !matches!(
        bytes.get(scan::skip_ws(bytes, end)),
        None | Some(b',' | b'}' | b']')
    ) {
        return None;
    }
    let token = &text[start..end];
    if let Some(number) = python_number(token) {
        // At the end of the text as a JSON number would be: complete as far as it goes.
        return number.map(|n| (Value::Number(n), end));
    }
    if end == bytes.len() {
        return None;
    }
    // An exponent with no digits before a delimiter (`1e }`, `2E+,`): the mantissa, as
    // json_repair reads it; nothing is invented, only the dangling marker goes.
    let marker = token.strip_suffix(['+', '-']).unwrap_or(token);
    if let Some(Some(number)) = marker.strip_suffix(['e', 'E']).and_then(python_number) {
        return Some((Value::Number(number), end));
    }
    let unsigned = token.trim_start_matches(['-', '+']);
    let cut = token.ends_with(|c: char| !c.is_ascii_alphanumeric());
    if cut || !unsigned.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((Value::String(token.to_owned()), end))
}

/// A Python (or JavaScript) number spelling JSON does not allow — a leading `+` or `.`, a
/// trailing `.`, `_` between digits — as the number: `Some(None)` when it has that shape but
/// JSON cannot hold it (`007`), `None` when it is no number.
fn python_number(token: &str) -> Option<Option<Number>> {
    let b = token.as_bytes();
    let mut out = String::with_capacity(b.len() + 2);
    let mut i = 0;
    match b.first()? {
        b'-' => {
            out.push('-');
            i = 1;
        }
        b'+' => i = 1,
        _ => {}
    }
    let int = digits(b, &mut i, &mut out);
    if int == 0 {
        out.push('0');
    }
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        out.push('.');
        frac = digits(b, &mut i, &mut out);
        if frac == 0 {
            out.push('0');
        }
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        out.push('e');
        i += 1;
        if let Some(&sign @ (b'+' | b'-')) = b.get(i) {
            out.push(char::from(sign));
            i += 1;
        }
        if digits(b, &mut i, &mut out) == 0 {
            return None;
        }
    }
    (i == b.len()).then(|| out.parse::<Number>().ok())
}

/// Copies the digits at `i` into `out`, skipping single `_` between digits; how many.
fn digits(b: &[u8], i: &mut usize, out: &mut String) -> usize {
    let mut n = 0;
    while let Some(&c) = b.get(*i) {
        if c.is_ascii_digit() {
            out.push(char::from(c));
            n += 1;
        } else if !(c == b'_' && n > 0 && b.get(*i + 1).is_some_and(u8::is_ascii_digit)) {
            break;
        }
        *i += 1;
    }
    n
}

/// `true`, `false` or `null` spelt in another case (`TRUE`, `Null`, `NONE`).
pub(in crate::salvage) fn literal(word: &str) -> Option<Value> {
    if word.eq_ignore_ascii_case("true") {
        Some(Value::Bool(true))
    } else if word.eq_ignore_ascii_case("false") {
        Some(Value::Bool(false))
    } else if word.eq_ignore_ascii_case("null") || word.eq_ignore_ascii_case("none") {
        Some(Value::Null)
    } else {
        None
    }
}

/// Words that are not one plain string in some notation a model may be writing: YAML 1.1's
/// booleans, JavaScript's `undefined`, other languages' nulls and non-finite numbers.
const NOT_PLAIN_WORDS: [&str; 13] = [
    "yes",
    "no",
    "y",
    "n",
    "on",
    "off",
    "undefined",
    "nil",
    "nan",
    "inf",
    "infinity",
    "true",
    "false",
];

/// The longest unquoted string value [`bare_word`] reads: a phrase longer than this is prose.
pub(super) const MAX_BARE_PHRASE: usize = 256;

/// Where the unquoted string value starting at `start` ends, when it is one (`{"name": John}`,
/// `{"city": New York}`, `{key: value, key2: value2}`: JavaScript's and YAML's unquoted
/// strings).
///
/// The value is one or more words on one line, parted by spaces or tabs. A word is letters,
/// digits, `_`, `$`, `.`, `-`; the first starts with a letter, and the last does not end with
/// `.` or `-` (a sentence or a cut). A value of one word is no literal of another notation
/// ([`NOT_PLAIN_WORDS`]). The value is followed by `,`, `}`, `]` (on its line or after a line
/// break), or a quoted key and its `:` (the comma missing). Anything else — a comma, colon or
/// quote inside the phrase, a phrase longer than [`MAX_BARE_PHRASE`], the text ending after
/// it — stays refused: where the value ends would be a guess.
pub(in crate::salvage) fn bare_word(bytes: &[u8], start: usize) -> Option<usize> {
    if !bytes.get(start)?.is_ascii_alphabetic() {
        return None;
    }
    let mut end = scan::key_end(bytes, start);
    loop {
        let mut next = end;
        while matches!(bytes.get(next), Some(b' ' | b'\t')) {
            next += 1;
        }
        if next == end || !bytes.get(next).copied().is_some_and(scan::is_key_start) {
            break;
        }
        end = scan::key_end(bytes, next);
        if end - start > MAX_BARE_PHRASE {
            return None;
        }
    }
    let phrase = std::str::from_utf8(&bytes[start..end]).ok()?;
    if phrase.ends_with(['.', '-'])
        || NOT_PLAIN_WORDS
            .iter()
            .any(|w| w.eq_ignore_ascii_case(phrase))
        || literal(phrase).is_some()
    {
        return None;
    }
    let after = scan::skip_ws(bytes, end);
    match bytes.get(after)? {
        b',' | b'}' | b']' => Some(end),
        b'"' => {
            // A key on the same line and its colon: `{"a": value "b": 1}`.
            let body = &bytes[after + 1..];
            let close = memchr::memchr2(b'"', b'\n', body).filter(|&i| body[i] == b'"')?;
            let colon = scan::skip_ws(bytes, after + 1 + close + 1);
            (bytes.get(colon) == Some(&b':')).then_some(end)
        }
        _ => None,
    }
}
