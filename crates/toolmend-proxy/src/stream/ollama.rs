//! Ollama `/api/chat` streaming: NDJSON, one JSON object per line.
//!
//! `message.content` and `message.thinking` stream through a [`Channel`] each (only a possible
//! sentinel suffix is held). Ollama sends each tool call whole in one line, so a line's calls
//! are repaired as they come (arguments stay objects). Before the `done: true` line the held
//! text is flushed and calls recovered from text are added as one more line; the `done` line
//! (with `done_reason`) passes as received. Lines that need no change pass byte for byte.
//!
//! A line is read from its bytes ([`crate::ollama_views`]): its text, its envelope and whether
//! it ends the message or carries calls, no tree. A line that needs no change goes out as the
//! upstream's bytes; one whose text the channels changed is written on its tree; the `done`
//! line, a line with calls, an `error` and a shape the view does not read go through the tree.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use serde_json::{Map, Value, json};

use super::sse::{Data, Event};
use super::{Channel, Context, Leftover, Natives, Transform, recovered_calls};
use crate::mend::{Annotations, Fate, append_text, fates};
use crate::ollama_views::{LineRead, read_line};
use crate::routes::ollama::{new_call, read_calls, set_call};

/// Splits a byte stream into lines (each event's `data` is the line without its line break).
#[derive(Debug, Default)]
pub(crate) struct LineParser {
    buf: BytesMut,
    /// Bytes of `buf` already scanned without finding a line break.
    scanned: usize,
}

impl LineParser {
    /// Feeds bytes; returns every line they completed.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        self.buf.extend_from_slice(chunk);
        while let Some(at) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
            let end = self.scanned + at + 1;
            let raw = self.buf.split_to(end).freeze();
            self.scanned = 0;
            out.push(line_event(raw));
        }
        self.scanned = self.buf.len();
    }

    /// Ends a stream that ended cleanly: a last line without its line break gets one, so
    /// nothing written after it is glued to it.
    pub(crate) fn finish(&mut self, out: &mut Vec<Event>) {
        if !self.buf.is_empty() {
            self.scanned = 0;
            let mut raw = std::mem::take(&mut self.buf);
            raw.extend_from_slice(b"\n");
            out.push(line_event(raw.freeze()));
        }
    }

    /// Ends a stream that was cut: the partial line, as received.
    pub(crate) fn take_partial(&mut self) -> Option<Bytes> {
        self.scanned = 0;
        (!self.buf.is_empty()).then(|| std::mem::take(&mut self.buf).freeze())
    }
}

/// A line as an event: its bytes, and its text without the line break as its data (the
/// re-prompt splice reads lines through the same framing).
fn line_event(raw: Bytes) -> Event {
    let data = match std::str::from_utf8(&raw) {
        // The usual case: the line's text is a slice of its bytes (no copy).
        Ok(text) => Data::from_bytes(raw.slice(..text.trim_end().len())),
        Err(_) => Data::from_text(String::from_utf8_lossy(&raw).trim_end().to_owned()),
    };
    Event {
        raw,
        event: None,
        data: Some(data),
    }
}

/// A line written as NDJSON.
fn line(value: &Value) -> Bytes {
    let mut text = value.to_string();
    text.push('\n');
    Bytes::from(text)
}

/// The Ollama stream transformer.
#[derive(Debug, Default)]
pub(crate) struct OllamaStream {
    content: Option<Channel>,
    thinking: Option<Channel>,
    /// `model` and `created_at` of the last line that had each (their JSON texts, in the
    /// order they first came), for lines the proxy writes.
    envelope: Vec<(&'static str, String)>,
    /// Native calls as emitted, for the duplicate check of recovered calls.
    natives: Natives,
    ended: bool,
    notes: Annotations,
}

impl OllamaStream {
    /// A `done: false` line with this message.
    fn message_line(&self, message: Map<String, Value>) -> Bytes {
        let mut object: Map<String, Value> = self
            .envelope
            .iter()
            .map(|(key, text)| {
                let value = serde_json::from_str(text).unwrap_or(Value::Null);
                ((*key).to_owned(), value)
            })
            .collect();
        let mut full = Map::new();
        full.insert("role".into(), json!("assistant"));
        full.insert("content".into(), json!(""));
        full.extend(message);
        object.insert("message".into(), Value::Object(full));
        object.insert("done".into(), json!(false));
        line(&Value::Object(object))
    }

