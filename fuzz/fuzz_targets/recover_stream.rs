//! Any text split into any chunks: the streaming recoverer gives the same text and the same
//! calls (name, family, arguments, span: compared whole, not counted) as the whole-text scan,
//! and never panics.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolmend::ToolSet;
use toolmend::recover::{StreamRecoverer, recover_text};

static TOOLS: LazyLock<ToolSet> = LazyLock::new(|| {
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "run", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]))
});

fuzz_target!(|input: (&str, Vec<u8>)| {
    let (text, sizes) = input;
    let whole = recover_text(text, &TOOLS, 16);
    let mut stream = StreamRecoverer::new(16);
    let (mut streamed_text, mut streamed_calls) = (String::new(), Vec::new());
    // Chunk sizes 0..=63 from the input (both sides of the quiet path's 32-byte split between
    // a table test and memchr passes), then the rest in one chunk.
    let sizes = sizes.iter().map(|&b| usize::from(b % 64));
    let mut at = 0;
    for size in sizes.chain(std::iter::once(text.len())) {
        if at >= text.len() {
            break;
        }
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let out = stream.push(&TOOLS, &text[at..end]);
        streamed_text.push_str(&out.text);
        streamed_calls.extend(out.calls);
        at = end;
    }
    let last = stream.finish(&TOOLS);
    streamed_text.push_str(&last.text);
    streamed_calls.extend(last.calls);
    assert_eq!(streamed_text, whole.text);
    assert_eq!(streamed_calls, whole.calls);
});
