//! Document readings of misplaced quotes: a key missing its closing quote or holding quotes of
//! its own, a value missing its opening quote.

use super::scalars::MAX_BARE_PHRASE;
use crate::salvage::scan;

/// Where the unquoted string value starting at `start` ends, when only its opening quote is
/// missing: at its closing quote.
///
/// - Detects: an object's value that starts with a letter and runs, on one line and within
///   [`MAX_BARE_PHRASE`] bytes, to a `"` followed by `,` or `}`: `{"words": abcdef", …}`,
///   `{"lorem": ipsum, sic, datum.",}`.
/// - Does: the value is the text up to that quote (`quote_inserted`); commas in it are
///   content, as the quote that ends it says.
/// - Never fires when: a `:`, bracket, brace, backslash or line break comes before the quote
///   (a member or prose), or the quote is followed by anything else (`value "b": 1` is a word
///   and a key). Documents only; a call's array elements have their own, narrower rule.
/// - Example: `{"a": ipsum, sic.", "b": 1}` → `{"a": "ipsum, sic.", "b": 1}`.
pub(in crate::salvage) fn value_missing_open_quote(bytes: &[u8], start: usize) -> Option<usize> {
    if !bytes.get(start)?.is_ascii_alphabetic() {
        return None;
    }
    let rest = &bytes[start..bytes.len().min(start + MAX_BARE_PHRASE)];
    let quote = rest
        .iter()
        .position(|&b| matches!(b, b'"' | b':' | b'{' | b'[' | b'}' | b']' | b'\\' | b'\n'))
        .filter(|&i| rest[i] == b'"')?;
    let end = start + quote;
    scan::followed_by(bytes, end + 1, b",}").then_some(end)
}

/// How a document's quoted key with a misplaced quote reads ([`misquoted_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::salvage) enum MisquotedKey {
    /// The key ends right before the colon at this offset, inside the quoted text: its
    /// closing quote is missing (`quote_inserted`).
    MissingClose(usize),
    /// The key ends at the quote at this offset, and the quotes before it are its content
    /// (`quotes_normalized`).
    HoldsQuotes(usize),
}

/// How the quoted key opened at `open` (by `"` or `'`) reads when its quotes are misplaced:
/// [`key_missing_close`], else [`key_with_quotes`]; `None` when neither fires and the key is
/// read as usual. Documents only: a call's key is read to its first quote.
pub(in crate::salvage) fn misquoted_key(bytes: &[u8], open: usize) -> Option<MisquotedKey> {
    let quote = *bytes.get(open)?;
    let body = open + 1;
    let rest = &bytes[body..bytes.len().min(body + MAX_BARE_PHRASE)];
    key_missing_close(bytes, quote, body, rest)
        .map(MisquotedKey::MissingClose)
        .or_else(|| key_with_quotes(bytes, quote, body, rest).map(MisquotedKey::HoldsQuotes))
}

/// Where a quoted key missing its closing quote ends: at the colon inside it. `rest` is the
/// key's text from `body`, at most [`MAX_BARE_PHRASE`] bytes.
///
/// - Detects: a key whose text reaches a `:` before any quote, backslash or line break, where
///   the quote read as its end is not followed by a `:` (or no such quote is on its line):
///   `{"key:"value"}` (the quote after the colon opens the value), `{"key:value}`.
/// - Does: the key ends right before that colon (`quote_inserted`), and the colon is the
///   member's.
/// - Never fires when: the quoted key is followed by its colon (`{"a:b": 1}` keeps its key),
///   the key would be empty, or the closing quote is further than [`MAX_BARE_PHRASE`] bytes on
///   its line (bounded look).
/// - Example: `{"key:"value"}` → `{"key": "value"}`.
fn key_missing_close(bytes: &[u8], quote: u8, body: usize, rest: &[u8]) -> Option<usize> {
    let colon = rest
        .iter()
        .position(|&b| matches!(b, b':' | b'\\' | b'\n') || b == quote)
        .filter(|&i| i > 0 && rest[i] == b':')?;
    let after_colon = &rest[colon + 1..];
    match after_colon.iter().position(|&b| b == quote || b == b'\n') {
        Some(i) if after_colon[i] == quote => {
            let next = scan::skip_ws(bytes, body + colon + 1 + i + 1);
            (bytes.get(next) != Some(&b':')).then_some(body + colon)
        }
        Some(_) => Some(body + colon),
        // No quote in reach: the text must end on this line, else the key may go on.
        None => (body + rest.len() == bytes.len()).then_some(body + colon),
    }
}

/// Where a quoted key holding quotes of its own ends: at the quote its colon follows. `rest`
/// is the key's text from `body`, at most [`MAX_BARE_PHRASE`] bytes.
///
/// - Detects: a key whose first closing quote is not followed by a `:`, where a later quote on
///   the same stretch is (`{"k"e"y": "value"}`).
/// - Does: the quotes between are content of the key (`quotes_normalized`).
/// - Never fires when: the key's first quote doubles its opening one (`""key"":`), a `,`,
///   `:`, bracket, brace, backslash or line break comes before the quote the colon follows
///   (a member or prose), or it is further than [`MAX_BARE_PHRASE`] bytes.
/// - Example: `{"k"e"y": 1}` → `{"k\"e\"y": 1}`.
fn key_with_quotes(bytes: &[u8], quote: u8, body: usize, rest: &[u8]) -> Option<usize> {
    // A doubled quote (`""key""`, `"" key"`) is CSV's or a slip, not a key's content.
    let first = rest.iter().position(|&b| b == quote).filter(|&i| i > 0)?;
    if bytes.get(scan::skip_ws(bytes, body + first + 1)) == Some(&b':') {
        return None;
    }
    let mut i = first + 1;
    while let Some(&b) = rest.get(i) {
        match b {
            b',' | b':' | b'{' | b'}' | b'[' | b']' | b'\\' | b'\n' => return None,
            _ if b == quote && bytes.get(scan::skip_ws(bytes, body + i + 1)) == Some(&b':') => {
                return Some(body + i);
            }
            _ => i += 1,
        }
    }
    None
}
