//! What the proxy does with each call of a turn, shared by both APIs and both body kinds.

use std::collections::BTreeMap;

use axum::http::HeaderValue;
use serde_json::{Value, json};
use toolmend::{
    AssistantTurn, CallResult, Mender, RepairKind, Session, Status, ToolCall, TurnResult,
};

use crate::config::{InvalidPolicy, Mode, ProxyConfig, StormPolicy};

/// The name of the header listing what was repaired.
pub(crate) const REPAIRS_HEADER: &str = "x-toolmend-repairs";

/// What repairing one buffered response body needs besides the body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyContext<'a> {
    pub(crate) mender: &'a Mender,
    pub(crate) config: &'a ProxyConfig,
    pub(crate) model: &'a str,
    /// The turn's id for the library ([`request_tag`]).
    pub(crate) turn_id: &'a str,
}

/// A tag of the request body: the id the proxy gives the response's turn, so calls recovered
/// from its text get ids no other turn of the conversation has (each request of a
/// conversation carries a longer history than the one before). Stateless: any instance tags the
/// same request the same way.
///
/// Eight bytes at a time (FxHash's step, then a SplitMix64 finish): a request may hold a long
/// history, and this runs on every repaired response.
pub(crate) fn request_tag(body: &[u8]) -> String {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut hash = body.len() as u64;
    let mut words = body.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
    for &byte in words.remainder() {
        hash = (hash.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    // `format!("req_{hash:016x}")` without the formatting machinery (half of this function).
    let mut tag = String::with_capacity(20);
    tag.push_str("req_");
    for shift in (0..16).rev() {
        let digit = ((hash >> (shift * 4)) & 0xf) as u32;
        tag.push(char::from_digit(digit, 16).unwrap_or('0'));
    }
    tag
}

/// What becomes of one call in the response the client sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// The native call exactly as the upstream sent it.
    AsSent,
    /// The call with toolmend's id, name and arguments.
    Rewrite,
    /// Left out (a duplicate of another call, or an invalid recovered call whose markup stays
    /// in the text).
    Drop,
    /// Left out; this text is added to the assistant text instead.
    DropWithText(String),
}

/// The fate of `call`; `split` says it is one part of a native call that was split.
pub(crate) fn fate(call: &CallResult, split: bool, config: &ProxyConfig) -> Fate {
    let native = call.native_index.is_some();
    match call.status {
        Status::Suppressed if call.has(RepairKind::StormSuppressed) => match config.storm {
            StormPolicy::Annotate => {
                let other = call
                    .repairs
                    .iter()
                    .any(|r| r.kind != RepairKind::StormSuppressed);
                if native && !other && !split {
                    Fate::AsSent
                } else {
                    Fate::Rewrite
                }
            }
            StormPolicy::Suppress => Fate::DropWithText(call.error.clone().unwrap_or_default()),
        },
        Status::Suppressed => Fate::Drop,
        Status::Invalid if !native => Fate::Drop,
        Status::Invalid => match config.invalid {
            InvalidPolicy::Pass if split => Fate::Rewrite,
            InvalidPolicy::Pass => Fate::AsSent,
            InvalidPolicy::Reject => Fate::DropWithText(call.error.clone().unwrap_or_default()),
        },
        Status::Valid if native && !split => Fate::AsSent,
        _ => Fate::Rewrite,
    }
}

/// The fate of each of `calls`, in order: [`fate`] with whether the call is one part of a
/// native call that toolmend split into several (more than one result shares its native index).
pub(crate) fn fates(calls: &[CallResult], config: &ProxyConfig) -> Vec<Fate> {
    let mut parts: BTreeMap<usize, u32> = BTreeMap::new();
    for index in calls.iter().filter_map(|c| c.native_index) {
        *parts.entry(index).or_default() += 1;
    }
    calls
        .iter()
        .map(|c| {
            let split = c.native_index.is_some_and(|i| parts[&i] > 1);
            fate(c, split, config)
        })
        .collect()
}

/// Repairs and events of one response, for the header, metrics and logs.
#[derive(Debug, Default)]
pub(crate) struct Annotations {
    counts: BTreeMap<&'static str, u32>,
    /// The native calls that could not be saved, for a re-prompt.
    pub(crate) unsaved: Vec<Unsaved>,
}

/// A native call that could not be saved: its id and its retry message.
#[derive(Debug, Clone)]
pub(crate) struct Unsaved {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) message: String,
}

impl Annotations {
    /// Records one finished call (and counts it in the metrics).
    pub(crate) fn add(&mut self, model: &str, call: &CallResult) {
        crate::metrics::count_call(model, call);
        for repair in &call.repairs {
            *self.counts.entry(repair.kind.name()).or_default() += 1;
        }
        if call.status == Status::Invalid {
            if call.native_index.is_some() {
                self.unsaved.push(Unsaved {
                    id: call.id.clone(),
                    name: call.name.to_string(),
                    message: call.error.clone().unwrap_or_default(),
                });
            }
            *self.counts.entry("invalid").or_default() += 1;
            tracing::warn!(tool = %call.name, "a tool call could not be repaired");
        }
    }

    /// The header value: `kind=count` pairs, comma-separated, sorted by kind.
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        if self.counts.is_empty() {
            return None;
        }
        let text: Vec<String> = self
            .counts
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        HeaderValue::from_str(&text.join(",")).ok()
    }
}

