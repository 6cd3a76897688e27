//! OpenAI Chat Completions streaming: per-choice text channels and per-call argument buffers.
//!
//! Text deltas are forwarded as they arrive (minus a possible sentinel suffix); tool-call
//! fragments are buffered per call and, when the choice finishes, emitted repaired as one
//! delta per call with `index`, `id`, `type` and `name`. Envelope deviations are fixed on the
//! way: every call on index 0 (a new `id` with a new `name` starts a new call), ids repeated on
//! every chunk, missing ids or indices, the same id reused by parallel calls.
//!
//! Each chunk is read from its bytes ([`crate::spans`]): the deltas' text, the call fragments
//! and the finish reasons from borrowed spans, no tree. A chunk that needs no change goes out
//! as the upstream's bytes; a chunk that finishes its choices with empty deltas is written back
//! from its bytes with the finish reasons the turn decided; a chunk the proxy rewrites, one
//! that finishes a choice beside a delta, and a shape the span reader does not take (a
//! repeated member, an `error`, …) are read as a tree.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, Status, ToolCall};

use super::event_tree::tree_only;
use super::sse::{Data, Event, write};
use super::{Channel, Context, Leftover, Transform};
use crate::mend::{Annotations, Fate, append_text, fates};
use crate::spans::members;
use chunk::{ChunkRead, DeltaRead, Envelope, Fragment, read_chunk_after};
use written::ChoiceKeys;

mod chunk;
#[cfg(test)]
mod timing;
mod written;

/// One buffered tool call.
#[derive(Debug, Default)]
struct CallBuf {
    /// The id sent to the client (made when missing, made unique when repeated).
    id: Option<String>,
    /// The id as the upstream first sent it, to recognise the call's later fragments.
    upstream_id: Option<String>,
    name: String,
    arguments: String,
    /// Over the buffering limit: emitted as received under this output index.
    passthrough: Option<usize>,
}

/// One choice (`n` slot) of the stream.
#[derive(Debug, Default)]
struct ChoiceState {
    content: Option<Channel>,
    reasoning: Option<Channel>,
    /// `reasoning_content` or `reasoning`, as the upstream named it.
    reasoning_key: Option<String>,
    calls: Vec<CallBuf>,
    /// Upstream `index` → position in `calls` of its current call.
    by_index: BTreeMap<u64, usize>,
    /// Next output call index.
    next_out: usize,
    finished: bool,
    /// The last chunk that carried a call fragment, and its choice there: the chunks written
    /// for this choice keep their keys (`system_fingerprint`, `service_tier`, `usage: null`,
    /// `logprobs`, …).
    template: Option<Sent>,
    /// This choice's first chunk: the keys of its choice besides `index`, `delta` and
    /// `finish_reason` (`logprobs`, …), kept once: the chunks written for calls recovered from
    /// text, which no call chunk carried, keep them too.
    extras: Option<Sent>,
}

/// A chunk as received and the position of one choice in its `choices`, read again as a tree
/// only when the proxy writes a chunk of its own (a few times per stream, not per event).
#[derive(Debug, Clone)]
struct Sent {
    data: Data,
    position: usize,
}

impl Sent {
    /// The chunk's envelope ([`envelope`]) and the choice, as objects (empty when not).
    fn read(&self) -> (Map<String, Value>, Map<String, Value>) {
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(self.data.as_str())
        else {
            return (Map::new(), Map::new());
        };
        let choice = match object.remove("choices") {
            Some(Value::Array(mut items)) if self.position < items.len() => {
                match items.swap_remove(self.position) {
                    Value::Object(choice) => choice,
                    _ => Map::new(),
                }
            }
            _ => Map::new(),
        };
        (envelope(object), choice)
    }

    /// The choice's keys besides `index`, `delta` and `finish_reason`.
    fn extras(&self) -> Map<String, Value> {
        let (_, mut choice) = self.read();
        choice.retain(|k, _| !matches!(k.as_str(), "index" | "delta" | "finish_reason"));
        choice
    }
}

/// A chunk's top-level members without `choices` (already taken), its `usage` as null: the
/// usage is the upstream's to report once.
fn envelope(mut object: Map<String, Value>) -> Map<String, Value> {
    if let Some(usage) = object.get_mut("usage") {
        *usage = Value::Null;
    }
    object
}

/// The id part of the ids made for a chunk's calls: the last 12 ASCII alphanumerics of its
/// `id` (reversed, as they always were), `toolmend` when it has none.
fn chunk_id(id: Option<&str>) -> String {
    id.unwrap_or("toolmend")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .rev()
        .take(12)
        .collect()
}

/// What the transformer changes in one choice of a chunk read from its bytes.
#[derive(Debug, Default)]
struct Edit {
    /// The content to write (`Some(None)`: removed).
    content: Option<Option<String>>,
    /// The reasoning members to write (`None`: removed).
    reasoning: Vec<(&'static str, Option<String>)>,
    /// The call fragments forwarded in place of the delta's `tool_calls` (empty: removed).
    tool_calls: Option<Vec<Value>>,
    /// This choice or one before it in the chunk changed: an empty delta drops the choice.
    changed: bool,
}

impl Edit {
    /// Writes the edit into a delta.
    fn apply(self, delta: &mut Map<String, Value>) {
        if let Some(content) = self.content {
            match content {
                Some(text) => delta.insert("content".into(), json!(text)),
                None => delta.shift_remove("content"),
            };
        }
        for (key, text) in self.reasoning {
            match text {
                Some(text) => delta.insert(key.into(), json!(text)),
                None => delta.shift_remove(key),
            };
        }
        if let Some(now) = self.tool_calls {
            delta.shift_remove("tool_calls");
            if !now.is_empty() {
                delta.insert("tool_calls".into(), Value::Array(now));
            }
        }
    }

