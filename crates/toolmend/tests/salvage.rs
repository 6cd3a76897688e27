//! Salvage, table-driven: every §5.1 kind, the content policies, concatenation, truncation and
//! the typed errors. Expected values are written out by hand.

use serde_json::{Value, json};
use toolmend::RepairKind::*;
use toolmend::salvage::{SalvageErrorKind, SalvageOptions, salvage};

#[path = "support/salvage_check.rs"]
#[allow(dead_code, reason = "each test file uses some of the shared checks")]
mod salvage_check;
use salvage_check::{check, check_error, kinds, run};

#[test]
fn strict_json_comes_back_unchanged_with_no_repairs() {
    // Numbers keep their text (`arbitrary_precision`): the value is serde_json's reading.
    let strict = r#"{"a": 1, "b": [true, null, "x"], "c": {"d": -1.5e3}}"#;
    check(strict, serde_json::from_str(strict).unwrap(), &[]);
    check("[1, 2]", json!([1, 2]), &[]);
    check("{}", json!({}), &[]);
}

#[test]
fn empty_arguments() {
    for text in ["", "  \n", "null", " null ", "\"\"", "\"  \""] {
        check(text, json!({}), &[EmptyArguments]);
    }
}

#[test]
fn double_encoded() {
    check(
        r#""{\"path\": \"a\"}""#,
        json!({"path": "a"}),
        &[DoubleEncoded],
    );
    check(
        r#""{'path': 'a',}""#,
        json!({"path": "a"}),
        &[DoubleEncoded, QuotesNormalized, TrailingCommaRemoved],
    );
    check_error(r#""ls -la""#, SalvageErrorKind::NoJson);
    check_error(r#""[1, 2]""#, SalvageErrorKind::NoJson);
}

#[test]
fn fence_unwrapped() {
    check(
        "```json\n{\"path\": \"/foo\"}\n```",
        json!({"path": "/foo"}),
        &[FenceUnwrapped],
    );
    check(
        "```\n{\"path\": \"/bar\"}\n```",
        json!({"path": "/bar"}),
        &[FenceUnwrapped],
    );
    check("```json {\"a\": 1}```", json!({"a": 1}), &[FenceUnwrapped]);
    check(
        "Here you go:\n```json\n{\"a\": 1}\n```\nDone.",
        json!({"a": 1}),
        &[FenceUnwrapped, ProseStripped],
    );
    // A fence inside a string value is content, not a fence.
    check(
        "{\"content\": \"```rust\\nfn main() {}\\n```\",}",
        json!({"content": "```rust\nfn main() {}\n```"}),
        &[TrailingCommaRemoved],
    );
}

#[test]
fn prose_stripped() {
    check(
        "Sure! Here are the args: {\"path\": \"/foo\"} hope that helps",
        json!({"path": "/foo"}),
        &[ProseStripped],
    );
    check(
        "{\"a\":1} extra ::: garbage",
        json!({"a": 1}),
        &[ProseStripped],
    );
    check(
        "prose {\"path\": \"a}b\"} more",
        json!({"path": "a}b"}),
        &[ProseStripped],
    );
}

#[test]
fn prose_with_placeholder_braces_is_not_fooled() {
    check(
        "I will fill {path} now: {\"path\": \"src/x.rs\"}",
        json!({"path": "src/x.rs"}),
        &[ProseStripped],
    );
    check(
        "{path} is: {\"path\": \"src/x.rs\"}",
        json!({"path": "src/x.rs"}),
        &[ProseStripped],
    );
    check(
        "Use {the path} {\"path\": \"x\"} then {done}",
        json!({"path": "x"}),
        &[ProseStripped],
    );
    check(
        "{\"path\": \"x\"} fills {path}",
        json!({"path": "x"}),
        &[ProseStripped],
    );
    // A strict candidate is preferred over an earlier lenient one.
    check(
        "Example: {'a': 1}. Call: {\"path\": \"x\"}",
        json!({"path": "x"}),
        &[ProseStripped],
    );
    check_error("Replace {name} with {value}.", SalvageErrorKind::NoJson);
}

#[test]
fn trailing_comma_removed() {
    check(
        "{\"path\": \"/foo\", \"limit\": 3,}",
        json!({"path": "/foo", "limit": 3}),
        &[TrailingCommaRemoved],
    );
    check(
        "{\"a\": 1, \"b\": [1, 2,],}",
        json!({"a": 1, "b": [1, 2]}),
        &[TrailingCommaRemoved],
    );
    check("[1,\n]", json!([1]), &[TrailingCommaRemoved]);
}

#[test]
fn quotes_normalized() {
    check(
        "{'path': '/foo', 'limit': 5}",
        json!({"path": "/foo", "limit": 5}),
        &[QuotesNormalized],
    );
    check(
        "{'a': 'it\\'s', 'b': 'say \"hi\"'}",
        json!({"a": "it's", "b": "say \"hi\""}),
        &[QuotesNormalized],
    );
    check(
        "{\u{201c}a\u{201d}: \u{201c}b\u{201d}}",
        json!({"a": "b"}),
        &[QuotesNormalized],
    );
    check(
        "{\"a\": \"it\\'s\"}",
        json!({"a": "it's"}),
        &[QuotesNormalized],
    );
    // An apostrophe inside a double-quoted value is content and needs no repair... but this
    // text is strict JSON, so salvage returns it as is.
    check(
        "{\"path\": \"it's here\"}",
        json!({"path": "it's here"}),
        &[],
    );
    // Apostrophes inside single-quoted values, followed by something that is not a closer.
    check(
        "{'msg': 'it's fine', 'n': 1}",
        json!({"msg": "it's fine", "n": 1}),
        &[QuotesNormalized],
    );
}

#[test]
fn unescaped_quotes_in_content_use_the_look_ahead() {
    check(
        "{\"content\": \"say \"hi\" now\", \"n\": 1}",
        json!({"content": "say \"hi\" now", "n": 1}),
        &[QuotesNormalized],
    );
    check(
        "{\"code\": \"print(\"x\")\", \"n\": 1}",
        json!({"code": "print(\"x\")", "n": 1}),
        &[QuotesNormalized],
    );
    check(
        "{\"code\": \"f(\"a\", \"b\")\", \"n\": 1}",
        json!({"code": "f(\"a\", \"b\")", "n": 1}),
        &[QuotesNormalized],
    );
    check(
        "{\"edits\": [{\"old\": \"x = {\"a\": \"b\"}\", \"new\": \"y\"}]}",
        json!({"edits": [{"old": "x = {\"a\": \"b\"}", "new": "y"}]}),
        &[QuotesNormalized],
    );
    // The quote before `}` looks like the end, but prose with quotes follows: retried.
    check(
        "{\"content\": \"x = {\"a\": \"b\"}\nprint(x)\", \"path\": \"a.py\"}",
        json!({"content": "x = {\"a\": \"b\"}\nprint(x)", "path": "a.py"}),
        &[QuotesNormalized, ControlCharEscaped],
    );
    check(
        "{\"lines\": [\"print(\"a\", \"b\")\"]}",
        json!({"lines": ["print(\"a\", \"b\")"]}),
        &[QuotesNormalized],
    );
}

#[test]
fn an_object_in_prose_after_the_call_is_not_swallowed_by_a_retry() {
    // The quote after `x` looks like it closes right before prose that holds quotes: a retry
    // that reads the prose as part of the string would end cleanly too, with a wrong value.
    check(
        "{\"path\": \"x\"}\n\nI'll now run {\"command\": \"ls\"}",
        json!({"path": "x"}),
        &[ProseStripped],
    );
    // Without an object in the prose, the retry is believed: code content as the last member.
    check(
        "{\"path\": \"a.py\", \"content\": \"x = {\"a\": \"b\"}\nprint(x)\"}",
        json!({"path": "a.py", "content": "x = {\"a\": \"b\"}\nprint(x)"}),
        &[QuotesNormalized, ControlCharEscaped],
    );
}

#[test]
fn comment_removed() {
    check(
        "{\"a\": 1, // note\n \"b\": 2 /* c */}",
        json!({"a": 1, "b": 2}),
        &[CommentRemoved],
    );
    check("// call\n{\"a\": 1}", json!({"a": 1}), &[ProseStripped]);
    check(
        "{\"url\": \"http://x/*y*/\",}",
        json!({"url": "http://x/*y*/"}),
        &[TrailingCommaRemoved],
    );
}

#[test]
fn python_literal() {
    check(
        "{\"a\": True, \"b\": None, \"c\": False}",
        json!({"a": true, "b": null, "c": false}),
        &[PythonLiteral],
    );
    check(
        "{\"a\": \"True\", \"b\": [None]}",
        json!({"a": "True", "b": [null]}),
        &[PythonLiteral],
    );
}

#[test]
fn key_quoted() {
    check(
        "{a: 1, b_c: \"x\"}",
        json!({"a": 1, "b_c": "x"}),
        &[KeyQuoted],
    );
    check(
        "{path: \"/a\", $ref: 1, a.b: 2, x-y: 3}",
        json!({"path": "/a", "$ref": 1, "a.b": 2, "x-y": 3}),
        &[KeyQuoted],
    );
}

#[test]
fn comma_inserted() {
    check(
        "{\"a\": 1 \"b\": 2}",
        json!({"a": 1, "b": 2}),
        &[CommaInserted],
    );
    check(
        "{\"a\": [1 2 3]}",
        json!({"a": [1, 2, 3]}),
        &[CommaInserted],
    );
    check(
        "{\"a\": \"x\"\n\"b\": \"y\"}",
        json!({"a": "x", "b": "y"}),
        &[CommaInserted],
    );
    check("[\"a\" \"b\"]", json!(["a", "b"]), &[CommaInserted]);
    check(
        "[{\"a\": 1} {\"b\": 2}]",
        json!([{"a": 1}, {"b": 2}]),
        &[CommaInserted],
    );
}

#[test]
fn colon_inserted() {
    check(
        "{\"a\": 1, \"b\" \"two\"}",
        json!({"a": 1, "b": "two"}),
        &[ColonInserted],
    );
    // Without it the string before would swallow the member (a silently wrong value).
    check(
        "{\"path\": \"a.txt\", \"content\" \"hello\"}",
        json!({"path": "a.txt", "content": "hello"}),
        &[ColonInserted],
    );
    // After a stray closer, the member continues the root object.
    check(
        "{\"key\": \"value\"}, \"key2\" \"value2\"}",
        json!({"key": "value", "key2": "value2"}),
        &[ExtraCloserRemoved, ColonInserted],
    );
    // A doubled quote is no missing colon, a bare word is no key, and a value that does not
    // end a member is no value: all stay refused.
    check_error("{\"follow\"\": false}", SalvageErrorKind::Syntax);
    check_error("{\"k\": 1, True \"end_line\"}", SalvageErrorKind::Syntax);
    check_error("{\"a\" \"b\" \"c\"}", SalvageErrorKind::Syntax);
}

#[test]
fn a_quote_run_where_a_key_belongs_is_refused_not_swallowed() {
    // Before, `sic` swallowed `"}, """` into the string: a wrong object.
    check_error(
        "[{\"lorem\": {\"ipsum\": \"sic\"}, \"\"\"\" \"lorem\": {\"ipsum\": \"sic\"}]",
        SalvageErrorKind::Syntax,
    );
}

#[test]
fn control_char_escaped() {
    check(
        "{\"content\": \"line1\nline2\tx\"}",
        json!({"content": "line1\nline2\tx"}),
        &[ControlCharEscaped],
    );
    check(
        "{\"a\": \"\u{1}\"}",
        json!({"a": "\u{1}"}),
        &[ControlCharEscaped],
    );
}

#[test]
fn extra_closer_removed() {
    check("{\"a\": 1}}", json!({"a": 1}), &[ExtraCloserRemoved]);
    check(
        "{\"a\": [1, 2]]}",
        json!({"a": [1, 2]}),
        &[ExtraCloserRemoved],
    );
    check(
        "{\"a\": {\"b\": 1}}}\n",
        json!({"a": {"b": 1}}),
        &[ExtraCloserRemoved],
    );
}

#[test]
fn invalid_escapes_keep_their_backslash() {
    check(
        r#"{"path": "C:\Users\me\x.txt"}"#,
        json!({"path": "C:\\Users\\me\\x.txt"}),
        &[ControlCharEscaped],
    );
    check(
        r#"{"re": "\d+\.\w*", "n": 1}"#,
        json!({"re": "\\d+\\.\\w*", "n": 1}),
        &[ControlCharEscaped],
    );
    check(
        r#"{"tex": "\frac{1}{2} \alpha",}"#,
        // `\a` shows the backslashes are raw, so `\f` is one too (review finding 4).
        json!({"tex": "\\frac{1}{2} \\alpha"}),
        &[ControlCharEscaped, TrailingCommaRemoved],
    );
    check(
        r#"{"u": "\uZZZZ \ud800 x"}"#,
        json!({"u": "\\uZZZZ \\ud800 x"}),
        &[ControlCharEscaped],
    );
}

#[test]
fn escaped_backslash_before_quote_round_trips() {
    // `\\\"` is a backslash then a quote.
    check(
        r#"{"s": "a\\\"b", "t": 1,}"#,
        json!({"s": "a\\\"b", "t": 1}),
        &[TrailingCommaRemoved],
    );
    check(
        r#"{"s": "end\\", "t": 'x'}"#,
        json!({"s": "end\\", "t": "x"}),
        &[QuotesNormalized],
    );
}

#[test]
fn content_is_preserved() {
    let content = "fn main() {\n    let s = \"héllo → 日本語 🎉\";\n    let re = Regex::new(r\"^\\s*\\d+$\");\n    println!(\"{}\", s); // it's\n}\n# Title\n| a | b |\n$\\frac{a}{b}$\n";
    let strict =
        serde_json::to_string(&json!({"path": "src/main.rs", "content": content})).unwrap();
    // Break the text only outside the content: a trailing comma and a fence.
    let s = run(&format!(
        "```json\n{}, }}\n```",
        &strict[..strict.len() - 1]
    ))
    .unwrap();
    assert_eq!(
        s.values,
        vec![json!({"path": "src/main.rs", "content": content})]
    );
    assert_eq!(kinds(&s), vec![FenceUnwrapped, TrailingCommaRemoved]);
    // Raw newlines and tabs in the same content.
    let raw = strict.replace("\\n", "\n");
    let s = run(&raw).unwrap();
    assert_eq!(
        s.values,
        vec![json!({"path": "src/main.rs", "content": content})]
    );
    assert_eq!(kinds(&s), vec![ControlCharEscaped]);
}

#[test]
fn concatenated_objects_all_come_back() {
    let s = run("{\"a\": 1}{\"b\": 2}").unwrap();
    assert_eq!(s.values, vec![json!({"a": 1}), json!({"b": 2})]);
    let s = run("{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}\n").unwrap();
    assert_eq!(
        s.values,
        vec![json!({"a": 1}), json!({"b": 2}), json!({"c": 3})]
    );
    let s = run("{'a': 1,} {'b': 2}").unwrap();
    assert_eq!(s.values, vec![json!({"a": 1}), json!({"b": 2})]);
    let s = run("Calls: {\"a\": 1}{\"b\": 2} done").unwrap();
    assert_eq!(s.values, vec![json!({"a": 1}), json!({"b": 2})]);
    // Several fenced blocks, one call each.
    let s = run("```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```\nDone.").unwrap();
    assert_eq!(s.values, vec![json!({"a": 1}), json!({"b": 2})]);
    assert_eq!(kinds(&s), vec![FenceUnwrapped, ProseStripped]);
    // A broken second object is an error, never a silent drop.
    check_error("{\"a\": 1}{\"b\": }", SalvageErrorKind::Syntax);
}

#[test]
fn truncation_closed() {
    let cases: &[(&str, Value)] = &[
        ("{\"path\": \"src/ma", json!({"path": "src/ma"})),
        ("{\"a\": 1, \"b\":", json!({"a": 1})),
        ("{\"a\": 1, \"b", json!({"a": 1})),
        ("{\"a\": 1,", json!({"a": 1})),
        ("{\"a\": 1", json!({"a": 1})),
        ("{\"a\": [1, 2, {\"b\": 3", json!({"a": [1, 2, {"b": 3}]})),
        ("{\"a\": {\"b\": [1, 2", json!({"a": {"b": [1, 2]}})),
        (
            "{\"edits\":[{\"path\":\"/t/x\",\"new_text\":\"hello",
            json!({"edits": [{"path": "/t/x", "new_text": "hello"}]}),
        ),
        ("{\"a\": 1, \"b\": tr", json!({"a": 1})),
        ("{\"a\": 1, \"b\": 1.", json!({"a": 1})),
        ("{\"a\": \"x\\", json!({"a": "x"})),
        ("{\"a\": \"x\\u00", json!({"a": "x"})),
        ("{\"a\": \"x\\ud83d", json!({"a": "x"})),
        ("{\"a\": \"x\\ud83d\\ude", json!({"a": "x"})),
        ("{\"a\": 1, b", json!({"a": 1})),
        ("{\"a\": 1 /* note", json!({"a": 1})),
        ("```json\n{\"a\": \"b", json!({"a": "b"})),
        ("Here: {\"path\": \"src/ma", json!({"path": "src/ma"})),
        ("{\"a\": \"say \"hi", json!({"a": "say \"hi"})),
    ];
    for (text, expected) in cases {
        let s = run(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(&s.values, &vec![expected.clone()], "{text:?}");
        assert!(s.truncated, "{text:?}");
        let last = s
            .repairs
            .iter()
            .find(|r| r.kind == TruncationClosed)
            .expect("truncation_closed");
        assert_eq!(last.offset, text.len(), "{text:?}");
    }
}

#[test]
fn truncation_that_keeps_nothing_is_an_error() {
    for text in ["{", "[", "{\"pa", "{\"a\":", "[[", "{'a': tr"] {
        check_error(text, SalvageErrorKind::Syntax);
    }
    // A cut-off second object keeps the first and still says the text was cut.
    let s = run("{\"a\": 1}{\"b\":").unwrap();
    assert_eq!(s.values, vec![json!({"a": 1})]);
    assert!(s.truncated);
}

#[test]
fn typed_errors_never_an_empty_object() {
    check_error("I cannot help with that request.", SalvageErrorKind::NoJson);
    check_error(
        "path equals slash foo, no json here at all",
        SalvageErrorKind::NoJson,
    );
    check_error("hello", SalvageErrorKind::NoJson);
    check_error("42", SalvageErrorKind::NoJson);
    check_error("{\"a\": NaN, \"b\": 1}", SalvageErrorKind::NonFinite);
    check_error("{\"a\": -Infinity}", SalvageErrorKind::NonFinite);
    check_error("{\"a\": Infinity}", SalvageErrorKind::NonFinite);
    check_error("{\"a\": }", SalvageErrorKind::Syntax);
    check_error("{\"a\" 1}", SalvageErrorKind::Syntax);
    check_error("{\"a\": 1,, \"b\": 2}", SalvageErrorKind::Syntax);
    check_error("{\"a\": undefined}", SalvageErrorKind::Syntax);
    check_error("{\"a\": 007}", SalvageErrorKind::Syntax);
    check_error("}}}}}}}}}}", SalvageErrorKind::NoJson);
}

#[test]
fn size_and_depth_limits() {
    let options = SalvageOptions::default().with_max_bytes(4);
    assert_eq!(
        salvage("{\"a\":1", &options).unwrap_err().kind,
        SalvageErrorKind::TooLarge
    );
    // serde_json's recursion limit: 127 levels read, 128 do not (tests/issue_011_salvage.rs).
    let deep = format!("{}1{}", "[".repeat(128), "]".repeat(128));
    check_error(&deep, SalvageErrorKind::TooDeep);
    let ok = format!("{}1{}", "[".repeat(127), "]".repeat(127));
    assert!(run(&ok).is_ok());
    check_error(&"[".repeat(10_000), SalvageErrorKind::TooDeep);
    check_error(&"{\"a\":".repeat(10_000), SalvageErrorKind::TooDeep);
}

#[test]
fn errors_locate_the_failure() {
    let e = run("{\"a\": 1,\n \"b\": }").unwrap_err();
    assert_eq!(
        (e.kind, e.offset, e.line, e.column),
        (SalvageErrorKind::Syntax, 15, 2, 6)
    );
}

#[test]
fn repairs_carry_the_offset_of_their_first_occurrence() {
    let text = "Sure: {'a': True, 'b': [1, 2,],}";
    let s = run(text).unwrap();
    let got: Vec<_> = s.repairs.iter().map(|r| (r.kind, r.offset)).collect();
    assert_eq!(
        got,
        vec![
            (ProseStripped, 0),
            (QuotesNormalized, 7),
            (PythonLiteral, 12),
            (TrailingCommaRemoved, 28)
        ]
    );
}

/// serde_json with `arbitrary_precision` reads an object keyed by its private number token as a
/// number (and fails on `""`); salvage reads it as the object it is (fuzz finding, salvage
/// target: the harness's own read-back of the value was what failed).
#[test]
fn serde_json_private_tokens_are_plain_keys() {
    let text = "[{ \r\"$serde_json::private::Number\":\"\"";
    let salvaged = salvage(text, &SalvageOptions::default()).unwrap();
    assert_eq!(
        salvaged.values,
        vec![json!([{"$serde_json::private::Number": ""}])]
    );
}
