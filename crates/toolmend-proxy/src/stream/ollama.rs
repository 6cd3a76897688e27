//! Ollama `/api/chat` streaming: NDJSON, one JSON object per line.
//!
//! `message.content` and `message.thinking` stream through a [`Channel`] each (only a possible
//! sentinel suffix is held). Ollama sends each tool call whole in one line, so a line's calls
//! are repaired as they come (arguments stay objects). Before the `done: true` line the held
//! text is flushed and calls recovered from text are added as one more line; the `done` line
//! (with `done_reason`) passes as received. Lines that need no change pass byte for byte.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use serde_json::{Map, Value, json};

use super::sse::{Data, Event};
use super::{Channel, Context, Leftover, Natives, Transform, recovered_calls};
use crate::mend::{Annotations, Fate, append_text, fates};
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

fn line_event(raw: Bytes) -> Event {
    let data = String::from_utf8_lossy(&raw).trim_end().to_owned();
    Event {
        raw,
        event: None,
        data: Some(Data::from_text(data)),
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
    /// `model` and `created_at` of the last line, for lines the proxy writes.
    envelope: Map<String, Value>,
    /// Native calls as emitted, for the duplicate check of recovered calls.
    natives: Natives,
    ended: bool,
    notes: Annotations,
}

impl OllamaStream {
    /// A `done: false` line with this message.
    fn message_line(&self, message: Map<String, Value>) -> Bytes {
        let mut object = self.envelope.clone();
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
        let scan = match key {
            "content" => cx.scan_content(),
            _ => cx.scan_reasoning(),
        };
        let Some(Value::String(text)) = message.get(key).filter(|_| scan) else {
            return false;
        };
        let slot = match key {
            "content" => &mut self.content,
            _ => &mut self.thinking,
        };
        let channel = slot.get_or_insert_with(|| Channel::new(cx));
        let released = channel.push(cx, text);
        if released == *text {
            return false;
        }
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

impl Transform for OllamaStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let Some(Ok(Value::Object(mut object))) = event.data().map(serde_json::from_str::<Value>)
        else {
            return out.push_back(event.raw);
        };
        for key in ["model", "created_at"] {
            if let Some(value) = object.get(key) {
                self.envelope.insert(key.into(), value.clone());
            }
        }
        if object.contains_key("error") {
            // The upstream gave up: what is held goes out before its error.
            self.end(cx, out);
            return out.push_back(event.raw);
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
                out.push_back(event.raw);
            }
            return;
        }
        let mut ending = VecDeque::new();
        self.end(cx, &mut ending);
        if ending.is_empty() && !changed {
            return out.push_back(event.raw);
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
            out.push_back(event.raw);
        }
    }

    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        self.end(cx, out);
    }

    fn take_unsaved(&mut self) -> Vec<crate::mend::Unsaved> {
        std::mem::take(&mut self.notes.unsaved)
    }
}
