//! The text of a repaired call: every part the repairs left alone is copied from the call as
//! sent, byte for byte.
//!
//! Re-serialising the whole repaired value would re-spell what no rule touched: string escapes
//! (`\u00e9` → `é`, `\/` → `/`), whitespace, and the spelling of a key. So the repaired value is
//! written against the text it was read from: a subtree equal to the one at the same place in
//! the value as sent is copied from that text; a rebuilt object or array is written compactly,
//! its members paired with the members sent under the same key (or at the same index).
//!
//! Numbers keep their digits everywhere, copied or not: serde_json's `arbitrary_precision`
//! keeps a number's text in the [`serde_json::Number`] itself (it writes an exponent one way,
//! `1E2` as `1e+2`; a copied number keeps even that).
//!
//! Only strict JSON is spliced (the text parsed as sent, or after a byte-order mark); salvaged
//! text is not JSON, so a salvaged value is written as serde_json writes it.
//!
//! A member sent twice under one key (`{"a": 1, "a": 2}`) is read as its last value. Copied
//! verbatim, the object still holds both members; rebuilt, it holds the last one only, and the
//! earlier value is dropped. Each dropped key is reported by its pointer
//! ([`Spliced::dropped`]), so nothing is lost silently.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use crate::pointer;
use crate::salvage::MemberText;
use crate::salvage::write::{write_compact, write_string};

/// The repaired call's text.
#[derive(Debug)]
pub(crate) struct Spliced {
    /// The text to dispatch.
    pub(crate) text: String,
    /// Pointers (in the value as sent) of keys sent twice whose earlier value is not in
    /// [`Self::text`], at most [`crate::limits::MAX_REPORTED_DUPLICATE_KEYS`].
    pub(crate) dropped: Vec<String>,
}

/// Writes `new` as JSON text, copying from `raw` (strict JSON that parsed to `old`) every
/// subtree that equals the one at the same place in `old`.
pub(crate) fn splice(raw: &str, old: &Value, new: &Value) -> Spliced {
    let duplicates = if memchr::memchr(b'{', raw.as_bytes()).is_some() {
        let mut found = Vec::new();
        duplicate_keys(raw, span_of(raw, 0), &mut String::new(), &mut found);
        found
    } else {
        Vec::new()
    };
    let mut writer = Writer {
        raw,
        out: String::with_capacity(raw.len() + 16),
        copied: Vec::new(),
        track: !duplicates.is_empty(),
    };
    writer.write(new, Some((old, span_of(raw, 0))), &mut String::new());
    let dropped = duplicates
        .into_iter()
        .filter(|d| {
            // Both members survive only where the object holding them was copied whole.
            let parent = &d[..d.rfind('/').unwrap_or(0)];
            !writer.copied.iter().any(|c| pointer::is_within(parent, c))
        })
        .take(crate::limits::MAX_REPORTED_DUPLICATE_KEYS)
        .collect();
    Spliced {
        text: writer.out,
        dropped,
    }
}

struct Writer<'a> {
    raw: &'a str,
    out: String,
    /// Pointers of the subtrees copied verbatim (tracked only when a key was sent twice).
    copied: Vec<String>,
    track: bool,
}

