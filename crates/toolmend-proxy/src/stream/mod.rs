//! Streaming responses (SSE, and Ollama's NDJSON): events in, repaired events out, text never
//! held longer than a possible markup sentinel needs.

pub(crate) mod anthropic;
pub(crate) mod event_tree;
pub(crate) mod ollama;
pub(crate) mod openai;
pub(crate) mod reprompt;
pub(crate) mod responses;
pub(crate) mod sse;

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use toolmend::recover::{StreamOutput, StreamRecoverer};
use toolmend::{AssistantTurn, CallResult, Mender, RecoverMode, Session, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::error::Api;
use crate::mend::{Annotations, Fate, Unsaved, append_text, fate};
use sse::{Event, SseParser};

/// The history of a request, read only when a call needs the storm window.
pub(crate) type History = Box<dyn FnOnce() -> Vec<Vec<ToolCall>> + Send>;

/// What a transformer needs from the request: the router hands down its configuration and the
/// compiled tools, nothing of its own state (metrics go through the process-wide recorder).
pub(crate) struct Context {
    pub(crate) mender: Arc<Mender>,
    pub(crate) config: Arc<ProxyConfig>,
    pub(crate) model: String,
    /// The turn's id for the library (`mend::request_tag`): recovered calls' ids derive from it.
    pub(crate) turn_id: String,
    history: Option<History>,
    session: Option<Session>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The session of this response, built from the history on first use.
    pub(crate) fn session(&mut self) -> &mut Session {
        let mender = &self.mender;
        let history = &mut self.history;
        self.session.get_or_insert_with(|| {
            history
                .take()
                .map_or_else(Session::new, |h| crate::mend::history_session(mender, h()))
        })
    }

    pub(crate) fn config(&self) -> &ProxyConfig {
        &self.config
    }

    /// Whether the content channel is scanned.
    pub(crate) fn scan_content(&self) -> bool {
        self.config().recover != RecoverMode::Off
    }

    /// Whether the reasoning channel is scanned.
    pub(crate) fn scan_reasoning(&self) -> bool {
        self.config().recover == RecoverMode::All
    }
}

/// One transformer per API.
pub(crate) trait Transform: Send {
    /// Handles one event, pushing output bytes.
    fn event(&mut self, cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>);
    /// The stream ended (cleanly or not): flush everything held.
    fn finish(&mut self, cx: &mut Context, out: &mut VecDeque<Bytes>);
    /// The native calls that could not be saved, taken once the stream ended (`--reprompt`).
    fn take_unsaved(&mut self) -> Vec<Unsaved>;
}

/// Where a stream reports its unsaved calls when it ends (`--reprompt`).
pub(crate) type UnsavedSink = Arc<std::sync::Mutex<Vec<Unsaved>>>;

/// One text channel scanned for leaked calls as it streams.
#[derive(Debug)]
pub(crate) struct Channel {
    recoverer: Option<StreamRecoverer>,
    /// The text received so far (spans of recovered calls index it).
    text: String,
    /// Markup blocks consumed by the recoverer.
    spans: Vec<Range<usize>>,
    /// What the last chunk released, reused from chunk to chunk.
    released: StreamOutput,
    limit: usize,
    /// Whitespace released before any other text, held: when the channel's text turns out to
    /// be markup and blanks only, the blanks left between the markup are dropped with it (a
    /// framework taking the first text as the answer must not answer `"\n"`).
    blank: String,
    /// Text other than whitespace was released (nothing is held back as blank any more).
    spoke: bool,
    /// Bytes of the text released before the first consumed block (`cut` not yet set).
    sent: usize,
    /// Where the first consumed markup block starts: from there on the text is held until
    /// the turn decides each block ([`Channel::settle`]), so a block the library refuses goes
    /// out where it was, before the text that followed it.
    cut: Option<usize>,
}

/// The text the library left of one turn's markup (the blocks it refused, as written), read
/// block by block in the order the blocks were given to it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Leftover<'a> {
    rest: &'a str,
}

