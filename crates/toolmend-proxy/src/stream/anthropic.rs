//! Anthropic Messages streaming: content blocks keyed by their index.
//!
//! Text blocks stream through a [`Channel`] (only a possible sentinel suffix is held); a
//! `tool_use` block is held from `content_block_start` to `content_block_stop`, its
//! `input_json_delta` fragments joined, and then emitted repaired as start, one delta, stop.
//! Thinking blocks pass unchanged (their signature covers the text) but are scanned when
//! `--recover all`. Calls recovered from text are added as `tool_use` blocks before
//! `message_delta`. Block indices are renumbered when blocks are added or removed.
//!
//! A text block that had markup taken out is not closed when the upstream closes it: the
//! message's turn decides its blocks at the end, so its text from the first block on, and
//! everything sent after it, waits for that verdict; a block the library refuses then goes
//! out where it was, in its text block.
//!
//! Each event is read from its bytes ([`crate::anthropic_views`]): its type, index and the
//! delta's text or argument fragment, no tree. An event that needs no change goes out as the
//! upstream's bytes; the tree is built only for an event the proxy rewrites (a text delta the
//! channel changed, a renumbered block, a changed stop reason) or keeps (a block's start), and
//! for a shape the view does not read.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Value, json};
use toolmend::{Status, ToolCall};

use super::event_tree::EventTree;
use super::sse::{Event, SseParser, typed_event};
use super::{Channel, Context, Leftover, Natives, Transform, joined_markup, recovered_calls};
use crate::anthropic_views::EventRead;
use crate::mend::{Annotations, Fate, fates};
use crate::routes::anthropic::new_block;

#[derive(Debug)]
enum Block {
    /// A text or thinking block, scanned when `channel` is set. A scanned text block is
    /// opened (`out` given, `start` sent) only when text other than whitespace is released: a
    /// block that held only markup and blanks is left out.
    Text {
        out: Option<u64>,
        start: Option<Start>,
        channel: Option<Box<Channel>>,
        thinking: bool,
    },
    /// A held `tool_use` block.
    Tool {
        start: Value,
        arguments: String,
        passthrough: Option<u64>,
    },
    /// Any other block, passed through.
    Other { out: u64 },
}

/// The Anthropic stream transformer.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    blocks: BTreeMap<u64, Block>,
    next_out: u64,
    /// Native calls as emitted, for the duplicate check of recovered calls.
    natives: Natives,
    native_in: usize,
    native_out: usize,
    content_markup: Vec<String>,
    reasoning_markup: Vec<String>,
    ended: bool,
    recovered: bool,
    notes: Annotations,
    /// From the first text block closed with markup taken out: those blocks and every event
    /// sent after the first of them, until the turn decides the markup.
    held: Option<Vec<Held>>,
    /// During one event, where the events that belong to `held` start in the output.
    hold_from: Option<usize>,
}

/// What waits for the turn's verdict on the markup.
#[derive(Debug)]
enum Held {
    /// An event, as it would have been sent.
    Event(Bytes),
    /// A text block whose text from its first markup block on is held.
    Text(Box<HeldText>),
}

/// A text block closed by the upstream while its markup awaits the turn.
#[derive(Debug)]
struct HeldText {
    /// Its output index (taken when it closed, if it was not open yet).
    at: u64,
    /// Its start event was sent.
    opened: bool,
    /// Its start event, not sent yet.
    start: Option<Start>,
    channel: Box<Channel>,
    /// The upstream closed it: it gets its stop.
    stop: bool,
}

/// A block's start event, sent when the block opens.
#[derive(Debug)]
struct Start {
    raw: Bytes,
    index: Option<u64>,
    tree: EventTree,
}

impl Start {
    /// The event under the output index `at`.
    fn at(self, at: u64) -> Bytes {
        reindexed(self.raw, self.index, self.tree, at)
    }
}

/// The event with its `index` lowered past the output indices in `dropped` (blocks taken when
/// held and then left out); the same bytes when it has none to lower.
fn lowered(raw: Bytes, dropped: &[u64]) -> Bytes {
    if dropped.is_empty() {
        return raw;
    }
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    parser.push(&raw, &mut events);
    parser.finish(&mut events);
    let Some((mut value, _)) = events.first().and_then(Event::typed_json) else {
        return raw;
    };
    let Some(index) = value.get("index").and_then(Value::as_u64) else {
        return raw;
    };
    let below = dropped.iter().filter(|d| **d < index).count() as u64;
    if below == 0 {
        return raw;
    }
    value["index"] = json!(index - below);
    typed_event(&value)
}

