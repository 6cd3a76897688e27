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

/// Chunks appended without a scan (they change no pending decision) still give the whole-text
/// result when a later byte decides: runs of spaces, newlines, backticks and tildes, a span
/// searched across a paragraph, a fence's long line, a blank prefix before a payload.
#[test]
fn quiet_chunks_stream_like_the_whole_text() {
    let call =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let texts = [
        format!("{}{call} after", " ".repeat(300)),
        format!("{}{call}", "\n".repeat(300)),
        format!("{}x {call}", "`".repeat(40)),
        format!("`x\n{} y` {call}", " ".repeat(200)),
        format!("`x\n{}\n\n{call}", "a ".repeat(100)),
        format!("```\n{}\n```\n{call}", " ".repeat(300)),
        format!("{}\n{call}", "~".repeat(50)),
        format!(
            "{}{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"a\"}}}}",
            " ".repeat(100)
        ),
        format!("plain words here {call} more words</think>  {call}"),
        format!("a</thi{}nk>{call}", " ".repeat(3)),
    ];
    for text in &texts {
        for size in [1, 2, 3, 5, 7] {
            let cuts: Vec<usize> = (size..text.len()).step_by(size).collect();
            assert_same(text, &cuts);
        }
    }
}
