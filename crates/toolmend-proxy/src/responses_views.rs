//! OpenAI Responses stream events as borrowed views: the members the stream transformer reads
//! from an event (`stream/responses.rs`), each kept as its raw span ([`Member`]).
//!
//! What is read is what the transformer decides on for every event: its `type`, the indices
//! (`output_index`, `content_index`, `summary_index`), the `sequence_number`, the string
//! `delta` of text, reasoning and argument deltas, and the `response`'s `id`. A shape not read
//! here (not an object, a repeated member, a string that cannot be decoded) is [`Unread`]: the
//! transformer reads the event's tree instead, before it changed anything.

use std::borrow::Cow;

use serde_json::Value;

use crate::spans::{Member, Unread};

#[derive(serde::Deserialize)]
struct EventView<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Member<'a>,
    #[serde(borrow, default)]
    output_index: Member<'a>,
    #[serde(borrow, default)]
    content_index: Member<'a>,
    #[serde(borrow, default)]
    summary_index: Member<'a>,
    #[serde(borrow, default)]
    sequence_number: Member<'a>,
    #[serde(borrow, default)]
    delta: Member<'a>,
    #[serde(borrow, default)]
    response: Member<'a>,
}

#[derive(serde::Deserialize)]
struct ResponseView<'a> {
    #[serde(borrow, default)]
    id: Member<'a>,
}

/// What the transformer reads of an event, from its bytes or from its tree.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct EventRead<'a> {
    /// The data's string `type`, else the `event:` name, else empty.
    pub(crate) kind: Cow<'a, str>,
    /// The unsigned integer members, as `Value::as_u64` reads them.
    pub(crate) output_index: Option<u64>,
    pub(crate) content_index: Option<u64>,
    pub(crate) summary_index: Option<u64>,
    pub(crate) sequence_number: Option<u64>,
    /// The string `delta`.
    pub(crate) delta: Option<Cow<'a, str>>,
    /// The string `response.id` of an event that opens the response ([`opens`]).
    pub(crate) response_id: Option<Cow<'a, str>>,
}

impl<'a> EventRead<'a> {
    /// An event's data read from its bytes; `name` is its `event:` field.
    pub(crate) fn read(data: &'a str, name: Option<&'a str>) -> Result<Self, Unread> {
        if crate::stream::event_tree::tree_only() || !data.starts_with('{') {
            return Err(Unread);
        }
        let view: EventView<'a> = serde_json::from_str(data)?;
        let kind = view
            .kind
            .str()?
            .unwrap_or(Cow::Borrowed(name.unwrap_or("")));
        // Only the events that open a response are asked for its id: the others' `response`
        // (the whole output, on `response.completed`) is not scanned twice.
        let response_id = match view.response.object() {
            Some(response) if opens(&kind) => serde_json::from_str::<ResponseView<'a>>(response)?
                .id
                .str()?,
            _ => None,
        };
        Ok(Self {
            kind,
            output_index: view.output_index.u64(),
            content_index: view.content_index.u64(),
            summary_index: view.summary_index.u64(),
            sequence_number: view.sequence_number.u64(),
            delta: view.delta.str()?,
            response_id,
        })
    }

    /// The same members read from an event's tree (its kind as `typed_json` reads it).
    pub(crate) fn of_tree(value: &Value, kind: String) -> EventRead<'static> {
        let number = |key: &str| value.get(key).and_then(Value::as_u64);
        let text = |value: Option<&Value>| {
            value
                .and_then(Value::as_str)
                .map(|t| Cow::Owned(t.to_owned()))
        };
        EventRead {
            output_index: number("output_index"),
            content_index: number("content_index"),
            summary_index: number("summary_index"),
            sequence_number: number("sequence_number"),
            delta: text(value.get("delta")),
            response_id: text(value.pointer("/response/id")).filter(|_| opens(&kind)),
            kind: Cow::Owned(kind),
        }
    }
}

/// Whether an event of this kind opens a response (the transformer reads its `id` there).
pub(crate) fn opens(kind: &str) -> bool {
    matches!(kind, "response.created" | "response.in_progress")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_reads_what_the_tree_reads() {
        for (data, name) in [
            (
                r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":1,"delta":"caf\u00e9 \"q\"\n","logprobs":[],"sequence_number":7}"#,
                None,
            ),
            (
                r#"{"type":"response.created","response":{"id":"resp_1","output":[]},"sequence_number":0}"#,
                None,
            ),
            (
                r#"{"type":"response.completed","response":{"id":"resp_1","id":"x"}}"#,
                None,
            ),
            (
                r#"{"output_index":-1,"summary_index":2,"delta":5,"response":{"id":3}}"#,
                Some("response.reasoning_summary_text.delta"),
            ),
            (
                r#"{"type":7,"sequence_number":1e0,"response":[]}"#,
                Some("x"),
            ),
        ] {
            let tree: Value = serde_json::from_str(data).unwrap();
            let kind = tree
                .get("type")
                .and_then(Value::as_str)
                .or(name)
                .unwrap_or("")
                .to_owned();
            let read = EventRead::read(data, name).unwrap();
            assert_eq!(read, EventRead::of_tree(&tree, kind), "{data}");
        }
        for data in [
            r#"{"delta":"a","delta":"b"}"#,
            r#"{"type":"response.created","response":{"id":"a","id":"b"}}"#,
            "[1]",
            " {}",
        ] {
            assert!(EventRead::read(data, None).is_err(), "{data}");
        }
    }
}
