//! Stage 2: tool calls leaked into text, in the model's own markup → structured calls.
//!
//! Serving stacks often fail to parse a model's tool-call markup, and the call ends up as text
//! in `content` or in the reasoning channel. This stage finds complete calls of declared tools
//! in that text (GRAMMARS.md), outside code fences and inline code, and returns them with the
//! text minus the consumed markup.
//!
//! # Pieces
//!
//! - `scan`: the one left-to-right scanner (prose, fenced code, inline code, sentinel blocks),
//!   dispatching on every family's start sentinels with one aho-corasick automaton.
//! - `grammars/`: one file per markup family, listed in dispatch order in `grammars/mod.rs`.
//! - `reasoning`: the tags that open and close reasoning in content (`<think>`, Hy3's
//!   `<think:opensource>`, Solar Open's `<|think|>…<|end|>`, …).
//! - `whole`: the forms with no sentinel (xLAM, bare Llama JSON, bare pythonic lists), accepted
//!   only as the whole message.
//! - `coerce`: untyped XML values → JSON, by the tool's schema.
//! - [`StreamRecoverer`]: the same scanner fed chunk by chunk, for the proxy.
//!
//! # Policy (GRAMMARS §1.3–§1.6)
//!
//! Only complete calls (per-call terminator present, payload complete); nothing inside fenced
//! code or inline code spans; only names of declared tools (each call filtered on its own);
//! calls inside `<think>` are found; text order kept; at most `max_calls` calls. JSON payloads
//! pass through as written; untyped XML values are converted with the tool's schema.

mod call;
mod coerce;
mod cursor;
mod grammars;
mod json;
mod reasoning;
mod scan;
mod stream;
mod whole;

use std::ops::Range;

use crate::ToolSet;

pub use stream::{StreamOutput, StreamRecoverer};

/// Longest markup block recovered, in bytes: a block (or whole-message payload) that has not
/// ended within this many bytes of its sentinel is left as text. Bounds the streaming buffer
/// and the work spent on a stray sentinel.
pub const MAX_BLOCK_BYTES: usize = 256 * 1024;

/// Which text channels are scanned for leaked calls (DESIGN §5.3, §9).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecoverMode {
    /// Text is left alone (the default).
    #[default]
    Off,
    /// Markup of complete calls is removed from the text, but no call is produced.
    Strip,
    /// Calls are recovered from content, and only when the turn has no native calls (copies
    /// of a native call are still taken out of the content and dropped as duplicates).
    Content,
    /// Calls are recovered from content and from the reasoning channel.
    All,
}

impl RecoverMode {
    /// Parses `off`, `strip`, `content` or `all`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "off" => Self::Off,
            "strip" => Self::Strip,
            "content" => Self::Content,
            "all" => Self::All,
            _ => return None,
        })
    }
}

/// One call found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveredCall {
    /// The tool name, always a declared tool.
    pub name: String,
    /// The name as the model wrote it, when [`RecoverOptions::resolve_name`] mapped an
    /// undeclared name to `name` (the turn stage reports that as `name_repaired`).
    pub written_name: Option<String>,
    /// The markup family it was written in (`hermes`, `qwen3_coder`, `dsml`, `xlam`, …): a
    /// GRAMMARS §2 family, named as in the `recover/grammars/` file names.
    pub family: &'static str,
    /// The arguments as JSON text: a JSON payload exactly as the model wrote it, or, for
    /// XML-like markups, a compact object whose untyped values were converted with the tool's
    /// schema.
    pub arguments: String,
    /// Whether the arguments were unwrapped from an XML call's sole `arguments` / `input` /
    /// `properties` parameter holding the whole object (the turn stage reports `arguments_unwrapped`).
    pub arguments_unwrapped: bool,
    /// The byte range of the markup block in the scanned text. Calls of one block (several
    /// `<invoke>`s in one `<function_calls>`) share the block's range.
    pub span: Range<usize>,
}

/// A call of a declared tool inside a recovered block that could not be read (issue #28).
///
/// A block of several calls (a JSON call list, a Cohere action list, a Kimi K2 or Solar Open
/// section) is recovered when some of its calls read: one bad entry loses only itself. That
/// entry's markup is consumed with its block, so it is listed here, never dropped silently;
/// the turn stage reports it as an `invalid` call with a retry message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LostCall {
    /// The tool name, a declared tool.
    pub name: String,
    /// The markup family of its block.
    pub family: &'static str,
    /// What could not be read, as written: the call's arguments, or its whole list entry.
    pub text: String,
    /// Its place among the recovered calls: the number of calls in
    /// [`Recovered::calls`] (or, streamed, released so far) that come before it.
    pub position: usize,
    /// The byte range of its block (shared with the block's recovered calls).
    pub span: Range<usize>,
}

