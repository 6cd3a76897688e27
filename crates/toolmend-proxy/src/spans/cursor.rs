//! A one-pass JSON cursor: walks a document's text once, handing a reader the members it asks
//! for as borrowed spans and skipping the rest, checked as JSON on the way.
//!
//! The serde views of [`super`] read one nesting level per parse (a member's value is skipped,
//! then parsed again for the level below); a reader on this cursor reads every level in the same
//! pass. It accepts what serde_json accepts when it skips a value (the JSON grammar: strings
//! without raw control characters and with valid escapes, `\u` taken as any four hex digits,
//! numbers as JSON writes them, at most [`MAX_DEPTH`] levels) and refuses anything else with
//! [`Unread`], as the serde views do: the caller then reads the tree, before anything changed.
//! Keys with an escape are handed over as `None` (a reader that must know the key refuses it).

use super::Unread;

/// Nesting deeper than this is left to the tree (serde_json's own recursion limit).
pub(crate) const MAX_DEPTH: usize = 128;

/// A position in a JSON text.
#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            depth: 0,
        }
    }

    fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_blanks(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte() {
            self.at += 1;
        }
    }

    /// The next byte that is not JSON whitespace (the cursor moves past the whitespace).
    pub(crate) fn peek(&mut self) -> Option<u8> {
        self.skip_blanks();
        self.byte()
    }

    fn expect(&mut self, byte: u8) -> Result<(), Unread> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Unread)
        }
    }

    /// The document ends here: nothing but whitespace follows.
    pub(crate) fn end(mut self) -> Result<(), Unread> {
        self.skip_blanks();
        if self.at == self.text.len() {
            Ok(())
        } else {
            Err(Unread)
        }
    }

    fn enter(&mut self) -> Result<(), Unread> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unread);
        }
        Ok(())
    }

    /// A cursor at byte `at` of `text`, `depth` levels in: where a cursor that walked
    /// `text[..at]` (the same bytes, already checked) stood. `None` when `at` is not a
    /// character boundary.
    pub(crate) fn resumed(text: &'a str, at: usize, depth: usize) -> Option<Self> {
        text.is_char_boundary(at)
            .then_some(Self { text, at, depth })
    }

    /// How many bytes of the text the cursor has moved past.
    pub(crate) fn at(&self) -> usize {
        self.at
    }

    /// Reads the object at the cursor: `member` gets each key (`None` when it holds an escape)
    /// with the cursor at its value, and must move the cursor past that value.
    pub(crate) fn object(
        &mut self,
        member: impl FnMut(&mut Self, Option<&'a str>) -> Result<(), Unread>,
    ) -> Result<(), Unread> {
        self.expect(b'{')?;
        self.enter()?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        let key = self.key()?;
        self.rest_of_object(key, member)
    }

    /// Reads the rest of an object from a member whose key (`key`) and colon the cursor has
    /// moved past, as [`Cursor::object`] would from there.
    pub(crate) fn rest_of_object(
        &mut self,
        mut key: Option<&'a str>,
        mut member: impl FnMut(&mut Self, Option<&'a str>) -> Result<(), Unread>,
    ) -> Result<(), Unread> {
        loop {
            member(self, key)?;
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    key = self.key()?;
                }
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(Unread),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// A member's key and the colon after it (`None` when the key holds an escape).
    fn key(&mut self) -> Result<Option<&'a str>, Unread> {
        if self.peek() != Some(b'"') {
            return Err(Unread);
        }
        let (key, escaped) = self.string()?;
        self.expect(b':')?;
        Ok((!escaped).then_some(key))
    }

    /// Reads the array at the cursor: `item` is called with the cursor at each element, and
    /// must move the cursor past it.
    pub(crate) fn array(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<(), Unread>,
    ) -> Result<(), Unread> {
        self.expect(b'[')?;
        self.enter()?;
        if self.peek() == Some(b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(Unread),
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// Skips the value at the cursor; returns its text.
    pub(crate) fn value(&mut self) -> Result<&'a str, Unread> {
        self.skip_blanks();
        let start = self.at;
        self.skip()?;
        Ok(&self.text[start..self.at])
    }

    /// The text from the next byte that is not whitespace to the end.
    pub(crate) fn rest(&mut self) -> &'a str {
        self.skip_blanks();
        &self.text[self.at..]
    }

    /// Moves past the first `len` bytes of [`Cursor::rest`], which the caller knows to be one
    /// JSON value this cursor would take at this depth (the same text, already checked);
    /// returns them. `None` when `len` is not a character boundary within the text.
    pub(crate) fn take_checked(&mut self, len: usize) -> Option<&'a str> {
        let value = self.text.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        Some(value)
    }

    /// Runs `read` at the cursor; returns with its result the text it moved past.
    pub(crate) fn spanned<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, Unread>,
    ) -> Result<(&'a str, T), Unread> {
        self.skip_blanks();
        let start = self.at;
        let read = read(self)?;
        Ok((&self.text[start..self.at], read))
    }

    fn skip(&mut self) -> Result<(), Unread> {
        match self.peek().ok_or(Unread)? {
            b'{' => self.object(|cursor, _| cursor.skip()),
            b'[' => self.array(Self::skip),
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Unread),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Unread> {
        if self.text.as_bytes()[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Unread)
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.byte() {
            self.at += 1;
        }
        self.at - start
    }

    /// A number as JSON writes it: `-`, then `0` or a digit run not starting with `0`, then an
    /// optional fraction and exponent, each with at least one digit.
    fn number(&mut self) -> Result<(), Unread> {
        if self.byte() == Some(b'-') {
            self.at += 1;
        }
        match self.byte() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Unread),
        }
        if self.byte() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(Unread);
            }
        }
        if let Some(b'e' | b'E') = self.byte() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.byte() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(Unread);
            }
        }
        Ok(())
    }

    /// The string at the cursor (which is at its opening quote): its text between the quotes
    /// (escapes as written) and whether it holds an escape.
    fn string(&mut self) -> Result<(&'a str, bool), Unread> {
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            at = plain_run(bytes, at);
            match bytes.get(at).copied().ok_or(Unread)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    match bytes.get(at + 1).copied().ok_or(Unread)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                        b'u' => {
                            let hex = bytes.get(at + 2..at + 6).ok_or(Unread)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Unread);
                            }
                            at += 6;
                        }
                        _ => return Err(Unread),
                    }
                }
                0..=0x1f => return Err(Unread),
                _ => at += 1,
            }
        }
        self.at = at + 1;
        // Both ends are ASCII quotes: char boundaries.
        Ok((&self.text[start..at], escaped))
    }
}

