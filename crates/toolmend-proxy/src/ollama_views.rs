//! Ollama `/api/chat` stream lines as borrowed views: the members the stream transformer
//! reads from a line (`stream/ollama.rs`), each kept as its raw span ([`Member`]).
//!
//! A line is read here only when it is an object the transformer would forward or rewrite
//! in place (no `error`, not the `done: true` line, no `tool_calls`); any other line, and a
//! shape not read here (a repeated member, a string that cannot be decoded), is [`Unread`]:
//! the transformer reads its tree instead, before it changed anything.

use std::borrow::Cow;

use crate::spans::{Member, Unread};

#[derive(serde::Deserialize)]
struct LineView<'a> {
    #[serde(borrow, default)]
    model: Member<'a>,
    #[serde(borrow, default)]
    created_at: Member<'a>,
    #[serde(borrow, default)]
    error: Member<'a>,
    #[serde(borrow, default)]
    done: Member<'a>,
    #[serde(borrow, default)]
    message: Member<'a>,
}

#[derive(serde::Deserialize)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    content: Member<'a>,
    #[serde(borrow, default)]
    thinking: Member<'a>,
    #[serde(borrow, default)]
    tool_calls: Member<'a>,
}

/// A line read from its bytes: what the transformer takes from it.
#[derive(Debug)]
pub(crate) struct LineRead<'a> {
    /// The `model` and `created_at` members' JSON texts, when present.
    pub(crate) envelope: [(&'static str, Option<&'a str>); 2],
    /// The string `message.thinking`.
    pub(crate) thinking: Option<Cow<'a, str>>,
    /// The string `message.content`.
    pub(crate) content: Option<Cow<'a, str>>,
}

/// Reads a line that is not the last one and carries no call; [`Unread`] for anything else
/// (not an object, an `error`, `done: true`, `tool_calls`, a repeated member, …).
pub(crate) fn read_line(text: &str) -> Result<LineRead<'_>, Unread> {
    if crate::stream::event_tree::tree_only() || !text.starts_with('{') {
        return Err(Unread);
    }
    let view: LineView<'_> = serde_json::from_str(text)?;
    if view.error.present() || view.done.raw() == Some("true") {
        return Err(Unread);
    }
    let mut read = LineRead {
        envelope: [
            ("model", view.model.raw()),
            ("created_at", view.created_at.raw()),
        ],
        thinking: None,
        content: None,
    };
    if let Some(message) = view.message.object() {
        let message: MessageView<'_> = serde_json::from_str(message)?;
        if message.tool_calls.present() {
            return Err(Unread);
        }
        read.thinking = message.thinking.str()?;
        read.content = message.content.str()?;
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_the_tree_must_take_are_left_to_it() {
        for line in [
            r#"{"error":"x"}"#,
            r#"{"message":{"content":"a"},"done":true}"#,
            r#"{"message":{"content":"","tool_calls":[]},"done":false}"#,
            r#"{"message":{"content":"a","content":"b"},"done":false}"#,
            r#"{"model":"a","model":"b"}"#,
            r#" {"done":false}"#,
            "[1]",
            "not json",
        ] {
            assert!(read_line(line).is_err(), "{line}");
        }
        let read = read_line(
            r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"caf\u00e9","thinking":"hm"},"done":false}"#,
        )
        .unwrap();
        assert_eq!(read.envelope[0], ("model", Some("\"m\"")));
        assert_eq!(read.content.as_deref(), Some("café"));
        assert!(matches!(read.thinking, Some(Cow::Borrowed("hm"))));
        let read = read_line(r#"{"message":"odd","done":"true"}"#).unwrap();
        assert!(read.content.is_none() && read.envelope[1].1.is_none());
    }
}
