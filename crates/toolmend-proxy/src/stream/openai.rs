//! OpenAI Chat Completions streaming: per-choice text channels and per-call argument buffers.
//!
//! Text deltas are forwarded as they arrive (minus a possible sentinel suffix); tool-call
//! fragments are buffered per call and, when the choice finishes, emitted repaired as one
//! delta per call with `index`, `id`, `type` and `name`. Envelope deviations are fixed on the
//! way: every call on index 0 (a new `id` with a new `name` starts a new call), ids repeated on
//! every chunk, missing ids or indices, the same id reused by parallel calls.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use toolmend::{AssistantTurn, Status, ToolCall};

use super::sse::{Event, write};
use super::{Channel, Context, Leftover, Transform};
use crate::mend::{Annotations, Fate, append_text, fates};

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
    /// The last chunk that carried a call fragment, without its `choices` (`usage` as null),
    /// and its choice: the chunks written for this choice keep their keys
    /// (`system_fingerprint`, `service_tier`, `usage: null`, `logprobs`, …).
    template: Option<(Map<String, Value>, Map<String, Value>)>,
    /// The keys of this choice's first chunk besides `index`, `delta` and `finish_reason`
    /// (`logprobs`, …), kept once: the chunks written for calls recovered from text, which no
    /// call chunk carried, keep them too.
    extras: Option<Map<String, Value>>,
}

/// The OpenAI stream transformer.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    choices: BTreeMap<u64, ChoiceState>,
    /// Top-level fields of the last chunk (without `choices`), for chunks the proxy writes.
    envelope: Map<String, Value>,
    notes: Annotations,
}

impl OpenAiStream {
    /// A chunk the proxy writes for a choice: the keys of the chunk that carried its calls
    /// (else of the last chunk), with this delta and finish reason.
    fn chunk(&self, state: &ChoiceState, choice: u64, delta: Value, finish: Option<&str>) -> Bytes {
        let (mut object, sent) = match &state.template {
            Some((envelope, choice)) => (envelope.clone(), Some(choice)),
            None => (self.envelope.clone(), state.extras.as_ref()),
        };
        let mut out = Map::new();
        for (key, value) in sent.into_iter().flatten() {
            out.insert(key.clone(), value.clone());
        }
        out.insert("index".into(), json!(choice));
        out.insert("delta".into(), delta);
        out.insert("finish_reason".into(), json!(finish));
        object.insert("choices".into(), json!([out]));
        write(None, &Value::Object(object).to_string())
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
        fragments: Vec<Value>,
        chunk_id: &str,
        out: &mut Vec<Value>,
    ) {
        let limit = cx.config().limits.max_call_arguments_bytes;
        let state = self.choices.entry(index).or_default();
        for (position, fragment) in fragments.into_iter().enumerate() {
            let upstream_index = fragment
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let id = fragment
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            let function = fragment.get("function");
            let name = function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            let arguments = match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
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
            if !arguments.is_empty() && arguments == call.arguments && arguments.len() > 2 {
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
                    .unwrap_or_else(|| format!("call_{chunk_id}_{slot}"));
                out.push(json!({"index": out_index, "id": id, "type": "function",
                    "function": {"name": call.name, "arguments": std::mem::take(&mut call.arguments)}}));
            }
        }
        // Canonical ids: missing ones made, repeated ones made unique.
        let mut seen: Vec<String> = Vec::new();
        for (slot, call) in state.calls.iter_mut().enumerate() {
            let id = call
                .id
                .get_or_insert_with(|| format!("call_{chunk_id}_{slot}"));
            if seen.contains(id) {
                id.push_str(&format!("_{}", slot + 1));
            }
            seen.push(id.clone());
        }
    }
}

impl Transform for OpenAiStream {
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        let data = match event.data.as_deref() {
            None => return out.push_back(event.raw),
            Some(data) if data.trim() == "[DONE]" => {
                self.finish(cx, out);
                return out.push_back(event.raw);
            }
            Some(data) => data,
        };
        let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(data) else {
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
        self.envelope = object.clone();
        if let Some(usage) = self.envelope.get_mut("usage") {
            // The usage is the upstream's to report once; a written chunk says `null`.
            *usage = Value::Null;
        }
        let chunk_id: String = object
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("toolmend")
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .rev()
            .take(12)
            .collect();
        let mut changed = false;
        let mut kept = Vec::with_capacity(choices.len());
        let mut before: Vec<Bytes> = Vec::new();
        for mut choice in choices {
            let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            let finish = choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if choice.pointer("/delta/tool_calls").is_some() {
                // The delta stays as a placeholder: the written one takes its place.
                let sent = choice.as_object().cloned().unwrap_or_default();
                let envelope = self.envelope.clone();
                self.choices.entry(index).or_default().template = Some((envelope, sent));
            }
            let state = self.choices.entry(index).or_default();
            if state.extras.is_none()
                && let Some(sent) = choice.as_object()
            {
                let extras = sent
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "index" | "delta" | "finish_reason"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                state.extras = Some(extras);
            }
            let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else {
                kept.push(choice);
                continue;
            };
            let scan_content = cx.scan_content();
            let scan_reasoning = cx.scan_reasoning();
            let state = self.choices.entry(index).or_default();
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
                let fragments = match fragments {
                    Value::Array(items) => items,
                    Value::Null => Vec::new(),
                    other => vec![other],
                };
                let mut now = Vec::new();
                self.take_calls(cx, index, fragments, &chunk_id, &mut now);
                if !now.is_empty() {
                    delta.insert("tool_calls".into(), Value::Array(now));
                }
            }
            let empty = delta.is_empty()
                || delta
                    .iter()
                    .all(|(k, v)| v.is_null() || (k == "content" && v == ""));
            if let Some(finish) = finish.as_deref() {
                if changed && !empty {
                    // This chunk's own delta goes first, then the held text and calls, then
                    // the finish reason.
                    let mut own = choice.clone();
                    own["finish_reason"] = Value::Null;
                    choice["delta"] = json!({});
                    let mut first = self.envelope.clone();
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
        let has_usage = object.get("usage").is_some_and(|u| !u.is_null());
        if kept.is_empty() && !has_usage {
            return;
        }
        object.insert("choices".into(), Value::Array(kept));
        out.push_back(write(
            event.event.as_deref(),
            &Value::Object(object).to_string(),
        ));
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
