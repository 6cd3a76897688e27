//! Bounded look-ahead: does a quote inside a string value end the string, or is it content?
//!
//! Models write code into `content` fields and sometimes forget to escape its quotes:
//! `{"code": "print("x")", "n": 1}`. A quote ends the string only when what follows it is what
//! JSON allows after a value in the current container: `,` and then a key (objects) or a value
//! (arrays), the container's closer (possibly several, matching the open containers), a key
//! after a missing comma, or the end of the text. Anything else (`x`, `)`, `:`, `;`) means the
//! quote belongs to the content.
//!
//! Every step is bounded (whitespace, key length, the open containers), so one check costs a
//! constant and salvage stays linear however many quotes the content holds.

use super::scan::{self, Comment, Quote};

/// Most bytes of whitespace and comments skipped in one look-ahead step. Past it the quote is
/// taken as a closer: long runs of whitespace follow real closers far more often than content.
const MAX_GAP: usize = 256;
/// Most bytes read of the quoted key or element after a comma. Past it the quote is taken as a
/// closer, for the same reason.
const MAX_TOKEN: usize = 256;

/// Most stray closers (of the wrong kind) skipped in one look-ahead, as the parser would.
const MAX_STRAYS: usize = 2;

/// The look-ahead's answer for one quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// What follows is plausible JSON: the quote closes the string.
    Closes,
    /// The quote closes the string, which closes every open container, and text that is neither
    /// JSON nor whitespace follows. Plausible (prose after the object), but the parser remembers
    /// the quote: if the rest holds quotes, it retries with this quote as content.
    ClosesBeforeProse,
    /// The quote is content.
    Content,
}

/// Judges the quote whose closing delimiter ends just before `after`, inside a string value of
/// the innermost container of `closers` (`b'}'` or `b']'` per open container, outermost first).
pub(super) fn value_quote(bytes: &[u8], after: usize, closers: &[u8], fence: bool) -> Verdict {
    let mut depth = closers.len();
    let mut p = after;
    let mut strays = 0;
    loop {
        p = match skip_gap(bytes, p) {
            Some(p) => p,
            None => return Verdict::Closes,
        };
        if p >= bytes.len() {
            return Verdict::Closes;
        }
        let b = bytes[p];
        // `'a' + 'b'`: the parser joins the parts.
        if b == b'+' && skip_gap(bytes, p + 1).is_some_and(|q| Quote::at(bytes, q).is_some()) {
            return Verdict::Closes;
        }
        if depth == 0 {
            // After the last closer only another value (`{…}{…}`, `{…},{…}`) or more members of
            // the root object (`{"a": "b"}, "c": "d"}`) are JSON; anything else after a comma
            // is prose that the string may have swallowed, so the parser may retry.
            let next_value = b == b'{'
                || b == b'['
                || (b == b',' && after_comma_at_root(bytes, p + 1, closers.first()));
            let closing_fence = fence && bytes[p..].starts_with(b"```");
            return if next_value || closing_fence {
                Verdict::Closes
            } else {
                Verdict::ClosesBeforeProse
            };
        }
        let top = closers[depth - 1];
        if b == top {
            depth -= 1;
            p += 1;
            continue;
        }
        // `}` for `]` before a comma and a member of the object below (`["a", "b"}, "c": 1}`):
        // it closes the array, as the parser reads it.
        if b == b'}'
            && top == b']'
            && depth >= 2
            && closers[depth - 2] == b'}'
            && member_after_comma(bytes, p + 1)
        {
            depth -= 1;
            p += 1;
            continue;
        }
        // A closer of the other kind: the parser removes it as stray (`extra_closer_removed`).
        if (b == b'}' || b == b']') && strays < MAX_STRAYS {
            strays += 1;
            p += 1;
            continue;
        }
        if b == b',' {
            return if after_comma(bytes, p + 1, top) {
                Verdict::Closes
            } else {
                Verdict::Content
            };
        }
        // A missing comma: the next member (objects) or element (arrays) follows at once. The
        // token must end within the text: a quoted word ending the value (`"say "hi""}`) leaves
        // only `"}`, which is not a key.
        let next = match Quote::at(bytes, p) {
            Some(q) if top == b'}' => token_then(bytes, p, q, b":", false),
            // Another string may follow with its comma missing too (`["a" "b" "c"]`).
            Some(q) => token_then(bytes, p, q, b",]\"'", false),
            None if top == b'}' => scan::is_key_start(b) && bare_member(bytes, p),
            None => bare_element(bytes, p),
        };
        return if next {
            Verdict::Closes
        } else {
            Verdict::Content
        };
    }
}

/// Whether what follows a comma after the root's closer at `p` is another value or, for a root
/// object, another member.
fn after_comma_at_root(bytes: &[u8], p: usize, root: Option<&u8>) -> bool {
    let Some(q) = skip_gap(bytes, p) else {
        return false;
    };
    match bytes.get(q) {
        None => true,
        Some(b'{' | b'[') => true,
        Some(_) if root == Some(&b'}') => continues_root(bytes, q),
        Some(_) => false,
    }
}

