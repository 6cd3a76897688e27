//! Borrowed JSON spans: the members a route or stream needs, read from the body's bytes
//! without building a tree (issue #29 §3).
//!
//! Serde views whose fields are [`Member`]s (the member's raw text, or absent), strings
//! decoded only when asked and borrowed when they hold no escape. A shape not read here is
//! [`Unread`]: the caller reads the tree instead, before it changed anything. A reader that
//! needs several nesting levels of one document (the Chat Completions body,
//! `routes/openai_bytes.rs`, and stream chunk, `stream/openai/chunk.rs`) walks it once with
//! [`Cursor`], takes each member at most once ([`Single`]) and reads the spans it got with
//! [`string_of`] and [`u64_of`], as [`Member`] reads its own.

mod cursor;

pub(crate) use cursor::Cursor;

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A member that was present, whatever its value (`null` included), or absent.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) enum Member<'a> {
    #[default]
    Absent,
    Raw(&'a RawValue),
}

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(Member::Raw)
    }
}

impl<'a> Member<'a> {
    /// The member's JSON text, `None` when absent.
    pub(crate) fn raw(self) -> Option<&'a str> {
        match self {
            Member::Absent => None,
            Member::Raw(raw) => Some(raw.get()),
        }
    }

    /// Whether the member is present (with any value, `null` included).
    pub(crate) fn present(self) -> bool {
        matches!(self, Member::Raw(_))
    }

    /// The value as `Value::as_u64` reads it: `None` when absent or not an unsigned integer.
    pub(crate) fn u64(self) -> Option<u64> {
        self.raw().and_then(u64_of)
    }

    /// The value when it is an object (its text).
    pub(crate) fn object(self) -> Option<&'a str> {
        self.raw().filter(|t| t.starts_with('{'))
    }

    /// The string value (`Value::as_str`): `None` when absent or not a string; `Err` when
    /// the string cannot be decoded. (The serde views' readers, kept as the tests' oracles.)
    #[cfg(test)]
    pub(crate) fn text(self) -> Result<Option<String>, serde_json::Error> {
        Ok(self.str()?.map(Cow::into_owned))
    }

    /// [`Member::text`], borrowed from the body when the string holds no escape.
    pub(crate) fn str(self) -> Result<Option<Cow<'a, str>>, serde_json::Error> {
        self.raw().map_or(Ok(None), string_of)
    }
}

/// The string a value's JSON text holds (`Value::as_str`): `None` when it is not a string;
/// borrowed when it holds no escape; `Err` when it cannot be decoded (a lone surrogate).
pub(crate) fn string_of(text: &str) -> Result<Option<Cow<'_, str>>, serde_json::Error> {
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        // Checked JSON: a string without a backslash is its own text.
        Some(inner) if !text.contains('\\') => Ok(Some(Cow::Borrowed(inner))),
        Some(_) => decode(text).map(Some),
        None => Ok(None),
    }
}

/// A value's JSON text as `Value::as_u64` reads it: `None` when not an unsigned integer.
pub(crate) fn u64_of(text: &str) -> Option<u64> {
    Some(text)
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
}

/// A member a [`Cursor`] reader takes at most once: a repeated one is [`Unread`] (the serde
/// views refuse it, and the tree keeps the last).
#[derive(Debug, Default)]
pub(crate) struct Single<'a>(Option<&'a str>);

impl<'a> Single<'a> {
    pub(crate) fn new() -> Self {
        Self(None)
    }

    /// Takes the member's text (or a marker of its kind when the reader walked into it).
    pub(crate) fn set(&mut self, raw: &'a str) -> Result<(), Unread> {
        if self.0.replace(raw).is_some() {
            return Err(Unread);
        }
        Ok(())
    }

    /// The text taken, `None` when the member was absent.
    pub(crate) fn get(&self) -> Option<&'a str> {
        self.0
    }
}

/// The shape is not the one read here: the caller reads the tree instead.
#[derive(Debug)]
pub(crate) struct Unread;

impl From<serde_json::Error> for Unread {
    fn from(_: serde_json::Error) -> Self {
        Unread
    }
}

