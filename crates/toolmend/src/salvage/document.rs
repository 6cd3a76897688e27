//! Lenient parsing of a whole JSON document: any root (object, array, string, number, literal).
//!
//! [`super::salvage`] reads tool-call *arguments*: its roots are objects and arrays, empty text
//! and `null` mean `{}` (`empty_arguments`), and a quoted string is a double-encoded call. A
//! document is different: `"text"`, `42` and `true` are values in their own right, and empty
//! text holds nothing. [`salvage_document`] reads any root with the same parser and states what
//! happens to a document the text ended inside ([`TruncationPolicy`]).
//!
//! Strict JSON comes back as parsed, with no repairs. Otherwise:
//!
//! - a text that starts with a scalar (`"abc`, `'abc'`, `True`, `1`) and holds nothing else is
//!   read as that scalar, with the same string, escape and literal rules as call arguments;
//! - anything else goes through [`super::salvage`]'s search (fences, prose, values back to back),
//!   with its refusals kept: prose, `NaN`, `...` and other gaps are errors, never a guess.
//!
//! A scalar cut inside a word or number (`tru`, `1.`) keeps nothing and is an error, never `{}`.

use serde_json::Value;

use super::memo::Memo;
use super::parse::Parser;
use super::{SalvageError, SalvageErrorKind, SalvageOptions, SyntaxRepair, scan};
use crate::RepairKind;

/// The default size limit for a document: larger than a call's, since documents are files.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// What to do with a document the text ended inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TruncationPolicy {
    /// Close it: keep what was read, drop what cannot be completed without inventing (a dangling
    /// key, a cut literal), close every open container (`truncation_closed`). For documents.
    #[default]
    Close,
    /// Refuse it with [`SalvageErrorKind::Syntax`] at the end of the text: the policy for
    /// calls to tools whose effects a partial value could change (DESIGN §5.1).
    Refuse,
}

/// Options for [`salvage_document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocumentOptions {
    /// Size and depth limits; `max_bytes` defaults to [`MAX_DOCUMENT_BYTES`].
    pub salvage: SalvageOptions,
    /// What to do when the text ends inside the document.
    pub truncation: TruncationPolicy,
}

impl Default for DocumentOptions {
    fn default() -> Self {
        Self {
            salvage: SalvageOptions::default().with_max_bytes(MAX_DOCUMENT_BYTES),
            truncation: TruncationPolicy::Close,
        }
    }
}

impl DocumentOptions {
    /// These options with another truncation policy.
    #[must_use]
    pub const fn with_truncation(mut self, truncation: TruncationPolicy) -> Self {
        self.truncation = truncation;
        self
    }

    /// These options with other size and depth limits.
    #[must_use]
    pub const fn with_salvage(mut self, salvage: SalvageOptions) -> Self {
        self.salvage = salvage;
        self
    }
}

/// What [`salvage_document`] made of a text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// The values found, in text order; never empty. More than one means several complete
    /// values back to back (`{…}{…}`, NDJSON); [`Self::into_value`] makes them one array.
    pub values: Vec<Value>,
    /// The repairs made, each kind once at the offset of its first occurrence; empty when the
    /// text was strict JSON.
    pub repairs: Vec<SyntaxRepair>,
    /// The text ended inside the last value, which was closed ([`TruncationPolicy::Close`]).
    pub truncated: bool,
}

impl Document {
    /// The one value, or an array of the values when the text held several.
    #[must_use]
    pub fn into_value(mut self) -> Value {
        if self.values.len() == 1 {
            self.values.pop().unwrap_or(Value::Null)
        } else {
            Value::Array(self.values)
        }
    }

    /// Whether the given kind was among the repairs.
    #[must_use]
    pub fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }
}

