//! Parsing primitives shared by the grammars, written so that a streamed prefix is never judged
//! wrong: running out of text is [`Stop::Incomplete`], never [`Stop::Invalid`].
//!
//! A grammar must only answer `Invalid` when no continuation of the text could make the block
//! valid; the streaming scanner relies on that to give the same answer as a whole-text scan.

use std::cell::Cell;

/// Why a grammar could not return a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The text ended before the block did; more text may complete it.
    Incomplete,
    /// The text can never be this grammar's block.
    Invalid,
}

/// A parse step: a value or a [`Stop`].
pub(crate) type Step<T> = Result<T, Stop>;

thread_local! {
    /// The furthest index the current parse has examined (see [`reach`]).
    static REACH: Cell<usize> = const { Cell::new(0) };
}

/// Records that the current parse examined the text up to `i`. The scanner charges a failed
/// parse by how far it reached, which keeps a text full of near-miss blocks linear.
pub(crate) fn reach(i: usize) {
    REACH.with(|r| {
        if r.get() < i {
            r.set(i);
        }
    });
}

/// The furthest index recorded since the last call, and a reset.
pub(crate) fn take_reach() -> usize {
    REACH.with(|r| r.replace(0))
}

/// Longest tool name a grammar accepts; longer "names" are prose.
pub(crate) const MAX_NAME_BYTES: usize = 256;