/// Decodes a JSON string's text (quotes included), borrowing it when it holds no escape.
///
/// [`unescape`] decodes it in one scan; what it does not take (a lone surrogate, a raw control
/// character, …) goes to serde_json, which decodes it or says why not.
fn decode(text: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    if let Some(decoded) = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .and_then(unescape)
    {
        return Ok(decoded);
    }
    serde_decode(text)
}

/// The text of a JSON string's inside (between its quotes) with its escapes decoded as
/// serde_json decodes them; `None` for anything serde_json may refuse (a lone surrogate, an
/// unknown escape, a raw quote or control character), left to it.
///
/// A call's string `arguments` are JSON inside a JSON string (every quote escaped), and
/// serde_json's decoder took a tenth of the proxy's reading of a completion (issue #29 §3).
fn unescape(inner: &str) -> Option<Cow<'_, str>> {
    let bytes = inner.as_bytes();
    let mut at = cursor::plain_run(bytes, 0);
    if at == bytes.len() {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut run = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            return None;
        }
        // Both ends of the run are ASCII (a backslash, or the end of an escape): boundaries.
        out.push_str(&inner[run..at]);
        let escape = *bytes.get(at + 1)?;
        at += 2;
        let decoded = match escape {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = hex4(bytes.get(at..at + 4)?)?;
                at += 4;
                match unit {
                    0xD800..=0xDBFF => {
                        if bytes.get(at..at + 2)? != b"\\u" {
                            return None;
                        }
                        let low = hex4(bytes.get(at + 2..at + 6)?)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        at += 6;
                        char::from_u32((((unit - 0xD800) << 10) | (low - 0xDC00)) + 0x1_0000)?
                    }
                    0xDC00..=0xDFFF => return None,
                    unit => char::from_u32(unit)?,
                }
            }
            _ => return None,
        };
        out.push(decoded);
        run = at;
        at = cursor::plain_run(bytes, at);
    }
    out.push_str(&inner[run..]);
    Some(Cow::Owned(out))
}

/// The value of four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |value, &digit| {
        Some((value << 4) | char::from(digit).to_digit(16)?)
    })
}

/// [`decode`] by serde_json.
fn serde_decode(text: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    struct Text<'a>(Cow<'a, str>);
    impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_str(CowVisitor).map(Text)
        }
    }
    serde_json::from_str::<Text<'_>>(text).map(|t| t.0)
}

/// Takes a string borrowed when the deserializer can lend it, owned otherwise.
struct CowVisitor;

impl<'de> Visitor<'de> for CowVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// The elements of an array's text, each as its text (the tests' oracles).
#[cfg(test)]
pub(crate) fn elements(array: &str) -> Result<Vec<&str>, Unread> {
    let items: Vec<&RawValue> = serde_json::from_str(array)?;
    Ok(items.into_iter().map(RawValue::get).collect())
}

/// The object elements of an array's text, each as its text; `Err` for any element that is
/// not an object (the tree path skips it; these readers leave the body to the tree path).
/// The tests' oracles.
#[cfg(test)]
pub(crate) fn objects(array: &str) -> Result<Vec<&str>, Unread> {
    elements(array)?
        .into_iter()
        .map(|item| Some(item).filter(|t| t.starts_with('{')).ok_or(Unread))
        .collect()
}

/// The members of an object's text in order, each key with its value's text; `Err` when the
/// text is not an object or a key repeats (the tree keeps one of them: left to it).
pub(crate) fn members(object: &str) -> Result<Vec<(Cow<'_, str>, &str)>, Unread> {
    struct Members<'a>(Vec<(Cow<'a, str>, &'a str)>);
    struct MembersVisitor;
    impl<'de> Visitor<'de> for MembersVisitor {
        type Value = Members<'de>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(key) = map.next_key_seed(KeySeed)? {
                let value: &'de RawValue = map.next_value()?;
                out.push((key, value.get()));
            }
            Ok(Members(out))
        }
    }
    impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_map(MembersVisitor)
        }
    }
    let read = serde_json::from_str::<Members<'_>>(object)?.0;
    for (i, (key, _)) in read.iter().enumerate() {
        if read[..i].iter().any(|(k, _)| k == key) {
            return Err(Unread);
        }
    }
    Ok(read)
}

