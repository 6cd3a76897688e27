//! Strings: delimiters, escapes and raw characters, with the content policies.
//!
//! - An escape JSON does not know keeps its backslash: `C:\Users` reads as `C:\Users`, never
//!   `C:Users` (and `\uZZZZ` or a lone surrogate stays as written).
//! - `\'` reads as `'` (`quotes_normalized`); `\\\"` is a backslash and a quote, as in JSON.
//! - Raw control characters (newlines, tabs) are kept as the characters they are
//!   (`control_char_escaped`).
//! - A quote inside a value is content unless the bounded look-ahead says it closes the string
//!   ([`super::lookahead`]). Keys always end at their first quote.
//! - `'…'` and `“…”` are string delimiters (`quotes_normalized`).
//! - At the end of the text the string read so far is returned as cut off.

use super::Parser;
use super::lookahead::{self, Verdict};
use crate::RepairKind;
use crate::salvage::node::{Spelt, Str as Text};
use crate::salvage::scan::{self, Quote};

/// Most blanks between a comma and the key after it for a missing closing quote to be seen.
const MAX_BLANKS_BEFORE_KEY: usize = 16;
/// Most bytes of a bare key read backwards from its colon (`"first, b: "second"`).
const MAX_BARE_KEY: usize = 64;
/// Most blanks read backwards at the end of the text around a run of closers.
const MAX_BLANKS_AT_END: usize = 64;

/// A string read from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Str {
    /// Closed by its delimiter.
    Closed(String),
    /// The text ended inside it; what was read so far (a partial escape is dropped).
    Cut(String),
    /// Refused at the offset of a quote. The text ended inside it, but an escaped quote in it
    /// was followed by what closes the string (`"C:\\me\\"}`): the string was probably closed
    /// by a raw backslash and a quote, so closing it at the end of the text would keep the
    /// delimiters as content. Or a quote neither closes it nor is content
    /// ([`Verdict::Swallows`], an array element `"key":`).
    Broken(usize),
}

/// What the escapes of one string have shown so far.
#[derive(Debug, Default)]
struct Escapes {
    /// An escape JSON does not know was read: the model wrote raw backslashes in this string,
    /// so `\n` or `\t` in it are a backslash and a letter too (`C:\Users\new`).
    raw: bool,
    /// Where `\b \f \n \r \t` were decoded into the output, with their letter, while `raw`
    /// was not yet known.
    decoded: Vec<(usize, u8)>,
    /// An escaped quote that the look-ahead would have taken as the closer.
    escaped_closer: Option<usize>,
}

/// Where a string stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// An object key: ends at its first closing quote.
    Key,
    /// A value: a quote ends it only when the look-ahead agrees.
    Value,
}

/// How a backslash sequence was read.
enum Escape {
    /// Read; the parser is past it.
    Read,
    /// The text ended inside it.
    Cut,
}