    /// Whether the delta is left empty by the edit (only nulls and an empty content), read
    /// from its members; `None` when they cannot be read.
    fn empties(&self, delta: &DeltaRead<'_>) -> Option<bool> {
        if let Some(known) = &delta.known {
            // Only the members the reader took, each once.
            return Some(
                chunk::KNOWN
                    .iter()
                    .zip(known)
                    .filter_map(|(key, value)| value.map(|value| (*key, value)))
                    .all(|(key, value)| self.leaves_empty(key, value)),
            );
        }
        let read = members(delta.text).ok()?;
        Some(
            read.iter()
                .all(|(key, value)| self.leaves_empty(key, value)),
        )
    }

    /// Whether the member `key` with the JSON text `value` is nothing once edited.
    fn leaves_empty(&self, key: &str, value: &str) -> bool {
        let edited = match key {
            "tool_calls" => self.tool_calls.as_ref().map(|now| now.is_empty()),
            "content" => self.content.as_ref().map(Option::is_none),
            key => self
                .reasoning
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, text)| text.is_none()),
        };
        match edited {
            // Removed: nothing left; written: a released text, never empty.
            Some(removed) => removed,
            None => value == "null" || (key == "content" && value == "\"\""),
        }
    }
}

/// Whether a delta is empty for the client: no members, or only nulls and an empty content.
fn empty_delta(delta: &Map<String, Value>) -> bool {
    delta.is_empty()
        || delta
            .iter()
            .all(|(k, v)| v.is_null() || (k == "content" && v == ""))
}

/// The OpenAI stream transformer.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    choices: BTreeMap<u64, ChoiceState>,
    /// The last chunk with a `choices` array: its envelope ([`envelope`]) goes on the chunks
    /// the proxy writes for a choice with no call chunk.
    last: Option<Data>,
    /// The envelope of the last chunk read from its bytes.
    seen: Envelope,
    notes: Annotations,
}

impl OpenAiStream {
    /// A chunk the proxy writes for a choice: the keys of the chunk that carried its calls
    /// (else of the last chunk), with this delta and finish reason.
    fn chunk(&self, state: &ChoiceState, choice: u64, delta: Value, finish: Option<&str>) -> Bytes {
        // From the bytes of the chunks it copies, when they are in compact form.
        let written = match &state.template {
            Some(template) => {
                let text = template.data.as_str();
                let keys = ChoiceKeys::Whole(text, template.position);
                written::chunk(Some(text), keys, choice, &delta, finish)
            }
            None => {
                let keys = match &state.extras {
                    Some(extras) => ChoiceKeys::Extras(extras.data.as_str(), extras.position),
                    None => ChoiceKeys::None,
                };
                let envelope = self.last.as_ref().map(Data::as_str);
                written::chunk(envelope, keys, choice, &delta, finish)
            }
        };
        if let Some(text) = written.filter(|_| !tree_only()) {
            return write(None, &text);
        }
        let (mut object, sent) = match &state.template {
            Some(template) => template.read(),
            None => (
                self.envelope(),
                state.extras.as_ref().map(Sent::extras).unwrap_or_default(),
            ),
        };
        let mut out = sent;
        out.insert("index".into(), json!(choice));
        out.insert("delta".into(), delta);
        out.insert("finish_reason".into(), json!(finish));
        object.insert("choices".into(), json!([out]));
        write(None, &Value::Object(object).to_string())
    }

    /// The envelope of the last chunk with a `choices` array (empty before one came).
    fn envelope(&self) -> Map<String, Value> {
        let Some(last) = &self.last else {
            return Map::new();
        };
        match serde_json::from_str::<Value>(last.as_str()) {
            Ok(Value::Object(mut object)) => {
                object.remove("choices");
                envelope(object)
            }
            _ => Map::new(),
        }
    }

