//! The document entry: lenient parsing of a whole JSON document, any root (object, array,
//! string, number, literal); the readings only documents use are `super::super::document`'s.
//!
//! [`salvage`] reads tool-call *arguments*: its roots are objects and arrays, empty text
//! and `null` mean `{}` (`empty_arguments`), and a quoted string is a double-encoded call. A
//! document is different: `"text"`, `42` and `true` are values in their own right, and empty
//! text holds nothing. [`salvage_document`] reads any root with the same parser and states what
//! happens to a document the text ended inside ([`TruncationPolicy`]).
//!
//! Strict JSON comes back as parsed, with no repairs. Otherwise:
//!
//! - a text that starts with a scalar (`"abc`, `'abc'`, `True`, `1`) and holds nothing else is
//!   read as that scalar, with the same string, escape and literal rules as call arguments;
//! - anything else goes through [`salvage`]'s search (fences, prose, values back to back),
//!   with its refusals kept: prose, `NaN`, `...` and other gaps are errors, never a guess.
//!
//! A scalar cut inside a word or number (`tru`, `1.`) keeps nothing and is an error, never `{}`.
//!
//! Two readings are for documents only, each an option ([`DocumentOptions`]), off by default
//! and never used for calls:
//!
//! - [`DocumentOptions::trim_layout`]: raw line breaks (and the blanks around them) right before
//!   a string's closing quote are layout, not content: `"a": "text⏎"` reads as `"text"`. An
//!   escaped `\n` is content and stays; so does the blank run of a string the text ended inside.
//!   In a tool call the same newline may be the last line of a file, so calls keep it.
//! - [`DocumentOptions::lenient_scalars`]: number and literal spellings that name one value
//!   without inventing anything: Python's `.25`, `1.`, `+1`, `82_461_110` as numbers, `TRUE`,
//!   `Null` as literals (`python_literal`), and a bare token that starts with a digit and ends
//!   at a `,`, `}` or `]` (`1/3`, `10-20`, `1.1.1`, a UUID) kept as the string it spells
//!   (`quotes_normalized`), and `1e` before a delimiter as `1`. What looks cut or unknown
//!   stays refused: `10-`, a lone `-` that is not the text's end, `1e999` where its spelling
//!   is a number JSON cannot hold, unquoted prose (`{"a": ipsum, sic.}`), `...`.
//!   The same option reads the conventions of documents written in other notations where they
//!   name one value: unquoted words as a string value (`{"city": New York}`, `bare_word`),
//!   Python tuples and sets as lists (`(1, 2)`, `{'a', 'b'}`, `pycollections.rs`, tried
//!   only when the text does not read without them), an array left open before its object's
//!   `}` (`{foo: [}`), an escaped typographic quote (`\„`) as the quote, a closing fence
//!   right after a cut string's quote or closer as the string's end, and every fenced block
//!   of a text of several among prose (a call reads the first).

use serde_json::Value;

use super::call::salvage;
use crate::RepairKind;
use crate::salvage::document::{self, Document, DocumentOptions, TruncationPolicy};
use crate::salvage::memo::Memo;
use crate::salvage::parser::Parser;
use crate::salvage::{SalvageError, SalvageErrorKind, SalvageOptions, SyntaxRepair, scan};

/// Reads `text` as one JSON document with any root, repairing what [`salvage`] repairs.
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
    too_large(text, options)?;
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Ok(Document {
            values: vec![value],
            repairs: Vec::new(),
            truncated: false,
        });
    }
    lenient(text, options)
}

/// [`salvage_document`] for a text its caller already found not to be strict JSON (a strict
/// parse of its own stopped at a syntax error): the same result without a second strict parse.
/// Strict JSON given here is still read, by the lenient parser.
///
/// # Errors
///
/// As [`salvage_document`].
pub fn salvage_broken_document(
    text: &str,
    options: &DocumentOptions,
) -> Result<Document, SalvageError> {
    too_large(text, options)?;
    lenient(text, options)
}

