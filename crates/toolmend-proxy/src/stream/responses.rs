//! OpenAI Responses streaming: output items keyed by their `output_index`.
//!
//! A `function_call` item is held from `response.output_item.added` to
//! `response.output_item.done` (its `…arguments.delta`/`.done` events with it), then repaired:
//! a valid call is replayed as the events received; a repaired one is emitted as added, one
//! delta, `…arguments.done` and `output_item.done`, all carrying the repaired arguments.
//! `output_text` deltas stream through a [`Channel`] (only a possible sentinel suffix is held),
//! and the part's `…done` events carry the text as emitted. Reasoning text and reasoning
//! summaries are scanned when `--recover all` but never rewritten. Calls recovered from text are added as new
//! `function_call` items before `response.completed`, whose `output` is then rewritten to the
//! items as emitted. Output indices and `sequence_number`s are renumbered once anything was
//! added or dropped; every other event passes in order, as received while nothing changed.
//!
//! A text part that had markup taken out holds its text from the first markup block on, and
//! every event after it is held too, until the response's turn decides the markup: a block the
//! library refuses then goes out where it was, and the part's `…done` events carry its text.
//!
//! Each event is read from its bytes ([`crate::responses_views`]): its type, indices, sequence
//! number and delta, no tree. An event that needs no change goes out as the upstream's bytes
//! (held ones too, replayed as received); the tree is built only for an event the proxy
//! rewrites (a changed delta, a renumbered index or sequence number) or whose item it keeps
//! (an item's `added` and `done`, a part's `done`), and for a shape the view does not read.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Value, json};
use toolmend::ToolCall;

use super::event_tree::EventTree;
use super::sse::{Event, typed_event};
use super::{Channel, Context, Leftover, Natives, Transform, joined_markup, recovered_calls};
use crate::mend::{Annotations, Fate, fates};
use crate::responses_views::EventRead;
use crate::routes::responses::{id_tail, new_call_item, new_text_item, set_call_item};

/// An event as received or as the proxy writes it: its JSON ([`EventTree`], parsed only when
/// needed) and the members [`ResponsesStream::emit`] renumbers.
#[derive(Debug, Clone)]
struct Received {
    tree: EventTree,
    output_index: Option<u64>,
    sequence_number: Option<u64>,
}

impl Received {
    /// An event read from its bytes or its tree.
    fn new(tree: EventTree, read: &EventRead<'_>) -> Self {
        Self {
            tree,
            output_index: read.output_index,
            sequence_number: read.sequence_number,
        }
    }

    /// An event the proxy writes.
    fn written(value: Value) -> Self {
        Self {
            output_index: u64_at(&value, "output_index"),
            sequence_number: u64_at(&value, "sequence_number"),
            tree: EventTree::parsed(value),
        }
    }

    /// The event's tree.
    fn value(&mut self) -> &mut Value {
        self.tree.value()
    }
}

/// One upstream output item.
#[derive(Debug)]
enum Item {
    /// Forwarded under this output index.
    Passed { out: u64 },
    /// A held `function_call` item.
    Call(Box<HeldCall>),
    /// A `message` item whose text is scanned, held until text other than whitespace is
    /// released (then it is forwarded from its first event on): a message that held only
    /// markup and blanks is left out. Its events so far.
    Deferred(Vec<(Bytes, Received)>),
}

#[derive(Debug, Default)]
struct HeldCall {
    /// The item of `output_item.added`.
    added: Value,
    /// The events received for it so far, replayed when the call is valid.
    events: Vec<(Bytes, Received)>,
    held_bytes: usize,
    /// The joined argument deltas.
    arguments: String,
    /// Over the buffering limit: forwarded as received under this output index.
    passthrough: Option<u64>,
}

/// One text part of an item, keyed by `(output_index, content_index)`.
#[derive(Debug, Default)]
struct Part {
    channel: Option<Box<Channel>>,
    /// The text the client has been sent.
    emitted: String,
    /// Markup was taken out of it.
    consumed: bool,
}

/// The Responses stream transformer.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    items: BTreeMap<u64, Item>,
    texts: BTreeMap<(u64, u64), Part>,
    reasoning: BTreeMap<(u64, u64), Channel>,
    next_out: u64,
    /// The next `sequence_number` to send (from the first one received).
    seq: Option<u64>,
    /// Something was added, dropped or rewritten: `response.completed` gets the output as sent.
    changed: bool,
    /// Each item as finally sent, by output index.
    done_items: BTreeMap<u64, Value>,
    /// Items forwarded whose `output_item.done` has not come yet (output → upstream index).
    open_items: BTreeMap<u64, u64>,
    /// Native calls as emitted, for the duplicate check of recovered calls.
    natives: Natives,
    content_markup: Vec<String>,
    reasoning_markup: Vec<String>,
    /// The response id's tail, for the ids of new items.
    tail: String,
    fresh: usize,
    ended: bool,
    notes: Annotations,
    /// From the first text part that ended with markup taken out: that part and what would
    /// have been sent since, until the turn decides the markup.
    held: Option<Vec<HeldOut>>,
    /// Messages opened only because a part of theirs was held, with nothing sent yet: left
    /// out at release if they end with no text (output index, upstream index).
    tentative: Vec<(u64, u64)>,
}