/// The index of the first byte at or after `i` that is not ASCII whitespace.
pub(crate) fn skip_ws(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Expects `lit` at `i` and returns the index after it.
///
/// A text that ends inside `lit` is incomplete; any other mismatch is invalid.
pub(crate) fn expect(s: &str, i: usize, lit: &str) -> Step<usize> {
    let rest = s.as_bytes().get(i..).unwrap_or_default();
    if rest.starts_with(lit.as_bytes()) {
        Ok(i + lit.len())
    } else if lit.as_bytes().starts_with(rest) {
        Err(Stop::Incomplete)
    } else {
        Err(Stop::Invalid)
    }
}

/// Like [`expect`] after optional whitespace; a text ending in whitespace is incomplete.
pub(crate) fn expect_ws(s: &str, i: usize, lit: &str) -> Step<usize> {
    expect(s, skip_ws(s, i), lit)
}

/// Whether `lit` follows `i` after optional whitespace: `Ok(Some(end))`, `Ok(None)` when
/// something else follows, `Incomplete` when the text ends first.
pub(crate) fn peek_ws(s: &str, i: usize, lit: &str) -> Step<Option<usize>> {
    match expect_ws(s, i, lit) {
        Ok(end) => Ok(Some(end)),
        Err(Stop::Invalid) => Ok(None),
        Err(Stop::Incomplete) => Err(Stop::Incomplete),
    }
}

/// Like [`peek_ws`] for optional trailing markup (a section closer): when the text is final,
/// running out of text means the markup is absent.
pub(crate) fn optional(s: &str, i: usize, lit: &str, eof: bool) -> Step<Option<usize>> {
    match peek_ws(s, i, lit) {
        Err(Stop::Incomplete) if eof => Ok(None),
        other => other,
    }
}

/// Reads ` key="value"` (or single quotes) after optional whitespace; returns the value with
/// `&quot;`, `&apos;`, `&lt;`, `&gt;` and `&amp;` unescaped, and the index after the quote.
pub(crate) fn attr(s: &str, i: usize, key: &str) -> Step<(String, usize)> {
    let i = expect_ws(s, i, key)?;
    let i = expect_ws(s, i, "=")?;
    let i = skip_ws(s, i);
    let quote = match s.as_bytes().get(i) {
        None => return Err(Stop::Incomplete),
        Some(b'"') => "\"",
        Some(b'\'') => "'",
        Some(_) => return Err(Stop::Invalid),
    };
    let close = find_within(s, i + 1, quote, MAX_NAME_BYTES)?;
    let raw = &s[i + 1..close];
    if raw.len() > MAX_NAME_BYTES || raw.contains(['<', '>', '\n']) {
        return Err(Stop::Invalid);
    }
    let value = raw
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    Ok((value, close + 1))
}

/// The first index of `needle` at or after `from`; a missing needle may still arrive.
pub(crate) fn find(s: &str, from: usize, needle: &str) -> Step<usize> {
    find_opt(s, from, needle).ok_or(Stop::Incomplete)
}

/// Like [`find`], but `needle` must start within `limit` bytes of `from`: a short field (a name,
/// an attribute, a header) that runs on is prose, not an open block to wait for.
pub(crate) fn find_within(s: &str, from: usize, needle: &str, limit: usize) -> Step<usize> {
    let end = s
        .len()
        .min(from.saturating_add(limit).saturating_add(needle.len()));
    let hay = s.as_bytes().get(from..end).ok_or(Stop::Incomplete)?;
    let found = memchr::memmem::find(hay, needle.as_bytes());
    reach(found.map_or(end, |i| from + i + needle.len()));
    match found {
        Some(i) => Ok(from + i),
        None if end < s.len() => Err(Stop::Invalid),
        None => Err(Stop::Incomplete),
    }
}

/// The first index of `needle` at or after `from`, if any.
pub(crate) fn find_opt(s: &str, from: usize, needle: &str) -> Option<usize> {
    let hay = s.as_bytes().get(from..)?;
    let found = memchr::memmem::find(hay, needle.as_bytes()).map(|i| from + i);
    reach(found.map_or(s.len(), |i| i + needle.len()));
    found
}

/// Like [`find`], but the search fails for good when one of `stops` (the start of a new block
/// of the same family) comes before `needle`: a value cut off by a new block belongs to a
/// truncated call, and completing it with the next block's closer would fuse two calls
/// (GRAMMARS §1.3).
///
/// The search widens a window from `from` (doubling) until it decides, and records a reach at
/// the end of the needle or stop that decided: a function of the text up to there only, so a
/// streamed scan, which decides on a shorter text, charges a failed parse exactly what the
/// whole-text scan charges (issue #8: the near-miss work budget must not depend on chunking).
pub(crate) fn find_before(s: &str, from: usize, needle: &str, stops: &[&str]) -> Step<usize> {
    let rest = s.as_bytes().get(from..).unwrap_or_default();
    let mut window = 256usize;
    loop {
        let end = rest.len().min(window);
        let hay = &rest[..end];
        let found = memchr::memmem::find(hay, needle.as_bytes());
        // The earliest end of a stop that lies wholly before the needle (or the window's end).
        let before = &hay[..found.unwrap_or(end)];
        let stop = stops
            .iter()
            .filter_map(|t| memchr::memmem::find(before, t.as_bytes()).map(|p| p + t.len()))
            .min();
        match (found, stop) {
            (_, Some(e)) if found.is_some() || end == rest.len() => {
                reach(from + e);
                return Err(Stop::Invalid);
            }
            // No needle in the window: one that starts before `e` would lie in it.
            (None, Some(e)) if e + needle.len() <= end + 1 => {
                reach(from + e);
                return Err(Stop::Invalid);
            }
            (Some(i), None) => {
                reach(from + i + needle.len());
                return Ok(from + i);
            }
            (None, None) if end == rest.len() => {
                reach(s.len());
                return Err(Stop::Incomplete);
            }
            _ => window = window.saturating_mul(2),
        }
    }
}

/// Reads a tool name from `s[from..to]`, trimmed: non-empty, one line, bounded, and free of
/// markup characters (`<`, `>`, quotes, braces), so prose never passes for a name.
pub(crate) fn name(s: &str, from: usize, to: usize) -> Step<String> {
    let text = s.get(from..to).ok_or(Stop::Invalid)?.trim();
    if is_name(text) {
        Ok(text.to_owned())
    } else {
        Err(Stop::Invalid)
    }
}

/// Whether `text` can be a tool name (see [`name`]).
pub(crate) fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_NAME_BYTES
        && !text
            .chars()
            .any(|c| c.is_whitespace() || "<>\"'{}[]()`,;=".contains(c))
}