impl<'a> Leftover<'a> {
    /// The refused blocks of `text` (a turn result's `content` or `reasoning`).
    pub(crate) fn new(text: Option<&'a str>) -> Self {
        Self {
            rest: text.unwrap_or_default(),
        }
    }

    /// Whether the library refused `block` (the next block given to it): refused blocks stay
    /// in its text as written, in order, separated by the line breaks that joined them.
    fn refused(&mut self, block: &str) -> bool {
        let rest = self.rest.trim_start();
        match rest.strip_prefix(block) {
            Some(after) if !block.is_empty() => {
                self.rest = after;
                true
            }
            _ => false,
        }
    }
}

impl Channel {
    pub(crate) fn new(cx: &Context) -> Self {
        let max = cx.mender.options().limits.max_recovered_calls;
        Self {
            recoverer: Some(StreamRecoverer::new(max)),
            text: String::new(),
            spans: Vec::new(),
            released: StreamOutput::default(),
            limit: cx.config().limits.max_response_bytes,
            blank: String::new(),
            spoke: false,
            sent: 0,
            cut: None,
        }
    }

    /// Whether markup was consumed from this channel.
    pub(crate) fn consumed(&self) -> bool {
        !self.spans.is_empty()
    }

    /// Holds released whitespace until other text follows it.
    fn hold_blank(&mut self) {
        if self.spoke {
            return;
        }
        let text = &mut self.released.text;
        if text.trim().is_empty() {
            self.blank.push_str(text);
            text.clear();
        } else {
            self.spoke = true;
            text.insert_str(0, &std::mem::take(&mut self.blank));
        }
    }

    /// Feeds a text delta; returns the text safe to emit now.
    ///
    /// The text is written into a buffer the channel keeps, so a delta released as it came (the
    /// usual case, compared and forwarded as received) allocates nothing.
    pub(crate) fn push<'a>(&'a mut self, cx: &Context, chunk: &'a str) -> &'a str {
        let Some(recoverer) = self.recoverer.as_mut() else {
            return chunk;
        };
        self.text.push_str(chunk);
        self.released.text.clear();
        self.released.calls.clear();
        // Lost list entries are reported by the turn run over the held markup at the end.
        self.released.lost.clear();
        recoverer.push_into(cx.mender.tools(), chunk, &mut self.released);
        take_spans(&mut self.spans, &self.released.calls);
        let mut released = std::mem::take(&mut self.released.text);
        self.hold_after_cut(&mut released);
        self.released.text = released;
        self.hold_blank();
        if self.text.len() > self.limit {
            // Too long to keep scanning: release what is held, markup as written, and pass
            // the rest through.
            let rest = self.give_up();
            self.released.text.push_str(&rest);
        }
        &self.released.text
    }

    /// Keeps of `released` only the text before the first consumed block: what follows it
    /// waits for the turn's verdict on the block.
    fn hold_after_cut(&mut self, released: &mut String) {
        if self.cut.is_some() {
            released.clear();
            return;
        }
        let Some(cut) = self.spans.iter().map(|s| s.start).min() else {
            self.sent += released.len();
            return;
        };
        // Nothing was consumed before `cut`: the released text is the streamed text from
        // `sent` on, so its first `cut - sent` bytes are the text before the block.
        let keep = cut.saturating_sub(self.sent).min(released.len());
        if released.is_char_boundary(keep) {
            released.truncate(keep);
        }
        self.cut = Some(cut);
    }

    /// Stops scanning a channel grown past the size limit: everything held goes out as it was
    /// written (markup included, nothing recovered from it) and the rest passes through.
    fn give_up(&mut self) -> String {
        if self.recoverer.take().is_none() {
            return String::new();
        }
        // Nothing before `sent` (or `cut`) was consumed: the rest is the text from there.
        let start = self.cut.take().unwrap_or(self.sent);
        let mut text = self.text.get(start..).unwrap_or_default().to_owned();
        self.spans.clear();
        if !self.spoke {
            text.insert_str(0, &std::mem::take(&mut self.blank));
            self.spoke = !text.is_empty();
        }
        text
    }

