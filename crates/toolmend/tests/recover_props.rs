//! Properties of recovery: text without markup is untouched, and streaming any split of any text
//! gives the whole-text result.

use proptest::prelude::*;
use serde_json::json;
use toolmend::ToolSet;
use toolmend::recover::{Recovered, recover_text};

#[path = "support/recover_stream.rs"]
mod recover_stream;
use recover_stream::stream;

fn tools() -> ToolSet {
    // `a` makes short pythonic and JSON payloads real calls.
    ToolSet::from_json(&json!([{"name": "bash"}, {"name": "a"}, {"name": "read_file"}]))
}

/// The stream fed `text` cut at `cuts` (taken modulo the length, off-boundary cuts skipped).
fn stream_cut(tools: &ToolSet, text: &str, cuts: &[usize]) -> Recovered {
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c % (text.len() + 1)).collect();
    bounds.retain(|&c| text.is_char_boundary(c));
    bounds.sort_unstable();
    let mut chunks = Vec::with_capacity(bounds.len() + 1);
    let mut at = 0;
    for cut in bounds.into_iter().chain([text.len()]) {
        chunks.push(&text[at..cut]);
        at = cut;
    }
    stream(tools, &chunks)
}

/// Fragments of markup, prose and code that combine into near-misses and real blocks.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "{\"name\": \"bash\", \"arguments\": {}}",
    "{\"name\": \"a\"}",
    "`",
    "```",
    "\n",
    " ",
    "x",
    "<｜DSML｜",
    "invoke name=\"bash\">",
    "</｜DSML｜invoke>",
    "[TOOL_CALLS]",
    "bash",
    "[ARGS]",
    "{}",
    "</think>",
    "<think>",
    "[",
    "]",
    "a(",
    ")",
    "<function=bash>",
    "</function>",
    "<parameter=command>",
    "ls",
    "</parameter>",
    "~~~",
    "<|python_tag|>",
    "<minimax:tool_call>",
    "<invoke name=\"a\">",
    "</invoke>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "é",
    "\"",
    "<|channel|>",
    "to=functions.a",
    "<|message|>",
    "<|call|>",
    ";",
    "functools",
    "function call",
    "<|role_sep|>",
    "]<]minimax[>[",
    "[{\"name\": \"a\", \"arguments\": {}}]",
    "[a(b=1)]",
    "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
    "[TOOL_CALLS]bash[ARGS]{}",
    "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}",
    "<function_calls><invoke name=\"a\"><parameter name=\"x\">1</parameter></invoke></function_calls>",
    "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>",
    "<｜DSML｜invoke name=\"read_file\"></｜DSML｜invoke>",
    "functools[{\"name\": \"a\", \"arguments\": {}}]",
    "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"a\">",
    "]<]minimax[>[<k>",
    "]<]minimax[>[</k>",
    "]<]minimax[>[<item>",
    "]<]minimax[>[</item>",
    "]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// No `<`, `[`, `]`, `{` or `f`: no sentinel and no whole-message payload can appear.
    #[test]
    fn text_without_a_sentinel_comes_back_unchanged(text in "[a-eg-zA-Z0-9 \\n\\t`~|｜‖\"'=:;,.()>}\\-_é▁]{0,300}") {
        let tools = tools();
        let found = recover_text(&text, &tools, 16);
        prop_assert!(found.calls.is_empty());
        prop_assert_eq!(&found.text, &text);
        let streamed = stream_cut(&tools, &text, &[text.len() / 3, text.len() / 2]);
        prop_assert_eq!(streamed, found);
    }

    /// Token-sized chunks (1–7 bytes, as servers send them) of texts that mix markup with
    /// long runs and long fenced lines: the chunks the quiet shortcut appends unread.
    #[test]
    fn streaming_token_sized_chunks_equals_the_whole_text_scan(
        picks in proptest::collection::vec(
            prop_oneof![
                4 => (0..PIECES.len()).prop_map(|i| PIECES[i].to_owned()),
                1 => (0usize..4, 1usize..120).prop_map(|(unit, n)| [" ", "x", "`", "~"][unit].repeat(n)),
                1 => Just("```\n".to_owned()),
            ],
            0..30,
        ),
        sizes in proptest::collection::vec(1usize..=7, 1..16),
    ) {
        let text: String = picks.concat();
        let tools = tools();
        let whole = recover_text(&text, &tools, 16);
        let mut cuts = Vec::new();
        let mut at = 0;
        for size in sizes.iter().cycle() {
            at += size;
            if at >= text.len() {
                break;
            }
            cuts.push(at);
        }
        prop_assert_eq!(stream_cut(&tools, &text, &cuts), whole);
    }

    #[test]
    fn streaming_any_split_equals_the_whole_text_scan(
        picks in proptest::collection::vec(
            prop_oneof![
                4 => (0..PIECES.len()).prop_map(|i| PIECES[i].to_owned()),
                1 => "\\PC{0,3}",
            ],
            0..40,
        ),
        cuts in proptest::collection::vec(0usize..4096, 0..8),
    ) {
        let text: String = picks.concat();
        let tools = tools();
        let whole = recover_text(&text, &tools, 16);
        prop_assert_eq!(stream_cut(&tools, &text, &cuts), whole.clone());
        // The text loses only the consumed spans.
        let consumed: usize = {
            let mut spans: Vec<_> = whole.calls.iter().map(|c| c.span.clone()).collect();
            spans.dedup();
            spans.iter().map(|s| s.len()).sum()
        };
        prop_assert_eq!(whole.text.len() + consumed, text.len());
    }
}