fn start_event(index: u64, block: Value) -> Bytes {
    typed_event(&json!({"type": "content_block_start", "index": index, "content_block": block}))
}

fn delta_event(index: u64, delta: Value) -> Bytes {
    typed_event(&json!({"type": "content_block_delta", "index": index, "delta": delta}))
}

fn stop_event(index: u64) -> Bytes {
    typed_event(&json!({"type": "content_block_stop", "index": index}))
}

/// The event (whose `index` is `index`) with its `index` set to `out`: the raw bytes when it
/// already is, else written from its tree.
fn reindexed(raw: Bytes, index: Option<u64>, tree: EventTree, out: u64) -> Bytes {
    if index == Some(out) {
        return raw;
    }
    let mut value = tree.into_value();
    if let Some(object) = value.as_object_mut() {
        object.insert("index".into(), json!(out));
    }
    typed_event(&value)
}

impl AnthropicStream {
    fn take_out(&mut self) -> u64 {
        let out = self.next_out;
        self.next_out += 1;
        out
    }

    /// Emits a whole text block.
    fn text_block(&mut self, text: &str, out: &mut VecDeque<Bytes>) {
        let index = self.take_out();
        out.push_back(start_event(index, json!({"type": "text", "text": ""})));
        out.push_back(delta_event(
            index,
            json!({"type": "text_delta", "text": text}),
        ));
        out.push_back(stop_event(index));
    }

    /// Emits a whole `tool_use` block from `block` (its `input` is streamed as one delta).
    fn tool_block(&mut self, mut block: Value, arguments: &str, out: &mut VecDeque<Bytes>) {
        let index = self.take_out();
        block["input"] = json!({});
        out.push_back(start_event(index, block));
        out.push_back(delta_event(
            index,
            json!({"type": "input_json_delta", "partial_json": arguments}),
        ));
        out.push_back(stop_event(index));
    }

    /// Closes a block: flushes held text, or repairs and emits a held call. A text block that
    /// had markup taken out is held instead (`None`): `stop` says it gets its stop then.
    fn close(
        &mut self,
        cx: &mut Context,
        index: u64,
        stop: bool,
        out: &mut VecDeque<Bytes>,
    ) -> Option<u64> {
        match self.blocks.remove(&index)? {
            Block::Text {
                out: mut at,
                mut start,
                channel,
                thinking,
            } => {
                let mut consumed = false;
                if let Some(mut channel) = channel {
                    let text = channel.end(cx);
                    consumed = channel.consumed();
                    if !text.is_empty() && !thinking {
                        let index = self.open(&mut at, &mut start, out);
                        out.push_back(delta_event(
                            index,
                            json!({"type": "text_delta", "text": text}),
                        ));
                    }
                    if let Some(markup) = channel.markup() {
                        match thinking {
                            true => self.reasoning_markup.push(markup),
                            false => self.content_markup.push(markup),
                        }
                    }
                    if consumed && !thinking {
                        self.hold_text(at, start, channel, stop, out);
                        return None;
                    }
                }
                if at.is_none() && consumed {
                    // Only markup and blanks: no text block at all.
                    return None;
                }
                Some(self.open(&mut at, &mut start, out))
            }
            Block::Other { out: at } => Some(at),
            Block::Tool {
                passthrough: Some(at),
                ..
            } => Some(at),
            Block::Tool {
                start, arguments, ..
            } => {
                self.repair_tool(cx, start, &arguments, out);
                None
            }
        }
    }

    /// Holds a text block with markup taken out, and from then on every event sent, until
    /// [`Self::release`].
    fn hold_text(
        &mut self,
        at: Option<u64>,
        start: Option<Start>,
        channel: Box<Channel>,
        stop: bool,
        out: &mut VecDeque<Bytes>,
    ) {
        let (at, opened) = match at {
            Some(at) => (at, true),
            None => (self.take_out(), false),
        };
        self.absorb(out);
        let held = self.held.get_or_insert_with(Vec::new);
        held.push(Held::Text(Box::new(HeldText {
            at,
            opened,
            start,
            channel,
            stop,
        })));
        self.hold_from = Some(out.len());
    }

