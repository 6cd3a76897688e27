//! The fast read of a plain string value (issue #11 §3).
//!
//! Nearly every string a model sends is plain, even in a call that is not JSON: a `"`- or
//! `'`-quoted value with only JSON's escapes (and `\'` inside `'…'`), closed by a quote the
//! look-ahead accepts; raw control characters are kept as the characters they are, as
//! [`super::strings`] keeps them (`control_char_escaped`). [`super::strings`] reads such a string
//! the same way; its heuristics only act on what a plain string never holds (a quote the
//! look-ahead rejects, an escape JSON does not know, `\u`, the end of the text), and the
//! bookkeeping they need (decoded escapes kept for a backslash proved raw, a look-ahead at every
//! `\"`) is most of its cost on a large `content` field. This reader skips it, and gives up,
//! consuming nothing and logging nothing, at the first byte that is not plain: the string is then
//! read again by [`super::strings`], from its quote. After one such give-up a run reads every
//! later string the long way, so at most one string per run is read twice. On success it logs
//! what [`super::strings`] would have (`quotes_normalized` for `'…'`, `control_char_escaped`).
//!
//! It also tells whether the string's text is already what serde_json writes for it (`"…"`, no
//! raw control character, no `\/` and no `\u` escape), or is once its quotes are swapped (`'…'`
//! holding no `"` and no `\'` besides), so that the call's `arguments_text` copies it instead of
//! writing it again ([`super::Salvaged::spans`]).

use super::Parser;
use super::lookahead::{self, Verdict};
use crate::RepairKind;
use crate::salvage::node::{Spelt, Str};
use crate::salvage::scan::{self, Quote};

/// A plain string value, decoded.
#[derive(Debug)]
pub(super) struct Plain {
    /// The content: a span of the text when nothing in it was decoded.
    pub(super) text: Str,
    /// The source text between the quotes is what serde_json writes between its `"`: the
    /// text, quotes included, is the string as serde_json writes it for `"…"`, and once its
    /// quotes are swapped for `'…'` ([`crate::salvage::MemberText`]).
    pub(super) canonical: bool,
}