    fn text_line(&self, key: &str, text: String) -> Bytes {
        let mut message = Map::new();
        message.insert(key.into(), json!(text));
        self.message_line(message)
    }

    /// Streams a text field through its channel; returns whether it changed.
    fn scan(&mut self, cx: &Context, message: &mut Map<String, Value>, key: &str) -> bool {
        let Some(released) = self.scan_text(cx, key, message.get(key).and_then(Value::as_str))
        else {
            return false;
        };
        message.insert(key.into(), json!(released));
        true
    }

    /// Repairs a line's calls in place; returns whether they changed.
    fn repair_calls(&mut self, cx: &mut Context, message: &mut Map<String, Value>) -> bool {
        let calls = read_calls(message.get("tool_calls"));
        if calls.is_empty() {
            return false;
        }
        let native: Vec<Value> = match message.get("tool_calls") {
            Some(Value::Array(calls)) => calls.clone(),
            _ => Vec::new(),
        };
        let result = self.natives.run(cx, calls.clone());
        let mut changed = false;
        let mut out = Vec::with_capacity(result.calls.len());
        let mut extra: Option<String> = None;
        for (call, fate) in result.calls.iter().zip(fates(&result.calls, cx.config())) {
            self.notes.add(&cx.model, call);
            let index = call.native_index.unwrap_or_default();
            match fate {
                Fate::AsSent => {
                    if let Some(sent) = calls.get(index) {
                        self.natives.sent(sent.clone());
                    }
                    out.push(native.get(index).cloned().unwrap_or_else(|| json!({})));
                }
                Fate::Rewrite => {
                    changed = true;
                    self.natives.rewritten(call);
                    let mut sent = native.get(index).cloned().unwrap_or_else(|| json!({}));
                    set_call(&mut sent, call);
                    out.push(sent);
                }
                Fate::Drop => changed = true,
                Fate::DropWithText(text) => {
                    changed = true;
                    extra = Some(append_text(extra, &text));
                }
            }
        }
        if !changed {
            return false;
        }
        if let Some(text) = extra {
            let content = message.get("content").and_then(Value::as_str);
            let joined = append_text(content.filter(|c| !c.is_empty()).map(str::to_owned), &text);
            message.insert("content".into(), json!(joined));
        }
        if out.is_empty() {
            message.shift_remove("tool_calls");
        } else {
            message.insert("tool_calls".into(), Value::Array(out));
        }
        true
    }

    /// Ends the message: held text is flushed, recovered calls added as one more line.
    fn end(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let mut markup: [Option<String>; 2] = [None, None];
        for (slot, key) in [(0, "thinking"), (1, "content")] {
            let channel = match key {
                "content" => self.content.as_mut(),
                _ => self.thinking.as_mut(),
            };
            let Some(channel) = channel else { continue };
            let rest = channel.end(cx);
            markup[slot] = channel.markup();
            if !rest.is_empty() {
                out.push_back(self.text_line(key, rest));
            }
        }
        let [reasoning, content] = markup;
        // Recovered calls are numbered after the native ones.
        let first = self.natives.len();
        let Some(result) = self.natives.markup_turn(cx, content, reasoning) else {
            return;
        };
        // The text held from the first markup block on, refused blocks where they were.
        let mut left = Leftover::new(result.reasoning.as_deref());
        let text = self.thinking.as_mut().map(|c| c.settle(&mut left));
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push_back(self.text_line("thinking", text));
        }
        let mut left = Leftover::new(result.content.as_deref());
        let text = self.content.as_mut().map(|c| c.settle(&mut left));
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push_back(self.text_line("content", text));
        }
        let (sent, extra) = recovered_calls(cx, &mut self.notes, &result);
        let calls: Vec<Value> = sent
            .into_iter()
            .enumerate()
            .map(|(at, call)| new_call(call, first + at))
            .collect();
        if let Some(text) = extra {
            out.push_back(self.text_line("content", text));
        }
        if !calls.is_empty() {
            let mut message = Map::new();
            message.insert("tool_calls".into(), Value::Array(calls));
            out.push_back(self.message_line(message));
        }
    }
}