/// What one scan of a text found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Recovered {
    /// The calls, in text order.
    pub calls: Vec<RecoveredCall>,
    /// The text with the consumed markup removed; everything else byte-identical.
    pub text: String,
    /// Calls of declared tools whose block was recovered but which could not be read
    /// themselves, in text order.
    pub lost: Vec<LostCall>,
}

/// Maps a name that is not a declared tool to a declared one, or `None`.
///
/// Recovery itself never guesses names (GRAMMARS §1.4); the turn stage may pass its
/// `name_repaired` rule here so that a recovered call written as `Read_File` is not dropped.
pub type NameResolver = fn(&ToolSet, &str) -> Option<String>;

/// Options for one recovery scan.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RecoverOptions {
    /// Most calls recovered from the text ([`crate::limits::MAX_RECOVERED_CALLS`] by default).
    pub max_calls: usize,
    /// Applied to a call's name when it is not a declared tool; `None` (the default) drops
    /// such calls.
    pub resolve_name: Option<NameResolver>,
}

impl Default for RecoverOptions {
    fn default() -> Self {
        Self::new(crate::limits::MAX_RECOVERED_CALLS)
    }
}

impl RecoverOptions {
    /// Options recovering at most `max_calls` calls of declared names only.
    #[must_use]
    pub fn new(max_calls: usize) -> Self {
        Self {
            max_calls,
            resolve_name: None,
        }
    }

    /// The same options, resolving undeclared names with `resolve`.
    #[must_use]
    pub fn resolve_names(mut self, resolve: NameResolver) -> Self {
        self.resolve_name = Some(resolve);
        self
    }
}

/// Scans `text` for complete calls of tools in `tools`, at most `max_calls` of them.
///
/// A block holding more calls than the cap still allows is left in the text, and recovery stops
/// there. Reasoning text is scanned the same way as content.
///
/// # Examples
///
/// ```
/// let tools = toolmend::ToolSet::from_json(&serde_json::json!([{"name": "read_file"}]));
/// let text = "Reading.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>";
/// let found = toolmend::recover::recover_text(text, &tools, 16);
/// assert_eq!(found.calls[0].name, "read_file");
/// assert_eq!(found.calls[0].arguments, r#"{"path": "a.rs"}"#);
/// assert_eq!(found.text, "Reading.\n");
/// ```
#[must_use]
pub fn recover_text(text: &str, tools: &ToolSet, max_calls: usize) -> Recovered {
    recover_text_with(text, tools, &RecoverOptions::new(max_calls))
}

/// [`recover_text`] with options (a name resolver).
#[must_use]
pub fn recover_text_with(text: &str, tools: &ToolSet, options: &RecoverOptions) -> Recovered {
    let mut found = Vec::new();
    scan::Scanner::new(*options).run(text, true, tools, &mut found);
    // A whole text that is a payload wins over blocks found inside it: markup quoted in the
    // payload's strings is not a call of its own. The text after the last `</think>` is tried
    // when nothing else was found (a `</think>` may also lie inside a payload's string).
    if let Some(block) = whole::check_region(text, 0, tools, options) {
        found = vec![block];
    } else if found.is_empty() {
        let region = whole::region_start(text);
        if region != 0 {
            found.extend(whole::check_region(text, region, tools, options));
        }
    }
    let text = strip(text, 0..text.len(), found.iter().map(|f| &f.range));
    let mut calls = Vec::new();
    let mut lost = Vec::new();
    for block in found {
        lost.extend(block.lost.into_iter().map(|mut l| {
            l.position += calls.len();
            l
        }));
        calls.extend(block.calls);
    }
    Recovered { calls, text, lost }
}

/// `text[window]` without the consumed `ranges` (sorted, disjoint, within or after the window).
fn strip<'a>(
    text: &str,
    window: Range<usize>,
    ranges: impl Iterator<Item = &'a Range<usize>>,
) -> String {
    let mut out = String::with_capacity(window.len());
    strip_into(text, window, ranges, &mut out);
    out
}

/// [`strip`], appending to `out`.
fn strip_into<'a>(
    text: &str,
    window: Range<usize>,
    ranges: impl Iterator<Item = &'a Range<usize>>,
    out: &mut String,
) {
    let mut at = window.start;
    for range in ranges {
        if range.start >= window.end {
            break;
        }
        if range.end <= at {
            continue;
        }
        out.push_str(&text[at..range.start.max(at)]);
        at = range.end.min(window.end);
    }
    out.push_str(&text[at..window.end]);
}