/// Whether a member of an object (a quoted key with its colon and a value, or a bare key and
/// its colon) starts at `p`: what lets a root object go on after a stray `}` and a comma.
pub(super) fn continues_root(bytes: &[u8], p: usize) -> bool {
    match Quote::at(bytes, p) {
        Some(q) => opens_member(bytes, p, q),
        None => {
            bytes.get(p).is_some_and(|&b| scan::is_key_start(b)) && {
                let end = scan::key_end(bytes, p);
                end - p <= MAX_TOKEN && end < bytes.len() && followed_by(bytes, end, b":")
            }
        }
    }
}

/// Whether a comma and then a member of an object (see [`continues_root`]) follow `p`.
pub(super) fn member_after_comma(bytes: &[u8], p: usize) -> bool {
    let Some(comma) = skip_gap(bytes, p) else {
        return false;
    };
    bytes.get(comma) == Some(&b',')
        && skip_gap(bytes, comma + 1).is_some_and(|q| continues_root(bytes, q))
}

/// Whether what follows a comma at `p` in a container closed by `top` starts a member (objects)
/// or an element (arrays).
fn after_comma(bytes: &[u8], p: usize, top: u8) -> bool {
    let Some(p) = skip_gap(bytes, p) else {
        return true;
    };
    let Some(&b) = bytes.get(p) else { return true };
    if b == top {
        return true; // a trailing comma
    }
    match (top, Quote::at(bytes, p)) {
        (b'}', Some(q)) => token_then(bytes, p, q, b":", true),
        (b'}', None) if scan::is_key_start(b) => {
            let end = scan::key_end(bytes, p);
            // A key missing its opening quote (`,b":`) is a key too, as the parser reads it.
            let end = if bytes.get(end) == Some(&b'"') {
                end + 1
            } else {
                end
            };
            end - p > MAX_TOKEN || followed_by(bytes, end, b":")
        }
        (b'}', None) => false,
        // `}` too: a closer of the wrong kind the parser reads as `]` (`["a", "b"}, "c": 1}`).
        (_, Some(q)) => token_then(bytes, p, q, b",]}", true),
        (_, None) => matches!(
            b,
            b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'T' | b'F' | b'N'
        ),
    }
}

/// Whether the quote at `p` opens a member: a quoted key, its `:` and the start of a value.
/// Used to see a string value's missing closing quote before `, "key": …`.
pub(super) fn opens_member(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let mut i = p + quote.len();
    let limit = (i + MAX_TOKEN).min(bytes.len());
    loop {
        if i >= limit {
            return false;
        }
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == quote.scan_byte() && quote.closes_at(bytes, i) {
            break;
        }
        i += 1;
    }
    let Some(colon) = skip_gap(bytes, i + quote.len()) else {
        return false;
    };
    if bytes.get(colon) != Some(&b':') {
        return false;
    }
    let Some(v) = skip_gap(bytes, colon + 1) else {
        return false;
    };
    Quote::at(bytes, v).is_some()
        || bytes.get(v).is_some_and(|b| {
            matches!(
                b,
                b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'T' | b'F' | b'N'
            )
        })
}

/// Whether the quote at `p` opens a whole string element of an array: it closes within
/// [`MAX_TOKEN`] bytes and `,` or `]` follows. Used to see a missing closing quote in `["a, "b"]`.
pub(super) fn is_element(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let mut i = p + quote.len();
    let limit = (i + MAX_TOKEN).min(bytes.len());
    while i < limit {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == quote.scan_byte() && quote.closes_at(bytes, i) {
            return skip_gap(bytes, i + quote.len())
                .and_then(|q| bytes.get(q))
                .is_some_and(|b| matches!(b, b',' | b']'));
        }
        i += 1;
    }
    false
}

/// A bare key at `p` after a missing comma (`"x" b: 1}`): only with its `:` and a whole value
/// followed by `,` or `}`, so YAML-like content (`name: "foo"\nversion: 1"`) stays content.
fn bare_member(bytes: &[u8], p: usize) -> bool {
    let end = scan::key_end(bytes, p);
    if end - p > MAX_TOKEN || !followed_by(bytes, end, b":") {
        return false;
    }
    let Some(v) = skip_gap(bytes, end).and_then(|c| skip_gap(bytes, c + 1)) else {
        return false;
    };
    let Some(&b) = bytes.get(v) else {
        return false;
    };
    match Quote::at(bytes, v) {
        Some(q) => token_then(bytes, v, q, b",}", false),
        None => b == b'{' || b == b'[' || bare_element_then(bytes, v, b",}"),
    }
}

/// A non-string element at `p` after a missing comma (`["a" 1]`): a container, or a number or
/// literal followed by `,` or `]`.
fn bare_element(bytes: &[u8], p: usize) -> bool {
    matches!(bytes[p], b'{' | b'[') || bare_element_then(bytes, p, b",]")
}