impl OllamaStream {
    /// Keeps a line's `model` or `created_at` (its JSON text) for the lines the proxy writes.
    fn keep(&mut self, key: &'static str, text: &str) {
        match self.envelope.iter_mut().find(|(k, _)| *k == key) {
            Some((_, kept)) => {
                kept.clear();
                kept.push_str(text);
            }
            None => self.envelope.push((key, text.to_owned())),
        }
    }

    /// Streams a line's text through its channel; the text to write in its place when the
    /// channel changed it.
    fn scan_text(&mut self, cx: &Context, key: &str, text: Option<&str>) -> Option<String> {
        let scan = match key {
            "content" => cx.scan_content(),
            _ => cx.scan_reasoning(),
        };
        let text = text.filter(|_| scan)?;
        let slot = match key {
            "content" => &mut self.content,
            _ => &mut self.thinking,
        };
        let channel = slot.get_or_insert_with(|| Channel::new(cx));
        let released = channel.push(cx, text);
        (released != text).then(|| released.to_owned())
    }

    /// Handles a line read from its bytes ([`read_line`]): forwarded as received unless a
    /// channel changed its text, then written on its tree.
    fn read_event(
        &mut self,
        cx: &Context,
        raw: Bytes,
        text: &str,
        read: LineRead<'_>,
        out: &mut VecDeque<Bytes>,
    ) {
        for (key, value) in read.envelope {
            if let Some(value) = value {
                self.keep(key, value);
            }
        }
        let edits = [
            (
                "thinking",
                self.scan_text(cx, "thinking", read.thinking.as_deref()),
            ),
            (
                "content",
                self.scan_text(cx, "content", read.content.as_deref()),
            ),
        ];
        if edits.iter().all(|(_, edit)| edit.is_none()) {
            return out.push_back(raw);
        }
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
            return out.push_back(raw);
        };
        if let Some(Value::Object(message)) = object.get_mut("message") {
            for (key, edit) in edits {
                if let Some(released) = edit {
                    message.insert(key.into(), json!(released));
                }
            }
        }
        out.push_back(line(&Value::Object(object)));
    }
}

impl Transform for OllamaStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let raw = event.raw;
        let text = event.data.as_ref().map_or("", Data::as_str);
        if let Ok(read) = read_line(text) {
            return self.read_event(cx, raw.clone(), text, read, out);
        }
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
            return out.push_back(raw.clone());
        };
        for key in ["model", "created_at"] {
            if let Some(value) = object.get(key) {
                self.keep(key, &value.to_string());
            }
        }
        if object.contains_key("error") {
            // The upstream gave up: what is held goes out before its error.
            self.end(cx, out);
            return out.push_back(raw.clone());
        }
        let done = object.get("done").and_then(Value::as_bool) == Some(true);
        let mut changed = false;
        let mut has_message = false;
        if let Some(Value::Object(message)) = object.get_mut("message") {
            let mut message = std::mem::take(message);
            changed |= self.scan(cx, &mut message, "thinking");
            changed |= self.scan(cx, &mut message, "content");
            changed |= self.repair_calls(cx, &mut message);
            has_message = message.get("tool_calls").is_some()
                || ["content", "thinking"].iter().any(|k| {
                    message
                        .get(*k)
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty())
                });
            object.insert("message".into(), Value::Object(message));
        }
        if !done {
            if changed {
                out.push_back(line(&Value::Object(object)));
            } else {
                out.push_back(raw.clone());
            }
            return;
        }
        let mut ending = VecDeque::new();
        self.end(cx, &mut ending);
        if ending.is_empty() && !changed {
            return out.push_back(raw.clone());
        }
        if has_message {
            // The last line's own text and calls go first, then the held rest, then `done`.
            if let Some(Value::Object(message)) = object.get_mut("message") {
                out.push_back(self.message_line(std::mem::take(message)));
                message.insert("role".into(), json!("assistant"));
                message.insert("content".into(), json!(""));
            }
        }
        out.extend(ending);
        if has_message || changed {
            out.push_back(line(&Value::Object(object)));
        } else {
            out.push_back(raw.clone());
        }
    }

    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        self.end(cx, out);
    }

    fn take_unsaved(&mut self) -> Vec<crate::mend::Unsaved> {
        std::mem::take(&mut self.notes.unsaved)
    }
}