    /// Ends the channel: the rest of the held text up to the first consumed markup block
    /// (what follows that block waits for [`Channel::settle`]).
    pub(crate) fn end(&mut self, cx: &Context) -> String {
        let Some(recoverer) = self.recoverer.take() else {
            return String::new();
        };
        let output = recoverer.finish(cx.mender.tools());
        take_spans(&mut self.spans, &output.calls);
        let mut text = output.text;
        self.hold_after_cut(&mut text);
        if !self.spoke && self.cut.is_none() {
            text.insert_str(0, &std::mem::take(&mut self.blank));
            self.spoke = !text.is_empty();
        }
        text
    }

    /// The text held from the first consumed markup block on, once the turn has judged the
    /// blocks: each block `leftover` shows refused goes out where it was, as written, between
    /// the texts around it; the others are left out. Blanks held before any other text are
    /// dropped when nothing but markup taken out and blanks came (else they go out as sent).
    /// Empty when no block was consumed. Call after [`Channel::end`], with the turn's
    /// leftover read in the order of [`Channel::markup`].
    pub(crate) fn settle(&mut self, leftover: &mut Leftover<'_>) -> String {
        let Some(cut) = self.cut.take() else {
            return String::new();
        };
        let mut out = String::new();
        let mut at = cut;
        let mut taken = false;
        for span in &self.spans {
            let (Some(before), Some(block)) =
                (self.text.get(at..span.start), self.text.get(span.clone()))
            else {
                continue;
            };
            out.push_str(before);
            if leftover.refused(block) {
                out.push_str(block);
            } else {
                taken = true;
            }
            at = span.end;
        }
        out.push_str(self.text.get(at..).unwrap_or_default());
        if !self.spoke {
            out.insert_str(0, &std::mem::take(&mut self.blank));
            if out.trim().is_empty() && taken {
                out.clear();
            }
            self.spoke = !out.is_empty();
        }
        out
    }

    /// The consumed markup blocks, joined by line breaks (`None` when there were none): the
    /// turn re-reads them so the library decides each call as it would for a whole body.
    pub(crate) fn markup(&self) -> Option<String> {
        if self.spans.is_empty() {
            return None;
        }
        let parts: Vec<&str> = self
            .spans
            .iter()
            .filter_map(|s| self.text.get(s.clone()))
            .collect();
        Some(parts.join("\n"))
    }
}

/// Adds the spans of `calls` not yet in `spans`.
fn take_spans(spans: &mut Vec<Range<usize>>, calls: &[toolmend::recover::RecoveredCall]) {
    for call in calls {
        if !spans.contains(&call.span) {
            spans.push(call.span.clone());
        }
    }
    // In text order: the blocks are judged, and held text rebuilt, in that order.
    spans.sort_by_key(|s| s.start);
}

/// The native calls of a streamed response as the client got them, and the session from
/// before the first of them: at the end of the stream the markup held back is judged beside
/// them, as one turn.
#[derive(Debug, Default)]
pub(crate) struct Natives {
    calls: Vec<ToolCall>,
    /// The session before the first native call (so the storm window counts no call twice).
    before: Option<Session>,
}

impl Natives {
    /// Runs native calls as one turn on the response's session, first keeping that session
    /// as it was before any native call.
    pub(crate) fn run(&mut self, cx: &mut Context, calls: Vec<ToolCall>) -> TurnResult {
        let mut turn = AssistantTurn::default();
        turn.tool_calls = calls;
        if self.before.is_none() {
            self.before = Some(cx.session().clone());
        }
        let mender = Arc::clone(&cx.mender);
        mender.run_turn(cx.session(), &turn)
    }

    /// Records a native call the client got as the upstream sent it.
    pub(crate) fn sent(&mut self, call: ToolCall) {
        self.calls.push(call);
    }

    /// Records a native call the client got as toolmend rewrote it.
    pub(crate) fn rewritten(&mut self, call: &CallResult) {
        self.calls.push(ToolCall::new(
            call.id.clone(),
            call.name.to_string(),
            call.arguments_text.clone(),
        ));
    }