impl Parser<'_> {
    /// Reads the string value opened by `quote` (`"` or `'`) at the current position if it is
    /// plain; `None`, with nothing consumed, when it is not (or a retry is taking quotes as
    /// content).
    pub(super) fn read_plain_string(&mut self, quote: Quote) -> Option<Plain> {
        if self.plain_gave_up || !self.content_quotes.is_empty() {
            return None;
        }
        // A string the text ends inside would be read here to the end and then again by
        // strings.rs: when no unescaped quote of its kind follows its opening one, go there at
        // once.
        let bytes = self.bytes;
        let last = match quote {
            Quote::Single => *self
                .last_single
                .get_or_insert_with(|| last_unescaped(bytes, b'\'')),
            _ => *self
                .last_quote
                .get_or_insert_with(|| last_unescaped(bytes, b'"')),
        };
        if last.is_none_or(|q| q <= self.pos) {
            return None;
        }
        // One copy of the loop per delimiter: the common `"` keeps its constant.
        let read = match quote {
            Quote::Single => self.plain_from::<b'\''>(self.pos),
            _ => self.plain_from::<b'"'>(self.pos),
        };
        if read.is_none() {
            self.plain_gave_up = true;
        }
        read
    }

    fn plain_from<const DELIMITER: u8>(&mut self, open: usize) -> Option<Plain> {
        let bytes = self.bytes;
        let delimiter = DELIMITER;
        let single = DELIMITER == b'\'';
        let mut text = String::new();
        // A raw control character is never what serde_json writes (nor, in `'…'`, a `"` or
        // `\'`: the quotes are swapped when the text is copied).
        let mut canonical = true;
        // A `"` inside `'…'`: content, which JSON escapes.
        let mut holds_quote = false;
        let mut control = None;
        // Something was decoded (an escape): the content is `text` and what follows `p`, not
        // a span of the text.
        let mut decoded = false;
        // Where the content not yet copied into `text` starts, and where the scan goes on: a raw
        // control character is kept as it stands, so it is scanned past without a copy.
        let mut p = open + 1;
        let mut from = p;
        loop {
            // Once a control character was seen (only the first is reported), only the
            // delimiter and `\` stop the scan: a string of raw line breaks is one search.
            let i = if single {
                // Stops at a `"` too: content, but escaped when written.
                scan::find_single_special(bytes, from)
            } else if control.is_none() {
                scan::find_string_special(bytes, from, delimiter)
            } else {
                scan::find_quote_or_backslash(bytes, from, bytes.len(), delimiter)
            };
            // The text ends inside the string: strings.rs decides what a cut string keeps.
            let &b = bytes.get(i)?;
            if single && b == b'"' {
                holds_quote = true;
                canonical = false;
                from = i + 1;
                continue;
            }
            if b == delimiter {
                // The key after `, ` is read once: the key reader takes its end from here.
                let verdict = lookahead::value_quote_noting_key(
                    bytes,
                    i + 1,
                    &self.closers,
                    self.fence,
                    true,
                    &mut self.next_key,
                );
                if verdict != Verdict::Closes {
                    return None;
                }
                // What strings.rs reports reading the same string.
                if single {
                    self.log.note_each(RepairKind::QuotesNormalized, open);
                }
                if let Some(at) = control {
                    self.log.note_each(RepairKind::ControlCharEscaped, at);
                }
                self.pos = i + 1;
                let text = if decoded {
                    text.push_str(&self.text[p..i]);
                    Str::Owned(text)
                } else {
                    // Nothing decoded: the content is the text between the quotes, no copy.
                    // A raw control character or a `"` in `'…'` is escaped when written.
                    let spelt = if control.is_some() || holds_quote {
                        Spelt::Escaped
                    } else if single {
                        Spelt::Single
                    } else {
                        Spelt::Quoted
                    };
                    Str::Span {
                        start: open + 1,
                        end: i,
                        spelt,
                    }
                };
                return Some(Plain { text, canonical });
            }
            if b != b'\\' {
                // A raw control character: kept as the character it is (`control_char_escaped`).
                control.get_or_insert(i);
                canonical = false;
                from = i + 1;
                continue;
            }
            let ch = match bytes.get(i + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => {
                    canonical = false; // serde_json writes `/`
                    '/'
                }
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                // Inside `'…'`, `\'` is the quote, as strings.rs reads it (no repair of its own).
                b'\'' if single => {
                    canonical = false; // serde_json writes `'`
                    '\''
                }
                // `\u`, `\'` in `"…"` and escapes JSON does not know: strings.rs.
                _ => return None,
            };
            if !decoded {
                // One allocation: up to the next quote (a floor, since it may be escaped), as
                // strings.rs does. Once per string, so the search stays linear.
                decoded = true;
                let more = memchr::memchr(delimiter, &bytes[i..]).unwrap_or(bytes.len() - i) + 16;
                text.reserve(i - p + more);
            }
            text.push_str(&self.text[p..i]);
            text.push(ch);
            p = i + 2;
            from = p;
        }
    }
}