    /// Emits the held text and the repaired calls of a choice; returns the finish reason to
    /// report, if it must change.
    fn flush_choice(
        &mut self,
        cx: &mut Context,
        index: u64,
        finish_reason: Option<&str>,
        out: &mut VecDeque<Bytes>,
    ) -> Option<&'static str> {
        let mut state = self.choices.remove(&index)?;
        if state.finished {
            self.choices.insert(index, state);
            return None;
        }
        state.finished = true;
        let reasoning_key = state
            .reasoning_key
            .clone()
            .unwrap_or_else(|| "reasoning_content".into());
        let mut content_markup = None;
        let mut reasoning_markup = None;
        let mut rest = None;
        if let Some(channel) = state.content.as_mut() {
            rest = Some(channel.end(cx));
            content_markup = channel.markup();
        }
        if let Some(text) = rest.take().filter(|t| !t.is_empty()) {
            out.push_back(self.chunk(&state, index, json!({"content": text}), None));
        }
        if let Some(channel) = state.reasoning.as_mut() {
            rest = Some(channel.end(cx));
            reasoning_markup = channel.markup();
        }
        if let Some(text) = rest.filter(|t| !t.is_empty()) {
            let delta = json!({ reasoning_key.clone(): text });
            out.push_back(self.chunk(&state, index, delta, None));
        }
        let buffered: Vec<&CallBuf> = state
            .calls
            .iter()
            .filter(|c| c.passthrough.is_none())
            .collect();
        let had_native = !state.calls.is_empty();
        if buffered.is_empty() && content_markup.is_none() && reasoning_markup.is_none() {
            self.choices.insert(index, state);
            return None;
        }
        let mut turn = AssistantTurn::default();
        turn.content = content_markup;
        turn.reasoning = reasoning_markup;
        turn.tool_calls = buffered
            .iter()
            .map(|c| {
                ToolCall::new(
                    c.id.clone().unwrap_or_default(),
                    c.name.clone(),
                    c.arguments.clone(),
                )
            })
            .collect();
        turn.finish_reason = finish_reason.map(str::to_owned);
        turn.id = Some(cx.turn_id.clone());
        let result = {
            let mender = std::sync::Arc::clone(&cx.mender);
            mender.run_turn(cx.session(), &turn)
        };
        for call in &result.calls {
            self.notes.add(&cx.model, call);
        }
        // The text held from the first markup block on, refused blocks where they were.
        let mut left = Leftover::new(result.content.as_deref());
        let text = state.content.as_mut().map(|c| c.settle(&mut left));
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push_back(self.chunk(&state, index, json!({"content": text}), None));
        }
        let mut left = Leftover::new(result.reasoning.as_deref());
        let text = state.reasoning.as_mut().map(|c| c.settle(&mut left));
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push_back(self.chunk(&state, index, json!({ reasoning_key: text }), None));
        }
        let mut calls = Vec::new();
        let mut extra: Option<String> = None;
        let mut recovered = false;
        for (call, decided) in result.calls.iter().zip(fates(&result.calls, cx.config())) {
            let native = call.native_index.and_then(|i| buffered.get(i));
            let (id, name, arguments) = match (&decided, native) {
                (Fate::AsSent, Some(n)) => (call.id.clone(), n.name.clone(), n.arguments.clone()),
                (Fate::AsSent, None) => continue,
                (Fate::Rewrite, _) => {
                    recovered |= call.native_index.is_none() && call.status == Status::Recovered;
                    (
                        call.id.clone(),
                        call.name.to_string(),
                        call.arguments_text.clone(),
                    )
                }
                (Fate::Drop, _) => continue,
                (Fate::DropWithText(text), _) => {
                    extra = Some(append_text(extra, text));
                    continue;
                }
            };
            let out_index = state.next_out;
            state.next_out += 1;
            calls.push(json!({"index": out_index, "id": id, "type": "function",
                "function": {"name": name, "arguments": arguments}}));
        }
        if let Some(text) = extra {
            out.push_back(self.chunk(&state, index, json!({"content": text}), None));
        }
        let any_calls = !calls.is_empty() || state.calls.iter().any(|c| c.passthrough.is_some());
        if !calls.is_empty() {
            out.push_back(self.chunk(&state, index, json!({"tool_calls": calls}), None));
        }
        self.choices.insert(index, state);
        if recovered {
            Some("tool_calls")
        } else if had_native && !any_calls && finish_reason == Some("tool_calls") {
            Some("stop")
        } else {
            None
        }
    }

    /// Takes the tool-call fragments of a delta into the buffers.
    fn take_calls(
        &mut self,
        cx: &Context,
        index: u64,
        fragments: Vec<Fragment<'_>>,
        chunk: Option<&str>,
        out: &mut Vec<Value>,
    ) {
        let limit = cx.config().limits.max_call_arguments_bytes;
        let state = self.choices.entry(index).or_default();
        for (position, fragment) in fragments.into_iter().enumerate() {
            let upstream_index = fragment.index.unwrap_or(position as u64);
            let id = fragment.id.as_deref();
            let name = fragment.name.as_deref();
            let arguments = fragment.arguments;
            let current = state.by_index.get(&upstream_index).copied();
            let starts_new = match current.map(|i| &state.calls[i]) {
                None => true,
                // Every call on one index: a different id *and* a name open a new call once
                // the current one has arguments.
                Some(call) => {
                    id.is_some_and(|id| call.upstream_id.as_deref().is_some_and(|c| c != id))
                        && name.is_some()
                        && !call.arguments.is_empty()
                }
            };
            let slot = if starts_new {
                state.calls.push(CallBuf::default());
                let slot = state.calls.len() - 1;
                state.by_index.insert(upstream_index, slot);
                slot
            } else {
                current.unwrap_or_default()
            };
            let call = &mut state.calls[slot];
            if call.upstream_id.is_none() {
                call.upstream_id = id.map(str::to_owned);
            }
            if call.id.is_none() {
                call.id = id.map(str::to_owned);
            }
            if call.name.is_empty() {
                call.name = name.unwrap_or_default().to_owned();
            }
            if let Some(out_index) = call.passthrough {
                out.push(json!({"index": out_index, "function": {"arguments": arguments}}));
                continue;
            }
            // A trailing chunk repeating the whole arguments is not appended twice.
            if !arguments.is_empty() && *arguments == call.arguments && arguments.len() > 2 {
                continue;
            }
            call.arguments.push_str(&arguments);
            if call.arguments.len() > limit {
                // Too large to buffer: forwarded as received from here on.
                let out_index = state.next_out;
                state.next_out += 1;
                call.passthrough = Some(out_index);
                let id = call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{}_{slot}", chunk_id(chunk)));
                out.push(json!({"index": out_index, "id": id, "type": "function",
                    "function": {"name": call.name, "arguments": std::mem::take(&mut call.arguments)}}));
            }
        }
        // Canonical ids: missing ones made, repeated ones made unique.
        for slot in 0..state.calls.len() {
            let (before, rest) = state.calls.split_at_mut(slot);
            let Some(call) = rest.first_mut() else {
                break;
            };
            let id = call
                .id
                .get_or_insert_with(|| format!("call_{}_{slot}", chunk_id(chunk)));
            if before.iter().any(|c| c.id.as_deref() == Some(id.as_str())) {
                id.push_str(&format!("_{}", slot + 1));
            }
        }
    }
}