impl Writer<'_> {
    /// Writes `new`, whose counterpart as sent (if any) is `old`, spelled at `span` of the text.
    fn write(&mut self, new: &Value, old: Option<(&Value, Range<usize>)>, at: &mut String) {
        let Some((old, span)) = old else {
            self.out.push_str(&new.to_string());
            return;
        };
        if old == new {
            self.out.push_str(&self.raw[span]);
            if self.track {
                self.copied.push(at.clone());
            }
            return;
        }
        match (new, old) {
            (Value::Object(map), Value::Object(sent)) => {
                let members = members(self.raw, span);
                // The last member sent under each key, found once (a lookup per key is linear).
                let last: HashMap<&str, &Member<'_>> =
                    members.iter().map(|m| (m.key.as_ref(), m)).collect();
                self.out.push('{');
                for (i, (key, value)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    // The last member sent under a key is the one the value as sent holds.
                    let member = last.get(key.as_str()).copied();
                    match member {
                        Some(m) => self.out.push_str(&self.raw[m.key_span.clone()]),
                        None => self.out.push_str(&Value::String(key.clone()).to_string()),
                    }
                    self.out.push(':');
                    let len = at.len();
                    pointer::push(at, key);
                    let paired = member.and_then(|m| Some((sent.get(key)?, m.value_span.clone())));
                    self.write(value, paired, at);
                    at.truncate(len);
                }
                self.out.push('}');
            }
            (Value::Array(items), Value::Array(sent)) => {
                let spans = elements(self.raw, span);
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    let len = at.len();
                    pointer::push_index(at, i);
                    let paired = sent.get(i).zip(spans.get(i).cloned());
                    self.write(item, paired, at);
                    at.truncate(len);
                }
                self.out.push(']');
            }
            _ => self.out.push_str(&new.to_string()),
        }
    }
}

/// One member of an object as sent.
struct Member<'a> {
    key: Cow<'a, str>,
    key_span: Range<usize>,
    value_span: Range<usize>,
}

