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

/// The text of each shape the quiet path appends unread (issue #8 item 7), with a call after
/// it, so a wrong carried state (an open fence, a run, a span, a blank prefix) shows as a call
/// recovered or missed, or as text that differs.
fn quiet_shapes() -> Vec<String> {
    let call =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let payload = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}";
    vec![
        // Spaces and newlines before a call, and before a whole-message payload.
        format!("{}{call} after", " ".repeat(90)),
        format!("{}{payload}", " ".repeat(90)),
        format!("{}{call}", "\n".repeat(90)),
        format!("{}{payload}", "\n \n".repeat(30)),
        // Runs of backticks and tildes: inline, then a fence.
        format!("{}x {call}", "`".repeat(45)),
        format!(
            "{}\ncode {call}\n{}\n{call}",
            "`".repeat(40),
            "`".repeat(40)
        ),
        format!("{}\n{call}\n{}\n{call}", "~".repeat(40), "~".repeat(41)),
        // A span searched across a paragraph, closed and not.
        format!("`x\n{} y` {call}", " ".repeat(80)),
        format!("`x\n{}\n\n{call}", "ab ".repeat(30)),
        // A fence whose one long line holds markup, then its close and a call.
        format!("```\n{}\n```\n{call}", " ".repeat(90)),
        format!(
            "```\n{}{call}{}\n```\n{call}",
            " ".repeat(40),
            " ".repeat(40)
        ),
        format!("~~~\n{}] > `x`\n~~~ \n{call}", "x".repeat(60)),
        // A fence never closed: the call inside stays text.
        format!("```\n{}{call}{}", " ".repeat(60), " ".repeat(60)),
        // Visible bytes that the quiet test reads as blank or not: a vertical tab and
        // Unicode spaces after a call's closer.
        format!("{call}\u{b}\u{3000} \u{a0}{call}"),
        format!("a</think>{}{payload}", " ".repeat(60)),
    ]
}

/// Each shape cut once at every byte: the first chunk (long or short) and the rest (long or
/// short) take the quiet path's long and short tests in every order.
#[test]
fn quiet_shapes_split_at_every_byte_stream_like_the_whole_text() {
    for text in &quiet_shapes() {
        for at in 1..text.len() {
            assert_same(text, &[at]);
        }
    }
}

/// Each shape fed byte by byte up to every position, then in one chunk: the state carried
/// across quiet one-byte chunks must let a long chunk continue it.
#[test]
fn quiet_shapes_byte_by_byte_then_one_chunk_stream_like_the_whole_text() {
    for text in &quiet_shapes() {
        for at in (0..text.len()).step_by(3) {
            let cuts: Vec<usize> = (1..=at).collect();
            assert_same(text, &cuts);
        }
        for size in [1, 2, 31, 32, 33, 64] {
            let cuts: Vec<usize> = (size..text.len()).step_by(size).collect();
            assert_same(text, &cuts);
        }
    }
}

/// Cuts of 1, 2, …, 7, 1, … bytes starting with `first` (token-sized chunks, as `growth_ratio`
/// streams them).
fn token_cuts(len: usize, first: usize) -> Vec<usize> {
    let (mut cuts, mut at, mut size) = (Vec::new(), 0, first);
    while at + size < len {
        at += size;
        cuts.push(at);
        size = size % 7 + 1;
    }
    cuts
}

/// The shapes of `growth_ratio`'s stream rows (runs of spaces, newlines, backticks, tildes, a
/// span then blanks, a fence then one long line) with markup after them, fed in token-sized
/// chunks from every phase of the 1–7 cycle: the quiet shortcut, decided once per full push,
/// must carry each state (issue #31).
#[test]
fn growth_shapes_in_token_sized_chunks_stream_like_the_whole_text() {
    let call =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let long = " ".repeat(700);
    let mut texts = vec![
        format!("{long}{call}"),
        "\n".repeat(700) + call,
        format!("{}x {call}", "`".repeat(700)),
        format!("{}\n{call}", "~".repeat(700)),
        format!("`x\n{long} y` {call}"),
        // The fence and its one long line: unclosed, with a call in the line, closed by a
        // line, closed and followed by a call, and with a `]` and `>` in the line.
        format!("```\n{long}"),
        format!("```\n{long}{call}{long}"),
        format!("```\n{long}\n```\n{call}"),
        format!("```python\n{long}x]y>z{long}\n```\n{call} tail"),
        format!("~~~\n{long}\n~~~\n{call}"),
        // After a reasoning closer, a blank region then a payload.
        format!("a</think>{long}{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"a\"}}}}"),
    ];
    texts.extend(quiet_shapes());
    for text in &texts {
        for first in 1..=7 {
            assert_same(text, &token_cuts(text.len(), first));
        }
    }
}

/// `push_into` appends what `push` returns: text and calls of successive chunks accumulate in
/// one output, in order.
#[test]
fn push_into_appends_what_push_returns() {
    use toolmend::recover::{StreamOutput, StreamRecoverer};
    let tools = tools();
    let text = quiet_shapes().concat();
    let mut pushed = StreamRecoverer::new(16);
    let mut into = StreamRecoverer::new(16);
    let (mut text_pushed, mut calls_pushed) = (String::new(), Vec::new());
    let mut out = StreamOutput::default();
    for chunk in cut(&text, &(5..text.len()).step_by(5).collect::<Vec<_>>()) {
        let step = pushed.push(&tools, chunk);
        text_pushed.push_str(&step.text);
        calls_pushed.extend(step.calls);
        into.push_into(&tools, chunk, &mut out);
    }
    let whole = recover_text(&text, &tools, 16);
    assert!(!calls_pushed.is_empty());
    assert_eq!(out.text, text_pushed);
    assert_eq!(out.calls, calls_pushed);
    let (end_pushed, end_into) = (pushed.finish(&tools), into.finish(&tools));
    assert_eq!(end_into, end_pushed);
    out.text.push_str(&end_into.text);
    out.calls.extend(end_into.calls);
    assert_eq!(out.text, whole.text);
    assert_eq!(out.calls, whole.calls);
}

/// A fence left open in reasoning ends at `</think>` (#28) whichever way the stream is cut,
/// the closer and the call included.
#[test]
fn a_fence_ended_by_the_think_closer_streams_like_the_whole_text() {
    let call = "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";
    for (text, calls) in [
        (format!("Plan:\n```python\nprint(1)\n</think>\n{call}"), 1),
        (format!("<think>```\nx = 1</think>{call}"), 1),
        (format!("<think>plan</think>\n```\nx</think>{call}"), 0),
        (format!("```\n<think>a</think>{call}"), 0),
        (format!("Reasoning {call}</think>\n{call}"), 2),
    ] {
        assert_eq!(
            recover_text(&text, &tools(), 16).calls.len(),
            calls,
            "{text}"
        );
        for size in 1..=9 {
            let cuts: Vec<usize> = (size..text.len()).step_by(size).collect();
            assert_same(&text, &cuts);
        }
    }
}