fn too_large(text: &str, options: &DocumentOptions) -> Result<(), SalvageError> {
    let max = options.salvage.max_bytes;
    if text.len() > max {
        return Err(SalvageError::at(SalvageErrorKind::TooLarge, text, max));
    }
    Ok(())
}

/// The lenient reading of a text that is not strict JSON; with [`DocumentOptions::lenient_scalars`]
/// a text that cannot be read as written is read once more with its Python tuples and sets
/// respelt as lists ([`super::pycollections`]).
fn lenient(text: &str, options: &DocumentOptions) -> Result<Document, SalvageError> {
    let err = match read_lenient(text, options) {
        Ok(doc) => return Ok(doc),
        Err(err) => err,
    };
    if !options.lenient_scalars {
        return Err(err);
    }
    let Some((respelt, at)) = document::respell(text, options.salvage.max_depth) else {
        return Err(err);
    };
    let Ok(mut doc) = read_lenient(&respelt, options) else {
        return Err(err);
    };
    let repair = SyntaxRepair {
        kind: RepairKind::PythonLiteral,
        offset: at,
    };
    match doc
        .repairs
        .iter()
        .position(|r| r.kind == RepairKind::PythonLiteral)
    {
        Some(i) if doc.repairs[i].offset <= at => {}
        Some(i) => doc.repairs[i] = repair,
        None => doc.repairs.push(repair),
    }
    doc.repairs.sort_by_key(|r| r.offset);
    Ok(doc)
}

/// [`lenient`] for the text as written.
fn read_lenient(text: &str, options: &DocumentOptions) -> Result<Document, SalvageError> {
    let mut limits = options.salvage;
    limits.readings = options.readings();
    let limits = &limits;
    let bytes = text.as_bytes();
    let after_bom = scan::skip_bom(bytes, 0);
    let start = scan::skip_ws(bytes, after_bom);
    if start == bytes.len() {
        return Err(SalvageError::at(SalvageErrorKind::NoJson, text, start));
    }
    let mut doc = match scalar(text, start, limits)? {
        Some(doc) => doc,
        None => match document::bare_opener(text, start) {
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
fn scalar(
    text: &str,
    start: usize,
    limits: &SalvageOptions,
) -> Result<Option<Document>, SalvageError> {
    let bytes = text.as_bytes();
    let b = bytes[start];
    let quoted = scan::Quote::at(bytes, start).is_some();
    let dot = b == b'.' && limits.readings.lenient_scalars;
    if !(quoted || dot || b.is_ascii_alphabetic() || matches!(b, b'-' | b'+' | b'0'..=b'9')) {
        return Ok(None);
    }
    let memo = Memo::default();
    let mut parser =
        Parser::new(text, limits.max_depth, false, &[], &memo).with_readings(limits.readings);
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
        values: vec![value.into_value(text)],
        repairs,
        truncated: cut,
    }))
}

