//! Any text split at any point: the streaming recoverer gives the same calls and the same
//! text as the whole-text scan, and never panics.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolmend::ToolSet;
use toolmend::recover::{StreamRecoverer, recover_text};

static TOOLS: LazyLock<ToolSet> = LazyLock::new(|| {
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "run", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]))
});

fuzz_target!(|input: (&str, u16)| {
    let (text, at) = input;
    let whole = recover_text(text, &TOOLS, 16);
    let mut cut = usize::from(at) % (text.len() + 1);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut stream = StreamRecoverer::new(16);
    let first = stream.push(&TOOLS, &text[..cut]);
    let second = stream.push(&TOOLS, &text[cut..]);
    let last = stream.finish(&TOOLS);
    let streamed_text = format!("{}{}{}", first.text, second.text, last.text);
    let streamed_calls: Vec<_> = first
        .calls
        .into_iter()
        .chain(second.calls)
        .chain(last.calls)
        .collect();
    assert_eq!(streamed_text, whole.text);
    assert_eq!(streamed_calls.len(), whole.calls.len());
});