/// The index of the last `quote` of `bytes` not escaped by an odd run of backslashes.
fn last_unescaped(bytes: &[u8], quote: u8) -> Option<usize> {
    let mut end = bytes.len();
    while let Some(q) = memchr::memrchr(quote, &bytes[..end]) {
        let slashes = bytes[..q].iter().rev().take_while(|&&b| b == b'\\').count();
        if slashes % 2 == 0 {
            return Some(q);
        }
        end = q;
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::strings::{Role, Str};
    use super::*;
    use crate::salvage::memo::Memo;

    #[test]
    fn the_last_unescaped_quote_skips_escaped_ones() {
        assert_eq!(last_unescaped(br#"{"a": "b\" c"#, b'"'), Some(6));
        assert_eq!(last_unescaped(br#"{"a": "b\\" c"#, b'"'), Some(10));
        assert_eq!(last_unescaped(br#"\"x"#, b'"'), None);
        assert_eq!(last_unescaped(b"no quotes", b'"'), None);
    }

    #[test]
    fn a_string_the_text_ends_inside_is_left_to_strings_rs() {
        let memo = Memo::default();
        let text = r#"{"k": "cut here, no closing quote"#;
        let mut parser = Parser::new(text, 128, false, &[], &memo);
        parser.pos = 6;
        assert!(parser.read_plain_string(Quote::Double).is_none());
        assert_eq!(parser.pos, 6, "nothing consumed");
        assert_eq!(parser.last_quote, Some(Some(6)));
    }

    /// The plain read and strings.rs's read of the string value of `{"k": <string>…` (opened
    /// by `"` or `'`), each with the repairs it logged.
    fn both(text: &str) -> (Option<(String, bool, usize)>, Str, usize) {
        let (plain, read, end, _) = both_logged(text);
        (plain, read, end)
    }

    fn both_logged(text: &str) -> (Option<(String, bool, usize)>, Str, usize, bool) {
        let memo = Memo::default();
        let at = text.find(": ").map_or(0, |i| i + 2);
        let quote = Quote::at(text.as_bytes(), at).expect("a quote");
        let mut fast = Parser::new(text, 128, false, &[], &memo);
        fast.pos = at;
        fast.closers.push(b'}');
        let plain = fast
            .read_plain_string(quote)
            .map(|p| (p.text.into_string(text), p.canonical, fast.pos));
        let mut slow = Parser::new(text, 128, false, &[], &memo);
        slow.pos = at;
        slow.closers.push(b'}');
        let read = slow.read_string(quote, Role::Value);
        let same_log = plain.is_none() || fast.log == slow.log;
        (plain, read, slow.pos, same_log)
    }

    #[test]
    fn plain_strings_read_as_strings_rs_reads_them() {
        for text in [
            r#"{"k": "a\"b\\c\/d\b\f\n\r\t", "n": 1}"#,
            r#"{"k": "print(\"x\")", "n": 1}"#,
            r#"{"k": "ends with a quote\""}"#,
            r#"{"k": "é → 日本"}"#,
            "{\"k\": \"raw\nnewline\ttab\", \"n\": 1}",
            r#"{"k": 'it\'s "quoted" \n', "n": 1}"#,
            "{\"k\": 'raw\nnewline', \"n\": 1}",
        ] {
            let (plain, read, end, same_log) = both_logged(text);
            let (got, _, at) = plain.expect(text);
            assert_eq!(Str::Closed(got), read, "{text}");
            assert_eq!(at, end, "{text}");
            assert!(same_log, "{text}");
        }
    }

    #[test]
    fn anything_not_plain_is_left_to_strings_rs() {
        for text in [
            r#"{"k": "C:\Users\me", "n": 1}"#,
            r#"{"k": "\u00e9", "n": 1}"#,
            r#"{"k": "it\'s", "n": 1}"#,
            r#"{"k": 'C:\Users', "n": 1}"#,
            r#"{"k": "say "hi" now", "n": 1}"#,
            r#"{"k": 'it's', "n": 1}"#,
            r#"{"k": "cut off"#,
            r#"{"k": 'cut off"#,
        ] {
            assert!(both(text).0.is_none(), "{text}");
        }
    }

    #[test]
    fn the_text_is_canonical_unless_it_escapes_a_slash_or_is_not_json() {
        assert_eq!(both(r#"{"k": "a\"\n"}"#).0.map(|p| p.1), Some(true));
        assert_eq!(both(r#"{"k": "a\/b"}"#).0.map(|p| p.1), Some(false));
        assert_eq!(both("{\"k\": \"a\nb\"}").0.map(|p| p.1), Some(false));
        // `'…'`: its quotes swapped, unless it holds what serde_json spells otherwise.
        assert_eq!(both(r#"{"k": 'ab'}"#).0.map(|p| p.1), Some(true));
        assert_eq!(both(r#"{"k": 'a\"\n\\b'}"#).0.map(|p| p.1), Some(true));
        assert_eq!(both(r#"{"k": 'a"b'}"#).0.map(|p| p.1), Some(false));
        assert_eq!(both(r#"{"k": 'it\'s'}"#).0.map(|p| p.1), Some(false));
        assert_eq!(both(r#"{"k": 'a\/b'}"#).0.map(|p| p.1), Some(false));
        assert_eq!(both("{\"k\": 'a\tb'}").0.map(|p| p.1), Some(false));
    }

    proptest! {
        #[test]
        fn plain_reads_agree_with_strings_rs(
            content in "([a-z \"'{}:,\n\t\\]\\[]|\\\\[\"'\\\\/bfnrt]){0,40}",
            single in any::<bool>(),
        ) {
            let q = if single { '\'' } else { '"' };
            let text = format!("{{\"k\": {q}{content}{q}, \"n\": 1}}");
            let (plain, read, end, same_log) = both_logged(&text);
            if let Some((got, canonical, at)) = plain {
                prop_assert_eq!(Str::Closed(got.clone()), read);
                prop_assert_eq!(at, end);
                prop_assert!(same_log);
                if canonical {
                    // `'…'` with its quotes swapped.
                    let quoted = serde_json::to_string(&got).unwrap();
                    let inner = &text[7..at - 1];
                    prop_assert_eq!(format!("\"{inner}\""), quoted);
                }
            }
        }
    }
}