/// A key, borrowed when it holds no escape.
struct KeySeed;

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(CowVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct View<'a> {
        #[serde(borrow, default)]
        a: Member<'a>,
    }

    fn member(json: &str) -> Member<'_> {
        serde_json::from_str::<View<'_>>(json).unwrap().a
    }

    #[test]
    fn strings_borrow_without_escapes_and_decode_with_them() {
        let plain = member(r#"{"a":"héllo"}"#).str().unwrap().unwrap();
        assert!(matches!(plain, Cow::Borrowed("héllo")));
        let escaped = member(r#"{"a":"line\nA \u00e9 \ud83d\ude00 \"q\""}"#)
            .str()
            .unwrap()
            .unwrap();
        assert_eq!(escaped, "line\nA é 😀 \"q\"");
        assert!(member(r#"{"a":5}"#).str().unwrap().is_none());
        assert!(member(r#"{"b":5}"#).str().unwrap().is_none());
        assert_eq!(member(r#"{"a":null}"#).raw(), Some("null"));
        assert_eq!(member("{}").raw(), None);
    }

    #[test]
    fn strings_decode_as_serde_json_decodes_them() {
        let pieces = [
            "a",
            "é",
            "😀",
            " ",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u0041",
            "\\u00e9",
            "\\u00E9",
            "\\u0000",
            "\\u001f",
            "\\uffff",
            "\\ud83d\\ude00",
            "\\uD83D\\uDE00",
            "\\ud800",
            "\\udc00",
            "\\ud800\\u0041",
            "\\ud800x",
            "\\ud800\\n",
            "\\u12",
            "\\u12g4",
            "\\x",
            "\\",
            "\"",
            "\u{1}",
            "\t",
            "{\\\"k\\\": 1}",
        ];
        let mut texts: Vec<String> = Vec::new();
        for a in pieces {
            for b in pieces {
                for c in ["", "xyz", pieces[4]] {
                    texts.push(format!("\"{a}{c}{b}\""));
                }
            }
        }
        texts.push(format!("\"{}\"", "abcdefgh\\\"".repeat(40)));
        let mut decoded = 0;
        for text in &texts {
            let serde = serde_decode(text).map(Cow::into_owned).ok();
            assert_eq!(decode(text).map(Cow::into_owned).ok(), serde, "{text}");
            decoded += usize::from(serde.is_some());
        }
        assert!(decoded > texts.len() / 3, "{decoded} of {}", texts.len());
    }

    #[test]
    fn unsigned_integers_read_as_the_tree_reads_them() {
        for (json, want) in [
            (r#"{"a":3}"#, Some(3)),
            (r#"{"a":-1}"#, None),
            (r#"{"a":1.0}"#, None),
            (r#"{"a":1e0}"#, None),
            (r#"{"a":"1"}"#, None),
            (r#"{"a":18446744073709551615}"#, Some(u64::MAX)),
            (r#"{"a":18446744073709551616}"#, None),
        ] {
            let tree: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(tree["a"].as_u64(), want, "{json}");
            assert_eq!(member(json).raw().and_then(u64_of), want, "{json}");
        }
    }

    #[test]
    fn members_keep_order_and_refuse_a_repeated_key() {
        let read = members(r#"{ "b" : 1, "a\u0041": [ 2 ], "c": "x" }"#).unwrap();
        let keys: Vec<&str> = read.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "aA", "c"]);
        assert_eq!(read[1].1, "[ 2 ]");
        assert!(members(r#"{"a":1,"a":2}"#).is_err());
        assert!(members("[1]").is_err());
        assert!(objects(r#"[{"a":1}, 2]"#).is_err());
        assert_eq!(elements(r#"[{"a":1}, 2]"#).unwrap(), [r#"{"a":1}"#, "2"]);
    }
}