    /// How many native calls the client got.
    pub(crate) fn len(&self) -> usize {
        self.calls.len()
    }

    /// Ends the stream: runs the markup held back from its content and reasoning as one turn
    /// beside the native calls; `None` when no markup was held back.
    ///
    /// The session is the one from before the first native call, so the natives are not
    /// counted twice by the storm window; without natives it is the response's session.
    pub(crate) fn markup_turn(
        &mut self,
        cx: &mut Context,
        content: Option<String>,
        reasoning: Option<String>,
    ) -> Option<TurnResult> {
        if content.is_none() && reasoning.is_none() {
            return None;
        }
        let mut turn = AssistantTurn::default();
        turn.tool_calls = std::mem::take(&mut self.calls);
        turn.content = content;
        turn.reasoning = reasoning;
        turn.id = Some(cx.turn_id.clone());
        let mut session = match self.before.take() {
            Some(session) => session,
            None => cx.session().clone(),
        };
        Some(cx.mender.run_turn(&mut session, &turn))
    }
}

/// The calls recovered from held-back markup at the end of a stream, recorded in `notes`: those
/// the client gets as new calls, in order, and the text that stands in for those refused.
pub(crate) fn recovered_calls<'r>(
    cx: &Context,
    notes: &mut Annotations,
    result: &'r TurnResult,
) -> (Vec<&'r CallResult>, Option<String>) {
    let mut sent = Vec::new();
    let mut text: Option<String> = None;
    for call in result.calls.iter().filter(|c| c.native_index.is_none()) {
        notes.add(&cx.model, call);
        match fate(call, false, cx.config()) {
            Fate::Rewrite => sent.push(call),
            Fate::DropWithText(refusal) => text = Some(append_text(text, &refusal)),
            Fate::AsSent | Fate::Drop => {}
        }
    }
    (sent, text)
}

/// The markup blocks of one channel as one text, `None` when there were none.
pub(crate) fn joined_markup(blocks: &[String]) -> Option<String> {
    (!blocks.is_empty()).then(|| blocks.join("\n"))
}

/// How a streamed body is cut into events.
#[derive(Debug)]
enum Framing {
    /// Server-sent events.
    Sse(SseParser),
    /// One JSON object per line (Ollama).
    Lines(ollama::LineParser),
}

impl Framing {
    /// The framing of an API's streams.
    fn for_api(api: Api) -> Self {
        match api {
            Api::Ollama => Self::Lines(ollama::LineParser::default()),
            _ => Self::Sse(SseParser::default()),
        }
    }

    fn push(&mut self, chunk: &Bytes, out: &mut Vec<Event>) {
        match self {
            Self::Sse(p) => p.push_bytes(chunk, out),
            Self::Lines(p) => p.push(chunk, out),
        }
    }

    fn finish(&mut self, out: &mut Vec<Event>) {
        match self {
            Self::Sse(p) => p.finish(out),
            Self::Lines(p) => p.finish(out),
        }
    }

    /// The stream was cut: the bytes of a partial event to forward after everything held
    /// (never before, so nothing is glued to them). A partial SSE event is dropped: a client
    /// never dispatches an event without its blank line (the HTML standard's SSE parsing), and
    /// its data may be cut mid-JSON. A partial NDJSON line goes last, as received.
    fn cut(&mut self) -> Option<Bytes> {
        match self {
            Self::Sse(p) => {
                let dropped = p.discard();
                if dropped > 0 {
                    tracing::info!(dropped, "partial event of a cut stream dropped");
                }
                None
            }
            Self::Lines(p) => p.take_partial(),
        }
    }
}

