//! Test helpers shared by the grammar files: a tool set covering the GRAMMARS examples, and
//! checks that run every text through the whole-text scan and through the stream, split at
//! every char boundary and fed char by char.

use serde_json::{Value, json};

use crate::ToolSet;
use crate::recover::{Recovered, StreamRecoverer, recover_text};

/// The tools the GRAMMARS examples call, with schemas for the untyped families.
pub(crate) fn tools() -> ToolSet {
    let s = |props: Value| json!({"type": "object", "properties": props});
    let string = json!({"type": "string"});
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": s(json!({"path": string, "limit": {"type": "integer"}}))},
        {"name": "write_file", "parameters": s(json!({"path": string, "content": string, "overwrite": {"type": "boolean"}}))},
        {"name": "edit_file", "parameters": s(json!({"path": string, "old_string": string, "new_string": string}))},
        {"name": "bash", "parameters": s(json!({"command": string}))},
        {"name": "web_search", "parameters": s(json!({"query": string, "max_results": {"type": "integer"}}))},
        {"name": "grep", "parameters": s(json!({"pattern": string, "path": string, "max_count": {"type": "integer"}}))},
        {"name": "list_dir", "parameters": s(json!({"path": string}))},
        {"name": "glob", "parameters": s(json!({"pattern": string}))},
        {"name": "git_diff", "parameters": s(json!({"ref": string}))},
        {"name": "grocery.orderIngredients", "parameters": s(json!({
            "ingredientList": {"type": "array"}, "deliveryAddress": string}))},
        {"name": "get_weather", "parameters": s(json!({
            "city": string, "state": string, "unit": string, "days": {"type": "integer"}}))},
        {"name": "run_tests", "parameters": s(json!({
            "filter": string, "jobs": {"type": "integer"}, "fail_fast": {"type": "boolean"},
            "update": {"type": "boolean"}, "markers": {"type": "array", "items": string}}))},
    ]))
}

/// The whole-text result, after checking that every streamed split gives the same.
pub(crate) fn scan(text: &str) -> Recovered {
    let tools = tools();
    let whole = recover_text(text, &tools, 16);
    let chars: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    for &cut in &chars {
        let got = stream(&tools, &[&text[..cut], &text[cut..]]);
        assert_eq!(got, whole, "stream split at byte {cut} of {text:?}");
    }
    let pieces: Vec<&str> = chars.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    assert_eq!(
        stream(&tools, &pieces),
        whole,
        "stream fed char by char: {text:?}"
    );
    whole
}

fn stream(tools: &ToolSet, chunks: &[&str]) -> Recovered {
    let mut recoverer = StreamRecoverer::new(16);
    let mut out = Recovered::default();
    for chunk in chunks {
        let step = recoverer.push(tools, chunk);
        out.text.push_str(&step.text);
        out.calls.extend(step.calls);
        out.lost.extend(step.lost);
    }
    let end = recoverer.finish(tools);
    out.text.push_str(&end.text);
    out.calls.extend(end.calls);
    out.lost.extend(end.lost);
    out
}

/// Asserts that `text` yields exactly `expected` (names and argument values) and returns the
/// text left after the markup was removed.
#[track_caller]
pub(crate) fn recovers(text: &str, expected: &[(&str, Value)]) -> String {
    let found = scan(text);
    let got: Vec<(String, Value)> = found
        .calls
        .iter()
        .map(|c| {
            let value = serde_json::from_str(&c.arguments).unwrap_or_else(|e| {
                panic!(
                    "arguments of {} are not JSON ({e}): {}",
                    c.name, c.arguments
                )
            });
            (c.name.clone(), value)
        })
        .collect();
    let want: Vec<(String, Value)> = expected
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.clone()))
        .collect();
    assert_eq!(got, want, "calls recovered from {text:?}");
    found.text
}

/// Asserts that `text` yields no call and comes back unchanged.
#[track_caller]
pub(crate) fn ignores(text: &str) {
    let found = scan(text);
    assert!(
        found.calls.is_empty(),
        "no call expected from {text:?}, got {:?}",
        found.calls
    );
    assert_eq!(found.text, text);
}

/// Every proper prefix of `text` (cut at a char boundary, trailing whitespace included) yields
/// no call and comes back unchanged: a truncated block is never recovered. The one exception
/// is a prefix whose payload is whole and only lacks its closer (end of sequence, GRAMMARS
/// §1.3): it must then yield exactly the calls of the whole `text`.
#[track_caller]
pub(crate) fn rejects_truncation(text: &str) {
    let tools = tools();
    let whole = recover_text(text, &tools, 16).calls;
    let parsed = |calls: &[crate::recover::RecoveredCall]| -> Vec<(String, Value)> {
        calls
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    serde_json::from_str(&c.arguments).unwrap_or(Value::Null),
                )
            })
            .collect()
    };
    for (cut, _) in text.char_indices().skip(1) {
        let prefix = &text[..cut];
        let found = recover_text(prefix, &tools, 16);
        if found.calls.is_empty() {
            assert_eq!(found.text, prefix);
            continue;
        }
        assert_eq!(
            parsed(&found.calls),
            parsed(&whole),
            "truncated at {cut}: {prefix:?} gave {:?}",
            found.calls
        );
    }
}