impl Parser<'_> {
    /// Reads the common key, `"name"` or `'name'`, opened by `quote` at the current position:
    /// nothing to decode before its closing quote, which ends a key wherever it is, so it is
    /// copied at once, as [`Self::read_string`] would end up. `None`, with nothing consumed or
    /// logged, for any other key (an escape, a raw control character, `“…”`), and for a key the
    /// text ends inside (see [`Self::read_plain_key_span`]). Inlined into the key reader: one call per key of every call, and a call of its
    /// own cost ~40 instructions of a ~200-instruction key.
    #[inline(always)]
    pub(super) fn read_plain_key(&mut self, quote: Quote) -> Option<String> {
        let content = self.read_plain_key_span(quote)?;
        Some(content.into_string(self.text))
    }

    /// [`Self::read_plain_key`], giving the key as a span of the text instead of a copy of it,
    /// with how that text stands against what serde_json writes for it: a `"` inside `'…'` is
    /// found by the same scan, so the text is written without an escaping pass when there is
    /// none. A key the text ends inside with nothing to decode is `None` too, but noted as cut
    /// ([`Memo::note_cut_key`](crate::salvage::memo::Memo)), with the `quotes_normalized` of a
    /// `'…'` key logged, as the key reader would log it.
    #[inline(always)]
    pub(super) fn read_plain_key_span(&mut self, quote: Quote) -> Option<Text> {
        let open = self.pos;
        let (close, spelt) = match quote {
            // The look-ahead at the string value before it may have read this key already.
            Quote::Double => match self.next_key {
                Some((at, close)) if at == open => (close, Spelt::Quoted),
                _ => (
                    scan::find_string_special(self.bytes, open + 1, b'"'),
                    Spelt::Quoted,
                ),
            },
            // The same for `'`: the look-ahead's scan stopped at none of `'`, `\` or a control
            // character before that quote, so only a `"` (content, escaped when written) may
            // stand before it, which a search of the key's few bytes tells.
            Quote::Single => match self.next_key {
                Some((at, close)) if at == open => {
                    // A loop, not `contains` (a `memchr` call): a key is a few bytes.
                    #[allow(clippy::manual_contains)]
                    let spelt = if self.bytes[open + 1..close].iter().any(|&b| b == b'"') {
                        Spelt::Escaped
                    } else {
                        Spelt::Single
                    };
                    (close, spelt)
                }
                _ => self.single_key_end(open),
            },
            Quote::Smart => return None,
        };
        let Some(&b) = self.bytes.get(close) else {
            // The text ends inside the key with nothing to decode (`{"a": 1, "backgro`): it is
            // cut, as the full reader finds after copying it to the end. Noted, with what that
            // reader logs, so that the key reader closes the text at once (issue #31).
            if quote != Quote::Double {
                self.log.note(RepairKind::QuotesNormalized, open);
            }
            self.memo.note_cut_key(open);
            return None;
        };
        if b != quote.scan_byte() {
            return None;
        }
        if quote != Quote::Double {
            self.log.note_each(RepairKind::QuotesNormalized, open);
        }
        self.closed_at(open, close, close + 1);
        Some(Text::Span {
            start: open + 1,
            end: close,
            spelt,
        })
    }

    /// Where the `'…'` key opened at `open` ends, as the key reader scans it (the first `'`,
    /// `\` or control character after it, past a `"`), and how its text is spelt.
    fn single_key_end(&self, open: usize) -> (usize, Spelt) {
        let at = scan::find_single_special(self.bytes, open + 1);
        if self.bytes.get(at) == Some(&b'"') {
            let close = scan::find_string_special(self.bytes, at + 1, b'\'');
            (close, Spelt::Escaped)
        } else {
            (at, Spelt::Single)
        }
    }

    /// Reads the string whose opening `quote` is at the current position.
    pub(super) fn read_string(&mut self, quote: Quote, role: Role) -> Str {
        if role == Role::Key {
            if let Some(key) = self.read_plain_key(quote) {
                return Str::Closed(key);
            }
            if self.memo.key_is_cut(self.pos) {
                // Cut with nothing to decode: what it holds is never kept, so it is not copied.
                self.pos = self.bytes.len();
                return Str::Cut(String::new());
            }
        }
        if quote != Quote::Double {
            self.log.note(RepairKind::QuotesNormalized, self.pos);
        }
        let open = self.pos;
        self.pos += quote.len();
        let mut out = String::new();
        let mut hinted = false;
        let mut escapes = Escapes::default();
        // A quote was kept as content in this string.
        let mut content_quote = false;
        loop {
            let i = scan::find_string_special(self.bytes, self.pos, quote.scan_byte());
            out.push_str(&self.text[self.pos..i]);
            self.pos = i;
            let Some(&b) = self.bytes.get(i) else {
                if role == Role::Value && escapes.escaped_closer.is_none() {
                    if let Some(s) = self.closed_before_end(open + quote.len(), &mut out) {
                        return s;
                    }
                }
                return cut_string(out, &escapes);
            };
            if !hinted && b != quote.scan_byte() {
                hinted = true;
                // More than one chunk: reserve up to the next delimiter at once instead of
                // growing chunk by chunk (the delimiter may be escaped, so this is a floor; with no
                // delimiter left, the text was cut and the rest of it is the string).
                // Once per string, so the search stays linear.
                let next = memchr::memchr(quote.scan_byte(), &self.bytes[i..])
                    .unwrap_or(self.bytes.len() - i);
                out.reserve(next + 16);
            }
            if b == b'\\' {
                match self.escape(&mut out, quote, role, &mut escapes) {
                    Escape::Read => continue,
                    Escape::Cut => return cut_string(out, &escapes),
                }
            }
            if b < 0x20 {
                self.log.note(RepairKind::ControlCharEscaped, i);
                out.push(char::from(b));
                self.pos += 1;
                continue;
            }
            if !quote.closes_at(self.bytes, i) {
                // The lead byte of some other character (a smart string's scan byte).
                let ch = self.text[i..].chars().next().unwrap_or('\u{fffd}');
                out.push(ch);
                self.pos += ch.len_utf8();
                continue;
            }
            let after = i + quote.len();
            if role == Role::Value && !content_quote && self.key_in_array(after) {
                if self.readings.lenient_scalars
                    && self.bytes[..open].trim_ascii_end().last() == Some(&b'[')
                {
                    self.pos = after;
                    return Str::Closed(out);
                }
                return Str::Broken(i);
            }
            // A document's stray quote on its own line before a member's end (`"hello⏎"⏎",`):
            // the first quote closes and the stray one goes, json_repair's reading. Not in a
            // string holding a code fence, where json_repair keeps the quote as content, nor
            // after a quote already taken as content (`"x⏎ "y"⏎",`).
            if role == Role::Value
                && self.readings.lenient_scalars
                && !content_quote
                && let Some(end) = stray_quote_line(self.bytes, after)
                && !out.contains("```")
            {
                self.log.note(RepairKind::QuotesNormalized, end - 1);
                self.pos = end;
                return Str::Closed(out);
            }
            let closes = match role {
                Role::Key => true,
                Role::Value => match self.quote_closes(i, after, &out, !content_quote) {
                    Some(closes) => closes,
                    None => return Str::Broken(i),
                },
            };
            if closes {
                self.closed_at(open, i, after);
                return Str::Closed(out);
            }
            if role == Role::Value
                && let Some(comma) = self.missing_close_before(open, i, quote)
            {
                if self.insert_quotes {
                    // The bytes from the comma to this quote are plain (`,` and blanks), copied
                    // as they are: cut them off and end the string before the comma.
                    out.truncate(out.len() - (i - comma));
                    self.log.note(RepairKind::QuoteInserted, comma);
                    self.pos = comma;
                    return Str::Closed(out);
                }
                self.quote_insertable = true;
            }
            self.log.note(RepairKind::QuotesNormalized, i);
            out.push_str(&self.text[i..after]);
            content_quote = true;
            self.pos = after;
        }
    }

    /// The string opened at `open` closes at its quote `close`: the run goes on at `after`, and
    /// notes whether the string holds a quote an earlier attempt took as content.
    fn closed_at(&mut self, open: usize, close: usize, after: usize) {
        if self.content_quotes.iter().any(|&q| open < q && q < close) {
            let next = scan::skip_ws(self.bytes, after);
            self.extended_member |= self.bytes.get(next) == Some(&b',');
        }
        self.pos = after;
    }

    /// Closes a string value the text ended inside before the run of closers it ends with, when
    /// that run closes every open container: the closing quote is missing, the text is whole.
    ///
    /// - Detects: the text ends (after blanks and a closing fence) with exactly the closers of
    ///   the open containers, innermost first (`{"key": ["value]}`, `{"a": "fox. }`).
    /// - Does: in the second reading ([`Parser::insert_quotes`]), ends the string before that run
    ///   and its blanks (`quote_inserted`), so the closers close the containers; the first
    ///   reading (cut off and closed) travels along as the alternative for the schema to judge.
    ///   Both readings stay flagged as truncated: the text may as well have been cut there.
    /// - Never fires when: the run is missing a closer or has one too many, or the content
    ///   before it opens a bracket it does not close (`"function() { return 1; }` is cut code).
    /// - Example: `{"key": ["value]}` → `{"key": ["value"]}`.
    fn closed_before_end(&mut self, body: usize, out: &mut String) -> Option<Str> {
        let run = closer_run_at_end(self.bytes, body, &self.closers)?;
        let content = out.len().checked_sub(self.bytes.len() - run)?;
        if opens_a_bracket(&out[..content]) {
            return None;
        }
        if !self.insert_quotes {
            self.quote_insertable = true;
            return None;
        }
        // A document (json_repair's reading): a bare member inside what is left ends the
        // string before its comma (`{"a": "first, b: 1}`), and the parser reads the member.
        let end = if self.readings.lenient_scalars {
            bare_member_in(self.bytes, body, run).unwrap_or(run)
        } else {
            run
        };
        let content = out.len().checked_sub(self.bytes.len() - end)?;
        out.truncate(content);
        self.closed_at_end = true;
        self.log.note(RepairKind::QuoteInserted, end);
        self.pos = end;
        Some(Str::Closed(std::mem::take(out)))
    }

    /// Whether the first quote of an array element is followed by `:`.
    ///
    /// - Detects: `["key": "value"]`, `['a': {…}]`: an object whose `{` is missing, or two
    ///   strings whose comma is; which one cannot be told.
    /// - Does: the string is refused ([`Str::Broken`]), so the call is invalid rather than one
    ///   string that swallowed the colon.
    /// - Never fires when: the string is an object's value, a quote in it was already taken
    ///   as content (`["note "x": y"]` is prose). A document's array that opens with such a
    ///   string ends the string there instead: the parser opens the object (`opener_inserted`).
    /// - Example: `["key":"value"]` → refused.
    fn key_in_array(&self, after: usize) -> bool {
        self.closers.last() == Some(&b']')
            && self.bytes.get(scan::skip_ws(self.bytes, after)) == Some(&b':')
    }

    /// Where the closing quote of the string value opened at `open` is missing, if the content
    /// quote at `at` opens a key of the innermost object right after a comma (`"New York,
    /// "gender": "male"}`), or a whole string element of the innermost array (`["a, "b"]`):
    /// the comma's offset. Bounded: a few blanks back, one key or element forward.
    fn missing_close_before(&self, open: usize, at: usize, quote: Quote) -> Option<usize> {
        let in_object = match self.closers.last() {
            Some(b'}') => true,
            Some(b']') => false,
            _ => return None,
        };
        let mut comma = at;
        while comma > open + 1 && at - comma < MAX_BLANKS_BEFORE_KEY {
            comma -= 1;
            match self.bytes[comma] {
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b',' if in_object => {
                    return lookahead::opens_member(self.bytes, at, quote).then_some(comma);
                }
                b',' => {
                    return lookahead::is_element(self.bytes, at, quote).then_some(comma);
                }
                b':' if in_object => return self.bare_key_before(open, comma, at, quote),
                _ => return None,
            }
        }
        None
    }

    /// A bare key and its colon before the content quote at `at`: the offset of the comma
    /// before the key.
    ///
    /// - Detects: `"first, b: "second"}`: `,` a bare key `:` and a whole string followed by `,`
    ///   or `}`, so the string value opened at `open` is missing its closing quote before the
    ///   comma.
    /// - Does: as for `, "key":`, the second reading ends the string at the comma
    ///   (`quote_inserted`), the first travels along for the schema.
    /// - Never fires when: the key is longer than [`MAX_BARE_KEY`], or the string after the
    ///   colon goes on (`"ratio, b: "x" y"`).
    /// - Example: `{"a": "first, b: "second"}` → `{"a": "first", "b": "second"}`.
    fn bare_key_before(&self, open: usize, colon: usize, at: usize, quote: Quote) -> Option<usize> {
        let body = open + 1;
        let mut p = colon;
        while p > body && colon - p < MAX_BLANKS_BEFORE_KEY && scan::is_ws(self.bytes[p - 1]) {
            p -= 1;
        }
        let key_end = p;
        while p > body && key_end - p < MAX_BARE_KEY && scan::is_key_byte(self.bytes[p - 1]) {
            p -= 1;
        }
        if p == key_end || !scan::is_key_start(self.bytes[p]) {
            return None;
        }
        let mut comma = p;
        while comma > body && p - comma < MAX_BLANKS_BEFORE_KEY {
            comma -= 1;
            match self.bytes[comma] {
                b' ' | b'\t' | b'\n' | b'\r' => {}
                b',' => return lookahead::is_member_value(self.bytes, at, quote).then_some(comma),
                _ => return None,
            }
        }
        None
    }

    /// Whether the quote at `at` (ending before `after`) closes the current string value;
    /// `None` when it neither closes it nor is content ([`Verdict::Swallows`]).
    fn quote_closes(&mut self, at: usize, after: usize, read: &str, first: bool) -> Option<bool> {
        if self.content_quotes.contains(&at) {
            return Some(false);
        }
        match lookahead::value_quote(self.bytes, after, &self.closers, self.fence, first) {
            Verdict::Closes => Some(true),
            Verdict::ClosesBeforeProse => {
                self.top_close_quote = Some(at);
                // Once per run: the quote ends the run.
                self.top_close_open_bracket = opens_a_bracket(read);
                Some(true)
            }
            Verdict::Content => Some(false),
            Verdict::Swallows => None,
        }
    }

    /// Reads the backslash sequence at the current position into `out`.
    fn escape(
        &mut self,
        out: &mut String,
        quote: Quote,
        role: Role,
        escapes: &mut Escapes,
    ) -> Escape {
        let i = self.pos;
        let Some(&e) = self.bytes.get(i + 1) else {
            self.pos = self.bytes.len();
            return Escape::Cut;
        };
        if e == b'"' && quote == Quote::Double && role == Role::Value {
            if let Some(escape) = self.escaped_quote(out, escapes) {
                return escape;
            }
        }
        let ch = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' | b'f' | b'n' | b'r' | b't' if escapes.raw => return self.keep_backslash(out),
            b'b' | b'f' | b'n' | b'r' | b't' => {
                escapes.decoded.push((out.len(), e));
                match e {
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    _ => '\t',
                }
            }
            // The shell idiom `'\''` (close, escaped apostrophe, reopen) needs its backslash:
            // without it `echo 'it'\''s'` prints `its`. Other `\'` are over-escaped apostrophes.
            b'\''
                if quote == Quote::Double
                    && i > 0
                    && self.bytes[i - 1] == b'\''
                    && self.bytes.get(i + 2) == Some(&b'\'') =>
            {
                return self.keep_backslash(out);
            }
            b'\'' => {
                if quote != Quote::Single {
                    self.log.note(RepairKind::QuotesNormalized, i);
                }
                '\''
            }
            b'u' => return self.unicode_escape(out, escapes),
            // A document's typographic quote escaped as if it were `"` (`\„`, `\“`): the quote.
            0xE2 if self.readings.lenient_scalars
                && self.bytes.get(i + 2) == Some(&0x80)
                && matches!(
                    self.bytes.get(i + 3),
                    Some(0x98 | 0x99 | 0x9A | 0x9C | 0x9D | 0x9E)
                ) =>
            {
                self.log.note(RepairKind::QuotesNormalized, i);
                out.push_str(&self.text[i + 1..i + 4]);
                self.pos = i + 4;
                return Escape::Read;
            }
            _ => {
                prove_raw(out, escapes);
                return self.keep_backslash(out);
            }
        };
        out.push(ch);
        self.pos = i + 2;
        Escape::Read
    }

    /// `\"` in a value: normally an escaped quote. In a string that already holds raw
    /// backslashes, a `\"` the look-ahead takes as the closer is a backslash ending the content
    /// and the closing quote (`"C:\Users\me\"}`); elsewhere such a quote is remembered, and a
    /// string the text then ends inside is refused rather than closed with `"}` as content.
    /// `None` when it is read as an escaped quote.
    fn escaped_quote(&mut self, out: &mut String, escapes: &mut Escapes) -> Option<Escape> {
        let at = self.pos + 1;
        let after = at + 1;
        let next = scan::skip_ws(self.bytes, after);
        if (escapes.escaped_closer.is_some() && !escapes.raw) || next >= self.bytes.len() {
            return None;
        }
        let verdict = lookahead::value_quote(self.bytes, after, &self.closers, self.fence, false);
        if verdict != Verdict::Closes {
            return None;
        }
        if escapes.raw {
            self.log.note(RepairKind::ControlCharEscaped, self.pos);
            out.push('\\');
            self.pos = at;
            return Some(Escape::Read);
        }
        escapes.escaped_closer = Some(at);
        None
    }

    /// An escape JSON does not know: the backslash is content, and what follows is read as usual.
    fn keep_backslash(&mut self, out: &mut String) -> Escape {
        self.log.note(RepairKind::ControlCharEscaped, self.pos);
        out.push('\\');
        self.pos += 1;
        Escape::Read
    }

    /// `\uXXXX`, with surrogate pairs; anything malformed keeps its backslash.
    fn unicode_escape(&mut self, out: &mut String, escapes: &mut Escapes) -> Escape {
        let i = self.pos;
        let unit = match hex4(self.bytes, i + 2) {
            Hex::Cut => return self.cut(),
            Hex::Bad => {
                prove_raw(out, escapes);
                return self.keep_backslash(out);
            }
            Hex::Unit(u) => u,
        };
        if (0xD800..0xDC00).contains(&unit) {
            let low_at = i + 6;
            let rest = &self.bytes[low_at.min(self.bytes.len())..];
            if rest.is_empty() || rest == b"\\" {
                return self.cut();
            }
            if rest.starts_with(b"\\u") {
                match hex4(self.bytes, low_at + 2) {
                    Hex::Cut => return self.cut(),
                    Hex::Unit(low) if (0xDC00..0xE000).contains(&low) => {
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        self.pos = low_at + 6;
                        return Escape::Read;
                    }
                    _ => {}
                }
            }
        }
        match char::from_u32(unit) {
            Some(ch) => {
                out.push(ch);
                self.pos = i + 6;
            }
            None => {
                // A lone surrogate: kept as written rather than replaced.
                self.log.note(RepairKind::ControlCharEscaped, i);
                out.push_str(&self.text[i..i + 6]);
                self.pos = i + 6;
            }
        }
        Escape::Read
    }

    /// The text ends inside an escape: drop it.
    fn cut(&mut self) -> Escape {
        self.pos = self.bytes.len();
        Escape::Cut
    }
}

