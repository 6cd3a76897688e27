//! Bounded look-ahead: does a quote inside a string value end the string, or is it content?
//!
//! Models write code into `content` fields and sometimes forget to escape its quotes:
//! `{"code": "print("x")", "n": 1}`. A quote ends the string only when what follows it is what
//! JSON allows after a value in the current container: `,` and then a key (objects) or a value
//! (arrays), the container's closer (possibly several, matching the open containers), a key
//! after a missing comma, or the end of the text. Anything else (`x`, `)`, `:`, `;`) means the
//! quote belongs to the content.
//!
//! One shape is neither: a whole array standing where a key belongs after the comma (`"v",
//! ["x"] }`). Taken as content the string swallows it, taken as the closer it is out of place,
//! so the look-ahead says [`Verdict::Swallows`] and the parser refuses the text.
//!
//! Every step is bounded (whitespace, key length, the open containers), so one check costs a
//! constant and salvage stays linear however many quotes the content holds.

use crate::salvage::scan::{self, Quote, followed_by, skip_gap};

/// Most bytes read of the quoted key or element after a comma. Past it the quote is taken as a
/// closer, for the same reason.
const MAX_TOKEN: usize = 256;

/// Most stray closers (of the wrong kind) skipped in one look-ahead, as the parser would.
const MAX_STRAYS: usize = 2;
/// Most arrays in a row read where a key belongs (see [`array_value`]).
const MAX_ARRAYS: usize = 3;
/// Most bytes of one such array.
const MAX_ARRAY: usize = 2 * MAX_TOKEN;

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
    /// Neither reading holds: taken as content, the string would swallow a value standing where
    /// a key belongs (`"value3", ["arrayvalue1"] }`); taken as the closer, that value is out of
    /// place. The parser refuses the text rather than guess.
    Swallows,
}

/// Judges the quote whose closing delimiter ends just before `after`, inside a string value of
/// the innermost container of `closers` (`b'}'` or `b']'` per open container, outermost first).
/// `words`: a bare word closed by a quote may be the next array element (`["a" b", "c"]`); only
/// for the first quote of a string, since after a content quote (`["say "hi" there"]`) the same
/// shape is quoted prose.
///
/// Inlined for the shape nearly every string value but an object's last is followed by, a comma
/// and a quoted key with its colon (`", "key":`), which closes the string as the full judgement
/// finds it ([`judge_value_quote`]) at a fraction of its cost.
#[inline]
pub(super) fn value_quote(
    bytes: &[u8],
    after: usize,
    closers: &[u8],
    fence: bool,
    words: bool,
) -> Verdict {
    value_quote_noting_key(bytes, after, closers, fence, words, &mut None)
}

/// [`value_quote`], noting in `next_key` where the key of `", "key":` opens and closes (the
/// indices of its quotes) when the inlined shape read it and nothing in it stops a key reader
/// before its closing quote: the parser then reads that key without scanning it again.
#[inline]
pub(super) fn value_quote_noting_key(
    bytes: &[u8],
    after: usize,
    closers: &[u8],
    fence: bool,
    words: bool,
    next_key: &mut Option<(usize, usize)>,
) -> Verdict {
    if closers.last() == Some(&b'}')
        && bytes.get(after) == Some(&b',')
        && let Some(k) = skip_gap(bytes, after + 1)
        && let Some(quote @ (Quote::Double | Quote::Single)) = Quote::at(bytes, k)
        && !(quote == Quote::Double && bytes[k..].starts_with(b"\"\"\""))
        && key_then_colon(bytes, k, quote, next_key)
    {
        return Verdict::Closes;
    }
    judge_value_quote(bytes, after, closers, fence, words)
}