/// Reads a name that ends at the first byte in `stops`; the text ending first is incomplete.
///
/// Fails as soon as the candidate is longer than [`MAX_NAME_BYTES`] or holds a byte that no name
/// holds, so a stray sentinel in prose costs a few bytes, not a scan to the end of the text.
pub(crate) fn name_until(s: &str, from: usize, stops: &[u8]) -> Step<(String, usize)> {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() {
        reach(i);
        if stops.contains(&b[i]) {
            return Ok((name(s, from, i)?, i));
        }
        if i - from > MAX_NAME_BYTES || b[i] == b'\n' || b[i] == b'<' {
            return Err(Stop::Invalid);
        }
        i += 1;
    }
    Err(Stop::Incomplete)
}

/// Removes exactly one leading and one trailing line break (`\n` or `\r\n`), keeping any other
/// whitespace: the Qwen3-Coder template writes values as `\n` + value + `\n` (GRAMMARS §2.5).
pub(crate) fn strip_one_newline(v: &str) -> &str {
    let v = v
        .strip_prefix("\r\n")
        .or_else(|| v.strip_prefix('\n'))
        .unwrap_or(v);
    v.strip_suffix("\r\n")
        .or_else(|| v.strip_suffix('\n'))
        .unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expect_tells_a_cut_literal_from_a_wrong_one() {
        assert_eq!(expect("<tool", 0, "<tool_call>"), Err(Stop::Incomplete));
        assert_eq!(expect("<tooX", 0, "<tool_call>"), Err(Stop::Invalid));
        assert_eq!(expect("a<tool_call>b", 1, "<tool_call>"), Ok(12));
    }

    #[test]
    fn find_before_refuses_a_new_block_before_the_needle() {
        assert_eq!(find_before("a</p>", 0, "</p>", &["<t>"]), Ok(1));
        assert_eq!(
            find_before("a<t>b</p>", 0, "</p>", &["<t>"]),
            Err(Stop::Invalid)
        );
        assert_eq!(
            find_before("a<t>b", 0, "</p>", &["<t>"]),
            Err(Stop::Invalid)
        );
        assert_eq!(find_before("a</p><t>", 0, "</p>", &["<t>"]), Ok(1));
        assert_eq!(
            find_before("a<t", 0, "</p>", &["<t>"]),
            Err(Stop::Incomplete)
        );
    }

    #[test]
    fn find_before_reaches_what_decided_it_whatever_follows() {
        // A failed search is charged to the stop's end, not to the end of the text or to a
        // closer far behind it: a streamed prefix and the whole text charge alike.
        let long = format!("a<t>b{}</p>", "x".repeat(5000));
        for text in ["a<t>b", "a<t>b</p>", long.as_str()] {
            take_reach();
            assert_eq!(find_before(text, 0, "</p>", &["<t>"]), Err(Stop::Invalid));
            assert_eq!(take_reach(), 4, "{text:.12}");
        }
        let far = format!("{}</p>", "x".repeat(5000));
        take_reach();
        assert_eq!(find_before(&far, 0, "</p>", &["<t>"]), Ok(5000));
        assert_eq!(take_reach(), 5004);
    }

    #[test]
    fn names_refuse_prose_and_markup() {
        assert!(is_name("read_file") && is_name("server.tool") && is_name("my-tool"));
        assert!(!is_name("") && !is_name("two words") && !is_name("a<b") && !is_name("{x}"));
    }

    #[test]
    fn one_newline_is_stripped_each_side() {
        assert_eq!(strip_one_newline("\n\n  x\n\n"), "\n  x\n");
        assert_eq!(strip_one_newline("\r\nx\r\n"), "x");
    }
}