    /// Moves the events sent since `hold_from` into `held`.
    fn absorb(&mut self, out: &mut VecDeque<Bytes>) {
        let Some(from) = self.hold_from.take() else {
            return;
        };
        if let Some(held) = self.held.as_mut() {
            held.extend(out.drain(from.min(out.len())..).map(Held::Event));
        }
    }

    /// Sends what was held, now that the turn has judged the markup (`content` is what it
    /// left of the text blocks' markup): each held block's text with its refused markup in
    /// place, a block left with no text at all left out (the indices after it lowered).
    fn release(&mut self, content: Option<&str>, out: &mut VecDeque<Bytes>) {
        self.absorb(out);
        let Some(held) = self.held.take() else {
            return;
        };
        let mut left = Leftover::new(content);
        let mut dropped: Vec<u64> = Vec::new();
        for item in held {
            let block = match item {
                Held::Event(raw) => {
                    out.push_back(lowered(raw, &dropped));
                    continue;
                }
                Held::Text(block) => block,
            };
            let HeldText {
                at,
                opened,
                start,
                mut channel,
                stop,
            } = *block;
            let text = channel.settle(&mut left);
            if text.is_empty() && !opened {
                dropped.push(at);
                continue;
            }
            let at = at - dropped.iter().filter(|d| **d < at).count() as u64;
            if let Some(start) = start.filter(|_| !opened) {
                out.push_back(start.at(at));
            }
            if !text.is_empty() {
                out.push_back(delta_event(at, json!({"type": "text_delta", "text": text})));
            }
            if stop {
                out.push_back(stop_event(at));
            }
        }
        self.next_out -= dropped.len() as u64;
    }

    /// The output index of a text block, opening it first (its start event sent) if needed.
    fn open(
        &mut self,
        at: &mut Option<u64>,
        start: &mut Option<Start>,
        out: &mut VecDeque<Bytes>,
    ) -> u64 {
        if let Some(index) = *at {
            return index;
        }
        let index = self.take_out();
        *at = Some(index);
        if let Some(start) = start.take() {
            out.push_back(start.at(index));
        }
        index
    }

    fn repair_tool(
        &mut self,
        cx: &mut Context,
        start: Value,
        arguments: &str,
        out: &mut VecDeque<Bytes>,
    ) {
        self.native_in += 1;
        let id = start.get("id").and_then(Value::as_str).unwrap_or_default();
        let name = start
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let result = self
            .natives
            .run(cx, vec![ToolCall::new(id, name, arguments)]);
        for (call, fate) in result.calls.iter().zip(fates(&result.calls, cx.config())) {
            self.notes.add(&cx.model, call);
            match fate {
                Fate::AsSent => {
                    self.native_out += 1;
                    self.natives.sent(ToolCall::new(id, name, arguments));
                    self.tool_block(start.clone(), arguments, out);
                }
                Fate::Rewrite => {
                    self.native_out += 1;
                    self.natives.rewritten(call);
                    let mut block = start.clone();
                    if !call.id.is_empty() {
                        block["id"] = json!(call.id);
                    }
                    block["name"] = json!(call.name.as_ref());
                    self.tool_block(block, &call.arguments_text, out);
                }
                Fate::Drop => {}
                Fate::DropWithText(text) => self.text_block(&text, out),
            }
        }
    }

    /// Ends the message: closes open blocks and adds the calls recovered from text.
    fn end(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        self.end_with(cx, out, true);
    }

    /// Ends the message; `closed` when the upstream ended it (`message_delta`), else (a cut
    /// stream, an `error` event) open blocks get no stop the upstream never sent.
    fn end_with(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>, closed: bool) {
        if self.ended {
            return;
        }
        self.ended = true;
        let open: Vec<u64> = self.blocks.keys().copied().collect();
        for index in open {
            if !closed {
                self.flush_open(cx, index, out);
            } else if let Some(at) = self.close(cx, index, true, out) {
                out.push_back(stop_event(at));
            }
        }
        let content = joined_markup(&self.content_markup);
        let reasoning = joined_markup(&self.reasoning_markup);
        let Some(result) = self.natives.markup_turn(cx, content, reasoning) else {
            self.release(None, out);
            return;
        };
        self.release(result.content.as_deref(), out);
        let (calls, extra) = recovered_calls(cx, &mut self.notes, &result);
        for call in calls {
            self.recovered |= call.status == Status::Recovered;
            let block = new_block(call);
            self.tool_block(block, &call.arguments_text, out);
        }
        if let Some(text) = extra {
            self.text_block(&text, out);
        }
    }

