//! One client stream made of several upstream answers: what the client was sent, and each
//! later answer's events rewritten to continue it.
//!
//! The first answer goes out as the proxy repaired it, byte for byte. A re-prompt's answer
//! continues the same stream: its opening envelope is left out (Anthropic `message_start`,
//! Responses `response.created`/`response.in_progress`), block and item indices follow those
//! the client already has, Responses `sequence_number`s go on from the last one sent, Chat
//! chunks keep the first answer's `id`, and the final Responses `response.completed` lists the
//! items the client got from earlier answers before its own.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::error::Api;
use crate::stream::sse::{Event, typed_event, write};

/// What the client has been sent so far, and the answer being spliced in.
#[derive(Debug, Clone)]
pub(crate) struct Splice {
    api: Api,
    /// Which upstream answer is going out (0: the first).
    attempt: u8,
    /// Chat: the first answer's chunk `id`.
    chat_id: Option<Value>,
    /// Anthropic blocks / Responses items the client got from earlier answers.
    offset: u64,
    /// Anthropic: blocks started (one past the highest index sent); Responses: items added.
    started: u64,
    /// Anthropic blocks started and not stopped at the client.
    open: BTreeSet<u64>,
    /// Responses: the last `sequence_number` sent.
    sequence: Option<u64>,
    /// Responses: the items the client got, by output index (`done` versions when sent).
    items: BTreeMap<u64, Value>,
    /// Responses: the items of earlier answers, for the last `response.completed`.
    earlier: Vec<Value>,
}

impl Splice {
    pub(crate) fn new(api: Api) -> Self {
        Self {
            api,
            attempt: 0,
            chat_id: None,
            offset: 0,
            started: 0,
            open: BTreeSet::new(),
            sequence: None,
            items: BTreeMap::new(),
            earlier: Vec::new(),
        }
    }

    /// A re-prompt's answer follows: what the client holds of the answers so far is kept,
    /// and the events that close it are returned (Anthropic blocks left open at the client).
    pub(crate) fn next_answer(&mut self) -> Vec<Bytes> {
        self.attempt = self.attempt.saturating_add(1);
        self.offset = self.started;
        self.earlier
            .extend(std::mem::take(&mut self.items).into_values());
        std::mem::take(&mut self.open)
            .into_iter()
            .map(|index| typed_event(&json!({"type": "content_block_stop", "index": index})))
            .collect()
    }

    /// The bytes to send the client for one event of the current answer (`None`: left out),
    /// recording what the client got.
    pub(crate) fn send(&mut self, event: Event) -> Option<Bytes> {
        if self.api == Api::Ollama {
            return Some(event.raw);
        }
        let Some((mut value, kind)) = event.typed_json().filter(|(v, _)| v.is_object()) else {
            return Some(event.raw);
        };
        let changed = match self.api {
            Api::OpenAi => self.chat(&mut value),
            Api::Anthropic => self.anthropic(&mut value, &kind)?,
            _ => self.responses(&mut value, &kind)?,
        };
        if !changed {
            return Some(event.raw);
        }
        Some(match self.api {
            Api::OpenAi => write(event.event.as_deref(), &value.to_string()),
            _ => typed_event(&value),
        })
    }

    /// A Chat chunk: the first answer's `id`, no second `role` delta.
    fn chat(&mut self, value: &mut Value) -> bool {
        if self.attempt == 0 {
            if self.chat_id.is_none() {
                self.chat_id = value.get("id").cloned();
            }
            return false;
        }
        let mut changed = false;
        if let Some(id) = &self.chat_id
            && value.get("id").is_some_and(|sent| sent != id)
        {
            value["id"] = id.clone();
            changed = true;
        }
        for choice in value
            .get_mut("choices")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) {
                changed |= delta.shift_remove("role").is_some();
            }
        }
        changed
    }

    /// An Anthropic event; `None` when left out.
    fn anthropic(&mut self, value: &mut Value, kind: &str) -> Option<bool> {
        if self.attempt > 0 && kind == "message_start" {
            return None;
        }
        let mut changed = false;
        if kind.starts_with("content_block_")
            && let Some(index) = value.get("index").and_then(Value::as_u64)
        {
            let at = index + self.offset;
            if at != index {
                value["index"] = json!(at);
                changed = true;
            }
            match kind {
                "content_block_start" => {
                    self.started = self.started.max(at + 1);
                    self.open.insert(at);
                }
                "content_block_stop" => {
                    self.open.remove(&at);
                }
                _ => {}
            }
        }
        Some(changed)
    }

    /// A Responses event; `None` when left out.
    fn responses(&mut self, value: &mut Value, kind: &str) -> Option<bool> {
        let later = self.attempt > 0;
        if later && matches!(kind, "response.created" | "response.in_progress") {
            return None;
        }
        let mut changed = false;
        if later && let Some(index) = value.get("output_index").and_then(Value::as_u64) {
            value["output_index"] = json!(index + self.offset);
            changed = true;
        }
        if let Some(sent) = value.get("sequence_number").and_then(Value::as_u64) {
            let at = match self.sequence {
                Some(last) if later => last + 1,
                _ => sent,
            };
            if at != sent {
                value["sequence_number"] = json!(at);
                changed = true;
            }
            self.sequence = Some(at);
        }
        let index = value.get("output_index").and_then(Value::as_u64);
        match (kind, index) {
            ("response.output_item.added", Some(index)) => {
                self.started = self.started.max(index + 1);
                let item = value.get("item").cloned().unwrap_or(Value::Null);
                self.items.entry(index).or_insert(item);
            }
            ("response.output_item.done", Some(index)) => {
                let item = value.get("item").cloned().unwrap_or(Value::Null);
                self.items.insert(index, item);
            }
            _ => {}
        }
        if later
            && !self.earlier.is_empty()
            && kind.starts_with("response.")
            && let Some(Value::Array(output)) = value.pointer_mut("/response/output")
        {
            // The final response lists everything the client was sent, in order.
            let own = std::mem::take(output);
            output.extend(self.earlier.iter().cloned());
            output.extend(own);
            changed = true;
        }
        Some(changed)
    }
}
