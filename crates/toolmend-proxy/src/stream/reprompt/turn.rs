//! The assistant turn of an upstream stream, as the upstream sent it: rebuilt from its raw
//! events into the API's non-streaming body shape, so a re-prompt's follow-up request is built
//! as it is for a buffered response ([`crate::reprompt::follow_up`]).
//!
//! Also says when the stream started a native call: from then on the proxy holds what it would
//! send the client. Bounded: past `limit` bytes of events it stops reading, and the turn is
//! not re-prompted.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use serde_json::{Map, Value, json};

use crate::error::Api;
use crate::stream::Framing;
use crate::stream::sse::Event;

/// A piece of the upstream body on its way to the repair.
#[derive(Debug)]
pub(crate) enum Piece {
    /// A whole event, read into the turn as it passes.
    Event(Event),
    /// Bytes passed on unread (a partial event, or past the limit).
    Bytes(Bytes),
}

/// One upstream stream's assistant turn, read as its bytes arrive.
#[derive(Debug)]
pub(crate) struct UpstreamTurn {
    api: Api,
    framing: Framing,
    events: Vec<Event>,
    /// Bytes read and not yet given out as whole events.
    pending: BytesMut,
    /// Bytes read so far, against `limit`.
    read: usize,
    limit: usize,
    /// Over the limit: the turn is not kept (and not re-prompted).
    pub(crate) overflow: bool,
    /// A native call started in the stream.
    pub(crate) call_started: bool,
    /// The upstream body was cut: the turn is incomplete and not re-prompted.
    pub(crate) cut: bool,
    /// The response's id (Responses: for `previous_response_id`).
    id: Option<Value>,
    /// Text of the content channel (Chat, Ollama).
    text: String,
    /// Chat calls by their stream index: id, name, arguments.
    chat_calls: BTreeMap<u64, (String, String, String)>,
    /// Whole items or blocks by index (Anthropic blocks, Responses items, Ollama calls).
    items: BTreeMap<u64, Value>,
    /// Anthropic `tool_use` input fragments, by block index.
    inputs: BTreeMap<u64, String>,
    /// Responses: the output of `response.completed`, which wins over the items.
    output: Option<Value>,
}

impl UpstreamTurn {
    pub(crate) fn new(api: Api, limit: usize) -> Self {
        Self {
            api,
            framing: Framing::for_api(api),
            events: Vec::new(),
            pending: BytesMut::new(),
            read: 0,
            limit,
            overflow: false,
            call_started: false,
            cut: false,
            id: None,
            text: String::new(),
            chat_calls: BTreeMap::new(),
            items: BTreeMap::new(),
            inputs: BTreeMap::new(),
            output: None,
        }
    }

    /// Cuts one chunk of the upstream body into whole events (the bytes of a partial event
    /// wait for the next chunk, or [`Self::rest`]). Each is [`Self::read`] as it passes on to
    /// the repair, so what the proxy sends before a call starts is known event by event.
    pub(crate) fn split(&mut self, chunk: Bytes) -> Vec<Piece> {
        if self.overflow {
            return vec![Piece::Bytes(chunk)];
        }
        self.read += chunk.len();
        if self.read > self.limit {
            tracing::info!("streamed turn over the buffering limit: not re-prompted");
            self.overflow = true;
            self.items.clear();
            self.chat_calls.clear();
            self.text.clear();
            let mut out: Vec<Piece> = self.rest().into_iter().map(Piece::Bytes).collect();
            out.push(Piece::Bytes(chunk));
            return out;
        }
        self.pending.extend_from_slice(&chunk);
        self.framing.push(&chunk, &mut self.events);
        let mut out = Vec::with_capacity(self.events.len());
        for event in std::mem::take(&mut self.events) {
            let _ = self.pending.split_to(event.raw.len());
            out.push(Piece::Event(event));
        }
        out
    }

    /// Reads one event of the stream (once it is handed on).
    pub(crate) fn read(&mut self, event: &Event) {
        if self.overflow {
            return;
        }
        if let Some((value, kind)) = event.typed_json() {
            self.read_event(&value, &kind);
        }
    }

    /// The bytes of a last, partial event (at the end of the body, or before a cut).
    pub(crate) fn rest(&mut self) -> Option<Bytes> {
        let rest = std::mem::take(&mut self.pending);
        (!rest.is_empty()).then(|| rest.freeze())
    }

    fn read_event(&mut self, value: &Value, kind: &str) {
        match self.api {
            Api::OpenAi => self.read_chat(value),
            Api::Anthropic => self.read_anthropic(value, kind),
            Api::Responses => self.read_responses(value, kind),
            Api::Ollama => self.read_ollama(value),
        }
    }