    /// Flushes a block the upstream never closed, without a stop: held text goes out, and a
    /// held call as received (a cut call is never repaired, nor closed), unless it cannot be
    /// saved and `--invalid reject` replaces it with its retry message.
    fn flush_open(&mut self, cx: &mut Context, index: u64, out: &mut VecDeque<Bytes>) {
        if !matches!(
            self.blocks.get(&index),
            Some(Block::Tool {
                passthrough: None,
                ..
            })
        ) {
            let _ = self.close(cx, index, false, out);
            return;
        }
        let Some(Block::Tool {
            mut start,
            arguments,
            ..
        }) = self.blocks.remove(&index)
        else {
            return;
        };
        let id = start.get("id").and_then(Value::as_str).unwrap_or_default();
        let name = start
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.native_in += 1;
        // Judged like any call, so it is counted and `--invalid` applies: a call the library
        // cannot save (cut inside the arguments of a tool that may mutate) is rejected with
        // its retry message, or passes as received.
        let call = ToolCall::new(id, name, &arguments);
        let result = self.natives.run(cx, vec![call.clone()]);
        let mut retry: Option<String> = None;
        for (call, fate) in result.calls.iter().zip(fates(&result.calls, cx.config())) {
            self.notes.add(&cx.model, call);
            if call.status == Status::Invalid
                && let Fate::DropWithText(text) = fate
            {
                retry = Some(crate::mend::append_text(retry, &text));
            }
        }
        if let Some(text) = retry {
            self.text_block(&text, out);
            return;
        }
        self.natives.sent(call);
        self.native_out += 1;
        let at = self.take_out();
        start["input"] = json!({});
        out.push_back(start_event(at, start));
        if !arguments.is_empty() {
            out.push_back(delta_event(
                at,
                json!({"type": "input_json_delta", "partial_json": arguments}),
            ));
        }
    }

    /// The new stop reason, if it must change.
    fn stop_reason(&self, old: Option<&str>) -> Option<&'static str> {
        if self.recovered && old != Some("tool_use") {
            Some("tool_use")
        } else if self.native_in > 0
            && self.native_out == 0
            && !self.recovered
            && old == Some("tool_use")
        {
            Some("end_turn")
        } else {
            None
        }
    }
}

impl Transform for AnthropicStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        if self.held.is_some() {
            self.hold_from = Some(out.len());
        }
        self.on_event(cx, event, out);
        self.absorb(out);
    }

    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        if self.held.is_some() {
            self.hold_from = Some(out.len());
        }
        // Reached without `message_delta`: the message was never ended by the upstream.
        self.end_with(cx, out, false);
        self.absorb(out);
    }

    fn take_unsaved(&mut self) -> Vec<crate::mend::Unsaved> {
        std::mem::take(&mut self.notes.unsaved)
    }
}