/// The storm window and retry budget implied by a request's history: the previous assistant
/// turns since the last real user message, replayed through a fresh session.
///
/// Stateless: any instance computes the same window from the same request.
pub(crate) fn history_session(mender: &Mender, turns: Vec<Vec<ToolCall>>) -> Session {
    let mut session = Session::new();
    for calls in turns {
        if calls.is_empty() {
            continue;
        }
        let mut turn = AssistantTurn::default();
        turn.tool_calls = calls;
        let _ = mender.run_turn(&mut session, &turn);
    }
    session
}

/// The sessions the choices of one response run in: the request history's session, replayed
/// only when a choice has native calls a storm could repeat, and copied for each such choice
/// (choices are alternatives, not a sequence).
pub(crate) struct ChoiceSessions<F> {
    session: Option<Session>,
    history: Option<F>,
}

impl<F: FnOnce() -> Vec<Vec<ToolCall>>> ChoiceSessions<F> {
    /// Sessions over the history `history` reads when first needed.
    pub(crate) fn new(history: F) -> Self {
        Self {
            session: None,
            history: Some(history),
        }
    }

    /// A session for `turn`: an empty one when it has no native calls, else a copy of the
    /// history's.
    pub(crate) fn for_turn(&mut self, mender: &Mender, turn: &AssistantTurn) -> Session {
        if turn.tool_calls.is_empty() {
            return Session::new();
        }
        let history = &mut self.history;
        self.session
            .get_or_insert_with(|| {
                history
                    .take()
                    .map_or_else(Session::new, |h| history_session(mender, h()))
            })
            .clone()
    }
}

/// Runs the one assistant turn read from a response body and records its calls in `notes`.
///
/// `None` when the turn holds nothing to look at, or when observe mode forbids changing the
/// body (the calls are still counted). The history is read only when there are native calls a
/// storm could repeat.
pub(crate) fn run_body_turn(
    cx: &BodyContext<'_>,
    turn: &mut AssistantTurn,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
    notes: &mut Annotations,
) -> Option<TurnResult> {
    let BodyContext {
        mender,
        config,
        model,
        turn_id,
    } = *cx;
    if turn.tool_calls.is_empty() && turn.content.is_none() && turn.reasoning.is_none() {
        return None;
    }
    turn.id = Some(turn_id.to_owned());
    let session = if turn.tool_calls.is_empty() {
        Session::new()
    } else {
        history_session(mender, history())
    };
    // The window is dropped with the response: signatures nothing compares are not computed.
    let result = mender.run_last_turn(session, turn);
    for call in &result.calls {
        notes.add(model, call);
    }
    repairing(config).then_some(result)
}

/// A chat message's `tool_calls` after a turn (OpenAI's and Ollama's shape), its content, and
/// whether anything changed.
#[derive(Debug)]
pub(crate) struct MessageCalls {
    /// The calls in result order: natives as sent or rewritten, then the recovered ones.
    pub(crate) calls: Vec<Value>,
    /// The turn's content with the text of refused calls appended.
    pub(crate) content: Option<String>,
    /// A call was rewritten, dropped or refused.
    pub(crate) changed: bool,
}

/// Applies each call's [`Fate`] to a message's native call objects: kept as sent, rewritten by
/// `rewrite` (given a copy of the native object, `None` for a recovered call, and the number
/// of calls before it), left out, or left out with its text added to the content.
pub(crate) fn message_calls(
    native: &[Value],
    result: &TurnResult,
    config: &ProxyConfig,
    mut rewrite: impl FnMut(Option<Value>, &CallResult, usize) -> Value,
) -> MessageCalls {
    let sent = |index: usize| native.get(index).cloned().unwrap_or_else(|| json!({}));
    let mut out = MessageCalls {
        calls: Vec::with_capacity(result.calls.len()),
        content: result.content.clone(),
        changed: false,
    };
    for (call, fate) in result.calls.iter().zip(fates(&result.calls, config)) {
        match fate {
            Fate::AsSent => out.calls.push(sent(call.native_index.unwrap_or_default())),
            Fate::Rewrite => {
                out.changed = true;
                let rewritten = rewrite(call.native_index.map(sent), call, out.calls.len());
                out.calls.push(rewritten);
            }
            Fate::Drop => out.changed |= call.native_index.is_some(),
            Fate::DropWithText(text) => {
                out.changed = true;
                out.content = Some(append_text(out.content, &text));
            }
        }
    }
    out
}

/// Raw argument text of a call object's `arguments`/`input` (string as is, else its JSON).
pub(crate) fn arguments_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Appends `extra` to an optional text, separated by a blank line.
pub(crate) fn append_text(text: Option<String>, extra: &str) -> String {
    match text {
        Some(t) if !t.is_empty() => format!("{t}\n\n{extra}"),
        _ => extra.to_owned(),
    }
}

/// Whether the proxy may change bodies.
pub(crate) fn repairing(config: &ProxyConfig) -> bool {
    config.mode == Mode::Repair
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_tag_is_its_hash_in_sixteen_hex_digits() {
        let tags: Vec<String> = [&b""[..], b"x", b"{\"messages\":[]}", &[0xff; 100]]
            .iter()
            .map(|body| request_tag(body))
            .collect();
        for tag in &tags {
            let hex = tag.strip_prefix("req_").unwrap();
            let value = u64::from_str_radix(hex, 16).unwrap();
            assert_eq!(*tag, format!("req_{value:016x}"));
        }
        assert_eq!(request_tag(b"x"), tags[1], "stateless");
        assert_ne!(tags[0], tags[1]);
    }
}
