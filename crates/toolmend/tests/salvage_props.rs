//! Property tests of salvage: every single corruption of a serialised valid object salvages back
//! to it; truncation at any character gives a prefix of it (or a typed error); arbitrary text
//! never panics.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};
use toolmend::RepairKind;
use toolmend::salvage::{SalvageOptions, salvage};

/// Strings with the characters that make escaping hard, plus arbitrary ones.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        proptest::collection::vec(
            prop_oneof![
                Just('"'),
                Just('\''),
                Just('\\'),
                Just('\n'),
                Just('\t'),
                Just('\r'),
                Just('\u{1}'),
                Just('{'),
                Just('}'),
                Just('['),
                Just(']'),
                Just(','),
                Just(':'),
                Just('/'),
                Just('*'),
                Just('`'),
                Just('é'),
                Just('🎉'),
                Just('\u{201c}'),
                Just('\u{201d}'),
                any::<char>(),
                "[a-zA-Z0-9 ]".prop_map(|s| s.chars().next().unwrap_or('a')),
            ],
            0..16,
        )
        .prop_map(|chars| chars.into_iter().collect()),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| Value::from(i64::from(n))),
        // Quarter steps serialise exactly and briefly ("12.25"), so cut numbers stay comparable.
        (-4000i32..4000).prop_map(|n| Value::Number(Number::from_f64(f64::from(n) / 4.0).unwrap())),
        text().prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    proptest::collection::vec(("[a-z_]{1,8}|.{0,6}", value()), 0..6)
        .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>()))
}

/// A JSON-like serialiser with the malformations of `make_corpus.py`.
#[derive(Clone, Copy, Default)]
struct Dump {
    single: bool,
    python: bool,
    trailing_comma: bool,
    raw_ctrl: bool,
}

impl Dump {
    fn value(self, v: &Value, out: &mut String) {
        match v {
            Value::Null if self.python => out.push_str("None"),
            Value::Bool(true) if self.python => out.push_str("True"),
            Value::Bool(false) if self.python => out.push_str("False"),
            Value::String(s) => self.string(s, out),
            Value::Array(items) if !items.is_empty() => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.value(item, out);
                }
                self.close(']', out);
            }
            Value::Object(map) if !map.is_empty() => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.string(k, out);
                    out.push_str(": ");
                    self.value(item, out);
                }
                self.close('}', out);
            }
            other => out.push_str(&serde_json::to_string(other).unwrap()),
        }
    }

    fn close(self, closer: char, out: &mut String) {
        if self.trailing_comma {
            out.push(',');
        }
        out.push(closer);
    }

    fn string(self, s: &str, out: &mut String) {
        let quote = if self.single { '\'' } else { '"' };
        out.push(quote);
        for ch in s.chars() {
            match ch {
                '\\' => out.push_str("\\\\"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                '\n' | '\t' | '\r' if self.raw_ctrl => out.push(ch),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push(quote);
    }

    fn dump(self, v: &Value) -> String {
        let mut out = String::new();
        self.value(v, &mut out);
        out
    }
}

fn options() -> SalvageOptions {
    SalvageOptions::default()
}

/// Whether `got` is what a cut-off `full` can close to: the same keys and elements in order,
/// some missing at the end, the last one itself a prefix.
fn is_prefix(got: &Value, full: &Value) -> bool {
    match (got, full) {
        (Value::String(a), Value::String(b)) => b.starts_with(a.as_str()),
        // A cut `-0` reads as the float -0.0, printed "-0.0": compare the digits that were read.
        (Value::Number(a), Value::Number(b)) => {
            let a = a.to_string();
            b.to_string()
                .starts_with(a.strip_suffix(".0").unwrap_or(&a))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() <= b.len()
                && a.iter().zip(b).enumerate().all(|(i, (x, y))| {
                    if i + 1 == a.len() {
                        is_prefix(x, y)
                    } else {
                        x == y
                    }
                })
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() <= b.len()
                && a.iter().zip(b).enumerate().all(|(i, ((ka, x), (kb, y)))| {
                    ka == kb
                        && if i + 1 == a.len() {
                            is_prefix(x, y)
                        } else {
                            x == y
                        }
                })
        }
        (a, b) => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn strict_text_salvages_unchanged(v in object()) {
        let s = salvage(&serde_json::to_string(&v).unwrap(), &options()).unwrap();
        prop_assert_eq!(&s.values, &vec![v]);
        prop_assert!(s.repairs.is_empty());
    }

    #[test]
    fn each_single_corruption_salvages_back(v in object()) {
        let compact = serde_json::to_string(&v).unwrap();
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let corruptions = [
            format!("```json\n{pretty}\n```"),
            format!("Sure! I'll call the tool with these arguments:\n\n{compact} Let me know."),
            Dump { trailing_comma: true, ..Dump::default() }.dump(&v),
            Dump { single: true, ..Dump::default() }.dump(&v),
            Dump { python: true, ..Dump::default() }.dump(&v),
            Dump { raw_ctrl: true, ..Dump::default() }.dump(&v),
            format!("```\n{}\n```", Dump { python: true, trailing_comma: true, ..Dump::default() }.dump(&v)),
        ];
        for text in corruptions {
            let s = salvage(&text, &options());
            prop_assert!(s.is_ok(), "{:?}: {:?}", text, s);
            let s = s.unwrap();
            prop_assert_eq!(&s.values, &vec![v.clone()], "{:?}", text);
            prop_assert!(!s.truncated);
            prop_assert!(!s.has(RepairKind::TruncationClosed));
        }
    }

    #[test]
    fn truncation_at_any_character_gives_a_prefix_or_an_error(v in object()) {
        let text = serde_json::to_string(&v).unwrap();
        for (cut, _) in text.char_indices().skip(1) {
            let Ok(s) = salvage(&text[..cut], &options()) else { continue };
            prop_assert_eq!(s.values.len(), 1, "{:?}", &text[..cut]);
            prop_assert!(s.truncated, "{:?}", &text[..cut]);
            prop_assert!(is_prefix(&s.values[0], &v), "{:?} gave {}", &text[..cut], s.values[0]);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in ".{0,200}") {
        let _ = salvage(&s, &options());
    }

    #[test]
    fn json_like_text_never_panics(s in proptest::collection::vec(
        prop_oneof![
            Just("{"), Just("}"), Just("["), Just("]"), Just("\""), Just("'"), Just(","),
            Just(":"), Just("\\"), Just("\\u"), Just("\\ud83d"), Just("1"), Just("-"), Just("."),
            Just("e"), Just("true"), Just("None"), Just("Na"), Just("a"), Just(" "), Just("\n"),
            Just("//"), Just("/*"), Just("*/"), Just("```"), Just("\u{201c}"), Just("\u{201d}"),
        ],
        0..60,
    )) {
        let text: String = s.concat();
        if let Ok(s) = salvage(&text, &options()) {
            prop_assert!(!s.values.is_empty());
        }
    }
}