/// Collects the pointers of keys sent twice in the value at `span` (strict JSON).
fn duplicate_keys(raw: &str, span: Range<usize>, at: &mut String, found: &mut Vec<String>) {
    match raw.as_bytes().get(span.start) {
        Some(b'{') => {
            let members = members(raw, span);
            // First and last member index per key: one pass, so a wide object is linear.
            let mut first_last: HashMap<&str, (usize, usize)> = HashMap::new();
            for (i, m) in members.iter().enumerate() {
                first_last.entry(&m.key).or_insert((i, i)).1 = i;
            }
            for (i, m) in members.iter().enumerate() {
                let len = at.len();
                pointer::push(at, &m.key);
                let (first, last) = first_last.get(m.key.as_ref()).copied().unwrap_or((i, i));
                let later = last != i;
                if later && first == i {
                    found.push(at.clone());
                }
                if !later {
                    duplicate_keys(raw, m.value_span.clone(), at, found);
                }
                at.truncate(len);
            }
        }
        Some(b'[') => {
            for (i, item) in elements(raw, span).into_iter().enumerate() {
                let len = at.len();
                pointer::push_index(at, i);
                duplicate_keys(raw, item, at, found);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// The members of the object at `span`.
fn members(raw: &str, span: Range<usize>) -> Vec<Member<'_>> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut pos = skip_ws(bytes, span.start + 1);
    while bytes.get(pos) == Some(&b'"') {
        let key_end = string_end(bytes, pos);
        let key_span = pos..key_end;
        let inner = raw
            .get(pos + 1..key_end.saturating_sub(1))
            .unwrap_or_default();
        let key = if inner.contains('\\') {
            // Strict JSON: the key decodes.
            Cow::Owned(serde_json::from_str::<String>(&raw[key_span.clone()]).unwrap_or_default())
        } else {
            Cow::Borrowed(inner)
        };
        pos = skip_ws(bytes, key_end) + 1; // the colon
        let value_start = skip_ws(bytes, pos);
        let value_end = value_end(bytes, value_start);
        out.push(Member {
            key,
            key_span,
            value_span: value_start..value_end,
        });
        pos = skip_ws(bytes, value_end);
        if bytes.get(pos) != Some(&b',') {
            break;
        }
        pos = skip_ws(bytes, pos + 1);
    }
    out
}

/// The element spans of the array at `span`.
fn elements(raw: &str, span: Range<usize>) -> Vec<Range<usize>> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut pos = skip_ws(bytes, span.start + 1);
    if bytes.get(pos) == Some(&b']') {
        return out;
    }
    while pos < span.end {
        let end = value_end(bytes, pos);
        out.push(pos..end);
        pos = skip_ws(bytes, end);
        if bytes.get(pos) != Some(&b',') {
            break;
        }
        pos = skip_ws(bytes, pos + 1);
    }
    out
}

/// The span of the value starting at the first non-blank byte from `pos`.
fn span_of(raw: &str, pos: usize) -> Range<usize> {
    let start = skip_ws(raw.as_bytes(), pos);
    start..value_end(raw.as_bytes(), start)
}

/// Where the value starting at `start` ends. Containers are matched by counting brackets outside
/// strings, without recursion.
fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut pos = start;
            while let Some(&b) = bytes.get(pos) {
                match b {
                    b'"' => {
                        pos = string_end(bytes, pos);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return pos + 1;
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
            bytes.len()
        }
        _ => {
            let mut pos = start;
            while pos < bytes.len()
                && !matches!(
                    bytes[pos],
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                )
            {
                pos += 1;
            }
            pos
        }
    }
}

/// Where the string opened at `start` ends (after its closing quote).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut pos = start + 1;
    while let Some(i) = memchr::memchr2(b'"', b'\\', &bytes[pos.min(bytes.len())..]) {
        let at = pos + i;
        if bytes[at] == b'\\' {
            pos = at + 2;
        } else {
            return at + 1;
        }
    }
    bytes.len()
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && matches!(bytes[pos], b' ' | b'\t' | b'\n' | b'\r') {
        pos += 1;
    }
    pos
}

/// `value` as compact JSON, byte for byte what `serde_json::to_string` writes, into one buffer
/// of `hint` bytes to start (the length of the text the value was read from).
///
/// The malformed path writes every salvaged call's text (issue #11 §3): strings, nearly all of
/// a large call, are copied eight bytes at a time up to the next byte JSON escapes, where
/// serde_json looks each byte up in turn.
pub(crate) fn compact(value: &Value, hint: usize) -> String {
    let mut out = String::with_capacity(hint);
    write_compact(&mut out, value);
    out
}

/// [`compact`], copying from `text` each member value of the root object whose canonical text
/// salvage found there (`spans`, one per member in order; see
/// [`crate::salvage::Salvaged::spans`]): the large string of a call is then copied once instead
/// of being written again escape by escape. A noted key is written between `"` as it is, never
/// looked over for bytes to escape (~100 instructions a key on a ~100-byte call, issue #31). A
/// `'…'` string noted there is copied between `"` (its content is what serde_json writes).
pub(crate) fn compact_with_spans(value: &Value, text: &str, spans: &[MemberText]) -> String {
    let Value::Object(map) = value else {
        return compact(value, text.len());
    };
    if spans.len() != map.len() {
        return compact(value, text.len());
    }
    let mut out = String::with_capacity(text.len());
    out.push('{');
    // Each member ends in a comma, and the last one's becomes the closing brace: no test of
    // which member comes first in the loop.
    for ((key, item), span) in map.iter().zip(spans) {
        if span.key.is_some() {
            // Noted keys need no escape: as serde_json writes them, they are the key between
            // `"`, written from the key itself with no look into the text.
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
        } else {
            write_string(&mut out, key);
            out.push(':');
        }
        match span.value_text(text) {
            Some(noted) => noted.push_to(&mut out),
            None => write_scalar(&mut out, item),
        }
        out.push(',');
    }
    if !map.is_empty() {
        out.pop();
    }
    out.push('}');
    out
}

/// [`write_compact`] with a scalar written in place: nearly every member value salvage noted no
/// text for is a number or a literal, each a copy, where the call cost as much again.
#[inline(always)]
fn write_scalar(out: &mut String, item: &Value) {
    match item {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // Its text as read (`arbitrary_precision`), as `write_compact` writes it.
        Value::Number(n) => out.push_str(n.as_str()),
        other => write_compact(out, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_writes_what_serde_json_writes() {
        let mut every_byte = String::new();
        for b in 0u8..0x80 {
            every_byte.push(char::from(b));
            every_byte.push_str("abcdefgh");
        }
        let values = [
            serde_json::json!({"a": [1, 2.50, -0, 1e300, null, true, false], "é\u{2028}": {}}),
            serde_json::json!([every_byte, "\u{7f}\u{80}\u{10ffff} \\\"", "", "1234567"]),
            serde_json::from_str(r#"{"n": 1E2, "big": 123456789012345678901234567890}"#).unwrap(),
            Value::String("x\ny\"z".repeat(50)),
        ];
        for value in values {
            assert_eq!(compact(&value, 0), serde_json::to_string(&value).unwrap());
        }
    }

    proptest::proptest! {
        #[test]
        fn compact_strings_match_serde_json(text in "[\\x00-\\x7f\\u{80}-\\u{10ffff}]{0,64}") {
            let value = Value::String(text);
            proptest::prop_assert_eq!(compact(&value, 0), serde_json::to_string(&value).unwrap());
        }
    }

    fn spliced(raw: &str, new: &str) -> Spliced {
        let old: Value = serde_json::from_str(raw).unwrap();
        let new: Value = serde_json::from_str(new).unwrap();
        splice(raw, &old, &new)
    }

    #[test]
    fn an_equal_value_is_the_text_as_sent() {
        let raw = " { \"a\" : [1.0, \"\\u00e9\"] } ";
        assert_eq!(spliced(raw, r#"{"a": [1.0, "é"]}"#).text, raw.trim());
    }

    #[test]
    fn rebuilt_containers_copy_their_untouched_members() {
        let raw = r#"{ "k\u0031": "\/", "n": 1E2, "list": [ "x" , {"b": 0.10} ], "gone": 1 }"#;
        let new = r#"{"k1": "/", "n": 1E2, "list": ["x", {"b": 0.10, "c": true}], "new": [1]}"#;
        assert_eq!(
            spliced(raw, new).text,
            r#"{"k\u0031":"\/","n":1E2,"list":["x",{"b":0.10,"c":true}],"new":[1]}"#
        );
    }

    #[test]
    fn a_dropped_duplicate_is_reported_and_a_copied_one_is_not() {
        let raw = r#"{"a": 1, "o": {"x": 1, "x": 2}, "a": 2, "t": "s"}"#;
        let s = spliced(raw, r#"{"a": 2, "o": {"x": 2}, "t": ["s"]}"#);
        assert_eq!(s.text, r#"{"a":2,"o":{"x": 1, "x": 2},"t":["s"]}"#);
        assert_eq!(s.dropped, ["/a"]);
        // Moved or rebuilt: the inner duplicate is dropped too.
        let s = spliced(raw, r#"{"o": {"x": 2, "y": 1}}"#);
        assert_eq!(s.dropped, ["/a", "/o/x"]);
    }

    #[test]
    fn a_salvaged_call_is_written_as_serde_json_writes_its_value() {
        // `'…'` keys and strings are copied with their quotes swapped only when their content
        // is what serde_json writes between `"`; the others are written from the value.
        let tools = serde_json::json!([{"name": "t", "parameters": {"type": "object"}}]);
        let mender = crate::Mender::new(crate::ToolSet::from_json(&tools));
        for raw in [
            r#"{'a': 'x', 'b': 1, 'c': null, 'd': True, 'e': None}"#,
            r#"{'a': 'x\ny\t\\', 'b': 'say \"hi\"', 'c': 'it\'s', 'd': 'a"b'}"#,
            r#"{'a"b': 1, 'c\'d': 2, 'é': 'ü → 日本', 'f': 'a\/b'}"#,
            "{'a': 'raw\nline', 'b': 'tab\there', 'c': 'x'}",
            r#"{"a": "x", 'b': 'y', c: 'z', "d": False,}"#,
            r#"{"a": 'x' + 'y', 'b': 2}"#,
        ] {
            let call = mender.repair_call("t", raw);
            let value = call.arguments.expect(raw);
            let written = serde_json::to_string(&value).expect("written");
            assert_eq!(call.arguments_text, written, "{raw}");
        }
    }

    #[test]
    fn spans_skip_escaped_quotes_and_brackets_in_strings() {
        let raw = r#"["a\"]", {"b": "}"}, 3]"#;
        assert_eq!(elements(raw, span_of(raw, 0)), vec![1..7, 9..19, 21..22]);
    }
}