/// Where the run of plain string bytes starting at `at` ends: the first quote, backslash or
/// control character from there, or the end. Eight bytes at a time while none is one of them.
pub(super) fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `x` is zero: its high bit set in the result (no false negative; a flagged word
    // is read byte by byte, so a false positive costs nothing but that).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while let Some(word) = bytes.get(at..at + 8) {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        let w = u64::from_ne_bytes(eight);
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let quote = zero(w ^ (ONES * u64::from(b'"')));
        let backslash = zero(w ^ (ONES * u64::from(b'\\')));
        if control | quote | backslash != 0 {
            break;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the cursor takes `text` as one JSON document.
    fn takes(text: &str) -> bool {
        let mut cursor = Cursor::new(text);
        cursor.value().is_ok() && cursor.end().is_ok()
    }

    #[test]
    fn it_accepts_what_serde_json_skips_and_refuses_the_rest() {
        for text in [
            "{}",
            " [ ] ",
            "null",
            "true",
            "false",
            "0",
            "-0",
            "-12.5e+3",
            "1E9",
            "1e400",
            r#""a\"b\\c\/\b\f\n\r\t\u00e9\uD83D\ude00""#,
            r#""\ud800""#,
            "\"é😀\"",
            r#"{"a":[1,{"b":null}],"c\n":"d"}"#,
            "\t{\r\n\"a\" : 1 }\n",
            "01",
            "1.",
            ".5",
            "1e",
            "-",
            "+1",
            "tru",
            "nul",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "[1 2]",
            "\"a",
            "\"\\x\"",
            "\"\\u12g4\"",
            "\"\\u12\"",
            "\"a\u{1}\"",
            "\"tab\there\"",
            "{} x",
            "",
            "NaN",
            "[",
            "{\"a\":1",
        ] {
            let serde = serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok();
            assert_eq!(takes(text), serde, "{text:?}");
        }
    }

    #[test]
    fn plain_runs_stop_at_the_first_quote_backslash_or_control_character() {
        for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for len in 0..40 {
                for at in 0..len {
                    let mut bytes: Vec<u8> =
                        (0..len).map(|i| b"a\x7f\xc3\xa9 ~!#"[i % 8]).collect();
                    bytes[at] = stop;
                    assert_eq!(plain_run(&bytes, 0), at, "{stop} at {at} of {len}");
                    assert_eq!(plain_run(&bytes, at), at);
                }
                let plain: Vec<u8> = vec![b'x'; len];
                assert_eq!(plain_run(&plain, 0), len);
            }
        }
    }

    #[test]
    fn nesting_past_the_limit_is_refused() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(takes(&deep(MAX_DEPTH)));
        assert!(!takes(&deep(MAX_DEPTH + 1)));
    }

    #[test]
    fn members_come_with_their_keys_and_spans() {
        let mut cursor = Cursor::new(r#" { "a" : [1, 2] , "b\u0041": "x", "c":{"d":true}} "#);
        let mut seen = Vec::new();
        cursor
            .object(|cursor, key| {
                seen.push((key, cursor.value()?));
                Ok(())
            })
            .unwrap();
        cursor.end().unwrap();
        assert_eq!(
            seen,
            [
                (Some("a"), "[1, 2]"),
                (None, "\"x\""),
                (Some("c"), r#"{"d":true}"#)
            ]
        );
    }
}