/// Reads `text` as one JSON document with any root, repairing what [`super::salvage`] repairs.
///
/// # Errors
///
/// A [`SalvageError`]: [`SalvageErrorKind::TooLarge`] and [`SalvageErrorKind::TooDeep`] for the
/// limits, [`SalvageErrorKind::NoJson`] for empty text or prose, [`SalvageErrorKind::NonFinite`]
/// for `NaN`/`Infinity`, [`SalvageErrorKind::Syntax`] for text that cannot be read (and, with
/// [`TruncationPolicy::Refuse`], for text that ends inside the document).
///
/// # Examples
///
/// ```
/// use toolmend::salvage::{DocumentOptions, TruncationPolicy, salvage_document};
///
/// let options = DocumentOptions::default();
/// let doc = salvage_document("[1, 2, 'three',", &options)?;
/// assert!(doc.truncated);
/// assert_eq!(doc.into_value(), serde_json::json!([1, 2, "three"]));
///
/// let doc = salvage_document("'quoted'", &options)?;
/// assert_eq!(doc.into_value(), serde_json::json!("quoted"));
///
/// let refuse = options.with_truncation(TruncationPolicy::Refuse);
/// assert!(salvage_document("[1, 2,", &refuse).is_err());
/// # Ok::<(), toolmend::salvage::SalvageError>(())
/// ```
pub fn salvage_document(text: &str, options: &DocumentOptions) -> Result<Document, SalvageError> {
    let limits = &options.salvage;
    if text.len() > limits.max_bytes {
        return Err(SalvageError::at(
            SalvageErrorKind::TooLarge,
            text,
            limits.max_bytes,
        ));
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(Document {
            values: vec![value],
            repairs: Vec::new(),
            truncated: false,
        });
    }
    let bytes = text.as_bytes();
    let after_bom = scan::skip_bom(bytes, 0);
    let start = scan::skip_ws(bytes, after_bom);
    if start == bytes.len() {
        return Err(SalvageError::at(SalvageErrorKind::NoJson, text, start));
    }
    let mut doc = match scalar(text, start, limits.max_depth)? {
        Some(doc) => doc,
        None => match bare_opener(text, start) {
            Some(doc) => doc,
            None => containers(text, limits)?,
        },
    };
    if after_bom > 0 {
        doc.repairs.insert(
            0,
            SyntaxRepair {
                kind: RepairKind::BomRemoved,
                offset: 0,
            },
        );
    }
    if doc.truncated && options.truncation == TruncationPolicy::Refuse {
        return Err(SalvageError::at(SalvageErrorKind::Syntax, text, text.len()));
    }
    Ok(doc)
}

/// A text that starts with a scalar and holds nothing after it; `None` when it does not start
/// with one or more text follows (prose that begins with a word, `"a" {…}`), which the
/// container search then reads.
fn scalar(text: &str, start: usize, max_depth: usize) -> Result<Option<Document>, SalvageError> {
    let bytes = text.as_bytes();
    let b = bytes[start];
    let quoted = scan::Quote::at(bytes, start).is_some();
    if !(quoted || b.is_ascii_alphabetic() || matches!(b, b'-' | b'+' | b'0'..=b'9')) {
        return Ok(None);
    }
    let memo = Memo::default();
    let mut parser = Parser::new(text, max_depth, false, &[], &memo);
    parser.pos = start;
    let (value, cut) = match parser.parse_value() {
        Ok(read) => read,
        // A bare word that is not a literal: prose, which may hold an object further on.
        Err(e) if e.kind == SalvageErrorKind::Syntax => return Ok(None),
        Err(e) => return Err(SalvageError::at(e.kind, text, e.offset)),
    };
    if value.is_object() || value.is_array() {
        // Only a cut literal or number closes to a container here (nothing was kept).
        return Err(SalvageError::at(SalvageErrorKind::Syntax, text, start));
    }
    if !cut && scan::skip_ws(bytes, parser.pos) != bytes.len() {
        return Ok(None);
    }
    let (repairs, _) = parser.log.into_sorted();
    Ok(Some(Document {
        values: vec![value],
        repairs,
        truncated: cut,
    }))
}

/// A document cut right after its opening bracket (`[`, `{`, `{"`): the empty container, closed.
/// Call salvage refuses this (a call that kept nothing is no call); a document that kept
/// nothing is still the container it opened.
fn bare_opener(text: &str, start: usize) -> Option<Document> {
    let value = match text[start..].trim_end() {
        "[" => Value::Array(Vec::new()),
        "{" | "{\"" => Value::Object(serde_json::Map::new()),
        _ => return None,
    };
    Some(Document {
        values: vec![value],
        repairs: vec![SyntaxRepair {
            kind: RepairKind::TruncationClosed,
            offset: text.len(),
        }],
        truncated: true,
    })
}