#[cfg(test)]
mod tests {
    use toolmend::RecoverMode;

    use crate::error::Api;
    use crate::stream::event_tree::check::{agree, run};

    fn line(message: &str, done: &str) -> String {
        format!(
            r#"{{"model":"m","created_at":"2026-11-27T00:00:00Z","message":{message},"done":{done}}}"#
        )
    }

    /// Text and thinking with escapes, a CRLF line, a line that is not JSON, the done line.
    fn valid() -> String {
        [
            line(
                r#"{"role":"assistant","content":"Caf\u00e9 \"q\"\n"}"#,
                "false",
            ) + "\n",
            line(r#"{"role":"assistant","content":"ü — raw"}"#, "false") + "\r\n",
            line(
                r#"{"role":"assistant","content":"","thinking":"hm \\ ok"}"#,
                "false",
            ) + "\n",
            "not json\n".to_owned(),
            line(
                r#"{"role":"assistant","content":""}"#,
                r#"true,"done_reason":"stop""#,
            ) + "\n",
        ]
        .concat()
    }

    #[test]
    fn a_valid_stream_is_byte_identical_at_every_split() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            assert_eq!(agree(Api::Ollama, recover, &valid()), valid());
        }
        let bytes = valid().into_bytes();
        assert_eq!(
            run(Api::Ollama, RecoverMode::Content, vec![bytes.clone()]),
            bytes
        );
    }

    /// Markup cut across lines (escapes inside), a call with broken arguments, the done line.
    fn repaired() -> String {
        [
            line(r#"{"role":"assistant","content":"Look <tool_"}"#, "false"),
            line(
                r#"{"role":"assistant","content":"call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\u00e9\"}}</tool_call> now"}"#,
                "false",
            ),
            line(
                r#"{"role":"assistant","content":"","thinking":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/t\"}}</tool_call>"}"#,
                "false",
            ),
            line(
                r#"{"role":"assistant","content":"","tool_calls":[{"function":{"name":"list_dir","arguments":"{'dir': 'caf\u00e9'}"}}]}"#,
                "false",
            ),
            line(r#"{"role":"assistant","content":""}"#, r#"true,"done_reason":"stop""#),
        ]
        .map(|l| l + "\n")
        .concat()
    }

    #[test]
    fn a_repaired_stream_is_the_same_from_the_views_and_the_tree() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Ollama, recover, &repaired());
            assert!(text.contains(r#""arguments":{"dir":"café"}"#), "{text}");
        }
    }

    #[test]
    fn unusual_lines_go_through_the_tree_with_the_same_answer() {
        let body = [
            r#"{"model":"m","message":{"content":"<tool_","content":"b"},"done":false}"#,
            r#"{"model":"a","model":"b","message":{"content":"x"},"done":false}"#,
            r#" {"message":{"content":"<tool_call>"},"done":false}"#,
            r#"{"message":"odd","done":"true"}"#,
            r#"{"created_at":"t","message":{"content":5,"thinking":null},"done":false}"#,
            r#"{"message":{"content":"{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>"},"done":false}"#,
            r#"{"error":"upstream gave up"}"#,
        ]
        .map(|l| l.to_owned() + "\n")
        .concat();
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Ollama, recover, &body);
            assert!(
                text.ends_with("{\"error\":\"upstream gave up\"}\n"),
                "{text}"
            );
        }
    }
}
