//! Streamed and whole-text scans agree on inputs the fuzzers found (issue #8 item 9).

use serde_json::{Value, json};
use toolmend::ToolSet;
use toolmend::recover::recover_text;

#[path = "support/recover_stream.rs"]
mod support;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "run", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]))
}

/// Cuts `text` at `cuts` (byte indices, moved forward to a char boundary).
fn cut<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for &c in cuts {
        let mut end = c.clamp(at, text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        chunks.push(&text[at..end]);
        at = end;
    }
    chunks.push(&text[at..]);
    chunks
}

/// Asserts the streamed result equals the whole-text one for the given cuts.
fn assert_same(text: &str, cuts: &[usize]) {
    let tools = tools();
    let whole = recover_text(text, &tools, 16);
    let streamed = support::stream(&tools, &cut(text, cuts));
    assert_eq!(streamed.calls, whole.calls, "calls differ");
    assert_eq!(streamed.text, whole.text, "text differs");
}

/// Hundreds of near-miss `<function=bash>` blocks spend the work budget for failed parses; the
/// streamed scan once charged them differently from the whole-text scan (it saw shorter texts)
/// and recovered a Hermes call that the whole-text scan skipped.
#[test]
fn near_miss_budget_is_spent_alike_streamed_and_whole() {
    let finding: Value =
        serde_json::from_str(include_str!("fixtures/stream_near_miss_budget.json")).unwrap();
    let text = finding["input"].as_str().unwrap();
    let cuts: Vec<usize> = finding["cuts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| usize::try_from(c.as_u64().unwrap()).unwrap())
        .collect();
    assert_same(text, &cuts);
    for size in [1, 3, 7, 64] {
        let cuts: Vec<usize> = (size..text.len()).step_by(size).collect();
        assert_same(text, &cuts);
    }
}