/// Objects and arrays, in fences or among prose: [`super::salvage`], without its call-argument
/// readings (empty text as `{}` is ruled out before; a quoted root was read as a scalar).
fn containers(text: &str, limits: &SalvageOptions) -> Result<Document, SalvageError> {
    let salvaged = super::salvage(text, limits)?;
    Ok(Document {
        values: salvaged.values,
        repairs: salvaged.repairs,
        truncated: salvaged.truncated,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(text: &str) -> Result<Value, SalvageErrorKind> {
        salvage_document(text, &DocumentOptions::default())
            .map(Document::into_value)
            .map_err(|e| e.kind)
    }

    #[test]
    fn strict_json_of_any_root_is_parsed_unchanged() {
        for (text, value) in [
            ("\"abc\"", json!("abc")),
            ("12", json!(12)),
            ("true", json!(true)),
            ("null", json!(null)),
            ("[1, {\"a\": 2}]", json!([1, {"a": 2}])),
        ] {
            let doc = salvage_document(text, &DocumentOptions::default()).unwrap();
            assert!(doc.repairs.is_empty(), "{text}");
            assert_eq!(doc.into_value(), value, "{text}");
        }
    }

    #[test]
    fn scalar_roots_are_repaired() {
        assert_eq!(read("'single'"), Ok(json!("single")));
        assert_eq!(read("\"cut string"), Ok(json!("cut string")));
        assert_eq!(read("True"), Ok(json!(true)));
        assert_eq!(read("  None  "), Ok(json!(null)));
        assert_eq!(read("'a' + 'b'"), Ok(json!("ab")));
    }

    #[test]
    fn a_cut_word_or_number_keeps_nothing() {
        assert_eq!(read("tru"), Err(SalvageErrorKind::Syntax));
        assert_eq!(read("-"), Err(SalvageErrorKind::Syntax));
    }

    #[test]
    fn empty_text_and_prose_hold_no_json() {
        assert_eq!(read(""), Err(SalvageErrorKind::NoJson));
        assert_eq!(read("   \n"), Err(SalvageErrorKind::NoJson));
        assert_eq!(read("just some words"), Err(SalvageErrorKind::NoJson));
    }

    #[test]
    fn refusals_of_call_salvage_stand() {
        assert_eq!(read("NaN"), Err(SalvageErrorKind::NonFinite));
        assert_eq!(read("[1, NaN]"), Err(SalvageErrorKind::NonFinite));
        assert!(read("[1, 2, ...]").is_err());
    }

    #[test]
    fn containers_go_through_the_call_search() {
        assert_eq!(read("Result: {'a': 1,}"), Ok(json!({"a": 1})));
        assert_eq!(read("```json\n[1, 2]\n```"), Ok(json!([1, 2])));
        assert_eq!(
            read("{\"a\": 1}{\"b\": 2}"),
            Ok(json!([{"a": 1}, {"b": 2}]))
        );
        // A word before the object is prose, not a scalar root.
        assert_eq!(read("true {\"a\": 1}"), Ok(json!({"a": 1})));
    }

    #[test]
    fn truncation_follows_the_policy() {
        let doc = salvage_document("{\"a\": [1, 2", &DocumentOptions::default()).unwrap();
        assert!(doc.truncated && doc.has(RepairKind::TruncationClosed));
        assert_eq!(doc.into_value(), json!({"a": [1, 2]}));
        let refuse = DocumentOptions::default().with_truncation(TruncationPolicy::Refuse);
        let err = salvage_document("{\"a\": [1, 2", &refuse).unwrap_err();
        assert_eq!((err.kind, err.offset), (SalvageErrorKind::Syntax, 11));
        assert!(salvage_document("\"cut", &refuse).is_err());
    }

    #[test]
    fn a_bare_opener_closes_to_its_empty_container() {
        assert_eq!(read("["), Ok(json!([])));
        assert_eq!(read(" { "), Ok(json!({})));
        assert_eq!(read("{\""), Ok(json!({})));
        let refuse = DocumentOptions::default().with_truncation(TruncationPolicy::Refuse);
        assert!(salvage_document("[", &refuse).is_err());
    }

    #[test]
    fn a_bom_is_reported() {
        let doc = salvage_document("\u{feff}'x'", &DocumentOptions::default()).unwrap();
        assert!(doc.has(RepairKind::BomRemoved));
        assert_eq!(doc.into_value(), json!("x"));
    }

    #[test]
    fn limits_hold() {
        let small = DocumentOptions::default().with_salvage(
            SalvageOptions::default()
                .with_max_bytes(4)
                .with_max_depth(3),
        );
        let err = salvage_document("[1, 2, 3]", &small).unwrap_err();
        assert_eq!(err.kind, SalvageErrorKind::TooLarge);
        let deep =
            DocumentOptions::default().with_salvage(SalvageOptions::default().with_max_depth(3));
        assert_eq!(
            salvage_document("[[[[[1,]]]]]", &deep).unwrap_err().kind,
            SalvageErrorKind::TooDeep
        );
    }
}