/// Whether a whole number or literal starts at `p` and one of `next` follows it.
fn bare_element_then(bytes: &[u8], p: usize, next: &[u8]) -> bool {
    let end = match bytes[p] {
        b'-' | b'0'..=b'9' => scan::number_end(bytes, p),
        b'a'..=b'z' | b'A'..=b'Z' => scan::word_end(bytes, p),
        _ => return false,
    };
    let token = &bytes[p..end];
    let whole = if token[0].is_ascii_alphabetic() {
        matches!(
            token,
            b"true" | b"false" | b"null" | b"True" | b"False" | b"None"
        )
    } else {
        std::str::from_utf8(token).is_ok_and(|t| t.parse::<f64>().is_ok())
    };
    whole && end < bytes.len() && followed_by(bytes, end, next)
}

/// Whether the quoted token opened by `quote` at `p` ends and is followed by one of `next`, or
/// the token is too long to judge; when the text ends inside it, `at_end` (a cut key after a
/// comma is plausible, a cut key after a missing comma is not).
fn token_then(bytes: &[u8], p: usize, quote: Quote, next: &[u8], at_end: bool) -> bool {
    let mut i = p + quote.len();
    let limit = (i + MAX_TOKEN).min(bytes.len());
    while i < limit {
        let b = bytes[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if b == quote.scan_byte() && quote.closes_at(bytes, i) {
            return followed_by(bytes, i + quote.len(), next);
        }
        i += 1;
    }
    i < bytes.len() || at_end
}

/// Whether the first byte after whitespace at `p` is one of `next`, or the text ends first.
fn followed_by(bytes: &[u8], p: usize, next: &[u8]) -> bool {
    match skip_gap(bytes, p) {
        None => true,
        Some(p) => bytes.get(p).is_none_or(|b| next.contains(b)),
    }
}

/// Skips whitespace and comments from `p`; `None` when more than [`MAX_GAP`] bytes would be
/// skipped.
fn skip_gap(bytes: &[u8], mut p: usize) -> Option<usize> {
    let start = p;
    loop {
        p = scan::skip_ws(bytes, p).min(start + MAX_GAP + 1);
        if p - start > MAX_GAP {
            return None;
        }
        // The comment's end is searched for within the gap only: a search to the end of the
        // text from every quote of a long string would make salvage quadratic.
        let window = &bytes[..(start + MAX_GAP + 2).min(bytes.len())];
        match scan::comment_at(window, p) {
            Comment::None => return Some(p),
            Comment::Closed(end) if end < window.len() || window.len() == bytes.len() => p = end,
            Comment::Closed(_) => return None,
            Comment::Unterminated if window.len() == bytes.len() => return Some(bytes.len()),
            Comment::Unterminated => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(rest: &str, closers: &[u8]) -> Verdict {
        value_quote(rest.as_bytes(), 0, closers, false)
    }

    #[test]
    fn real_closers_close() {
        for rest in [
            ", \"n\": 1}",
            "}",
            " } ",
            "",
            "  ",
            ", 'n': 1}",
            ", n: 1}",
            ",}",
            " \"b\": 2}",
        ] {
            assert_eq!(verdict(rest, b"}"), Verdict::Closes, "{rest:?}");
        }
        for rest in [
            ", 1]",
            "]",
            ", \"b\"]",
            ", {\"a\": 1}]",
            " \"b\"]",
            " \"b\" \"c\"]",
        ] {
            assert_eq!(verdict(rest, b"]"), Verdict::Closes, "{rest:?}");
        }
        assert_eq!(verdict("}]}", b"}]}"), Verdict::Closes);
        assert_eq!(verdict("}, {\"a\": 1}]}", b"}]}"), Verdict::Closes);
        // A stray closer is skipped, as the parser skips it.
        assert_eq!(verdict("}]]}", b"}]}"), Verdict::Closes);
    }

    #[test]
    fn content_quotes_are_content() {
        for rest in [
            "x\")\", \"n\": 1}",
            ")\", \"n\": 1}",
            ": 1}",
            "; x",
            ", \"b\")\"}",
            "}; x\"}",
        ] {
            assert_eq!(verdict(rest, b"}]}"), Verdict::Content, "{rest:?}");
        }
        assert_eq!(verdict(", \"b\")\"]", b"]"), Verdict::Content);
    }

    #[test]
    fn a_plus_before_another_string_closes() {
        assert_eq!(verdict(" +\n 'world'}", b"}"), Verdict::Closes);
        assert_eq!(verdict(" + x}", b"}"), Verdict::Content);
    }

    #[test]
    fn prose_after_the_last_closer_is_flagged() {
        assert_eq!(verdict("} thanks", b"}"), Verdict::ClosesBeforeProse);
        assert_eq!(verdict("} {\"b\": 1}", b"}"), Verdict::Closes);
        assert_eq!(value_quote(b"}\n```", 0, b"}", true), Verdict::Closes);
    }

    #[test]
    fn long_gaps_and_tokens_give_the_benefit_of_the_doubt() {
        let gap = format!("{}x", " ".repeat(MAX_GAP + 10));
        assert_eq!(verdict(&gap, b"}"), Verdict::Closes);
        let key = format!(", \"{}\" x", "k".repeat(MAX_TOKEN + 10));
        assert_eq!(verdict(&key, b"}"), Verdict::Closes);
    }
}
