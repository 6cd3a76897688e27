//! Anthropic Messages stream events as borrowed views: the members the stream transformer
//! reads from an event (`stream/anthropic.rs`), each kept as its raw span ([`Member`]).
//!
//! What is read is what the transformer decides on: the event's `type` and `index`, and its
//! `delta`'s text, thinking, argument fragment and stop reason. A shape not read here (not an
//! object, a repeated member, a string that cannot be decoded) is [`Unread`]: the transformer
//! reads the event's tree instead, before it changed anything.

use std::borrow::Cow;

use serde_json::Value;

use crate::spans::{Member, Unread};

#[derive(serde::Deserialize)]
struct EventView<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Member<'a>,
    #[serde(borrow, default)]
    index: Member<'a>,
    #[serde(borrow, default)]
    delta: Member<'a>,
}

#[derive(serde::Deserialize)]
struct DeltaView<'a> {
    #[serde(borrow, default)]
    text: Member<'a>,
    #[serde(borrow, default)]
    thinking: Member<'a>,
    #[serde(borrow, default)]
    partial_json: Member<'a>,
    #[serde(borrow, default)]
    stop_reason: Member<'a>,
}

/// What the transformer reads of an event, from its bytes or from its tree.
#[derive(Debug, Default)]
pub(crate) struct EventRead<'a> {
    /// The data's string `type`, else the `event:` name, else empty.
    pub(crate) kind: Cow<'a, str>,
    /// The unsigned integer `index`.
    pub(crate) index: Option<u64>,
    /// `delta` is an object.
    pub(crate) delta: bool,
    /// The `delta`'s string `text`, `thinking`, `partial_json` and `stop_reason`.
    pub(crate) text: Option<Cow<'a, str>>,
    pub(crate) thinking: Option<Cow<'a, str>>,
    pub(crate) partial_json: Option<Cow<'a, str>>,
    pub(crate) stop_reason: Option<Cow<'a, str>>,
}

impl<'a> EventRead<'a> {
    /// The `delta`'s string member `key` (`text` or `thinking`).
    pub(crate) fn delta_text(&self, key: &str) -> Option<&str> {
        match key {
            "thinking" => self.thinking.as_deref(),
            _ => self.text.as_deref(),
        }
    }

    /// An event's data read from its bytes; `name` is its `event:` field.
    pub(crate) fn read(data: &'a str, name: Option<&'a str>) -> Result<Self, Unread> {
        if crate::stream::event_tree::tree_only() || !data.starts_with('{') {
            return Err(Unread);
        }
        let view: EventView<'a> = serde_json::from_str(data)?;
        let mut read = Self {
            kind: view
                .kind
                .str()?
                .unwrap_or(Cow::Borrowed(name.unwrap_or(""))),
            index: view.index.u64(),
            ..Self::default()
        };
        if let Some(delta) = view.delta.object() {
            let delta: DeltaView<'a> = serde_json::from_str(delta)?;
            read.delta = true;
            read.text = delta.text.str()?;
            read.thinking = delta.thinking.str()?;
            read.partial_json = delta.partial_json.str()?;
            read.stop_reason = delta.stop_reason.str()?;
        }
        Ok(read)
    }

    /// The same members read from an event's tree (its kind as `typed_json` reads it).
    pub(crate) fn of_tree(value: &Value, kind: String) -> EventRead<'static> {
        let delta = value.get("delta");
        let text = |key: &str| {
            delta
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .map(|t| Cow::Owned(t.to_owned()))
        };
        EventRead {
            kind: Cow::Owned(kind),
            index: value.get("index").and_then(Value::as_u64),
            delta: delta.is_some_and(Value::is_object),
            text: text("text"),
            thinking: text("thinking"),
            partial_json: text("partial_json"),
            stop_reason: text("stop_reason"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers, on data both take.
    fn both(data: &str, name: Option<&str>) -> (String, String) {
        let tree: Value = serde_json::from_str(data).unwrap();
        let kind = tree
            .get("type")
            .and_then(Value::as_str)
            .or(name)
            .unwrap_or("")
            .to_owned();
        let read = EventRead::read(data, name).unwrap();
        (
            format!("{read:?}").replace("Borrowed", "Owned"),
            format!("{:?}", EventRead::of_tree(&tree, kind)),
        )
    }

    #[test]
    fn the_view_reads_what_the_tree_reads() {
        for (data, name) in [
            (
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"caf\u00e9 \"q\""}}"#,
                None,
            ),
            (
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\": "}}"#,
                None,
            ),
            (r#"{"index":-1,"delta":"x"}"#, Some("content_block_delta")),
            (
                r#"{"type":5,"index":1.0,"delta":{"stop_reason":null}}"#,
                Some("ping"),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{}}"#,
                None,
            ),
        ] {
            let (view, tree) = both(data, name);
            assert_eq!(view, tree, "{data}");
        }
        for data in [
            r#"{"type":"a","type":"b"}"#,
            r#"{"delta":{"text":"a","text":"b"}}"#,
            "[1]",
            " {}",
        ] {
            assert!(EventRead::read(data, None).is_err(), "{data}");
        }
    }
}