/// The repaired byte stream of an upstream SSE (or, for Ollama, NDJSON) body.
///
/// The transformer runs inside the response body's poll, in the client connection's task: no
/// task or channel of its own between the upstream body and the client. On a single-threaded
/// runtime (`--runtime per-core`), output that is ready waits while the upstream connection's
/// task, on the same thread, hands over chunks it has already received ([`Turns`]), so the
/// events of one upstream read go to the client in one write instead of one write each; it is
/// never held for bytes the proxy has not received.
pub(crate) fn transform(
    api: Api,
    upstream: impl Stream<Item = crate::upstream::BodyChunk> + Send + Unpin + 'static,
    mender: Arc<Mender>,
    config: Arc<ProxyConfig>,
    model: String,
    turn_id: String,
    history: History,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    transform_reporting(api, upstream, mender, config, model, turn_id, history, None)
}

/// [`transform`], reporting the calls that could not be saved to `unsaved` when it ends.
#[allow(clippy::too_many_arguments)]
pub(crate) fn transform_reporting(
    api: Api,
    upstream: impl Stream<Item = crate::upstream::BodyChunk> + Send + Unpin + 'static,
    mender: Arc<Mender>,
    config: Arc<ProxyConfig>,
    model: String,
    turn_id: String,
    history: History,
    unsaved: Option<UnsavedSink>,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let transformer: Box<dyn Transform> = match api {
        Api::OpenAi => Box::new(openai::OpenAiStream::default()),
        Api::Anthropic => Box::new(anthropic::AnthropicStream::default()),
        Api::Responses => Box::new(responses::ResponsesStream::default()),
        Api::Ollama => Box::new(ollama::OllamaStream::default()),
    };
    let parser = Framing::for_api(api);
    let cx = Context {
        mender,
        config,
        model,
        turn_id,
        history: Some(history),
        session: None,
    };
    let observe = !crate::mend::repairing(cx.config());
    Machine {
        observe,
        upstream,
        parser,
        transformer,
        cx,
        out: VecDeque::new(),
        events: Vec::new(),
        done: false,
        tail: None,
        work: Work::default(),
        turns: Turns::for_runtime(),
        releasing: false,
        in_step: unsaved.is_some(),
        unsaved,
    }
}

impl<S: Stream<Item = crate::upstream::BodyChunk> + Unpin> Machine<S> {
    /// Splits and transforms one upstream item (a chunk, the body's end, or why it was cut),
    /// adding its output to `out` joined into one piece.
    fn take(&mut self, next: Option<crate::upstream::BodyChunk>) {
        let work = Instant::now();
        let mut received = None;
        match next {
            Some(Ok(chunk)) => {
                self.parser.push(&chunk, &mut self.events);
                received = Some(chunk);
            }
            Some(Err(e)) => {
                tracing::warn!(error = %crate::upstream::upstream_error(&e), "upstream stream cut");
                self.tail = self.parser.cut();
                self.done = true;
            }
            None => {
                self.parser.finish(&mut self.events);
                self.done = true;
            }
        }
        // What earlier chunks left held in `out` (a turn's hold) stays in front, as is.
        let before = self.out.len();
        if self.observe {
            // Observe mode: the client gets the bytes as received; the transformer runs
            // only to count and log what it would change.
            let mut shadow = VecDeque::new();
            for event in self.events.drain(..) {
                self.out.push_back(event.raw.clone());
                self.transformer.event(&mut self.cx, event, &mut shadow);
            }
            if self.done {
                self.transformer.finish(&mut self.cx, &mut shadow);
            }
        } else {
            for event in self.events.drain(..) {
                self.transformer.event(&mut self.cx, event, &mut self.out);
            }
            if self.done {
                self.transformer.finish(&mut self.cx, &mut self.out);
            }
        }
        if self.done
            && let Some(sink) = self.unsaved.take()
            && let Ok(mut sink) = sink.lock()
        {
            sink.extend(self.transformer.take_unsaved());
        }
        if let Some(tail) = self.tail.take() {
            self.out.push_back(tail);
        }
        coalesce_from(&mut self.out, before, received.as_ref());
        self.work.add(work);
    }
}

impl<S: Stream<Item = crate::upstream::BodyChunk> + Unpin> Stream for Machine<S> {
    type Item = Result<Bytes, std::io::Error>;

