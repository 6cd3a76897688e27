//! `recover` and `StreamRecoverer`: tool calls the model wrote as text (Hermes `<tool_call>`,
//! Qwen XML, DSML, …), found whole or as the text streams in.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolmend::recover::StreamOutput;

use crate::tools::ToolSet;
use crate::utf16;

/// One call found in text.
#[napi(object)]
#[derive(Debug)]
pub struct RecoveredCall {
    /// The declared tool it calls.
    pub name: String,
    /// The name as the model wrote it, when that differed.
    pub written_name: Option<String>,
    /// The markup family (`hermes`, `qwen_xml`, …).
    pub family: String,
    /// The arguments as JSON text.
    pub arguments: String,
    /// Whether the arguments were unwrapped from a `{"name", "arguments"}` envelope.
    pub arguments_unwrapped: bool,
    /// Start of the markup, a UTF-16 index into the text given (for streams: into the text
    /// fed so far).
    pub start: u32,
    /// End of the markup (exclusive), a UTF-16 index.
    pub end: u32,
}

/// A call of a declared tool in a recovered block that could not be read (issue #28): never
/// recovered, never dropped silently.
#[napi(object)]
#[derive(Debug)]
pub struct LostCall {
    /// The declared tool it calls.
    pub name: String,
    /// The markup family of its block.
    pub family: String,
    /// What could not be read, as written: the call's arguments, or its whole list entry.
    pub text: String,
    /// How many recovered calls come before it (for streams: calls released so far).
    pub position: u32,
    /// Start of its block's markup (shared with the block's recovered calls), a UTF-16 index.
    pub start: u32,
    /// End of its block's markup (exclusive), a UTF-16 index.
    pub end: u32,
}

/// Text with the markup of recovered calls removed, those calls, and the lost ones.
#[napi(object)]
#[derive(Debug)]
pub struct Recovered {
    /// The text to show.
    pub text: String,
    /// The calls found, in text order.
    pub calls: Vec<RecoveredCall>,
    /// Calls of the recovered blocks that could not be read, in text order.
    pub lost: Vec<LostCall>,
}

fn calls(found: &[toolmend::recover::RecoveredCall], text: &str) -> Vec<RecoveredCall> {
    found
        .iter()
        .map(|c| RecoveredCall {
            name: c.name.clone(),
            written_name: c.written_name.clone(),
            family: c.family.to_owned(),
            arguments: c.arguments.clone(),
            arguments_unwrapped: c.arguments_unwrapped,
            start: utf16::index(text, c.span.start),
            end: utf16::index(text, c.span.end),
        })
        .collect()
}

fn lost(found: &[toolmend::recover::LostCall], text: &str) -> Vec<LostCall> {
    found
        .iter()
        .map(|c| LostCall {
            name: c.name.clone(),
            family: c.family.to_owned(),
            text: c.text.clone(),
            position: u32::try_from(c.position).unwrap_or(u32::MAX),
            start: utf16::index(text, c.span.start),
            end: utf16::index(text, c.span.end),
        })
        .collect()
}

fn max_calls(max: Option<u32>) -> usize {
    max.map_or(toolmend::limits::MAX_RECOVERED_CALLS, |n| {
        usize::try_from(n).unwrap_or(usize::MAX)
    })
}

/// Finds the tool calls written as text in `text`; only declared tools count.
#[napi]
#[must_use]
pub fn recover(text: String, tools: &ToolSet, max: Option<u32>) -> Recovered {
    let found = toolmend::recover::recover_text(&text, &tools.inner, max_calls(max));
    Recovered {
        calls: calls(&found.calls, &text),
        lost: lost(&found.lost, &text),
        text: found.text,
    }
}

/// Recovers calls from text that arrives in chunks: `feed(chunk)` returns the text safe to
/// show now (holding back only a suffix that could start a call) and the calls completed so
/// far; `finish()` the rest. One per channel and message.
#[napi]
#[derive(Debug)]
pub struct StreamRecoverer {
    tools: Arc<toolmend::ToolSet>,
    /// The recoverer (`None` after `finish()`), the buffer each `feed` writes into, and the
    /// text fed so far (spans are reported against it).
    state: Mutex<(
        Option<toolmend::recover::StreamRecoverer>,
        StreamOutput,
        String,
    )>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[napi]
impl StreamRecoverer {
    /// A recoverer for one stream of text against `tools`.
    #[napi(constructor)]
    #[must_use]
    pub fn new(tools: &ToolSet, max: Option<u32>) -> Self {
        Self {
            tools: Arc::clone(&tools.inner),
            state: Mutex::new((
                Some(toolmend::recover::StreamRecoverer::new(max_calls(max))),
                StreamOutput::default(),
                String::new(),
            )),
        }
    }

    /// Adds a chunk of text; returns what may be released now.
    #[napi]
    pub fn feed(&self, chunk: String) -> Result<Recovered> {
        let mut state = lock(&self.state);
        let (recoverer, released, seen) = &mut *state;
        let r = recoverer
            .as_mut()
            .ok_or_else(|| Error::new(Status::InvalidArg, "feed() after finish()"))?;
        released.text.clear();
        released.calls.clear();
        released.lost.clear();
        seen.push_str(&chunk);
        r.push_into(&self.tools, &chunk, released);
        Ok(Recovered {
            calls: calls(&released.calls, seen),
            lost: lost(&released.lost, seen),
            text: std::mem::take(&mut released.text),
        })
    }

    /// Ends the text; returns the rest (text held back, calls completed at the end).
    #[napi]
    pub fn finish(&self) -> Result<Recovered> {
        let mut state = lock(&self.state);
        let r = state
            .0
            .take()
            .ok_or_else(|| Error::new(Status::InvalidArg, "finish() called twice"))?;
        let out = r.finish(&self.tools);
        Ok(Recovered {
            calls: calls(&out.calls, &state.2),
            lost: lost(&out.lost, &state.2),
            text: out.text,
        })
    }
}
