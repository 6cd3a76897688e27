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

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Value, json};
use toolmend::ToolCall;

use super::sse::{Event, typed_event};
use super::{Channel, Context, Leftover, Natives, Transform, joined_markup, recovered_calls};
use crate::mend::{Annotations, Fate, fates};
use crate::routes::responses::{id_tail, new_call_item, new_text_item, set_call_item};

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
    Deferred(Vec<(Bytes, Value)>),
}

#[derive(Debug, Default)]
struct HeldCall {
    /// The item of `output_item.added`.
    added: Value,
    /// The events received for it so far (raw and parsed), replayed when the call is valid.
    events: Vec<(Bytes, Value)>,
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
        value: Value,
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
        mut value: Value,
        index: Option<u64>,
        out: &mut VecDeque<Bytes>,
    ) {
        if let Some(held) = self.held.as_mut() {
            held.push(HeldOut::Emit { raw, value, index });
            return;
        }
        let mut same = raw.is_some();
        if let Some(index) = index
            && u64_at(&value, "output_index") != Some(index)
        {
            value["output_index"] = json!(index);
            same = false;
        }
        match u64_at(&value, "sequence_number") {
            Some(seq) => {
                let want = *self.seq.get_or_insert(seq);
                if seq != want {
                    value["sequence_number"] = json!(want);
                    same = false;
                }
                self.seq = Some(want + 1);
            }
            None => {
                if let Some(want) = self.seq.filter(|_| raw.is_none()) {
                    value["sequence_number"] = json!(want);
                    self.seq = Some(want + 1);
                }
            }
        }
        match raw {
            Some(raw) if same => out.push_back(raw),
            _ => out.push_back(typed_event(&value)),
        }
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
        let Some(Item::Deferred(events)) = self.items.remove(&index) else {
            return;
        };
        let at = self.take_out();
        self.items.insert(index, Item::Passed { out: at });
        let item = events
            .first()
            .and_then(|(_, v)| v.get("item").cloned())
            .unwrap_or(Value::Null);
        self.done_items.insert(at, item);
        self.open_items.insert(at, index);
        for (raw, value) in events {
            self.emit(Some(raw), value, Some(at), out);
        }
    }

    /// Holds an event of a held-back message.
    fn defer(&mut self, index: Option<u64>, raw: Bytes, value: Value) {
        if let Some(Item::Deferred(events)) = index.and_then(|i| self.items.get_mut(&i)) {
            events.push((raw, value));
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
        self.emit(
            None,
            json!({"type": "response.output_item.added", "output_index": at, "item": first}),
            None,
            out,
        );
        let mut delta = ev("response.function_call_arguments.delta");
        delta["delta"] = json!(arguments);
        self.emit(None, delta, None, out);
        let mut args_done = ev("response.function_call_arguments.done");
        args_done["arguments"] = json!(arguments);
        self.emit(None, args_done, None, out);
        let mut item = done.clone();
        set_call_item(&mut item, call_id, name, arguments);
        self.emit(
            None,
            json!({"type": "response.output_item.done", "output_index": at, "item": item.clone()}),
            None,
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
        self.emit(
            None,
            json!({"type": "response.output_item.added", "output_index": at, "item": first}),
            None,
            out,
        );
        let mut added = ev("response.content_part.added");
        added["part"] = empty;
        self.emit(None, added, None, out);
        let mut delta = ev("response.output_text.delta");
        delta["delta"] = json!(text);
        delta["logprobs"] = json!([]);
        self.emit(None, delta, None, out);
        let mut text_done = ev("response.output_text.done");
        text_done["text"] = json!(text);
        text_done["logprobs"] = json!([]);
        self.emit(None, text_done, None, out);
        let mut part_done = ev("response.content_part.done");
        part_done["part"] = part;
        self.emit(None, part_done, None, out);
        self.emit(
            None,
            json!({"type": "response.output_item.done", "output_index": at, "item": done.clone()}),
            None,
            out,
        );
        self.done_items.insert(at, done);
    }

    /// Repairs a held call and emits the result; `done` is its final item.
    fn finish_call(
        &mut self,
        cx: &mut Context,
        held: HeldCall,
        done: Option<(Bytes, Value)>,
        out: &mut VecDeque<Bytes>,
    ) {
        let done_item = done
            .as_ref()
            .and_then(|(_, v)| v.get("item").cloned())
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
        self.emit(None, delta, None, out);
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
                    mut value,
                    index,
                } => {
                    let at = index.or_else(|| u64_at(&value, "output_index"));
                    if at.is_some_and(|at| dropped.contains(&at)) {
                        continue;
                    }
                    let mut raw = raw;
                    patch_text(&mut value, &self.texts, &mut raw);
                    self.emit(raw, value, at.map(lower), out);
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
        mut value: Value,
        out: &mut VecDeque<Bytes>,
    ) {
        let index = u64_at(&value, "output_index");
        let key = (
            index.unwrap_or(0),
            u64_at(&value, "content_index").unwrap_or(0),
        );
        let delta = value
            .get("delta")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (Some(delta), true) = (delta, cx.scan_content()) else {
            self.open(index, out);
            let at = self.passed(index);
            return self.emit(Some(raw), value, at, out);
        };
        let part = self.texts.entry(key).or_default();
        let channel = part
            .channel
            .get_or_insert_with(|| Box::new(Channel::new(cx)));
        let released = channel.push(cx, &delta).to_owned();
        part.emitted.push_str(&released);
        if !released.is_empty() {
            self.open(index, out);
        }
        let at = self.passed(index);
        if released == delta {
            return self.emit(Some(raw), value, at, out);
        }
        self.changed = true;
        if !released.is_empty() {
            value["delta"] = json!(released);
            self.emit(None, value, at, out);
        }
    }

    /// The held call of an upstream index, if it is held (not passed through).
    fn held(&mut self, index: Option<u64>) -> Option<&mut HeldCall> {
        match self.items.get_mut(&index?)? {
            Item::Call(call) if call.passthrough.is_none() => Some(call),
            _ => None,
        }
    }

    /// Holds an event of a held call; past the limit the call is forwarded as received.
    fn hold(
        &mut self,
        cx: &Context,
        index: u64,
        raw: Bytes,
        value: Value,
        out: &mut VecDeque<Bytes>,
    ) {
        let limit = cx.config().limits.max_call_arguments_bytes;
        let Some(call) = self.held(Some(index)) else {
            return;
        };
        if value.get("type").and_then(Value::as_str)
            == Some("response.function_call_arguments.delta")
        {
            call.arguments.push_str(
                value
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            );
        }
        call.held_bytes += raw.len();
        call.events.push((raw, value));
        if call.held_bytes <= limit {
            return;
        }
        let events = std::mem::take(&mut call.events);
        let at = self.take_out();
        if let Some(Item::Call(call)) = self.items.get_mut(&index) {
            call.passthrough = Some(at);
            call.arguments.clear();
        }
        for (raw, value) in events {
            self.emit(Some(raw), value, Some(at), out);
        }
    }
}

impl Transform for ResponsesStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let Some((mut value, kind)) = event.typed_json().filter(|(v, _)| v.is_object()) else {
            return out.push_back(event.raw);
        };
        let index = u64_at(&value, "output_index");
        let raw = event.raw;
        match kind.as_str() {
            "response.created" | "response.in_progress" => {
                if self.tail.is_empty() {
                    let id = value.pointer("/response/id").and_then(Value::as_str);
                    self.tail = id_tail(id.unwrap_or(""));
                }
                self.emit(Some(raw), value, None, out);
            }
            "response.output_item.added" => {
                let Some(index) = index else {
                    return self.emit(Some(raw), value, None, out);
                };
                let item = value.get("item").cloned().unwrap_or(Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let call = HeldCall {
                        added: item,
                        ..HeldCall::default()
                    };
                    self.items.insert(index, Item::Call(Box::new(call)));
                    self.hold(cx, index, raw, value, out);
                } else if item.get("type").and_then(Value::as_str) == Some("message")
                    && cx.scan_content()
                {
                    self.items.insert(index, Item::Deferred(vec![(raw, value)]));
                } else {
                    let at = self.take_out();
                    self.items.insert(index, Item::Passed { out: at });
                    self.done_items.insert(at, item);
                    self.open_items.insert(at, index);
                    self.emit(Some(raw), value, Some(at), out);
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done"
                if self.held(index).is_some() =>
            {
                self.hold(cx, index.unwrap_or_default(), raw, value, out);
            }
            "response.output_item.done" if self.held(index).is_some() => {
                if let Some(Item::Call(call)) = self.items.remove(&index.unwrap_or_default()) {
                    self.finish_call(cx, *call, Some((raw, value)), out);
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
                self.emit((!touched).then_some(raw), value, at, out);
            }
            "response.output_text.delta" => self.on_text_delta(cx, raw, value, out),
            "response.output_text.done" | "response.content_part.done" => {
                let key = (
                    index.unwrap_or(0),
                    u64_at(&value, "content_index").unwrap_or(0),
                );
                let item_id = value.get("item_id").cloned().unwrap_or(Value::Null);
                self.end_part(cx, key, &item_id, out);
                if self.deferred(index) {
                    if self.consumed(key.0) {
                        return self.defer(index, raw, value);
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
                    && let Some(text) = value.pointer_mut(field)
                    && text.as_str() != Some(&sent.emitted)
                {
                    *text = json!(sent.emitted);
                    raw = None;
                }
                let at = self.passed(index);
                self.emit(raw, value, at, out);
            }
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta"
                if cx.scan_reasoning() =>
            {
                // A summary's channels are keyed apart from the reasoning text's parts.
                let part = match kind.as_str() {
                    "response.reasoning_text.delta" => u64_at(&value, "content_index"),
                    _ => u64_at(&value, "summary_index").map(|i| i | SUMMARY),
                };
                let key = (index.unwrap_or(0), part.unwrap_or(0));
                if let Some(delta) = value.get("delta").and_then(Value::as_str) {
                    // Scanned, never rewritten.
                    let channel = self
                        .reasoning
                        .entry(key)
                        .or_insert_with(|| Channel::new(cx));
                    let _ = channel.push(cx, delta);
                }
                let at = self.passed(index);
                self.emit(Some(raw), value, at, out);
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
                    && let Some(output) = value.pointer_mut("/response/output")
                {
                    self.close_open_items(output);
                    *output = Value::Array(self.done_items.values().cloned().collect());
                    raw = None;
                }
                self.emit(raw, value, None, out);
            }
            "response.content_part.added" if self.deferred(index) => {
                self.defer(index, raw, value);
            }
            _ => {
                self.open(index, out);
                let at = self.passed(index);
                self.emit(Some(raw), value, at, out);
            }
        }
    }

    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        self.end(cx, out);
    }

    fn take_unsaved(&mut self) -> Vec<crate::mend::Unsaved> {
        std::mem::take(&mut self.notes.unsaved)
    }
}