/// Objects and arrays, in fences or among prose: [`salvage`], without its call-argument
/// readings (empty text as `{}` is ruled out before; a quoted root was read as a scalar).
fn containers(text: &str, limits: &SalvageOptions) -> Result<Document, SalvageError> {
    let salvaged = salvage(text, limits)?;
    if limits.readings.lenient_scalars
        && salvaged.values.len() == 1
        && !matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && let Some(doc) = document::fenced_blocks(text, |block| {
            salvage(block, limits).ok().map(|s| Document {
                values: s.values,
                repairs: s.repairs,
                truncated: s.truncated,
            })
        })
    {
        return Ok(doc);
    }
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

    fn lenient(text: &str) -> Result<Value, SalvageErrorKind> {
        let options = DocumentOptions::default()
            .with_trim_layout(true)
            .with_lenient_scalars(true);
        salvage_document(text, &options)
            .map(Document::into_value)
            .map_err(|e| e.kind)
    }

    #[test]
    fn layout_before_a_closing_quote_is_trimmed_only_when_asked() {
        let text = "{\"a\": \"line\n  \n\", \"b\": 1,}";
        assert_eq!(read(text), Ok(json!({"a": "line\n  \n", "b": 1})));
        assert_eq!(lenient(text), Ok(json!({"a": "line", "b": 1})));
        // A raw line break then the indentation of the closing quote.
        assert_eq!(lenient("{'a': 'x\n    ',}"), Ok(json!({"a": "x"})));
        // Keys too; a smart-quoted string; a whole string of layout.
        assert_eq!(lenient("{\"k\n\": 1,}"), Ok(json!({"k": 1})));
        assert_eq!(lenient("[\u{201c}y\n\u{201d}]"), Ok(json!(["y"])));
        assert_eq!(lenient("['\n\n']"), Ok(json!([""])));
        // A stray quote on a line of its own before the member's end goes (json_repair's
        // reading), unless the string holds a code fence, where json_repair keeps it; calls
        // keep it always.
        assert_eq!(
            lenient("{\"a\": \"hello\n\"\n\",}"),
            Ok(json!({"a": "hello"}))
        );
        assert_eq!(
            lenient("{\"a\": \"hello\n\"\n\","),
            Ok(json!({"a": "hello"}))
        );
        assert_eq!(
            lenient("{\"a\": \"\n```{}```\n\"\n\",\n\"b\": \"x\"}"),
            Ok(json!({"a": "\n```{}```\n\"", "b": "x"}))
        );
        assert_eq!(
            read("{\"a\": \"hello\n\"\n\",}"),
            Ok(json!({"a": "hello\n\"\n"}))
        );
        // A closing fence right after a cut string's quote or its object's closer.
        assert_eq!(lenient("{\"k\": \"a, b\"```"), Ok(json!({"k": "a, b"})));
        assert_eq!(lenient("{\"k\": \"value}```"), Ok(json!({"k": "value"})));
        assert_eq!(lenient("{\"k\": [\"v\"]}```\n"), Ok(json!({"k": ["v"]})));
        assert_eq!(read("{\"k\": \"value}```"), Ok(json!({"k": "value}```"})));
        // A fence after a line break is code in the string.
        assert_eq!(
            lenient("{\"k\": \"```py\nx\n```"),
            Ok(json!({"k": "```py\nx\n```"}))
        );
        // A quote with text on its line is content.
        assert_eq!(
            lenient("{\"a\": \"x\n \"y\"\n\",}"),
            Ok(json!({"a": "x\n \"y\""}))
        );
    }

    #[test]
    fn escaped_or_inline_blanks_are_content() {
        // Escaped line breaks, blanks without a line break, an escaped raw line break.
        assert_eq!(
            lenient("{'a': 'x\\n', 'b': 1,}"),
            Ok(json!({"a": "x\n", "b": 1}))
        );
        assert_eq!(lenient("{'a': 'x  ',}"), Ok(json!({"a": "x  "})));
        assert_eq!(lenient("{'a': 'x\\\n',}"), Ok(json!({"a": "x\\\n"})));
        // Two backslashes are one escaped backslash: the line break after them is raw.
        assert_eq!(lenient("{'a': 'x\\\\\n',}"), Ok(json!({"a": "x\\"})));
        // The text ended inside the string: what was read is kept as it is.
        assert_eq!(lenient("{\"a\": \"x\n"), Ok(json!({"a": "x\n"})));
        // Strict JSON is never touched (its newlines are escaped anyway).
        assert_eq!(lenient("{\"a\": \"x\\n\"}"), Ok(json!({"a": "x\n"})));
    }

    #[test]
    fn python_number_spellings_are_numbers_when_asked() {
        for (text, value) in [
            ("{\"n\": .25}", json!({"n": 0.25})),
            ("{\"n\": -.5 }", json!({"n": -0.5})),
            ("{\"n\": 1. }", json!({"n": 1.0})),
            ("{\"n\": +7}", json!({"n": 7})),
            ("{\"n\": 82_461_110}", json!({"n": 82_461_110})),
            ("[1_234.5_6, 2]", json!([1234.56, 2])),
            ("{\"key\": 1e }", json!({"key": 1})),
            ("[2E+, -3e]", json!([2, -3])),
            (
                "[TRUE, False, Null, NONE]",
                json!([true, false, null, null]),
            ),
        ] {
            assert_eq!(lenient(text), Ok(value), "{text}");
            assert!(read(text).is_err(), "{text} without the readings");
        }
        assert_eq!(lenient(".25"), Ok(json!(0.25)));
        // A sign and then only blanks: the text was cut there, and the cut number goes.
        assert_eq!(lenient("[- "), Ok(json!([])));
        assert_eq!(lenient("[1, -\n"), Ok(json!([1])));
        let doc = salvage_document(
            "[.5]",
            &DocumentOptions::default().with_lenient_scalars(true),
        )
        .unwrap();
        assert!(doc.has(RepairKind::PythonLiteral));
    }

    #[test]
    fn digit_led_tokens_keep_their_text() {
        for (text, value) in [
            ("{\"key\": 1/3, \"b\": 2}", json!({"key": "1/3", "b": 2})),
            ("{\"key\": 10-20}", json!({"key": "10-20"})),
            ("{\"key\": 1.1.1 }", json!({"key": "1.1.1"})),
            ("[1, 2notanumber]", json!([1, "2notanumber"])),
            (
                "{\"id\": 57eeeeb1-450b-482c-81b9-4be77e95dee2}",
                json!({"id": "57eeeeb1-450b-482c-81b9-4be77e95dee2"}),
            ),
        ] {
            assert_eq!(lenient(text), Ok(value), "{text}");
        }
        let doc = salvage_document(
            "[1/3]",
            &DocumentOptions::default().with_lenient_scalars(true),
        )
        .unwrap();
        assert!(doc.has(RepairKind::QuotesNormalized));
    }

    #[test]
    fn cut_or_unknown_scalars_stay_refused() {
        for text in [
            "{\"key\": 10- }",
            "[- 1]",
            "{\"key\": 007}",
            "{\"key\": 1/3 and more}",
            "{\"a\": yes}",
            "[1, 2, ...]",
            "{\"a\": }",
        ] {
            assert!(lenient(text).is_err(), "{text}");
        }
        // At the end of the text a token may be cut: read as without the readings.
        assert_eq!(lenient("[1, 1/3"), read("[1, 1/3"));
        assert_eq!(lenient("[1, 1.5"), Ok(json!([1, 1.5])));
    }

    #[test]
    fn one_word_unquoted_values_are_strings_when_asked() {
        for (text, value) in [
            (
                "{\"name\": John, \"age\": 30}",
                json!({"name": "John", "age": 30}),
            ),
            (
                "{key:value,key2:value2}",
                json!({"key": "value", "key2": "value2"}),
            ),
            ("{\"a\": value \"b\": 1}", json!({"a": "value", "b": 1})),
            ("{\"a\": en-US , }", json!({"a": "en-US"})),
            ("[alpha, beta]", json!(["alpha", "beta"])),
            ("{\"city\": New York}", json!({"city": "New York"})),
            (
                "[{\"name\": Weiss  Savage\n  }, {\"id\": 2}]",
                json!([{"name": "Weiss  Savage"}, {"id": 2}]),
            ),
            ("{\"a\": big yes}", json!({"a": "big yes"})),
        ] {
            assert_eq!(lenient(text), Ok(value), "{text}");
            assert!(read(text).is_err(), "{text} without the readings");
        }
        for text in [
            // Prose, words of other notations, a sentence's end, a cut word, a phrase with a
            // comma, colon or quote in it or across a line break, or one too long to be a value.
            "{\"a\": sic tamet. \"b\": 1}",
            "{\"a\": ipsum, sic, datum}",
            "{\"a\": note: this}",
            "{\"a\": it's}",
            "{\"a\": two\nlines}",
            "{\"a\": yes}",
            "{\"a\": undefined}",
            "{\"a\": nil}",
            "{\"a\": done.}",
            "{\"a\": value",
            "{\"a\": value \"b\" 1}",
            "just words",
            format!("{{\"a\": {}}}", ["word"; 60].join(" ")).as_str(),
        ] {
            assert!(lenient(text).is_err(), "{text}");
        }
    }

    #[test]
    fn an_array_holding_a_member_opens_an_object_when_asked() {
        for text in [
            "[\"key\":\"value\"]",
            "[ \"key\":\"value\"]",
            "[\"key\":\"value\"}]",
        ] {
            assert_eq!(lenient(text), Ok(json!([{"key": "value"}])), "{text}");
            assert!(read(text).is_err(), "{text} without the readings");
        }
        let doc = salvage_document(
            "[\"key\": 1, \"b\": [2]]",
            &DocumentOptions::default().with_lenient_scalars(true),
        )
        .unwrap();
        assert_eq!(doc.values, [json!([{"key": 1, "b": [2]}])]);
        assert!(doc.has(RepairKind::OpenerInserted));
        // A later element or a non-string before the colon: where the object starts is a guess.
        for text in ["[\"a\", 1: 2]", "[1: 2]", "[true: 1]", "[{\"a\": 1}: 2]"] {
            assert!(lenient(text).is_err(), "{text}");
        }
    }

    #[test]
    fn misplaced_quotes_around_keys_and_values_are_read_when_asked() {
        for (text, value) in [
            // A key missing its closing quote before the colon.
            ("{\"key:\"value\"}", json!({"key": "value"})),
            ("{\"key:value}", json!({"key": "value"})),
            ("{'k:'v', \"n\": 1}", json!({"k": "v", "n": 1})),
            // A key holding quotes of its own.
            ("{\"k\"e\"y\": \"value\"}", json!({"k\"e\"y": "value"})),
            // A value missing its opening quote; a number followed by a stray one.
            (
                "{ \"words\": abcdef\", \"numbers\": 12345\", \"words2\": ghijkl\" }",
                json!({"words": "abcdef", "numbers": 12345, "words2": "ghijkl"}),
            ),
            (
                "{\"lorem\": ipsum, sic, datum.\",}",
                json!({"lorem": "ipsum, sic, datum."}),
            ),
            ("{\"n\": 1\", \"m\": 2}", json!({"n": 1, "m": 2})),
            ("[1\", 2]", json!([1, 2])),
        ] {
            assert_eq!(lenient(text), Ok(value.clone()), "{text}");
            assert_ne!(read(text), Ok(value), "{text} without the readings");
        }
        for (text, value) in [
            // A key with a colon in it, followed by its own colon, is that key.
            ("{\"a:b\": 1}", json!({"a:b": 1})),
            ("{\":x\" : 1}", json!({":x": 1})),
        ] {
            assert_eq!(lenient(text), Ok(value.clone()), "{text}");
            assert_eq!(read(text), Ok(value), "{text} without the readings");
        }
        for text in [
            // A member or prose before the quote, or something else after it.
            "{\"a\": x: y\", \"b\": 1}",
            "{\"a\": x\" y, \"b\": 1}",
            "{\"ab\"c, \"d\": 1}",
            "{\"a\": 1, \"b\"x: 2}",
            "{\"\" key\":\"val\"",
            "{\"\"answer\"\":[{\"\"traits\"\":''Female aged 60+'',\"\"n\"\":\"\"5\"\"}]}",
        ] {
            assert!(lenient(text).is_err(), "{text}");
        }
    }

    #[test]
    fn python_tuples_and_sets_are_lists_when_asked() {
        for (text, value) in [
            ("(\"a\", \"b\")", json!(["a", "b"])),
            ("((1, 2), (3, 4))", json!([[1, 2], [3, 4]])),
            (
                "{\"c\": (1, 2), \"e\": (), \"ok\": True}",
                json!({"c": [1, 2], "e": [], "ok": true}),
            ),
            ("(1)", json!(1)),
            ("{\"g\": (\"x\")}", json!({"g": "x"})),
            ("{'a', 'b'}", json!(["a", "b"])),
            ("Here:\n```json\n(1, 2)\n```", json!([1, 2])),
        ] {
            assert_eq!(lenient(text), Ok(value), "{text}");
            assert!(read(text).is_err(), "{text} without the readings");
        }
        let doc = salvage_document(
            "{'a': (1,)}",
            &DocumentOptions::default().with_lenient_scalars(true),
        )
        .unwrap();
        assert!(doc.has(RepairKind::PythonLiteral));
        assert_eq!(doc.into_value(), json!({"a": [1]}));
        // Text that reads as written is never respelt: the parenthesis is prose there.
        assert_eq!(lenient("Note (1, 2): {\"a\": 1}"), Ok(json!({"a": 1})));
    }

    #[test]
    fn document_closers_and_escapes_when_asked() {
        assert_eq!(lenient("{foo: [}"), Ok(json!({"foo": []})));
        assert!(read("{foo: [}").is_err());
        assert_eq!(lenient("[\""), Ok(json!([])));
        let smart = "{\"t\": \"a \\\u{201e} b\", \"y\": 1}";
        assert_eq!(lenient(smart), Ok(json!({"t": "a \u{201e} b", "y": 1})));
        assert_eq!(read(smart), Ok(json!({"t": "a \\\u{201e} b", "y": 1})));
    }

    #[test]
    fn several_fenced_blocks_among_prose_are_all_read_when_asked() {
        let text = "lorem ```json {\"k\":\"v\"} ``` ipsum ```json [1,2,True] ``` 42";
        assert_eq!(lenient(text), Ok(json!([{"k": "v"}, [1, 2, true]])));
        assert_eq!(read(text), Ok(json!({"k": "v"})));
        // A block that does not read: the first block alone, as without the reading.
        let bad = "a ```json {\"k\": 1} ``` b ```json [1, ...] ``` c";
        assert_eq!(lenient(bad), Ok(json!({"k": 1})));
    }

    #[test]
    fn call_salvage_keeps_its_readings() {
        let call = super::super::salvage("{\"a\": \"x\n\", \"n\": .5}", &SalvageOptions::default());
        assert!(call.is_err());
        let call = super::super::salvage("{\"a\": \"x\n\",}", &SalvageOptions::default()).unwrap();
        assert_eq!(call.values, vec![json!({"a": "x\n"})]);
    }

    #[test]
    fn a_broken_document_reads_as_through_the_strict_attempt() {
        let options = DocumentOptions::default().with_lenient_scalars(true);
        for text in ["{'a': [1, .5", "[1, 2,]", "'x'", "[", "", "prose"] {
            assert_eq!(
                salvage_broken_document(text, &options),
                salvage_document(text, &options),
                "{text}"
            );
        }
        let small = options.with_salvage(SalvageOptions::default().with_max_bytes(2));
        let err = salvage_broken_document("[1,", &small).unwrap_err();
        assert_eq!(err.kind, SalvageErrorKind::TooLarge);
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

    #[test]
    fn cut_strings_are_trimmed_only_when_asked() {
        let trim = DocumentOptions::default().with_trim_cut_strings(true);
        let read_trimmed = |text: &str| salvage_document(text, &trim).map(Document::into_value);
        // Trailing blanks of the cut string go; a dangling backslash stays as a backslash.
        assert_eq!(
            read_trimmed(r#"{"key": "val\n"#).unwrap(),
            json!({"key": "val"})
        );
        assert_eq!(
            read_trimmed("{\"key\": \"val  \n\t").unwrap(),
            json!({"key": "val"})
        );
        assert_eq!(
            read_trimmed(r#"{"key": "val\"#).unwrap(),
            json!({"key": "val\\"})
        );
        // An escaped backslash is no dangling one.
        assert_eq!(
            read_trimmed(r#"{"key": "val\\"#).unwrap(),
            json!({"key": "val\\"})
        );
        assert_eq!(read_trimmed(r#"["a ", "b \n"#).unwrap(), json!(["a ", "b"]));
        // Closed strings keep their blanks, and by default a cut string keeps what was read.
        assert_eq!(
            read_trimmed(r#"{"key": "val\n"}"#).unwrap(),
            json!({"key": "val\n"})
        );
        assert_eq!(read(r#"{"key": "val\n"#), Ok(json!({"key": "val\n"})));
        assert_eq!(read(r#"{"key": "val\"#), Ok(json!({"key": "val"})));
    }

    #[test]
    fn a_bare_member_ends_a_string_cut_before_the_closers_when_asked() {
        // json_repair's reading: `b: 1` is a member, not the end of the string.
        assert_eq!(
            lenient(r#"{"a": "first, b: 1}"#),
            Ok(json!({"a": "first", "b": 1}))
        );
        assert_eq!(
            lenient(r#"{"a": "first, b: [1]}"#),
            Ok(json!({"a": "first", "b": [1]}))
        );
        // Prose after the colon, or no colon, is content; calls never split.
        assert_eq!(
            lenient(r#"{"a": "Hi, all: it is}"#),
            Ok(json!({"a": "Hi, all: it is"}))
        );
        assert_eq!(lenient(r#"{"a": "x, y}"#), Ok(json!({"a": "x, y"})));
        assert_eq!(
            read(r#"{"a": "first, b: 1}"#),
            Ok(json!({"a": "first, b: 1"}))
        );
    }

    #[test]
    fn comments_between_documents_separate_them() {
        // `//` and `/* */` between values, with or without a comma (json_repair's reading).
        for text in [
            "{\"a\": 1} // note\n{\"b\": 2}",
            "{\"a\": 1} /* c */ {\"b\": 2}",
            "{\"a\": 1}, /* c */ {\"b\": 2}",
            "{\"a\": 1}, // c\n{\"b\": 2}",
            "{\"a\": 1},\n/* c */\n// d\n{\"b\": 2}",
        ] {
            let doc = salvage_document(text, &DocumentOptions::default()).unwrap();
            assert_eq!(doc.values, [json!({"a": 1}), json!({"b": 2})], "{text:?}");
            assert!(doc.has(RepairKind::CommentRemoved), "{text:?}");
        }
        // `#` line comments (Python's, YAML's) with the document readings only.
        for text in [
            "{\"a\": 1}\n# c\n{\"b\": 2}",
            "{\"a\": 1} # c\n{\"b\": 2}",
            "{\"a\": 1}, # c\n{\"b\": 2}",
        ] {
            let read = |options: &DocumentOptions| salvage_document(text, options).unwrap().values;
            let lenient = DocumentOptions::default().with_lenient_scalars(true);
            assert_eq!(
                read(&lenient),
                [json!({"a": 1}), json!({"b": 2})],
                "{text:?}"
            );
            assert_eq!(
                read(&DocumentOptions::default()),
                [json!({"a": 1})],
                "{text:?}"
            );
        }
        // A trailing comment is no value; a comment that runs to the end hides what follows.
        assert_eq!(lenient("{\"a\": 1} # tail"), Ok(json!({"a": 1})));
        assert_eq!(lenient("{\"a\": 1}, /* c"), Ok(json!({"a": 1})));
        assert_eq!(lenient("{\"a\": 1} // c {\"b\": 2}"), Ok(json!({"a": 1})));
        // Inside a value `#` is not a comment.
        assert!(lenient("{\"a\": 1, # c\n\"b\": 2}").is_err());
    }
}