/// The string the text ended inside: cut, or refused if an escaped quote looked like its closer.
fn cut_string(out: String, escapes: &Escapes) -> Str {
    match escapes.escaped_closer {
        Some(at) if !escapes.raw => Str::Broken(at),
        _ => Str::Cut(out),
    }
}

/// An unknown escape shows the string holds raw backslashes: the letter escapes decoded before it
/// become a backslash and their letter again, in one pass over the output.
fn prove_raw(out: &mut String, escapes: &mut Escapes) {
    if escapes.raw {
        return;
    }
    escapes.raw = true;
    if escapes.decoded.is_empty() {
        return;
    }
    let mut rebuilt = String::with_capacity(out.len() + escapes.decoded.len());
    let mut from = 0;
    for &(at, letter) in &escapes.decoded {
        rebuilt.push_str(&out[from..at]);
        rebuilt.push('\\');
        rebuilt.push(char::from(letter));
        from = at + 1;
    }
    rebuilt.push_str(&out[from..]);
    *out = rebuilt;
    escapes.decoded = Vec::new();
}

/// Where a run of closers at the end of the text starts (with the blanks before it), when it
/// closes every container of `closers` (outermost first), innermost first, and nothing else;
/// blanks and a closing fence may follow it. `body` is where the string's content starts.
fn closer_run_at_end(bytes: &[u8], body: usize, closers: &[u8]) -> Option<usize> {
    if closers.is_empty() {
        return None;
    }
    let blanks = |mut end: usize| {
        let from = end;
        while end > body && from - end < MAX_BLANKS_AT_END && scan::is_ws(bytes[end - 1]) {
            end -= 1;
        }
        end
    };
    let mut end = blanks(bytes.len());
    if end >= body + 3 && &bytes[end - 3..end] == b"```" {
        end = blanks(end - 3);
    }
    for &closer in closers {
        if end > body && bytes[end - 1] == closer {
            end = blanks(end - 1);
        } else {
            return None;
        }
    }
    Some(end)
}

