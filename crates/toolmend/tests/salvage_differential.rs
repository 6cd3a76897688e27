//! Differential test: salvage against `jsonrepair-rs` on inputs both accept.
//!
//! Where both return a value and the values differ, the input must be listed in
//! [`KNOWN_DIFFERENCES`] with the reason we differ; a listed input on which they agree fails the
//! test too, so the list stays honest.

use serde_json::Value;
use toolmend::salvage::{SalvageOptions, salvage};

/// Inputs across the §5.1 kinds and the content policies.
const INPUTS: &[&str] = &[
    r#"{"a": 1, "b": "x"}"#,
    "```json\n{\"a\": 1, \"b\": \"x\"}\n```",
    "```\n{\"a\": 1}\n```",
    "Here you go:\n```json\n{\"a\": 1}\n```\nDone.",
    "Sure, calling the tool: {\"a\": 1, \"b\": \"x\"} hope this helps",
    "I will fill {path} now: {\"path\": \"src/x.rs\"}",
    "{\"a\": 1, \"b\": [1, 2,],}",
    "{'a': 'it\\'s', 'b': 'say \"hi\"'}",
    "{a: 1, b_c: \"x\"}",
    "{\"a\": 1, // note\n \"b\": 2 /* c */}",
    "{\"a\": True, \"b\": None, \"c\": False}",
    "{\"a\": 1 \"b\": 2}",
    "{\"a\": [1 2 3]}",
    "{\"a\": [1, 2, {\"b\": 3",
    "{\"path\": \"src/ma",
    "{\"a\": 1, \"b\":",
    "{\"a\": 1, \"b",
    "{\"content\": \"line1\nline2\tx\"}",
    "{\"content\": \"say \"hi\" now\", \"n\": 1}",
    "{\"code\": \"print(\"x\")\", \"n\": 1}",
    r#"{"path": "C:\Users\me\x.txt"}"#,
    "{\u{201c}a\u{201d}: \u{201c}b\u{201d}}",
    "{\"a\": 1}{\"b\": 2}",
    "{\"a\": 1}\n{\"b\": 2}",
    "{\"args\": \"{\\\"x\\\": 1}\"}",
    "{\"a\": 1}}",
    "{\"a\": [1, 2]]}",
    r#"{"re": "\d+\.\w*", "n": 1}"#,
    r#"{"s": "a\\\"b", "t": 1,}"#,
    "{\"path\": \"/a\", \"limit\": 3,}",
    "{'path': '/foo', 'limit': 5}",
    "{\"edits\": [{\"old\": \"a\", \"new\": \"b\",},],}",
    "{\"command\": \"ls -la\"\n\"timeout\": 10}",
    "{\"text\": \"caf\u{e9} \u{1f389} \u{65e5}\u{672c}\"}",
    "{\"a\": -1.5e3, \"b\": 0, \"c\": [true, false, null]}",
];

/// Inputs where both accept and the values differ, with the reason.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "Here you go:\n```json\n{\"a\": 1}\n```\nDone.",
        "prose around a fence: they return the prose words as an array next to the object",
    ),
    (
        "Sure, calling the tool: {\"a\": 1, \"b\": \"x\"} hope this helps",
        "prose around the object: they return the prose words as an array next to the object",
    ),
    (
        "{\"a\": 1, \"b\":",
        "a dangling key at the cut: they invent `null`; we drop the key (never invent a value)",
    ),
    (
        "{\"a\": 1, \"b",
        "a cut-off key: they invent `\"b\": null`; we drop the key (never invent a value)",
    ),
    (
        r#"{"path": "C:\Users\me\x.txt"}"#,
        "invalid escapes: they drop the backslashes (`C:Usersmex.txt`); we keep them",
    ),
    (
        r#"{"re": "\d+\.\w*", "n": 1}"#,
        "invalid escapes in a regex: they drop the backslashes (`d+.w*`); we keep them",
    ),
];

fn theirs(text: &str) -> Option<Value> {
    serde_json::from_str(&jsonrepair_rs::jsonrepair(text).ok()?).ok()
}

fn ours(text: &str) -> Option<Value> {
    let mut s = salvage(text, &SalvageOptions::default()).ok()?;
    if s.values.len() == 1 {
        s.values.pop()
    } else {
        Some(Value::Array(s.values))
    }
}

#[test]
fn agrees_with_jsonrepair_rs_or_says_why_not() {
    let mut unexplained = Vec::new();
    let mut stale = Vec::new();
    for &text in INPUTS {
        let listed = KNOWN_DIFFERENCES.iter().any(|(t, _)| *t == text);
        let (Some(a), Some(b)) = (ours(text), theirs(text)) else {
            assert!(!listed, "{text:?} is listed but not accepted by both");
            continue;
        };
        match (a == b, listed) {
            (false, false) => unexplained.push(format!("{text:?}\n  ours:   {a}\n  theirs: {b}")),
            (true, true) => stale.push(text),
            _ => {}
        }
    }
    assert!(
        unexplained.is_empty(),
        "unexplained differences:\n{}",
        unexplained.join("\n")
    );
    assert!(stale.is_empty(), "listed but agreeing: {stale:?}");
}