impl AnthropicStream {
    fn on_event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let name = event.event.as_deref();
        if let Some(data) = &event.data
            && let Ok(read) = EventRead::read(data.as_str(), name)
        {
            let tree = EventTree::unparsed(data.clone());
            return self.handle(cx, event.raw.clone(), read, tree, out);
        }
        let Some((value, kind)) = event.typed_json() else {
            return out.push_back(event.raw);
        };
        let read = EventRead::of_tree(&value, kind);
        self.handle(cx, event.raw, read, EventTree::parsed(value), out);
    }

    /// Handles an event as read ([`EventRead`]); `tree` is its JSON, parsed when needed.
    fn handle(
        &mut self,
        cx: &mut Context,
        raw: Bytes,
        read: EventRead<'_>,
        mut tree: EventTree,
        out: &mut VecDeque<Bytes>,
    ) {
        let index = read.index;
        match (read.kind.as_ref(), index) {
            ("content_block_start", Some(index)) => {
                let block = tree
                    .value()
                    .get("content_block")
                    .cloned()
                    .unwrap_or(Value::Null);
                let start = Start {
                    raw,
                    index: Some(index),
                    tree,
                };
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let arguments = match block.get("input") {
                            Some(Value::Object(o)) if !o.is_empty() => block["input"].to_string(),
                            _ => String::new(),
                        };
                        self.blocks.insert(
                            index,
                            Block::Tool {
                                start: block,
                                arguments,
                                passthrough: None,
                            },
                        );
                    }
                    Some(kind @ ("text" | "thinking")) => {
                        let thinking = kind == "thinking";
                        let scan = if thinking {
                            cx.scan_reasoning()
                        } else {
                            cx.scan_content()
                        };
                        let channel = scan.then(|| Box::new(Channel::new(cx)));
                        let (at, start) = if channel.is_some() && !thinking {
                            (None, Some(start))
                        } else {
                            let at = self.take_out();
                            out.push_back(start.at(at));
                            (Some(at), None)
                        };
                        self.blocks.insert(
                            index,
                            Block::Text {
                                out: at,
                                start,
                                channel,
                                thinking,
                            },
                        );
                    }
                    _ => {
                        let at = self.take_out();
                        self.blocks.insert(index, Block::Other { out: at });
                        out.push_back(start.at(at));
                    }
                }
            }
            ("content_block_delta", Some(index)) => {
                let limit = cx.config().limits.max_call_arguments_bytes;
                let next_out = self.next_out;
                let mut took = false;
                let mut opened = false;
                let this = Start {
                    raw,
                    index: Some(index),
                    tree,
                };
                match self.blocks.get_mut(&index) {
                    None => out.push_back(this.raw),
                    Some(Block::Other { out: at }) => {
                        let at = *at;
                        out.push_back(this.at(at));
                    }
                    Some(Block::Text {
                        out: slot,
                        start,
                        channel,
                        thinking,
                    }) => {
                        let deferred = slot.is_none();
                        let at = *slot.get_or_insert(next_out);
                        let key = if *thinking { "thinking" } else { "text" };
                        let text = read.delta_text(key);
                        let sink = &mut *out;
                        let mut emit = |event: Bytes| {
                            if deferred {
                                // The first text other than blanks opens the block.
                                opened = true;
                                if let Some(start) = start.take() {
                                    sink.push_back(start.at(at));
                                }
                            }
                            sink.push_back(event);
                        };
                        match (channel.as_mut(), text) {
                            (Some(channel), Some(text)) if *thinking => {
                                // Scanned, never rewritten: the signature covers it.
                                let _ = channel.push(cx, text);
                                emit(this.at(at));
                            }
                            (Some(channel), Some(text)) => {
                                let released = channel.push(cx, text);
                                if released.is_empty() && deferred {
                                    // Nothing for the client yet.
                                } else if released == text {
                                    emit(this.at(at));
                                } else if !released.is_empty() {
                                    let mut tree = this.tree;
                                    let value = tree.value();
                                    value["delta"][key] = json!(released);
                                    value["index"] = json!(at);
                                    emit(typed_event(value));
                                }
                            }
                            _ => emit(this.at(at)),
                        }
                        if deferred && !opened {
                            *slot = None;
                        }
                    }
                    Some(Block::Tool {
                        start,
                        arguments,
                        passthrough,
                    }) => {
                        let piece = read.partial_json.as_deref().unwrap_or_default();
                        if let Some(at) = *passthrough {
                            out.push_back(this.at(at));
                        } else {
                            arguments.push_str(piece);
                            if arguments.len() > limit {
                                // Too large to hold: forwarded as received from here on.
                                *passthrough = Some(next_out);
                                took = true;
                                out.push_back(start_event(next_out, start.clone()));
                                out.push_back(delta_event(
                                    next_out,
                                    json!({"type": "input_json_delta",
                                        "partial_json": std::mem::take(arguments)}),
                                ));
                            }
                        }
                    }
                }
                if took || opened {
                    self.next_out += 1;
                    self.native_in += 1;
                    self.native_out += 1;
                }
            }
            ("content_block_stop", Some(index)) => {
                if let Some(at) = self.close(cx, index, true, out) {
                    out.push_back(reindexed(raw, Some(index), tree, at));
                } else if !self.blocks.contains_key(&index) {
                    // A held tool block was emitted whole by `close`, or an unknown block.
                }
            }
            ("message_delta", _) => {
                self.end(cx, out);
                match self.stop_reason(read.stop_reason.as_deref()) {
                    Some(new) if crate::mend::repairing(cx.config()) && read.delta => {
                        let value = tree.value();
                        value["delta"]["stop_reason"] = json!(new);
                        out.push_back(typed_event(value));
                    }
                    _ => out.push_back(raw),
                }
            }
            ("message_stop", _) => {
                self.end(cx, out);
                out.push_back(raw);
            }
            ("error", _) => {
                // The upstream gave up: what is held goes out before its error.
                self.end_with(cx, out, false);
                out.push_back(raw);
            }
            _ => out.push_back(raw),
        }
    }
}