impl OpenAiStream {
    /// Handles a chunk read from its bytes ([`read_chunk_after`]): a chunk that needs no change goes
    /// out as received; one whose choices all end up empty (call fragments taken into their
    /// buffers) is dropped without a tree; any other change is written on the chunk's tree.
    fn read_event(
        &mut self,
        cx: &mut Context,
        event: Event,
        data: &Data,
        chunk: ChunkRead<'_>,
        out: &mut VecDeque<Bytes>,
    ) {
        let scan_content = cx.scan_content();
        let scan_reasoning = cx.scan_reasoning();
        let mut changed = false;
        // Filled from the first change on (the choices before it, unchanged, get no edit).
        let mut edits = Vec::new();
        for (position, choice) in chunk.choices.into_iter().enumerate() {
            let index = choice.index;
            let state = self.choices.entry(index).or_default();
            if choice
                .delta
                .as_ref()
                .is_some_and(|d| d.tool_calls.is_some())
            {
                state.template = Some(Sent {
                    data: data.clone(),
                    position,
                });
            }
            if state.extras.is_none() {
                state.extras = Some(Sent {
                    data: data.clone(),
                    position,
                });
            }
            let mut edit = Edit::default();
            let Some(mut delta) = choice.delta else {
                if changed {
                    edit.changed = true;
                    edits.push((edit, None));
                }
                continue;
            };
            if scan_content && let Some(text) = &delta.content {
                let channel = state.content.get_or_insert_with(|| Channel::new(cx));
                let released = channel.push(cx, text);
                if released != text {
                    changed = true;
                    edit.content = Some((!released.is_empty()).then(|| released.to_owned()));
                }
            }
            for (key, text) in &delta.reasoning {
                state.reasoning_key.get_or_insert_with(|| (*key).to_owned());
                if !scan_reasoning {
                    continue;
                }
                let channel = state.reasoning.get_or_insert_with(|| Channel::new(cx));
                let released = channel.push(cx, text);
                if released != text {
                    changed = true;
                    let released = (!released.is_empty()).then(|| released.to_owned());
                    edit.reasoning.push((key, released));
                }
            }
            if let Some(fragments) = delta.tool_calls.take() {
                changed = true;
                let mut now = Vec::new();
                self.take_calls(cx, index, fragments, chunk.id.as_deref(), &mut now);
                edit.tool_calls = Some(now);
            }
            if changed {
                edit.changed = true;
                edits.resize_with(position, || (Edit::default(), None));
                edits.push((edit, Some(delta)));
            }
        }
        if !changed {
            return out.push_back(event.raw);
        }
        let dropped = |(edit, delta): &(Edit, Option<DeltaRead<'_>>)| {
            edit.changed && delta.as_ref().and_then(|d| edit.empties(d)) == Some(true)
        };
        if !chunk.usage && edits.iter().all(dropped) {
            // Nothing left for the client in this chunk.
            return;
        }
        self.write_edits(&event, data, edits.into_iter().map(|(e, _)| e), out);
    }

    /// Writes a chunk read from its bytes with its choices' edits, on its tree.
    fn write_edits(
        &self,
        event: &Event,
        data: &Data,
        edits: impl Iterator<Item = Edit>,
        out: &mut VecDeque<Bytes>,
    ) {
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(data.as_str()) else {
            return out.push_back(event.raw.clone());
        };
        let Some(Value::Array(choices)) = object.remove("choices") else {
            return out.push_back(event.raw.clone());
        };
        let mut kept = Vec::with_capacity(choices.len());
        for (mut choice, edit) in choices.into_iter().zip(edits) {
            let changed = edit.changed;
            let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else {
                kept.push(choice);
                continue;
            };
            edit.apply(delta);
            if !(changed && empty_delta(delta)) {
                kept.push(choice);
            }
        }
        write_kept(out, event.event.as_deref(), object, kept);
    }