    /// What is ready goes out piece by piece (one per upstream chunk, a slice of it when
    /// forwarded as received) with no wait in between: hyper writes the frames a body gives
    /// without waiting in one write.
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        loop {
            if this.releasing || this.done {
                if let Some(bytes) = this.out.pop_front() {
                    return Poll::Ready(Some(Ok(bytes)));
                }
                this.releasing = false;
                if this.done {
                    return Poll::Ready(None);
                }
            }
            match this.upstream.poll_next_unpin(cx) {
                Poll::Ready(next) => {
                    this.take(next);
                    this.turns.delivered();
                    this.releasing = this.in_step && !this.out.is_empty();
                }
                Poll::Pending if this.out.is_empty() => {
                    this.turns.reset();
                    return Poll::Pending;
                }
                Poll::Pending => {
                    if this.turns.hold(cx) {
                        return Poll::Pending;
                    }
                    this.releasing = true;
                }
            }
        }
    }
}

/// How long output that is ready waits for what the upstream connection already received:
/// a turn of this thread's tasks at a time (the upstream connection's task runs in it and
/// hands over its next chunk if it has one), never for the upstream to send anything.
#[derive(Debug)]
struct Turns {
    /// Turns held at most before what is ready goes out (0: never held).
    max: u8,
    /// Turns held for the output now in `out`.
    held: u8,
    /// Turns in a row that handed over nothing.
    empty: u8,
}

/// Turns in a row without a chunk after which what is ready goes out: the upstream
/// connection's task takes two turns to hand over a chunk it already has (measured: one
/// turn after the hand-over, the chunk is not there yet).
const EMPTY_TURNS: u8 = 2;

/// Turns at most that ready output is held (about 8 upstream chunks joined into one write).
const MAX_TURNS: u8 = 16;

impl Turns {
    /// Held only on a single-threaded runtime (`--runtime per-core`): there the upstream
    /// connection's task runs on this thread, in the turn; on the shared runtime a yield wakes
    /// another worker.
    fn for_runtime() -> Self {
        let single = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
        Self {
            max: if single { MAX_TURNS } else { 0 },
            held: 0,
            empty: 0,
        }
    }

    fn reset(&mut self) {
        self.held = 0;
        self.empty = 0;
    }

    /// The upstream was polled ready: a chunk (or the end) came in this turn.
    fn delivered(&mut self) {
        self.empty = 0;
    }

    /// Whether to hold what is ready for one more turn; if so, this task is woken after it.
    fn hold(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if self.held >= self.max || self.empty >= EMPTY_TURNS {
            self.reset();
            return false;
        }
        self.held += 1;
        self.empty += 1;
        crate::self_wake::yield_turn(cx);
        true
    }
}

/// Joins the pieces of `out` from `from` on (what one upstream chunk produced) into one: the
/// events the upstream delivered together go to the client together, as one body frame rather
/// than one per event. Events forwarded as received that lie side by side in `received` (the
/// upstream chunk they were cut from) go out as that slice of it, without a copy. The pieces
/// before `from` (output held from earlier chunks) stay as they are.
fn coalesce_from(out: &mut VecDeque<Bytes>, from: usize, received: Option<&Bytes>) {
    if out.len() < from + 2 {
        return;
    }
    let mut rest = out.split_off(from);
    if let Some(slice) = received.and_then(|chunk| adjacent_in(chunk, &rest)) {
        out.push_back(slice);
        return;
    }
    let mut joined = bytes::BytesMut::with_capacity(rest.iter().map(Bytes::len).sum());
    for bytes in rest.drain(..) {
        joined.extend_from_slice(&bytes);
    }
    out.push_back(joined.freeze());
}