#[cfg(test)]
mod tests {
    use toolmend::RecoverMode;

    use crate::error::Api;
    use crate::stream::event_tree::check::agree;

    fn event(data: &str) -> String {
        let kind = data
            .split("\"type\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("message");
        format!("event: {kind}\ndata: {data}\n\n")
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#;

    fn text_delta(index: u64, text: &str) -> String {
        event(&format!(
            r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"text_delta","text":{text}}}}}"#
        ))
    }

    /// Thinking and text with escapes, a ping, CRLF framing: no call.
    fn valid() -> String {
        [
            event(START),
            event(r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
            event(r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm \u00e9"}}"#),
            event(r#"{"type":"content_block_stop","index":0}"#),
            "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n".to_owned(),
            event(r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
            text_delta(1, r#""Caf\u00e9 \"q\"\n""#),
            text_delta(1, r#""ü — raw""#),
            event(r#"{"type":"content_block_stop","index":1}"#),
            event(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#),
            event(r#"{"type":"message_stop"}"#),
        ]
        .concat()
    }

    #[test]
    fn a_valid_stream_is_byte_identical_at_every_split() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            assert_eq!(agree(Api::Anthropic, recover, &valid()), valid());
        }
    }

    /// Markup cut across deltas (escapes inside), a call with broken arguments cut in
    /// fragments with escapes, the stop reason.
    fn repaired() -> String {
        [
            event(START),
            event(r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            text_delta(0, r#""Look <tool_""#),
            text_delta(
                0,
                r#""call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\u00e9\"}}</tool_call> now""#,
            ),
            event(r#"{"type":"content_block_stop","index":0}"#),
            event(r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"list_dir","input":{}}}"#),
            event(r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{'dir': "}}"#),
            event(r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"'caf\u00e9 \\\\ \"'}"}}"#),
            event(r#"{"type":"content_block_stop","index":1}"#),
            event(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}"#),
            event(r#"{"type":"message_stop"}"#),
        ]
        .concat()
    }

    #[test]
    fn a_repaired_stream_is_the_same_from_the_views_and_the_tree() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Anthropic, recover, &repaired());
            assert!(text.contains(r#"{\"dir\":\"café \\\\ \\\"\"}"#), "{text}");
        }
    }

    #[test]
    fn unusual_events_go_through_the_tree_with_the_same_answer() {
        let body = [
            event(START),
            event(r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            // The type from the event's name alone.
            "event: content_block_delta\ndata: {\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a <tool_\"}}\n\n".to_owned(),
            // A repeated member, data over two lines, a leading blank, odd indices.
            event(r#"{"type":"content_block_delta","index":0,"delta":{"text":"x","text":"call>"}}"#),
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\ndata: \"index\":0,\"delta\":{\"text\":\"{\\\"name\\\": \\\"list_dir\\\", \"}}\n\n".to_owned(),
            "data:  {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\"\\\"arguments\\\": {\\\"dir\\\": \\\"/\\\"}}</tool_call>\"}}\n\n".to_owned(),
            event(r#"{"type":"content_block_delta","index":0.0,"delta":{"text":"lost"}}"#),
            event(r#"{"type":"content_block_delta","index":0,"delta":"odd"}"#),
            event(r#"{"type":"content_block_stop","index":0}"#),
            event(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#),
            event(r#"{"type":"message_stop"}"#),
        ]
        .concat();
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Anthropic, recover, &body);
            assert!(text.contains("tool_use"), "{text}");
        }
        let error = [
            event(START),
            event(r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            text_delta(0, r#""held <tool_""#),
            event(r#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#),
        ]
        .concat();
        let text = agree(Api::Anthropic, RecoverMode::Content, &error);
        assert!(text.ends_with("\"message\":\"x\"}}\n\n"), "{text}");
    }
}