/// `token_then(bytes, k, quote, b":", true)` for the key opened by `quote` (`"` or `'`) at `k`.
/// The common key has nothing before its closing quote that the key reader stops at (an escape,
/// a raw control character): found with the key reader's own scan, within [`MAX_TOKEN`] as
/// [`token_end`] looks, it is where [`token_end`] ends too, and it is noted in `next_key`.
/// Any other key is judged by [`token_then`] itself.
#[inline]
fn key_then_colon(
    bytes: &[u8],
    k: usize,
    quote: Quote,
    next_key: &mut Option<(usize, usize)>,
) -> bool {
    let delimiter = quote.scan_byte();
    let limit = (k + 1 + MAX_TOKEN).min(bytes.len());
    let close = scan::find_string_special(&bytes[..limit], k + 1, delimiter);
    if close < limit && bytes[close] == delimiter {
        *next_key = Some((k, close));
        return followed_by(bytes, close + 1, b":");
    }
    token_then(bytes, k, quote, b":", true)
}

/// [`value_quote`] in full.
#[inline(never)]
fn judge_value_quote(
    bytes: &[u8],
    after: usize,
    closers: &[u8],
    fence: bool,
    words: bool,
) -> Verdict {
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
        // A closer of the other kind that matches the container below (`[{"a": "b"], …`,
        // `["a"}, {…}]`): the innermost closer is missing, and the parser closes both.
        if (b == b'}' || b == b']') && depth >= 2 && closers[depth - 2] == b {
            depth -= 2;
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
            return after_comma(bytes, p + 1, top, words);
        }
        // A missing comma: the next member (objects) or element (arrays) follows at once. The
        // token must end within the text: a quoted word ending the value (`"say "hi""}`) leaves
        // only `"}`, which is not a key.
        let next = match Quote::at(bytes, p) {
            Some(q) if top == b'}' => token_then(bytes, p, q, b":", false),
            // Another string may follow with its comma missing too (`["a" "b" "c"]`, `["b" 1`).
            Some(q) => {
                token_then(bytes, p, q, b",]\"'", false) || token_then_element(bytes, p, q, words)
            }
            None if top == b'}' => scan::is_key_start(b) && bare_member(bytes, p),
            // A word right after the quote (`["hello, "world"]`) is that string's content, not
            // an element: only a word after a blank ends the string.
            None => bare_element(bytes, p) || (words && p > after && word_element(bytes, p)),
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
        Some(q) => opens_member(bytes, p, q) || member_missing_colon(bytes, p, q),
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

/// What a comma at `p` in a container closed by `top` says about the quote before it: a member
/// (objects) or an element (arrays) after it closes the string; an array where a key belongs,
/// or junk before a member, swallows structure either way ([`Verdict::Swallows`]).
fn after_comma(bytes: &[u8], p: usize, top: u8, words: bool) -> Verdict {
    let verdict = comma_then(bytes, p, top, words);
    if verdict == Verdict::Content
        && skip_gap(bytes, p).is_some_and(|q| junk_then_member(bytes, q, top))
    {
        return Verdict::Swallows;
    }
    verdict
}

/// The longest junk [`junk_then_member`] looks past.
const MAX_JUNK: usize = 16;

/// Whether a short run of junk, then a member (in an object closed by `top` = `}`) or a whole
/// string element (in an array), starts at `p`, after a comma.
///
/// - Detects: a few bytes with no quote in them, then a quoted key, its colon and a value:
///   `"src/",] "case": true`, `",\ "path": …`, `",``` "path": …`, `", True"path": …`,
///   `",\u00e9 "k": …`, `",,} "k": …`; in an array, a string and its `,` or `]`:
///   `["handler", \"number"]`.
/// - Does: the quote before the comma is [`Verdict::Swallows`]. Taken as content, the string
///   swallows the member (`path` = `src/",] "case": true`); taken as the closer, junk stands
///   where a key belongs. Neither holds, so the text is refused.
/// - Never fires when: no junk comes first (a member after a comma closes the string), the run
///   holds a quote or is longer than [`MAX_JUNK`] bytes, or no member follows it
///   (`"say "a", -1 more"` stays content).
/// - Example: `{"path": "src/",] "recursive": true}` → refused.
fn junk_then_member(bytes: &[u8], p: usize, top: u8) -> bool {
    let end = bytes.len().min(p + MAX_JUNK + 1);
    let Some(k) = bytes[p..end].iter().position(|&b| b == b'"' || b == b'\'') else {
        return false;
    };
    k > 0
        && Quote::at(bytes, p + k).is_some_and(|q| match top {
            b'}' => opens_member(bytes, p + k, q),
            _ => token_before(bytes, p + k, q, b",]"),
        })
}

/// [`after_comma`] before the junk check.
fn comma_then(bytes: &[u8], p: usize, top: u8, words: bool) -> Verdict {
    let closes = |yes: bool| {
        if yes {
            Verdict::Closes
        } else {
            Verdict::Content
        }
    };
    let Some(p) = skip_gap(bytes, p) else {
        return Verdict::Closes;
    };
    let Some(&b) = bytes.get(p) else {
        return Verdict::Closes;
    };
    if b == top {
        return Verdict::Closes; // a trailing comma
    }
    match (top, Quote::at(bytes, p)) {
        // A run of three or more quotes where a key belongs (`"sic"}, """" "lorem": …`): taken
        // as content the string swallows `}, """`, taken as the closer junk stands where a key
        // belongs. Neither holds: refused, not guessed.
        (b'}', Some(Quote::Double)) if bytes[p..].starts_with(b"\"\"\"") => Verdict::Swallows,
        (b'}', Some(q))
            if token_then(bytes, p, q, b":", true) || member_missing_colon(bytes, p, q) =>
        {
            Verdict::Closes
        }
        // A key with no value (`"b", "c"}`, `"b", "c", "d": 1`): see `token_before`.
        (b'}', Some(q)) if token_before(bytes, p, q, b",}") => Verdict::Swallows,
        // A key with a stray or escaped quote in it (`"tim"eout": 1`): see `broken_key`.
        (b'}', Some(q)) if broken_key(bytes, p, q) || key_then_junk(bytes, p, q) => {
            Verdict::Swallows
        }
        (b'}', Some(_)) => Verdict::Content,
        (b'}', None) if b == b'[' && array_value(bytes, p) => Verdict::Swallows,
        (b'}', None) if scan::is_key_start(b) => {
            let end = scan::key_end(bytes, p);
            // A key missing its opening quote (`,b":`) is a key too, as the parser reads it.
            let end = if bytes.get(end) == Some(&b'"') {
                end + 1
            } else {
                end
            };
            // A bare word before a quoted key (`, COMMENT "notes": …`): the member is there, and
            // the parser refuses the word.
            let word_then_key = || {
                skip_gap(bytes, end)
                    .filter(|&k| k > end)
                    .and_then(|k| Some((k, Quote::at(bytes, k)?)))
                    .is_some_and(|(k, q)| opens_member(bytes, k, q))
            };
            closes(end - p > MAX_TOKEN || followed_by(bytes, end, b":") || word_then_key())
        }
        (b'}', None) => Verdict::Content,
        // `}` too: a closer of the wrong kind the parser reads as `]` (`["a", "b"}, "c": 1}`).
        (_, Some(q))
            if token_then(bytes, p, q, b",]}", true) || token_then_element(bytes, p, q, words) =>
        {
            Verdict::Closes
        }
        // A key where an element belongs (`["a", "b": 1]`): see `token_before`.
        (_, Some(q)) if token_before(bytes, p, q, b":") => Verdict::Swallows,
        (_, Some(_)) => Verdict::Content,
        (_, None) => closes(
            matches!(
                b,
                b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'T' | b'F' | b'N'
            ) || (words && word_element(bytes, p)),
        ),
    }
}

/// Whether an array value starts at the `[` at `p`, after a comma in an object.
///
/// - Detects: an array where a key belongs (`"value3", ["arrayvalue1"] }`, or a missing `[`
///   before `"r3a", "r3b"], [`): whole arrays of quoted tokens, numbers, literals and arrays
///   (at most [`MAX_ARRAYS`] in a row, each within [`MAX_ARRAY`] bytes), then the end of the
///   text, a member, or closers before a comma or the end.
/// - Does: makes the quote before the comma [`Verdict::Swallows`]: the content reading would
///   swallow the array, the closing reading leaves it out of place, so the text is refused.
/// - Never fires when: the arrays go on with something else, as code does (`f("a", ["b"])`,
///   `f("a", ["b"], 1)`, `x = ["a", ["b"]]"`).
/// - Example: `{"a": "x", ["y"] }` → refused; `{"c": "f("a", ["b"])"}` → one string.
fn array_value(bytes: &[u8], mut p: usize) -> bool {
    for _ in 0..MAX_ARRAYS {
        let Some(end) = array_end(bytes, p) else {
            return false;
        };
        let Some(next) = skip_gap(bytes, end) else {
            return false;
        };
        match bytes.get(next) {
            None => return true,
            Some(b',') => {
                let Some(q) = skip_gap(bytes, next + 1) else {
                    return false;
                };
                match (bytes.get(q), Quote::at(bytes, q)) {
                    (None, _) => return true,
                    (Some(b'['), _) => p = q,
                    (_, Some(quote)) => return opens_member(bytes, q, quote),
                    _ => return false,
                }
            }
            Some(b'}' | b']') => return closers_then_end(bytes, next),
            Some(_) => return false,
        }
    }
    true
}

/// Whether the closers at `p` (with blanks between) reach the end of the text or a comma.
fn closers_then_end(bytes: &[u8], mut p: usize) -> bool {
    for _ in 0..MAX_ARRAYS {
        p += 1;
        let Some(next) = skip_gap(bytes, p) else {
            return false;
        };
        match bytes.get(next) {
            None | Some(b',') => return true,
            Some(b'}' | b']') => p = next,
            Some(_) => return false,
        }
    }
    false
}

/// Where the array opened at `p` ends (after its `]`), when it holds only quoted tokens,
/// numbers, literals and arrays and ends within [`MAX_ARRAY`] bytes.
fn array_end(bytes: &[u8], p: usize) -> Option<usize> {
    let limit = p + MAX_ARRAY;
    let mut depth = 0usize;
    let mut i = p;
    loop {
        i = skip_gap(bytes, i)?;
        if i >= limit {
            return None;
        }
        let b = *bytes.get(i)?;
        i = match (b, Quote::at(bytes, i)) {
            (b'[', _) => {
                depth += 1;
                i + 1
            }
            (b']', _) => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
                i + 1
            }
            (b',', _) => i + 1,
            (_, Some(quote)) => token_end(bytes, i, quote).ok()?,
            (b'-' | b'0'..=b'9', _) => scan::number_end(bytes, i),
            (b'a'..=b'z' | b'A'..=b'Z', _) => {
                let end = scan::word_end(bytes, i);
                if !matches!(
                    &bytes[i..end],
                    b"true" | b"false" | b"null" | b"True" | b"False" | b"None"
                ) {
                    return None;
                }
                end
            }
            _ => return None,
        };
    }
}

/// Whether the quoted token at `p` is followed by a non-string element: an array's elements with
/// their commas missing.
///
/// - Detects: `"b"` then a number, literal or container (`["a" "b" 1`), or (`words`) a bare word
///   closed by a quote (`["a", "b" c"]`).
/// - Does: lets the quote before the token close its string, as `"a" "b"` already does.
/// - Never fires when: prose follows the token (`["say "hi" twice"]`).
/// - Example: `["a" "b" "c" 1` → `["a", "b", "c", 1]`.
fn token_then_element(bytes: &[u8], p: usize, quote: Quote, words: bool) -> bool {
    token_end(bytes, p, quote)
        .ok()
        .and_then(|end| skip_gap(bytes, end))
        .is_some_and(|next| {
            next < bytes.len()
                && (bare_element(bytes, next) || (words && word_element(bytes, next)))
        })
}

/// A bare word at `p` in an array that ends the element.
///
/// - Detects: a word followed by a quote and then `,` or `]` (`["value1" value2", …]`, an
///   element missing its opening quote, which the parser reads), or by `]` itself (`["a"
///   comment]`, which the parser refuses rather than let the string swallow `],"good_one": [`).
/// - Does: lets the quote before the word close its string.
/// - Never fires when: the word goes on (`["He said "go" now, then left"]`), or after a quote
///   already taken as content (the caller's `words`).
/// - Example: `["value1" value2", "value3"]` → three strings.
fn word_element(bytes: &[u8], p: usize) -> bool {
    if !scan::is_key_start(bytes[p]) {
        return false;
    }
    let end = scan::key_end(bytes, p);
    if end - p > MAX_TOKEN || end >= bytes.len() {
        return false;
    }
    if bytes[end] == b'"' {
        return end + 1 < bytes.len() && followed_by(bytes, end + 1, b",]");
    }
    skip_gap(bytes, end).is_some_and(|q| bytes.get(q) == Some(&b']'))
}

/// Whether the quote at `p` opens a member: a quoted key, its `:` and the start of a value.
/// Used to see a string value's missing closing quote before `, "key": …`.
pub(super) fn opens_member(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let Ok(end) = token_end(bytes, p, quote) else {
        return false;
    };
    let Some(colon) = skip_gap(bytes, end) else {
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
    whole && (end == bytes.len() || followed_by(bytes, end, next))
}

/// Whether the quoted token opened by `quote` at `p` ends and is followed by one of `next`, or
/// the token is too long to judge; when the text ends inside it, `at_end` (a cut key after a
/// comma is plausible, a cut key after a missing comma is not).
fn token_then(bytes: &[u8], p: usize, quote: Quote, next: &[u8], at_end: bool) -> bool {
    match token_end(bytes, p, quote) {
        Ok(end) => followed_by(bytes, end, next),
        Err(TokenEnd::TooLong) => true,
        Err(TokenEnd::Cut) => at_end,
    }
}

/// Whether the quoted token opened by `quote` at `p` ends within reach and one of `next`
/// follows it (a byte must be there: at the end of the text the token may be cut).
///
/// - Detects, after a comma and a quote that may end a string value: a quoted key with no
///   value before the object's `}` or the next comma (`{"a": "b", "c"}`), or a quoted key and
///   its colon where an array element belongs (`["a", "b": 1]`).
/// - Does: the quote before the comma is [`Verdict::Swallows`]. Taken as content, the string
///   swallows `, "c"` (a silently wrong value); taken as the closer, a key stands without its
///   value or an object without its `{`. Neither holds, so the text is refused.
/// - Never fires when: the token goes on with prose (`"say "a", "b" now"`), another closer
///   (`x = ["a", "b"]` in an object), or the text ends after it.
/// - Example: `{"a": "b", "c"}` → refused (was `a` = `b", "c`).
fn token_before(bytes: &[u8], p: usize, quote: Quote, next: &[u8]) -> bool {
    token_end(bytes, p, quote).is_ok_and(|end| {
        skip_gap(bytes, end).is_some_and(|q| bytes.get(q).is_some_and(|b| next.contains(b)))
    })
}

/// Whether the `quote` at `p`, after a comma in an object, opens a key with a stray or escaped
/// quote in it: a quote, then blanks, then a `:` come before any `,`, bracket, brace or line
/// break, within [`MAX_TOKEN`] bytes (the key read to its first quote is not followed by `:`,
/// or the caller would have closed the string; junk after that first quote is
/// [`key_then_junk`]'s).
///
/// - Detects: `"tim"eout_ms": 30000`, `"timeout_ms"": 1`, `"timeout_ms\": 1` after a comma
///   that follows a string value.
/// - Does: the quote before the comma is [`Verdict::Swallows`]. Taken as content, the string
///   swallows the member (a bash `command` that ends in `", "tim"eout_ms": 30000`); taken as
///   the closer, the key is broken. Neither holds, so the text is refused.
/// - Never fires when: a colon inside the quoted text follows a letter (`"note: x"`), or a
///   structural byte comes first.
/// - Example: `{"cmd": "ls", "tim"eout": 5}` → refused (was `cmd` = `ls", "tim"eout": 5`).
fn broken_key(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let body = (p + quote.len()).min(bytes.len());
    let end = bytes.len().min(body + MAX_TOKEN);
    let Some(stop) = bytes[body..end]
        .iter()
        .position(|b| matches!(b, b',' | b'{' | b'}' | b'[' | b']' | b'\n' | b':'))
    else {
        return false;
    };
    bytes[body + stop] == b':'
        && matches!(
            bytes[body..body + stop].trim_ascii_end().last(),
            Some(b'"' | b'\'')
        )
}

/// Whether the quoted token opened by `quote` at `p` is a key with junk before its colon: a
/// short run with no quote, comma, bracket, brace or line break, then `:`
/// (`"start_line"]: 147`, `"start_line" True: 147`, `"start_line"\: 147`). Like [`broken_key`], the quote before
/// the comma then swallows a member either way, so the text is refused.
fn key_then_junk(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let Ok(end) = token_end(bytes, p, quote) else {
        return false;
    };
    let limit = bytes.len().min(end + MAX_JUNK + 1);
    bytes[end..limit]
        .iter()
        .position(|&b| matches!(b, b':' | b'"' | b'\'' | b',' | b'{' | b'[' | b'\n'))
        .is_some_and(|i| {
            i > 0 && bytes[end + i] == b':' && !bytes[end..end + i].trim_ascii().is_empty()
        })
}

/// Why a quoted token has no end within reach.
enum TokenEnd {
    /// It runs past [`MAX_TOKEN`] bytes.
    TooLong,
    /// The text ends inside it.
    Cut,
}

/// Where the quoted token opened by `quote` at `p` ends: right after its closing quote.
fn token_end(bytes: &[u8], p: usize, quote: Quote) -> Result<usize, TokenEnd> {
    let mut i = p + quote.len();
    let limit = (i + MAX_TOKEN).min(bytes.len());
    while i < limit {
        i = scan::find_quote_or_backslash(bytes, i, limit, quote.scan_byte());
        if i == limit {
            break;
        }
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if quote.closes_at(bytes, i) {
            return Ok(i + quote.len());
        }
        i += 1;
    }
    Err(if i < bytes.len() {
        TokenEnd::TooLong
    } else {
        TokenEnd::Cut
    })
}

/// Whether a member missing its colon starts at `p`: a quoted key (opened by `quote`), then,
/// after blanks, a quoted value that ends and is followed by `,` or `}` (`"key2" "value2"}`).
/// The parser reads it as that member (`colon_inserted`); a string before it ends before it.
pub(super) fn member_missing_colon(bytes: &[u8], p: usize, quote: Quote) -> bool {
    let Ok(end) = token_end(bytes, p, quote) else {
        return false;
    };
    skip_gap(bytes, end)
        .filter(|&v| v > end)
        .and_then(|v| Some((v, Quote::at(bytes, v)?)))
        .is_some_and(|(v, value)| is_member_value(bytes, v, value))
}

/// Whether the quoted token at `p` is a whole member value: it ends and `,` or `}` follows.
pub(super) fn is_member_value(bytes: &[u8], p: usize, quote: Quote) -> bool {
    token_then(bytes, p, quote, b",}", false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::salvage::scan::MAX_GAP;

    fn verdict(rest: &str, closers: &[u8]) -> Verdict {
        value_quote(rest.as_bytes(), 0, closers, false, true)
    }

    proptest::proptest! {
        /// The inlined shape (`", "key":`) answers as the full judgement does, for what follows
        /// a quote built from the bytes that steer both.
        #[test]
        fn the_common_shape_is_judged_as_in_full(
            rest in concat!(
                "(,[ \n]{0,2}[\"']{1,3}[a-c\\\\\"' ]{0,5}[\"'] ?:?[, \"a}\\]]{0,4})",
                "|([,: \"'\\\\a-c\\]}\\[{\n]{0,24})",
                "|([ \n]{0,2}[}\\]][ \n]{0,2}(```)?[ a,{+\"]{0,3})",
            ),
            closers in "[}\\]]{1,3}",
        ) {
            let bytes = rest.as_bytes();
            for (words, fence) in [(false, false), (true, false), (false, true), (true, true)] {
                proptest::prop_assert_eq!(
                    value_quote(bytes, 0, closers.as_bytes(), fence, words),
                    judge_value_quote(bytes, 0, closers.as_bytes(), fence, words)
                );
            }
        }
    }

    proptest::proptest! {
        /// A key the inlined shape notes is where the key reader's own scan from its opening
        /// quote stops, at its closing quote; the verdict is the one without the note.
        #[test]
        fn a_noted_key_ends_where_the_key_reader_stops(
            rest in "(,[ \n]{0,2}[\"'][a-c\\\\\"'\n\t ]{0,6}[\"'] ?:?[, \"a}]{0,3})",
            closers in "[}\\]]{1,3}",
        ) {
            let bytes = rest.as_bytes();
            let mut noted = None;
            let verdict = value_quote_noting_key(bytes, 0, closers.as_bytes(), false, true, &mut noted);
            proptest::prop_assert_eq!(verdict, value_quote(bytes, 0, closers.as_bytes(), false, true));
            if let Some((open, close)) = noted {
                let delimiter = bytes[open];
                proptest::prop_assert!(delimiter == b'"' || delimiter == b'\'');
                proptest::prop_assert_eq!(scan::find_string_special(bytes, open + 1, delimiter), close);
                proptest::prop_assert_eq!(bytes[close], delimiter);
            }
        }
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
        assert_eq!(value_quote(b"}\n```", 0, b"}", true, true), Verdict::Closes);
    }

    #[test]
    fn a_quote_run_where_a_key_belongs_swallows() {
        assert_eq!(
            verdict("}, \"\"\"\" \"lorem\": 1}]", b"]}}"),
            Verdict::Swallows
        );
        assert_eq!(verdict(", \"\"\" \"b\": 1}", b"}"), Verdict::Swallows);
        // An empty key is a key.
        assert_eq!(verdict(", \"\": 1}", b"}"), Verdict::Closes);
    }

    #[test]
    fn an_array_where_a_key_belongs_swallows() {
        for (rest, closers) in [
            (", [\"arrayvalue1\"] }", &b"}"[..]),
            ("], [\"r4a\", \"r4b\"]]}", b"}]"),
            (", [[4, 5], [6]] }", b"}"),
        ] {
            assert_eq!(verdict(rest, closers), Verdict::Swallows, "{rest:?}");
        }
        // Code: the `]` goes on with `)`, `, 1)` or `]"`.
        for rest in [
            ", [\"b\"])\"}",
            ", [\"b\", \"c\"], 1)\"}",
            ", [\"b\"], [\"c\"]]\"}",
        ] {
            assert_eq!(verdict(rest, b"}"), Verdict::Content, "{rest:?}");
        }
    }

    #[test]
    fn elements_missing_a_comma_or_an_opening_quote_close() {
        assert_eq!(verdict(" \"c\" 1", b"]"), Verdict::Closes);
        assert_eq!(verdict(" 1", b"]"), Verdict::Closes);
        assert_eq!(verdict(" value2\", \"v\"]", b"]"), Verdict::Closes);
        assert_eq!(verdict(" comment]", b"]"), Verdict::Closes);
        assert_eq!(verdict(", value2\", \"v\"]", b"]"), Verdict::Closes);
        // Only for the first quote of a string.
        let rest = b" there\"]";
        assert_eq!(value_quote(rest, 0, b"]", false, false), Verdict::Content);
        // A word right after the quote is content.
        assert_eq!(verdict("world\"]", b"]"), Verdict::Content);
        assert_eq!(verdict(" now, then\"]", b"]"), Verdict::Content);
    }

    #[test]
    fn a_closer_matching_the_container_below_closes_both() {
        assert_eq!(verdict("], \"key2\": 1}", b"}]}"), Verdict::Closes);
        assert_eq!(verdict("}, {\"p\": 1}]}", b"}]}]"), Verdict::Closes);
    }

    #[test]
    fn a_bare_word_before_a_quoted_key_closes() {
        assert_eq!(verdict(", COMMENT \"notes\": 1}", b"}"), Verdict::Closes);
        assert_eq!(verdict(", and \"more\" words\"}", b"}"), Verdict::Content);
    }

    #[test]
    fn long_gaps_and_tokens_give_the_benefit_of_the_doubt() {
        let gap = format!("{}x", " ".repeat(MAX_GAP + 10));
        assert_eq!(verdict(&gap, b"}"), Verdict::Closes);
        let key = format!(", \"{}\" x", "k".repeat(MAX_TOKEN + 10));
        assert_eq!(verdict(&key, b"}"), Verdict::Closes);
    }
}