    /// Handles a chunk read from its bytes whose every choice finishes with an empty delta
    /// ([`ends_empty`]), as [`OpenAiStream::tree_event`] does: each choice's held text and
    /// calls go out, in order, before the chunk, which keeps its bytes when no finish reason
    /// changes and nothing went out before it, and is otherwise written back with the new
    /// finish reasons (from its bytes when in compact form, else on its tree).
    fn finish_event(
        &mut self,
        cx: &mut Context,
        event: &Event,
        data: &Data,
        chunk: &ChunkRead<'_>,
        out: &mut VecDeque<Bytes>,
    ) {
        self.last = Some(data.clone());
        let mut before = VecDeque::new();
        let mut finishes = Vec::with_capacity(chunk.choices.len());
        for (position, choice) in chunk.choices.iter().enumerate() {
            let state = self.choices.entry(choice.index).or_default();
            if state.extras.is_none() {
                state.extras = Some(Sent {
                    data: data.clone(),
                    position,
                });
            }
            let finish = choice.finish.as_deref();
            finishes.push(self.flush_choice(cx, choice.index, finish, &mut before));
        }
        if before.is_empty() && finishes.iter().all(Option::is_none) {
            return out.push_back(event.raw.clone());
        }
        out.extend(before);
        let name = event.event.as_deref();
        if let Some(text) = written::with_finishes(data.as_str(), &finishes) {
            return out.push_back(write(name, &text));
        }
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(data.as_str()) else {
            return out.push_back(event.raw.clone());
        };
        let Some(Value::Array(mut choices)) = object.remove("choices") else {
            return out.push_back(event.raw.clone());
        };
        for (choice, finish) in choices.iter_mut().zip(finishes) {
            if let Some(finish) = finish {
                choice["finish_reason"] = json!(finish);
            }
        }
        write_kept(out, name, object, choices);
    }

    /// Handles a chunk on its tree: the chunks [`read_chunk_after`] does not take (an error, a
    /// shape it does not read) and those [`OpenAiStream::finish_event`] does not (a finish
    /// beside a delta).
    fn tree_event(
        &mut self,
        cx: &mut Context,
        event: Event,
        data: &Data,
        out: &mut VecDeque<Bytes>,
    ) {
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(data.as_str()) else {
            return out.push_back(event.raw);
        };
        if object.contains_key("error") || event.event.as_deref() == Some("error") {
            // The upstream gave up: what is held goes out before its error.
            self.finish(cx, out);
            return out.push_back(event.raw);
        }
        let Some(Value::Array(choices)) = object.remove("choices") else {
            return out.push_back(event.raw);
        };
        self.last = Some(data.clone());
        let chunk_id = object.get("id").and_then(Value::as_str).map(str::to_owned);
        let mut changed = false;
        let mut kept = Vec::with_capacity(choices.len());
        let mut before: Vec<Bytes> = Vec::new();
        for (position, mut choice) in choices.into_iter().enumerate() {
            let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            let finish = choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let sent = Sent {
                data: data.clone(),
                position,
            };
            let state = self.choices.entry(index).or_default();
            if choice.pointer("/delta/tool_calls").is_some() {
                // The delta stays as a placeholder: the written one takes its place.
                state.template = Some(sent.clone());
            }
            if state.extras.is_none() && choice.is_object() {
                state.extras = Some(sent);
            }
            let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else {
                kept.push(choice);
                continue;
            };
            let scan_content = cx.scan_content();
            let scan_reasoning = cx.scan_reasoning();
            if scan_content && let Some(Value::String(text)) = delta.get("content") {
                let channel = state.content.get_or_insert_with(|| Channel::new(cx));
                let released = channel.push(cx, text);
                if released != *text {
                    changed = true;
                    if released.is_empty() {
                        delta.shift_remove("content");
                    } else {
                        delta.insert("content".into(), json!(released));
                    }
                }
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(Value::String(text)) = delta.get(key) {
                    state.reasoning_key.get_or_insert_with(|| key.to_owned());
                    if !scan_reasoning {
                        continue;
                    }
                    let channel = state.reasoning.get_or_insert_with(|| Channel::new(cx));
                    let released = channel.push(cx, text);
                    if released != *text {
                        changed = true;
                        if released.is_empty() {
                            delta.shift_remove(key);
                        } else {
                            delta.insert(key.into(), json!(released));
                        }
                    }
                }
            }
            if let Some(fragments) = delta.shift_remove("tool_calls") {
                changed = true;
                let mut now = Vec::new();
                self.take_calls(
                    cx,
                    index,
                    Fragment::of_tree(&fragments),
                    chunk_id.as_deref(),
                    &mut now,
                );
                if !now.is_empty() {
                    delta.insert("tool_calls".into(), Value::Array(now));
                }
            }
            let empty = empty_delta(delta);
            if let Some(finish) = finish.as_deref() {
                if changed && !empty {
                    // This chunk's own delta goes first, then the held text and calls, then
                    // the finish reason.
                    let mut own = choice.clone();
                    own["finish_reason"] = Value::Null;
                    choice["delta"] = json!({});
                    let mut first = envelope(object.clone());
                    first.insert("choices".into(), json!([own]));
                    before.push(write(None, &Value::Object(first).to_string()));
                }
                let mut held = VecDeque::new();
                if let Some(new) = self.flush_choice(cx, index, Some(finish), &mut held) {
                    changed = true;
                    choice["finish_reason"] = json!(new);
                }
                changed |= !held.is_empty();
                before.extend(held);
                kept.push(choice);
            } else if empty && changed {
                // Nothing left for the client in this choice's delta.
            } else {
                kept.push(choice);
            }
        }
        if !changed {
            return out.push_back(event.raw);
        }
        out.extend(before);
        write_kept(out, event.event.as_deref(), object, kept);
    }
}