/// Four hex digits at `at`.
enum Hex {
    /// The code unit.
    Unit(u32),
    /// Not four hex digits.
    Bad,
    /// The text ends within the four digits, all hex so far.
    Cut,
}

fn hex4(bytes: &[u8], at: usize) -> Hex {
    let mut unit = 0u32;
    for k in 0..4 {
        let Some(&b) = bytes.get(at + k) else {
            return Hex::Cut;
        };
        let Some(d) = char::from(b).to_digit(16) else {
            return Hex::Bad;
        };
        unit = unit * 16 + d;
    }
    Hex::Unit(unit)
}

/// The comma of the first bare member (`, key: value`, the value one token: `1`, `true`, `[1]`,
/// a word) in `bytes[body..end]`, when the text from it to `end` holds no quote, backslash or
/// control character (so it was copied into the string byte for byte and can be cut off as it
/// is). Prose after a colon (`, world: it is`) is no member.
fn bare_member_in(bytes: &[u8], body: usize, end: usize) -> Option<usize> {
    let rest = bytes.get(body..end)?;
    let comma = body + memchr::memchr(b',', rest)?;
    if bytes[comma..end].iter().any(|&b| {
        (b < 0x20 && !matches!(b, b'\n' | b'\t' | b'\r')) || matches!(b, b'"' | b'\'' | b'\\')
    }) {
        return None;
    }
    let mut at = comma;
    while let Some(c) = memchr::memchr(b',', &bytes[at..end]).map(|c| at + c) {
        let key = scan::skip_ws(bytes, c + 1);
        let key_end = scan::key_end(bytes, key);
        let colon = scan::skip_ws(bytes, key_end);
        if key < end
            && scan::is_key_start(bytes[key])
            && key_end < end
            && bytes[colon] == b':'
            && one_token(&bytes[colon + 1..end])
        {
            return Some(c);
        }
        at = c + 1;
    }
    None
}