/// The slice of `chunk` that `pieces` make up when they are consecutive slices of it, in
/// order, with no gap (the events of the chunk forwarded as received); `None` otherwise.
fn adjacent_in(chunk: &Bytes, pieces: &VecDeque<Bytes>) -> Option<Bytes> {
    let base = chunk.as_ptr() as usize;
    let first = pieces.front()?.as_ptr() as usize;
    let start = first.checked_sub(base)?;
    let mut end = start;
    for piece in pieces {
        if piece.as_ptr() as usize != base + end {
            return None;
        }
        end += piece.len();
    }
    // Pointers compared, never read: the slice is taken from `chunk` itself, within bounds.
    (end <= chunk.len()).then(|| chunk.slice(start..end))
}

/// The stream [`transform`] returns: the upstream body, its framing, the transformer and what
/// is ready for the client.
struct Machine<S> {
    observe: bool,
    upstream: S,
    parser: Framing,
    transformer: Box<dyn Transform>,
    cx: Context,
    out: VecDeque<Bytes>,
    events: Vec<Event>,
    done: bool,
    /// What a cut stream left to forward after everything held.
    tail: Option<Bytes>,
    /// Where the calls that could not be saved go when the stream ends.
    unsaved: Option<UnsavedSink>,
    /// The proxy's own work on this stream, recorded once when it ends.
    work: Work,
    /// How long ready output waits for chunks the upstream connection already has.
    turns: Turns,
    /// What `out` holds goes out now, before the upstream is polled again.
    releasing: bool,
    /// Each upstream chunk's output goes out before the next chunk is polled, never held: the
    /// re-prompt (`unsaved` given) reads the upstream turn's state beside each piece.
    in_step: bool,
}

/// The proxy's own work on one streamed response (splitting, transforming and joining each
/// upstream chunk, not the waits between them), summed over its chunks and recorded once, when
/// the stream ends or the client goes away: the `toolmend_overhead_seconds{route="stream"}`
/// series. Recording each chunk's time (one histogram sample per upstream chunk, ~50 per
/// stream) was ~2% of the proxy's CPU on a 50-event stream (issue #29 §3).
#[derive(Debug, Default)]
struct Work {
    seconds: f64,
    chunks: u32,
}

impl Work {
    /// Adds the work on one upstream chunk, begun at `start`.
    fn add(&mut self, start: Instant) {
        self.seconds += start.elapsed().as_secs_f64();
        self.chunks += 1;
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        if self.chunks > 0 {
            crate::metrics::record_overhead("stream", self.seconds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(pieces: &[Bytes]) -> VecDeque<Bytes> {
        pieces.iter().cloned().collect()
    }

    #[test]
    fn events_forwarded_side_by_side_go_out_as_their_chunk() {
        let chunk = Bytes::from_static(b"data: a\n\ndata: b\n\ndata: c\n\n");
        let (a, b, c) = (chunk.slice(0..9), chunk.slice(9..18), chunk.slice(18..));
        let mut out = queue(&[a.clone(), b.clone(), c.clone()]);
        coalesce_from(&mut out, 0, Some(&chunk));
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].as_ptr(),
            chunk.as_ptr(),
            "the chunk itself, not a copy"
        );
        assert_eq!(out[0], chunk);
        // Part of the chunk (its last event held back): that slice of it.
        let mut out = queue(&[a.clone(), b.clone()]);
        coalesce_from(&mut out, 0, Some(&chunk));
        assert_eq!((out.len(), out[0].as_ptr()), (1, chunk.as_ptr()));
        assert_eq!(out[0], chunk.slice(0..18));
        // A gap, another order, or bytes of their own: joined as a copy.
        let written = Bytes::from_static(b"data: x\n\n");
        for pieces in [
            vec![a.clone(), c.clone()],
            vec![b.clone(), a.clone()],
            vec![a.clone(), written.clone()],
            vec![written.clone(), b.clone(), c.clone()],
        ] {
            let want: Vec<u8> = pieces.iter().flat_map(|p| p.to_vec()).collect();
            let mut out = queue(&pieces);
            coalesce_from(&mut out, 0, Some(&chunk));
            assert_eq!(out.len(), 1);
            assert_eq!(out[0], want);
        }
        let mut out = queue(&[a, b]);
        coalesce_from(&mut out, 0, None);
        assert_eq!(out[0], chunk.slice(0..18));
    }
}