/// Whether a choice read from its bytes finishes with an empty delta object (the usual last
/// chunk of a choice): nothing in it to scan or take, only the choice to flush.
fn ends_empty(choice: &chunk::ChoiceRead<'_>) -> bool {
    choice.finish.is_some()
        && choice
            .delta
            .as_ref()
            .is_some_and(|delta| delta.known == Some([None; 4]))
}

/// Writes a chunk with the choices it keeps; nothing when it keeps none and carries no `usage`
/// (a chunk whose every choice was taken into the call buffers says nothing on its own).
fn write_kept(
    out: &mut VecDeque<Bytes>,
    event: Option<&str>,
    mut object: Map<String, Value>,
    kept: Vec<Value>,
) {
    let has_usage = object.get("usage").is_some_and(|u| !u.is_null());
    if kept.is_empty() && !has_usage {
        return;
    }
    object.insert("choices".into(), Value::Array(kept));
    out.push_back(write(event, &Value::Object(object).to_string()));
}

impl Transform for OpenAiStream {
    fn event(&mut self, cx: &mut Context, mut event: Event, out: &mut VecDeque<Bytes>) {
        // The data taken out of the event, not shared with it (one reference count less to
        // move per event).
        let Some(data) = event.data.take() else {
            return out.push_back(event.raw);
        };
        let text = data.as_str();
        if text.trim() == "[DONE]" {
            self.finish(cx, out);
            return out.push_back(event.raw);
        }
        if event.event.as_deref() != Some("error")
            && let Ok(chunk) = read_chunk_after(text, &mut self.seen)
        {
            if chunk.choices.iter().all(|c| c.finish.is_none()) {
                self.read_event(cx, event, &data, chunk, out);
                // Kept once read (no flush ran on this chunk that would need it before).
                self.last = Some(data);
                return;
            }
            if !tree_only() && chunk.choices.iter().all(ends_empty) {
                return self.finish_event(cx, &event, &data, &chunk, out);
            }
        }
        self.tree_event(cx, event, &data, out);
    }

    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>) {
        let open: Vec<u64> = self
            .choices
            .iter()
            .filter(|(_, s)| !s.finished)
            .map(|(i, _)| *i)
            .collect();
        for index in open {
            self.flush_choice(cx, index, None, out);
        }
    }

    fn take_unsaved(&mut self) -> Vec<crate::mend::Unsaved> {
        std::mem::take(&mut self.notes.unsaved)
    }
}

#[cfg(test)]
mod tests {
    use toolmend::RecoverMode;

    use crate::error::Api;
    use crate::stream::event_tree::check;

    /// The client's bytes for an upstream body delivered in these pieces.
    fn run(pieces: Vec<Vec<u8>>) -> Vec<u8> {
        check::run(Api::OpenAi, RecoverMode::Content, pieces)
    }

    fn chunk(delta: &str, finish: &str) -> String {
        format!(
            r#"{{"id":"chatcmpl-u","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
        )
    }

