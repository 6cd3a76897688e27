//! Stage 2: tool calls leaked into text, in the model's own markup → structured calls.
//!
//! Serving stacks often fail to parse a model's tool-call markup, and the call ends up as text
//! in `content` or in the reasoning channel. This stage finds complete calls of declared tools
//! in that text (GRAMMARS.md), outside code fences and inline code, and returns them with the
//! text minus the consumed markup.

use std::ops::Range;

use crate::ToolSet;

/// Which text channels are scanned for leaked calls (DESIGN §5.3, §9).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecoverMode {
    /// Text is left alone (the default).
    #[default]
    Off,
    /// Markup of complete calls is removed from the text, but no call is produced.
    Strip,
    /// Calls are recovered from content, and only when the turn has no native calls.
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
    /// The arguments as JSON text; untyped markup values were converted with the tool's schema.
    pub arguments: String,
    /// The byte range of the markup in the scanned text.
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
}

/// Scans `text` for complete calls of tools in `tools`, at most `max_calls` of them.
#[must_use]
pub fn recover_text(text: &str, tools: &ToolSet, max_calls: usize) -> Recovered {
    let _ = (tools, max_calls);
    Recovered { calls: Vec::new(), text: text.to_owned() }
}
