//! `salvage_to_text` against `salvage`: the text is the values `salvage` returns, each written
//! as `serde_json::to_string` writes it, one per line; the rest of the result and every error
//! the same (issue #31: the text is written from the parser's nodes, without the values).

use proptest::prelude::*;
use serde_json::Value;
use toolmend::salvage::{SalvageOptions, salvage, salvage_to_text};

/// Checks one text; `Err` describes a disagreement.
fn agrees(text: &str) -> Result<(), String> {
    let options = SalvageOptions::default();
    match (salvage(text, &options), salvage_to_text(text, &options)) {
        (Ok(tree), Ok(written)) => {
            let lines: Vec<String> = tree.values.iter().map(Value::to_string).collect();
            let alternative = tree.alternative.as_ref().map(Value::to_string);
            if written.text != lines.join("\n")
                || written.count != tree.values.len()
                || written.repairs != tree.repairs
                || written.dropped_keys != tree.dropped_keys
                || written.truncated != tree.truncated
                || written.alternative != alternative
            {
                return Err(format!("{text:?}: {tree:?} written as {written:?}"));
            }
            Ok(())
        }
        (Err(a), Err(b)) if a == b => Ok(()),
        (a, b) => Err(format!("{text:?}: {a:?} but {b:?}")),
    }
}

/// Every call's arguments in the repository's corpora.
#[test]
fn corpora_agree() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus");
    let mut checked = 0;
    for name in ["salvage.jsonl", "shape.jsonl", "valid.jsonl", "turn.jsonl"] {
        let Ok(corpus) = std::fs::read_to_string(format!("{root}/{name}")) else {
            continue;
        };
        for line in corpus.lines() {
            let case: Value = serde_json::from_str(line).expect("a JSON line");
            let calls = case["message"]["tool_calls"].as_array().cloned();
            for call in calls.into_iter().flatten() {
                if let Some(arguments) = call["function"]["arguments"].as_str() {
                    agrees(arguments).unwrap_or_else(|e| panic!("{name}: {e}"));
                    checked += 1;
                }
            }
            if let Some(content) = case["message"]["content"].as_str() {
                agrees(content).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
    assert!(checked > 100, "only {checked} calls checked");
}

#[test]
fn shapes_agree() {
    for text in [
        "",
        "null",
        "\u{feff} {'a': 1,}",
        r#""{\"a\": 1}""#,
        r#"{"a": 1, "a": {"b": [1, 2,]}, "c": "x\ny"}"#,
        r#"{"a": 1}{"b": 2}"#,
        "{\"a\": 1}\n{\"b\": \"\u{1}\"}",
        r#"{"city": "New York, "gender": "male"}"#,
        r#"{"key": ["value]}"#,
        "Sure! ```json\n{'path': 'a.txt', 'recursive': True,}\n``` done",
        r#"{"n": 1E2, "m": -0, "big": 123456789012345678901234567890, "f": 1.50}"#,
        r#"{"e": "\u00e9\/", "k\u0031": 'it''s'}"#,
        r#"{"a": [{"k": 1], "b": 2}"#,
        r#"{"t": "a" + 'b', "u": None}"#,
        "{\"a\": 1, \"b",
        "{\"pa",
        "prose only",
        // `'…'` keys and strings written as they stand, or escaped when they hold a `"`.
        r#"{'k"1': 'say "hi"', 'k2': 'plain', bare_key: 'x', 'k3': 'a\nb"c', 'k4': '"'}"#,
        r#"['a"', 'b', "c'd", 'e\'f']"#,
    ] {
        agrees(text).unwrap_or_else(|e| panic!("{e}"));
    }
    // Many keys (the node's hash index) and keys sent twice past it.
    let mut many = String::from("{");
    for i in 0..100 {
        many.push_str(&format!("\"k{}\": {i}, ", i % 70));
    }
    many.push_str("\"end\": true,}");
    agrees(&many).unwrap_or_else(|e| panic!("{e}"));
}

/// A `'…'` key after a plain string value is read where the look-ahead at that string's
/// closing quote found its end; a `"` in it is still escaped when written.
#[test]
fn a_single_quoted_key_the_look_ahead_read_keeps_its_quote() {
    let options = SalvageOptions::default();
    let text = r#"{'a': 'x', 'k"y': 'z', 'b': 'w', 'c': 1}"#;
    let written = salvage_to_text(text, &options).expect("salvaged");
    assert_eq!(written.text, r#"{"a":"x","k\"y":"z","b":"w","c":1}"#);
    let tree = salvage(text, &options).expect("salvaged");
    assert_eq!(tree.values[0]["k\"y"], "z");
    agrees(text).unwrap_or_else(|e| panic!("{e}"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn json_like_text_agrees(s in proptest::collection::vec(
        prop_oneof![
            Just("{"), Just("}"), Just("["), Just("]"), Just("\""), Just("'"), Just(","),
            Just(":"), Just("\\"), Just("\\u"), Just("\\ud83d"), Just("1"), Just("-"), Just("."),
            Just("e"), Just("true"), Just("None"), Just("Na"), Just("a"), Just(" "), Just("\n"),
            Just("//"), Just("/*"), Just("*/"), Just("```"), Just("\u{201c}"), Just("\u{201d}"),
            Just("\"k\""), Just("\u{1}"), Just("é"), Just("+"),
        ],
        0..60,
    )) {
        let text: String = s.concat();
        prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
    }

    #[test]
    fn arbitrary_text_agrees(s in ".{0,120}") {
        prop_assert!(agrees(&s).is_ok(), "{}", agrees(&s).unwrap_err());
    }
}
