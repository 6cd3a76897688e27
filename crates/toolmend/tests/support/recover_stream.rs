//! Feeding a text to `StreamRecoverer` in chunks, shared by the recover test files.

use toolmend::ToolSet;
use toolmend::recover::{Recovered, StreamRecoverer};

/// What the streaming recoverer makes of `chunks` pushed in order, then finished: the text
/// released and the calls found, concatenated.
pub(crate) fn stream(tools: &ToolSet, chunks: &[&str]) -> Recovered {
    let mut recoverer = StreamRecoverer::new(16);
    let mut out = Recovered::default();
    for chunk in chunks {
        let step = recoverer.push(tools, chunk);
        out.text.push_str(&step.text);
        out.calls.extend(step.calls);
    }
    let end = recoverer.finish(tools);
    out.text.push_str(&end.text);
    out.calls.extend(end.calls);
    out
}