    /// A valid stream in every spelling the reader meets: CRLF and LF, `data:` without its
    /// space, comments between and inside events, a named event, non-JSON data, escapes.
    fn valid() -> String {
        [
            ": keep-alive\r\n\r\n".to_owned(),
            format!(
                "data: {}\r\n\r\n",
                chunk(r#"{"role":"assistant","content":""}"#, "null")
            ),
            format!(
                "data:{}\n\n",
                chunk(r#"{"content":"Caf\u00e9 \ud83d\ude00 \"q\"\n"}"#, "null")
            ),
            format!(
                ": inside\ndata: {}\n\n",
                chunk(r#"{"content":"ü — raw"}"#, "null")
            ),
            "data: not json\n\n".to_owned(),
            format!(
                "event: message\r\ndata: {}\r\n\r\n",
                chunk(r#"{"reasoning_content":"hm"}"#, "null")
            ),
            format!("data: {}\n\n", chunk("{}", r#""stop""#)),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat()
    }

    /// The client's chunks for an upstream body delivered in these chunks.
    fn run_chunks(pieces: Vec<bytes::Bytes>) -> Vec<bytes::Bytes> {
        check::run_chunks(Api::OpenAi, RecoverMode::Content, pieces)
    }

    #[test]
    fn an_upstream_chunk_of_unchanged_events_goes_out_as_that_chunk() {
        let text = |t: &str| {
            let delta = format!(r#"{{"content":"{t}"}}"#);
            format!("data: {}\n\n", chunk(&delta, "null"))
        };
        let events = [text("a"), text("b\\n\\u00e9"), text("c")].concat();
        let whole = bytes::Bytes::from(events.clone());
        // Three events and the start of a fourth: the three go out as that slice of the chunk.
        let last = text("x");
        let (start, rest) = last.split_at(20);
        let ending = bytes::Bytes::from(format!("{events}{start}"));
        let sent = run_chunks(vec![
            whole.clone(),
            ending.clone(),
            bytes::Bytes::from(rest.to_owned()),
        ]);
        assert_eq!(sent.len(), 3);
        assert_eq!(
            sent[0].as_ptr(),
            whole.as_ptr(),
            "the chunk itself, not a copy"
        );
        assert_eq!(sent[0], whole);
        assert_eq!(sent[1].as_ptr(), ending.as_ptr());
        assert_eq!(sent[1], events.as_bytes());
        // The event completed across chunks was buffered: it goes out as received.
        assert_eq!(sent[2], last.as_bytes());
    }

    #[test]
    fn a_valid_stream_is_byte_identical_at_every_split() {
        let body = valid();
        let bytes = body.as_bytes();
        assert_eq!(run(vec![bytes.to_vec()]), bytes);
        for cut in 1..bytes.len() {
            for second in [cut + 1, cut + 7, cut + 61] {
                let second = second.min(bytes.len());
                let pieces = vec![
                    bytes[..cut].to_vec(),
                    bytes[cut..second].to_vec(),
                    bytes[second..].to_vec(),
                ];
                assert_eq!(run(pieces), bytes, "cut at {cut} and {second}");
            }
        }
        let one_each: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(run(one_each), bytes);
    }

    /// Held markup, call fragments with escapes (one repaired), the finish.
    fn repaired() -> String {
        let mut body = String::new();
        for (i, (delta, finish)) in [
            (r#"{"role":"assistant","content":""}"#, "null"),
            (r#"{"content":"Look <tool_"}"#, "null"),
            (
                r#"{"content":"call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\u00e9\"}}</tool_call> now"}"#,
                "null",
            ),
            (
                r#"{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"list_dir","arguments":"{'dir': "}}]}"#,
                "null",
            ),
            (
                r#"{"tool_calls":[{"index":0,"function":{"arguments":"'caf\u00e9'}"}}]}"#,
                "null",
            ),
            ("{}", r#""tool_calls""#),
        ]
        .into_iter()
        .enumerate()
        {
            let end = if i % 2 == 0 { "\r\n\r\n" } else { "\n\n" };
            let field = if i % 3 == 0 { "data:" } else { "data: " };
            body.push_str(&format!("{field}{}{end}", chunk(delta, finish)));
        }
        body.push_str("data: [DONE]\n\n");
        body
    }

    #[test]
    fn a_repaired_stream_gives_the_same_bytes_at_every_split() {
        let body = repaired();
        let bytes = body.as_bytes();
        let whole = run(vec![bytes.to_vec()]);
        let text = String::from_utf8(whole.clone()).unwrap();
        assert!(
            text.contains(r#""arguments":"{\"dir\":\"café\"}""#),
            "{text}"
        );
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        for cut in 1..bytes.len() {
            let pieces = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
            assert_eq!(run(pieces), whole, "cut at {cut}");
        }
        let one_each: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(run(one_each), whole);
    }

    #[test]
    fn the_written_chunks_are_the_tree_paths_bytes() {
        // A call chunk written on a native call's chunk (its keys copied whole), a recovered
        // call written on the envelope of the last chunk with the first chunk's choice keys,
        // chunks the writer leaves to the tree (spaces, an escape serde_json re-spells).
        let markup = r#"{"content":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>"}"#;
        fn spaced(delta: &str, finish: &str) -> String {
            format!(
                r#"{{ "id": "chatcmpl-\u0075", "choices": [{{"index":0,"delta":{delta},"logprobs":{{"x":1}},"finish_reason":{finish}}}], "usage": null }}"#
            )
        }
        type Chunk = fn(&str, &str) -> String;
        let (chunk, spaced): (Chunk, Chunk) = (chunk, spaced);
        let mut bodies = vec![repaired()];
        for (first, last) in [
            (chunk, chunk),
            (spaced, spaced),
            (chunk, spaced),
            (spaced, chunk),
        ] {
            bodies.push(format!(
                "data: {}\n\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                first(r#"{"role":"assistant","content":"Hi "}"#, "null"),
                chunk(markup, "null"),
                last("{}", r#""stop""#),
            ));
        }
        for body in bodies {
            let bytes = body.as_bytes().to_vec();
            let read = run(vec![bytes.clone()]);
            let tree = crate::stream::event_tree::with_tree_only(|| run(vec![bytes]));
            let text = String::from_utf8(read.clone()).unwrap();
            assert!(text.contains(r#""tool_calls":[{"index":0"#), "{text}");
            assert_eq!(text, String::from_utf8(tree).unwrap());
        }
    }

    #[test]
    fn the_finishing_chunks_are_the_tree_paths_bytes() {
        // Chunks that finish their choices with empty deltas, written back from their bytes
        // (compact form) or their trees (spaces, an exponent, an escape serde_json re-spells):
        // a finish reason changed (recovered markup: `tool_calls`; every native call dropped:
        // `stop`), unchanged with held calls before it, unchanged with nothing held, two
        // choices in one chunk, `choices` before other members, a `usage`.
        let markup = r#"{"content":"<tool_call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/\"}}</tool_call>"}"#;
        let native = |index: u64, args: &str| {
            format!(
                r#"{{"tool_calls":[{{"index":{index},"id":"c{index}","type":"function","function":{{"name":"list_dir","arguments":{}}}}}]}}"#,
                serde_json::to_string(args).unwrap()
            )
        };
        let text = |i: u64, delta: &str| -> String {
            format!(r#"{{"index":{i},"delta":{delta},"logprobs":null,"finish_reason":null}}"#)
        };
        let end = |i: u64, finish: &str| -> String {
            format!(r#"{{"index":{i},"delta":{{}},"logprobs":null,"finish_reason":{finish}}}"#)
        };
        let envelopes: [fn(&str) -> String; 5] = [
            |choices| {
                format!(
                    r#"{{"id":"c-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{choices}]}}"#
                )
            },
            |choices| {
                format!(
                    r#"{{"id":"c-1","choices":[{choices}],"usage":null,"system_fingerprint":"fp"}}"#
                )
            },
            |choices| {
                format!(r#"{{"id":"c-1","choices":[{choices}],"usage":{{"total_tokens":7}}}}"#)
            },
            |choices| format!(r#"{{ "id": "c-1", "choices": [{choices}] }}"#),
            |choices| format!(r#"{{"id":"c\u002d1","created":1e3,"choices":[{choices}]}}"#),
        ];
        let streams: Vec<Vec<String>> = vec![
            // Recovered markup: the finish reason becomes `tool_calls`.
            vec![text(0, markup), end(0, r#""stop""#)],
            // A native call repaired: its chunk before the finish, which keeps its reason.
            vec![
                text(0, &native(0, "{'dir': '/'}")),
                end(0, r#""tool_calls""#),
            ],
            // A valid native call as sent.
            vec![
                text(0, &native(0, r#"{"dir":"/"}"#)),
                end(0, r#""tool_calls""#),
            ],
            // A native call that cannot be saved: dropped, the finish becomes `stop`.
            vec![text(0, &native(0, "{")), end(0, r#""tool_calls""#)],
            // Nothing held: the chunk as received.
            vec![text(0, r#"{"content":"hi"}"#), end(0, r#""stop""#)],
            vec![end(0, r#""length""#)],
            // Two choices finishing in one chunk, each with something held.
            vec![
                format!(
                    "{},{}",
                    text(0, markup),
                    text(1, &native(0, "{'dir': 'a'}"))
                ),
                format!("{},{}", end(1, r#""tool_calls""#), end(0, r#""stop""#)),
            ],
            // Two choices, one finishing per chunk, the same index twice.
            vec![
                format!("{},{}", text(0, markup), text(1, r#"{"content":"b"}"#)),
                end(1, r#""stop""#),
                format!("{},{}", end(0, r#""st\u006fp""#), end(0, r#""stop""#)),
            ],
        ];
        let mut changed = 0;
        for envelope in envelopes {
            for stream in &streams {
                let mut body: String = stream
                    .iter()
                    .map(|choices| format!("data: {}\n\n", envelope(choices)))
                    .collect();
                body.push_str("data: [DONE]\n\n");
                let sent = check::agree(Api::OpenAi, RecoverMode::Content, &body);
                changed += usize::from(sent != body);
            }
        }
        assert!(changed > 20, "{changed}");
    }

    #[test]
    fn the_span_reader_takes_the_shapes_of_the_tree_path() {
        use super::chunk::read_chunk;
        // Read from spans: no finish reason, choices of objects, no repeated member.
        assert!(read_chunk(&chunk(r#"{"content":"a"}"#, "null")).is_ok());
        assert!(read_chunk(r#"{"choices":[]}"#).is_ok());
        let text = chunk("{}", r#""st\u006fp""#);
        let finished = read_chunk(&text).unwrap();
        assert_eq!(finished.choices[0].finish.as_deref(), Some("stop"));
        assert!(super::ends_empty(&finished.choices[0]));
        let text = chunk(r#"{"content":"a"}"#, r#""stop""#);
        let finished = read_chunk(&text).unwrap();
        assert!(!super::ends_empty(&finished.choices[0]));
        // Left to the tree path.
        for data in [
            chunk("{}", "5"),
            r#"{"error":{"message":"x"}}"#.to_owned(),
            r#"{"choices":[1]}"#.to_owned(),
            r#"{"usage":{}}"#.to_owned(),
            r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#.to_owned(),
            "[1]".to_owned(),
            "not json".to_owned(),
        ] {
            assert!(read_chunk(&data).is_err(), "{data}");
        }
        let read = read_chunk(
            r#"{"id":"x","usage":null,"choices":[{"index":2,"delta":{"content":"\u00e9","reasoning":"r","tool_calls":[{"index":1,"id":"c","function":{"name":"f","arguments":{"a":1}}},"junk"]}}]}"#,
        )
        .unwrap();
        assert!(!read.usage);
        let choice = &read.choices[0];
        assert_eq!(choice.index, 2);
        let delta = choice.delta.as_ref().unwrap();
        assert_eq!(delta.content.as_deref(), Some("é"));
        assert_eq!(delta.reasoning[0].0, "reasoning");
        let calls = delta.tool_calls.as_ref().unwrap();
        assert_eq!(calls[0].index, Some(1));
        assert_eq!(calls[0].name.as_deref(), Some("f"));
        assert_eq!(calls[0].arguments, r#"{"a":1}"#);
        assert!(calls[1].id.is_none() && calls[1].arguments.is_empty());
    }
}