    fn read_chat(&mut self, value: &Value) {
        let Some(choices) = value.get("choices").and_then(Value::as_array) else {
            return;
        };
        // The follow-up continues choice 0, as a buffered one does.
        let Some(delta) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            .and_then(|c| c.get("delta"))
        else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.text.push_str(text);
        }
        let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (position, fragment) in fragments.iter().enumerate() {
            self.call_started = true;
            let index = fragment
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let call = self.chat_calls.entry(index).or_default();
            let text = |pointer: &str| fragment.pointer(pointer).and_then(Value::as_str);
            if call.0.is_empty()
                && let Some(id) = text("/id")
            {
                call.0 = id.to_owned();
            }
            if call.1.is_empty()
                && let Some(name) = text("/function/name")
            {
                call.1 = name.to_owned();
            }
            if let Some(arguments) = text("/function/arguments") {
                call.2.push_str(arguments);
            }
        }
    }

    fn read_anthropic(&mut self, value: &Value, kind: &str) {
        let index = value.get("index").and_then(Value::as_u64);
        match (kind, index) {
            ("content_block_start", Some(index)) => {
                let block = value.get("content_block").cloned().unwrap_or(Value::Null);
                if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                    self.call_started = true;
                }
                self.items.insert(index, block);
            }
            ("content_block_delta", Some(index)) => {
                let Some(delta) = value.get("delta") else {
                    return;
                };
                let Some(block) = self.items.get_mut(&index) else {
                    return;
                };
                let mut append = |key: &str, text: &str| {
                    let sent = block.get(key).and_then(Value::as_str).unwrap_or_default();
                    block[key] = json!(format!("{sent}{text}"));
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        append("text", delta["text"].as_str().unwrap_or_default());
                    }
                    Some("thinking_delta") => {
                        append("thinking", delta["thinking"].as_str().unwrap_or_default());
                    }
                    Some("signature_delta") => {
                        append("signature", delta["signature"].as_str().unwrap_or_default());
                    }
                    Some("input_json_delta") => {
                        let part = delta["partial_json"].as_str().unwrap_or_default();
                        self.inputs.entry(index).or_default().push_str(part);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn read_responses(&mut self, value: &Value, kind: &str) {
        let index = value.get("output_index").and_then(Value::as_u64);
        match (kind, index) {
            ("response.created", _) => self.id = value.pointer("/response/id").cloned(),
            ("response.output_item.added", Some(index)) => {
                let item = value.get("item").cloned().unwrap_or(Value::Null);
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    self.call_started = true;
                }
                self.items.entry(index).or_insert(item);
            }
            ("response.output_item.done", Some(index)) => {
                let item = value.get("item").cloned().unwrap_or(Value::Null);
                self.items.insert(index, item);
            }
            ("response.completed" | "response.incomplete", _) => {
                self.output = value.pointer("/response/output").cloned();
            }
            _ => {}
        }
    }

    fn read_ollama(&mut self, value: &Value) {
        let Some(message) = value.get("message") else {
            return;
        };
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            self.text.push_str(text);
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.call_started = true;
            self.items.insert(self.items.len() as u64, call.clone());
        }
    }

    /// The turn as the API's non-streaming response body (the parts a follow-up reads);
    /// `None` when it was over the limit.
    pub(crate) fn response(&self) -> Option<Value> {
        if self.overflow {
            return None;
        }
        let text = (!self.text.is_empty()).then(|| json!(self.text));
        Some(match self.api {
            Api::OpenAi => {
                let calls: Vec<Value> = self
                    .chat_calls
                    .values()
                    .map(|(id, name, arguments)| {
                        json!({"id": id, "type": "function",
                            "function": {"name": name, "arguments": arguments}})
                    })
                    .collect();
                json!({"choices": [{"index": 0, "message": {"role": "assistant",
                    "content": text, "tool_calls": calls}}]})
            }
            Api::Anthropic => {
                let blocks: Vec<Value> = self
                    .items
                    .iter()
                    .map(|(index, block)| match self.inputs.get(index) {
                        Some(input) => {
                            let mut block = block.clone();
                            // A tool_use block's input must be an object for the upstream to
                            // take the turn back.
                            let input = serde_json::from_str::<Value>(input)
                                .ok()
                                .filter(Value::is_object)
                                .unwrap_or_else(|| json!({}));
                            block["input"] = input;
                            block
                        }
                        None => block.clone(),
                    })
                    .collect();
                json!({"content": blocks})
            }
            Api::Responses => {
                let output = self.output.clone().unwrap_or_else(|| {
                    Value::Array(self.items.values().cloned().collect::<Vec<_>>())
                });
                let mut body = Map::new();
                if let Some(id) = &self.id {
                    body.insert("id".into(), id.clone());
                }
                body.insert("output".into(), output);
                Value::Object(body)
            }
            Api::Ollama => {
                let calls: Vec<Value> = self.items.values().cloned().collect();
                json!({"message": {"role": "assistant", "content": self.text,
                    "tool_calls": calls}})
            }
        })
    }
}