/// What waits for the turn's verdict on the markup.
#[derive(Debug)]
enum HeldOut {
    /// A call of [`ResponsesStream::emit`], made at release.
    Emit {
        raw: Option<Bytes>,
        event: Received,
        index: Option<u64>,
    },
    /// A text part whose text from its first markup block on is held.
    Part {
        key: (u64, u64),
        item_id: Value,
        channel: Box<Channel>,
    },
}

/// Marks a reasoning summary's index in the key of its channel.
const SUMMARY: u64 = 1 << 32;

fn u64_at(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

/// Gives a held text part's `…done` event (or its item's `output_item.done`) the part's whole
/// text as sent; `raw` is dropped when the text changed.
fn patch_text(value: &mut Value, texts: &BTreeMap<(u64, u64), Part>, raw: &mut Option<Bytes>) {
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let index = u64_at(value, "output_index");
    let Some(index) = index else {
        return;
    };
    let mut set = |slot: Option<&mut Value>, key: (u64, u64)| {
        if let (Some(slot), Some(sent)) = (slot, texts.get(&key))
            && slot.as_str() != Some(&sent.emitted)
        {
            *slot = json!(sent.emitted);
            *raw = None;
        }
    };
    let content_index = u64_at(value, "content_index").unwrap_or(0);
    match kind {
        "response.output_text.done" => set(value.get_mut("text"), (index, content_index)),
        "response.content_part.done" => {
            set(value.pointer_mut("/part/text"), (index, content_index));
        }
        "response.output_item.done" => {
            if let Some(Value::Array(parts)) = value.pointer_mut("/item/content") {
                for (j, part) in parts.iter_mut().enumerate() {
                    if part.get("type").and_then(Value::as_str) == Some("output_text") {
                        set(part.get_mut("text"), (index, j as u64));
                    }
                }
            }
        }
        _ => {}
    }
}

impl ResponsesStream {
    fn take_out(&mut self) -> u64 {
        let out = self.next_out;
        self.next_out += 1;
        out
    }

    /// Sends an event with the output index `index` and the next sequence number; the raw
    /// bytes when neither changed.
    fn emit(
        &mut self,
        raw: Option<Bytes>,
        mut event: Received,
        index: Option<u64>,
        out: &mut VecDeque<Bytes>,
    ) {
        if let Some(held) = self.held.as_mut() {
            held.push(HeldOut::Emit { raw, event, index });
            return;
        }
        let mut same = raw.is_some();
        if let Some(index) = index
            && event.output_index != Some(index)
        {
            event.value()["output_index"] = json!(index);
            same = false;
        }
        match event.sequence_number {
            Some(seq) => {
                let want = *self.seq.get_or_insert(seq);
                if seq != want {
                    event.value()["sequence_number"] = json!(want);
                    same = false;
                }
                self.seq = Some(want + 1);
            }
            None => {
                if let Some(want) = self.seq.filter(|_| raw.is_none()) {
                    event.value()["sequence_number"] = json!(want);
                    self.seq = Some(want + 1);
                }
            }
        }
        match raw {
            Some(raw) if same => out.push_back(raw),
            _ => out.push_back(typed_event(event.value())),
        }
    }

    /// Sends an event the proxy wrote.
    fn emit_new(&mut self, value: Value, out: &mut VecDeque<Bytes>) {
        self.emit(None, Received::written(value), None, out);
    }

    /// The output index an upstream index is forwarded under, if it is.
    fn passed(&self, index: Option<u64>) -> Option<u64> {
        match self.items.get(&index?)? {
            Item::Passed { out } => Some(*out),
            Item::Call(call) => call.passthrough,
            Item::Deferred(_) => None,
        }
    }

    /// Whether the item at an upstream index is a message still held back.
    fn deferred(&self, index: Option<u64>) -> bool {
        index.is_some_and(|i| matches!(self.items.get(&i), Some(Item::Deferred(_))))
    }

    /// Whether markup was taken out of a text part of the item at an upstream index.
    fn consumed(&self, index: u64) -> bool {
        self.texts
            .range((index, 0)..=(index, u64::MAX))
            .any(|(_, p)| p.consumed || p.channel.as_ref().is_some_and(|c| c.consumed()))
    }

    /// Forwards a held-back message from its first event on.
    fn open(&mut self, index: Option<u64>, out: &mut VecDeque<Bytes>) {
        let Some(index) = index else {
            return;
        };
        let Some(Item::Deferred(mut events)) = self.items.remove(&index) else {
            return;
        };
        let at = self.take_out();
        self.items.insert(index, Item::Passed { out: at });
        let item = events
            .first_mut()
            .and_then(|(_, v)| v.value().get("item").cloned())
            .unwrap_or(Value::Null);
        self.done_items.insert(at, item);
        self.open_items.insert(at, index);
        for (raw, value) in events {
            self.emit(Some(raw), value, Some(at), out);
        }
    }

    /// Holds an event of a held-back message.
    fn defer(&mut self, index: Option<u64>, raw: Bytes, event: Received) {
        if let Some(Item::Deferred(events)) = index.and_then(|i| self.items.get_mut(&i)) {
            events.push((raw, event));
        }
    }

    /// Leaves out a held-back message that held only markup and blanks.
    fn drop_deferred(&mut self, index: u64) {
        self.items.remove(&index);
        self.changed = true;
    }

    /// Emits a whole `function_call` item with these parts.
    fn call_item(
        &mut self,
        added: &Value,
        done: &Value,
        (call_id, name, arguments): (&str, &str, &str),
        out: &mut VecDeque<Bytes>,
    ) {
        let at = self.take_out();
        let mut first = added.clone();
        set_call_item(&mut first, call_id, name, "");
        let item_id = first.get("id").cloned().unwrap_or(Value::Null);
        let ev = |kind: &str| json!({"type": kind, "output_index": at, "item_id": item_id});
        self.emit_new(
            json!({"type": "response.output_item.added", "output_index": at, "item": first}),
            out,
        );
        let mut delta = ev("response.function_call_arguments.delta");
        delta["delta"] = json!(arguments);
        self.emit_new(delta, out);
        let mut args_done = ev("response.function_call_arguments.done");
        args_done["arguments"] = json!(arguments);
        self.emit_new(args_done, out);
        let mut item = done.clone();
        set_call_item(&mut item, call_id, name, arguments);
        self.emit_new(
            json!({"type": "response.output_item.done", "output_index": at, "item": item.clone()}),
            out,
        );
        self.done_items.insert(at, item);
    }

    /// Emits a whole assistant message item holding `text`.
    fn text_item(&mut self, text: &str, out: &mut VecDeque<Bytes>) {
        let at = self.take_out();
        let done = new_text_item(text, &self.tail, self.fresh);
        self.fresh += 1;
        let item_id = done["id"].clone();
        let mut first = done.clone();
        first["status"] = json!("in_progress");
        first["content"] = json!([]);
        let empty = json!({"type": "output_text", "text": "", "annotations": []});
        let part = done["content"][0].clone();
        let ev = |kind: &str| json!({"type": kind, "item_id": item_id, "output_index": at, "content_index": 0});
        self.emit_new(
            json!({"type": "response.output_item.added", "output_index": at, "item": first}),
            out,
        );
        let mut added = ev("response.content_part.added");
        added["part"] = empty;
        self.emit_new(added, out);
        let mut delta = ev("response.output_text.delta");
        delta["delta"] = json!(text);
        delta["logprobs"] = json!([]);
        self.emit_new(delta, out);
        let mut text_done = ev("response.output_text.done");
        text_done["text"] = json!(text);
        text_done["logprobs"] = json!([]);
        self.emit_new(text_done, out);
        let mut part_done = ev("response.content_part.done");
        part_done["part"] = part;
        self.emit_new(part_done, out);
        self.emit_new(
            json!({"type": "response.output_item.done", "output_index": at, "item": done.clone()}),
            out,
        );
        self.done_items.insert(at, done);
    }

    /// Repairs a held call and emits the result; `done` is its final item.
    fn finish_call(
        &mut self,
        cx: &mut Context,
        held: HeldCall,
        mut done: Option<(Bytes, Received)>,
        out: &mut VecDeque<Bytes>,
    ) {
        let done_item = done
            .as_mut()
            .and_then(|(_, v)| v.value().get("item").cloned())
            .unwrap_or_else(|| held.added.clone());
        let text = |key: &str| {
            done_item
                .get(key)
                .or_else(|| held.added.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (call_id, name) = (text("call_id"), text("name"));
        let arguments = match done_item.get("arguments") {
            Some(Value::String(s)) if !s.is_empty() || held.arguments.is_empty() => s.clone(),
            _ => held.arguments.clone(),
        };
        let result = self
            .natives
            .run(cx, vec![ToolCall::new(&call_id, &name, &arguments)]);
        let mut part = 0usize;
        for (call, fate) in result.calls.iter().zip(fates(&result.calls, cx.config())) {
            self.notes.add(&cx.model, call);
            match fate {
                Fate::AsSent if part == 0 && done.is_some() => {
                    part += 1;
                    self.natives
                        .sent(ToolCall::new(&call_id, &name, &arguments));
                    let at = self.take_out();
                    let events = held.events.iter().cloned().chain(done.clone());
                    for (raw, value) in events {
                        self.emit(Some(raw), value, Some(at), out);
                    }
                    self.done_items.insert(at, done_item.clone());
                }
                Fate::AsSent | Fate::Rewrite => {
                    self.changed = true;
                    self.natives.rewritten(call);
                    let (mut added, mut last) = (held.added.clone(), done_item.clone());
                    if part > 0 {
                        // The parts of a split call are separate items.
                        for item in [&mut added, &mut last] {
                            if let Some(id) = item.get("id").and_then(Value::as_str) {
                                item["id"] = json!(format!("{id}_{part}"));
                            }
                        }
                    }
                    part += 1;
                    let id = if call.id.is_empty() {
                        &call_id
                    } else {
                        &call.id
                    };
                    let parts = (
                        id.as_str(),
                        call.name.as_ref(),
                        call.arguments_text.as_str(),
                    );
                    self.call_item(&added, &last, parts, out);
                }
                Fate::Drop => self.changed = true,
                Fate::DropWithText(text) => {
                    self.changed = true;
                    self.text_item(&text, out);
                }
            }
        }
    }

    /// Ends a text part: the held rest is sent, the markup kept for the end of the response.
    fn end_part(
        &mut self,
        cx: &Context,
        key: (u64, u64),
        item_id: &Value,
        out: &mut VecDeque<Bytes>,
    ) {
        let Some(part) = self.texts.get_mut(&key) else {
            return;
        };
        let Some(mut channel) = part.channel.take() else {
            return;
        };
        let rest = channel.end(cx);
        let consumed = channel.consumed();
        part.consumed |= consumed;
        if let Some(markup) = channel.markup() {
            self.content_markup.push(markup);
        }
        if !rest.is_empty() {
            part.emitted.push_str(&rest);
            self.open(Some(key.0), out);
            self.text_delta(key, item_id, rest, out);
        }
        if consumed {
            // From here on, what would be sent is held (the opening below too).
            self.held.get_or_insert_with(Vec::new);
            if self.deferred(Some(key.0)) {
                // Nothing of it sent yet: opened now, in its place, and left out at release
                // if it ends with no text.
                self.open(Some(key.0), out);
                if let Some(at) = self.passed(Some(key.0)) {
                    self.tentative.push((at, key.0));
                }
            }
            self.held.get_or_insert_with(Vec::new).push(HeldOut::Part {
                key,
                item_id: item_id.clone(),
                channel,
            });
        }
    }

    /// Sends an `output_text.delta` of a part.
    fn text_delta(
        &mut self,
        key: (u64, u64),
        item_id: &Value,
        text: String,
        out: &mut VecDeque<Bytes>,
    ) {
        let at = self.passed(Some(key.0));
        let delta = json!({"type": "response.output_text.delta", "item_id": item_id,
            "output_index": at.unwrap_or(key.0), "content_index": key.1, "delta": text,
            "logprobs": []});
        self.emit_new(delta, out);
    }

    /// Sends what was held, now that the turn has judged the markup (`content` is what it
    /// left of the text parts' markup): each held part's text goes on with its refused markup
    /// in place, its `…done` events and final item carry its whole text, and a message opened
    /// only for a held part that ends with no text is left out (the indices after it lowered).
    fn release(&mut self, content: Option<&str>, out: &mut VecDeque<Bytes>) {
        let Some(mut held) = self.held.take() else {
            return;
        };
        self.changed = true;
        let mut left = Leftover::new(content);
        let mut tails = Vec::new();
        for entry in &mut held {
            if let HeldOut::Part { key, channel, .. } = entry {
                let tail = channel.settle(&mut left);
                if let Some(part) = self.texts.get_mut(key) {
                    part.emitted.push_str(&tail);
                }
                tails.push(tail);
            }
        }
        let mut dropped: Vec<u64> = Vec::new();
        for (at, index) in std::mem::take(&mut self.tentative) {
            let silent = self
                .texts
                .range((index, 0)..=(index, u64::MAX))
                .all(|(_, p)| p.emitted.is_empty());
            if silent {
                dropped.push(at);
            }
        }
        let lower = |at: u64| at - dropped.iter().filter(|d| **d < at).count() as u64;
        // The final items carry the parts' whole text, under their final output indices.
        for (at, item) in &mut self.done_items {
            let Some(index) = self.items.iter().find_map(|(i, item)| match item {
                Item::Passed { out } if out == at => Some(*i),
                _ => None,
            }) else {
                continue;
            };
            if let Some(Value::Array(parts)) = item.get_mut("content") {
                for (j, part) in parts.iter_mut().enumerate() {
                    if let Some(sent) = self.texts.get(&(index, j as u64))
                        && part.get("type").and_then(Value::as_str) == Some("output_text")
                    {
                        part["text"] = json!(sent.emitted);
                    }
                }
            }
        }
        if !dropped.is_empty() {
            let items = std::mem::take(&mut self.done_items);
            self.done_items = items
                .into_iter()
                .filter(|(at, _)| !dropped.contains(at))
                .map(|(at, item)| (lower(at), item))
                .collect();
            let open = std::mem::take(&mut self.open_items);
            self.open_items = open
                .into_iter()
                .filter(|(at, _)| !dropped.contains(at))
                .map(|(at, index)| (lower(at), index))
                .collect();
            self.items
                .retain(|_, item| !matches!(item, Item::Passed { out } if dropped.contains(out)));
            for item in self.items.values_mut() {
                match item {
                    Item::Passed { out } => *out = lower(*out),
                    Item::Call(call) => call.passthrough = call.passthrough.map(lower),
                    Item::Deferred(_) => {}
                }
            }
            self.next_out -= dropped.len() as u64;
        }
        let mut tails = tails.into_iter();
        for entry in held {
            match entry {
                HeldOut::Part { key, item_id, .. } => {
                    let tail = tails.next().unwrap_or_default();
                    if !tail.is_empty() {
                        self.text_delta(key, &item_id, tail, out);
                    }
                }
                HeldOut::Emit {
                    raw,
                    mut event,
                    index,
                } => {
                    let at = index.or(event.output_index);
                    if at.is_some_and(|at| dropped.contains(&at)) {
                        continue;
                    }
                    let mut raw = raw;
                    patch_text(event.value(), &self.texts, &mut raw);
                    self.emit(raw, event, at.map(lower), out);
                }
            }
        }
    }

    /// Ends the response: open parts and held calls are flushed, recovered calls added.
    fn end(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let open: Vec<(u64, u64)> = self.texts.keys().copied().collect();
        for key in open {
            self.end_part(cx, key, &Value::Null, out);
        }
        let deferred: Vec<u64> = self
            .items
            .iter()
            .filter(|(_, i)| matches!(i, Item::Deferred(_)))
            .map(|(k, _)| *k)
            .collect();
        for index in deferred {
            if self.consumed(index) {
                self.drop_deferred(index);
            } else {
                self.open(Some(index), out);
            }
        }
        for (_, mut channel) in std::mem::take(&mut self.reasoning) {
            let _ = channel.end(cx);
            if let Some(markup) = channel.markup() {
                self.reasoning_markup.push(markup);
            }
        }
        let held: Vec<u64> = self
            .items
            .iter()
            .filter(|(_, i)| matches!(i, Item::Call(c) if c.passthrough.is_none()))
            .map(|(k, _)| *k)
            .collect();
        for index in held {
            if let Some(Item::Call(call)) = self.items.remove(&index) {
                self.finish_call(cx, *call, None, out);
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
            self.changed = true;
            let item = new_call_item(call, &self.tail, self.fresh);
            self.fresh += 1;
            let call_id = item["call_id"].as_str().unwrap_or_default().to_owned();
            let parts = (
                call_id.as_str(),
                call.name.as_ref(),
                call.arguments_text.as_str(),
            );
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            self.call_item(&added, &item, parts, out);
        }
        if let Some(text) = extra {
            self.changed = true;
            self.text_item(&text, out);
        }
    }

    /// Items that never got their `output_item.done`: the upstream's final version (same
    /// `id`) replaces the one of `output_item.added`, with the text as sent.
    fn close_open_items(&mut self, upstream: &Value) {
        for (at, index) in std::mem::take(&mut self.open_items) {
            let Some(slot) = self.done_items.get_mut(&at) else {
                continue;
            };
            let id = slot.get("id").and_then(Value::as_str);
            let found = upstream
                .as_array()
                .into_iter()
                .flatten()
                .find(|item| id.is_some() && item.get("id").and_then(Value::as_str) == id);
            if let Some(found) = found {
                *slot = found.clone();
            }
            if let Some(Value::Array(parts)) = slot.get_mut("content") {
                for (j, part) in parts.iter_mut().enumerate() {
                    if let Some(sent) = self.texts.get(&(index, j as u64))
                        && part.get("type").and_then(Value::as_str) == Some("output_text")
                    {
                        part["text"] = json!(sent.emitted);
                    }
                }
            }
        }
    }

    fn on_text_delta(
        &mut self,
        cx: &Context,
        raw: Bytes,
        read: &EventRead<'_>,
        mut event: Received,
        out: &mut VecDeque<Bytes>,
    ) {
        let index = read.output_index;
        let key = (index.unwrap_or(0), read.content_index.unwrap_or(0));
        let (Some(delta), true) = (read.delta.as_deref(), cx.scan_content()) else {
            self.open(index, out);
            let at = self.passed(index);
            return self.emit(Some(raw), event, at, out);
        };
        let part = self.texts.entry(key).or_default();
        let channel = part
            .channel
            .get_or_insert_with(|| Box::new(Channel::new(cx)));
        let released = channel.push(cx, delta);
        let same = released == delta;
        let spoke = !released.is_empty();
        part.emitted.push_str(released);
        let released = (!same && spoke).then(|| released.to_owned());
        if spoke {
            self.open(index, out);
        }
        let at = self.passed(index);
        if same {
            return self.emit(Some(raw), event, at, out);
        }
        self.changed = true;
        if let Some(released) = released {
            event.value()["delta"] = json!(released);
            self.emit(None, event, at, out);
        }
    }

    /// The held call of an upstream index, if it is held (not passed through).
    fn held(&mut self, index: Option<u64>) -> Option<&mut HeldCall> {
        match self.items.get_mut(&index?)? {
            Item::Call(call) if call.passthrough.is_none() => Some(call),
            _ => None,
        }
    }

    /// Holds an event of a held call (`fragment`: the arguments it adds); past the limit the
    /// call is forwarded as received.
    fn hold(
        &mut self,
        cx: &Context,
        index: u64,
        raw: Bytes,
        event: Received,
        fragment: Option<&str>,
        out: &mut VecDeque<Bytes>,
    ) {
        let limit = cx.config().limits.max_call_arguments_bytes;
        let Some(call) = self.held(Some(index)) else {
            return;
        };
        if let Some(fragment) = fragment {
            call.arguments.push_str(fragment);
        }
        call.held_bytes += raw.len();
        call.events.push((raw, event));
        if call.held_bytes <= limit {
            return;
        }
        let events = std::mem::take(&mut call.events);
        let at = self.take_out();
        if let Some(Item::Call(call)) = self.items.get_mut(&index) {
            call.passthrough = Some(at);
            call.arguments.clear();
        }
        for (raw, event) in events {
            self.emit(Some(raw), event, Some(at), out);
        }
    }

    /// Handles an event as read ([`EventRead`]); `event` carries its JSON, parsed when needed.
    fn handle(
        &mut self,
        cx: &mut Context,
        raw: Bytes,
        read: &EventRead<'_>,
        mut event: Received,
        out: &mut VecDeque<Bytes>,
    ) {
        let index = read.output_index;
        let kind = read.kind.as_ref();
        match kind {
            "response.created" | "response.in_progress" => {
                if self.tail.is_empty() {
                    self.tail = id_tail(read.response_id.as_deref().unwrap_or(""));
                }
                self.emit(Some(raw), event, None, out);
            }
            "response.output_item.added" => {
                let Some(index) = index else {
                    return self.emit(Some(raw), event, None, out);
                };
                let item = event.value().get("item").cloned().unwrap_or(Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let call = HeldCall {
                        added: item,
                        ..HeldCall::default()
                    };
                    self.items.insert(index, Item::Call(Box::new(call)));
                    self.hold(cx, index, raw, event, None, out);
                } else if item.get("type").and_then(Value::as_str) == Some("message")
                    && cx.scan_content()
                {
                    self.items.insert(index, Item::Deferred(vec![(raw, event)]));
                } else {
                    let at = self.take_out();
                    self.items.insert(index, Item::Passed { out: at });
                    self.done_items.insert(at, item);
                    self.open_items.insert(at, index);
                    self.emit(Some(raw), event, Some(at), out);
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done"
                if self.held(index).is_some() =>
            {
                let fragment = (kind == "response.function_call_arguments.delta")
                    .then(|| read.delta.as_deref().unwrap_or_default());
                self.hold(cx, index.unwrap_or_default(), raw, event, fragment, out);
            }
            "response.output_item.done" if self.held(index).is_some() => {
                if let Some(Item::Call(call)) = self.items.remove(&index.unwrap_or_default()) {
                    self.finish_call(cx, *call, Some((raw, event)), out);
                }
            }
            "response.output_item.done"
                if self.deferred(index) && self.consumed(index.unwrap_or_default()) =>
            {
                // Only markup and blanks: no message item at all.
                self.drop_deferred(index.unwrap_or_default());
            }
            "response.output_item.done" => {
                self.open(index, out);
                let at = self.passed(index);
                let mut touched = false;
                let value = event.value();
                // A message whose text was changed carries the text as sent.
                if let Some(Value::Array(parts)) = value.pointer_mut("/item/content") {
                    for (j, part) in parts.iter_mut().enumerate() {
                        let key = (index.unwrap_or(0), j as u64);
                        if let Some(sent) = self.texts.get(&key)
                            && part.get("text").and_then(Value::as_str) != Some(&sent.emitted)
                            && part.get("type").and_then(Value::as_str) == Some("output_text")
                        {
                            part["text"] = json!(sent.emitted);
                            touched = true;
                        }
                    }
                }
                if let (Some(at), Some(item)) = (at, value.get("item")) {
                    self.done_items.insert(at, item.clone());
                    self.open_items.remove(&at);
                }
                self.emit((!touched).then_some(raw), event, at, out);
            }
            "response.output_text.delta" => self.on_text_delta(cx, raw, read, event, out),
            "response.output_text.done" | "response.content_part.done" => {
                let key = (index.unwrap_or(0), read.content_index.unwrap_or(0));
                let item_id = event.value().get("item_id").cloned().unwrap_or(Value::Null);
                self.end_part(cx, key, &item_id, out);
                if self.deferred(index) {
                    if self.consumed(key.0) {
                        return self.defer(index, raw, event);
                    }
                    self.open(index, out);
                }
                let field = if kind == "response.output_text.done" {
                    "/text"
                } else {
                    "/part/text"
                };
                let mut raw = Some(raw);
                if let Some(sent) = self.texts.get(&key)
                    && let Some(text) = event.value().pointer_mut(field)
                    && text.as_str() != Some(&sent.emitted)
                {
                    *text = json!(sent.emitted);
                    raw = None;
                }
                let at = self.passed(index);
                self.emit(raw, event, at, out);
            }
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta"
                if cx.scan_reasoning() =>
            {
                // A summary's channels are keyed apart from the reasoning text's parts.
                let part = match kind {
                    "response.reasoning_text.delta" => read.content_index,
                    _ => read.summary_index.map(|i| i | SUMMARY),
                };
                let key = (index.unwrap_or(0), part.unwrap_or(0));
                if let Some(delta) = read.delta.as_deref() {
                    // Scanned, never rewritten.
                    let channel = self
                        .reasoning
                        .entry(key)
                        .or_insert_with(|| Channel::new(cx));
                    let _ = channel.push(cx, delta);
                }
                let at = self.passed(index);
                self.emit(Some(raw), event, at, out);
            }
            "error" => {
                // The upstream gave up: what is held goes out before its error.
                self.end(cx, out);
                out.push_back(raw);
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.end(cx, out);
                let mut raw = Some(raw);
                if self.changed
                    && crate::mend::repairing(cx.config())
                    && let Some(output) = event.value().pointer_mut("/response/output")
                {
                    self.close_open_items(output);
                    *output = Value::Array(self.done_items.values().cloned().collect());
                    raw = None;
                }
                self.emit(raw, event, None, out);
            }
            "response.content_part.added" if self.deferred(index) => {
                self.defer(index, raw, event);
            }
            _ => {
                self.open(index, out);
                let at = self.passed(index);
                self.emit(Some(raw), event, at, out);
            }
        }
    }
}

impl Transform for ResponsesStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let Event {
            raw,
            event: name,
            data,
        } = event;
        if let Some(data) = &data
            && let Ok(read) = EventRead::read(data.as_str(), name.as_deref())
        {
            let received = Received::new(EventTree::unparsed(data.clone()), &read);
            return self.handle(cx, raw, &read, received, out);
        }
        let event = Event {
            raw,
            event: name,
            data,
        };
        let Some((value, kind)) = event.typed_json().filter(|(v, _)| v.is_object()) else {
            return out.push_back(event.raw);
        };
        let read = EventRead::of_tree(&value, kind);
        let received = Received::new(EventTree::parsed(value), &read);
        self.handle(cx, event.raw, &read, received, out);
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
    use crate::stream::event_tree::check::agree;

    /// A stream of these event bodies, numbered from 0 in order (`sequence_number` last).
    fn stream(bodies: &[&str]) -> String {
        bodies
            .iter()
            .enumerate()
            .map(|(seq, body)| {
                let kind = body
                    .split("\"type\":\"")
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .unwrap_or("message");
                let numbered = format!("{},\"sequence_number\":{seq}}}", &body[..body.len() - 1]);
                format!("event: {kind}\ndata: {numbered}\n\n")
            })
            .collect()
    }

    const CREATED: &str = r#"{"type":"response.created","response":{"id":"resp_abc123","object":"response","status":"in_progress","output":[]}}"#;
    const MESSAGE_ADDED: &str = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}"#;
    const PART_ADDED: &str = r#"{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#;

    fn text_delta(delta: &str) -> String {
        format!(
            r#"{{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":{delta},"logprobs":[]}}"#
        )
    }

    /// The message's closing events and the call's, for this text and these arguments (both
    /// as JSON string literals).
    fn closing(text: &str, arguments: &str, fragments: &[&str]) -> Vec<String> {
        let message = format!(
            r#"{{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{{"type":"output_text","text":{text},"annotations":[]}}]}}"#
        );
        let call = |arguments: &str, status: &str| {
            format!(
                r#"{{"type":"function_call","id":"fc_1","call_id":"call_1","name":"list_dir","arguments":{arguments},"status":"{status}"}}"#
            )
        };
        let mut out = vec![
            format!(
                r#"{{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":{text},"logprobs":[]}}"#
            ),
            format!(
                r#"{{"type":"response.content_part.done","item_id":"msg_1","output_index":0,"content_index":0,"part":{{"type":"output_text","text":{text},"annotations":[]}}}}"#
            ),
            format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{message}}}"#),
            format!(
                r#"{{"type":"response.output_item.added","output_index":1,"item":{}}}"#,
                call(r#""""#, "in_progress")
            ),
        ];
        for fragment in fragments {
            out.push(format!(
                r#"{{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":{fragment}}}"#
            ));
        }
        out.push(format!(
            r#"{{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":{arguments}}}"#
        ));
        out.push(format!(
            r#"{{"type":"response.output_item.done","output_index":1,"item":{}}}"#,
            call(arguments, "completed")
        ));
        out.push(format!(
            r#"{{"type":"response.completed","response":{{"id":"resp_abc123","object":"response","status":"completed","output":[{message},{}]}}}}"#,
            call(arguments, "completed")
        ));
        out
    }

    /// Text with escapes and a valid call in fragments with escapes: replayed as received.
    fn valid() -> String {
        let mut bodies = vec![
            CREATED.to_owned(),
            MESSAGE_ADDED.to_owned(),
            PART_ADDED.to_owned(),
            text_delta(r#""Caf\u00e9 \"q\"\n""#),
            text_delta(r#""ü — raw""#),
        ];
        bodies.extend(closing(
            r#""Caf\u00e9 \"q\"\nü — raw""#,
            r#""{\"dir\": \"/caf\u00e9\"}""#,
            &[r#""{\"dir\": ""#, r#""\"/caf\u00e9\"}""#],
        ));
        let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
        stream(&refs)
    }

    #[test]
    fn a_valid_stream_is_byte_identical_at_every_split() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            assert_eq!(agree(Api::Responses, recover, &valid()), valid());
        }
    }

    /// Markup cut across deltas (escapes inside), a call with broken arguments in fragments.
    fn repaired() -> String {
        let mut bodies = vec![
            CREATED.to_owned(),
            MESSAGE_ADDED.to_owned(),
            PART_ADDED.to_owned(),
            text_delta(r#""Look <tool_""#),
            text_delta(
                r#""call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\u00e9\"}}</tool_call> now""#,
            ),
        ];
        bodies.extend(closing(
            r#""Look <tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\u00e9\"}}</tool_call> now""#,
            r#""{'dir': 'caf\u00e9'}""#,
            &[r#""{'dir': ""#, r#""'caf\u00e9'}""#],
        ));
        let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
        stream(&refs)
    }

    #[test]
    fn a_repaired_stream_is_the_same_from_the_views_and_the_tree() {
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Responses, recover, &repaired());
            assert!(
                text.contains(r#""arguments":"{\"dir\":\"café\"}""#),
                "{text}"
            );
            assert!(text.contains("\"sequence_number\":"), "{text}");
        }
    }

    #[test]
    fn unusual_events_go_through_the_tree_with_the_same_answer() {
        let mut bodies = vec![
            CREATED.to_owned(),
            // Reasoning with a summary (scanned under `--recover all`).
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#.to_owned(),
            r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/r\"}}</tool_call>"}"#.to_owned(),
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}"#.to_owned(),
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}}"#.to_owned(),
            r#"{"type":"response.content_part.added","item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#.to_owned(),
            // A repeated member, an odd index, a non-string delta.
            r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"x","delta":"Hi <tool_"}"#.to_owned(),
            r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1.0,"content_index":0,"delta":"lost"}"#.to_owned(),
            r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":5}"#.to_owned(),
            r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>"}"#.to_owned(),
            r#"{"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Hi <tool_call>…"}"#.to_owned(),
            r#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}}"#.to_owned(),
            r#"{"type":"response.completed","response":{"id":"resp_abc123","status":"completed","output":[]}}"#.to_owned(),
        ];
        let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
        let mut body = stream(&refs);
        // The type from the event's name alone, data with a leading blank, a gap in the
        // sequence numbers (renumbered from there on).
        body = body.replacen(
            "data: {\"type\":\"response.content_part.added\",",
            "data: {",
            1,
        );
        body = body.replacen(
            "data: {\"type\":\"response.output_item.done\"",
            "data:  {\"type\":\"response.output_item.done\"",
            1,
        );
        body = body.replacen("\"sequence_number\":9}", "\"sequence_number\":19}", 1);
        for recover in [RecoverMode::Content, RecoverMode::All] {
            let text = agree(Api::Responses, recover, &body);
            assert!(text.contains("function_call"), "{text}");
        }
        bodies.truncate(7);
        bodies.push(r#"{"type":"error","code":"server_error","message":"x"}"#.to_owned());
        let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
        let text = agree(Api::Responses, RecoverMode::Content, &stream(&refs));
        assert!(
            text.ends_with("\"message\":\"x\",\"sequence_number\":7}\n\n"),
            "{text}"
        );
    }
}