/// After a closing quote at `after - 1`: blanks with a line break, a lone `"`, then blanks and
/// `,`, `}`, `]` or the end of the text (`"hello⏎"⏎",`). Where that stray quote ends.
fn stray_quote_line(bytes: &[u8], after: usize) -> Option<usize> {
    let mut p = after;
    while matches!(bytes.get(p), Some(b' ' | b'\t' | b'\r')) {
        p += 1;
    }
    if bytes.get(p) != Some(&b'\n') {
        return None;
    }
    let quote = scan::skip_ws(bytes, p);
    if bytes.get(quote) != Some(&b'"') {
        return None;
    }
    let next = scan::skip_ws(bytes, quote + 1);
    matches!(bytes.get(next), None | Some(b',' | b'}' | b']')).then_some(quote + 1)
}

/// Whether `bytes`, blanks around it aside, is one token (no blank inside).
fn one_token(bytes: &[u8]) -> bool {
    let token = bytes.trim_ascii();
    !token.is_empty() && !token.iter().any(u8::is_ascii_whitespace)
}

/// Whether `read` opens more `{`/`[` than it closes: then a `}` or `]` right after it may be
/// content (`x = {"a": "b` before `"}`), which is what makes a retry worth believing.
pub(super) fn opens_a_bracket(read: &str) -> bool {
    let mut depth = 0i64;
    for b in read.bytes() {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}
