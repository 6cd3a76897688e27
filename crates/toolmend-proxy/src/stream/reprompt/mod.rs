//! `--reprompt N` for streamed responses: the client's stream is held only from the first
//! native call on, and a turn whose call cannot be saved is asked again with the same stream
//! continuing.
//!
//! Text before the call goes out as it streams (it is not taken back). From the event where a
//! native call starts, what the proxy would send is held. At the end of the upstream stream,
//! when every call was valid or repaired (or no re-prompt is left, or the turn is over the
//! buffering limit, or the follow-up fails), the held events go out as they would have without
//! the flag. Otherwise they are dropped and a follow-up request (streamed, like the first) is
//! sent upstream, and its events continue the client's stream ([`splice::Splice`]): the
//! client sees one message whose text is the first answer's text followed by the retry's, and
//! only the last answer's calls, stop reason and usage. How many re-prompts were spent goes
//! out as an SSE comment (`: x-toolmend-reprompts: K`) just before the last answer's held
//! events (the headers left long before), and in `toolmend_reprompts_total`.

mod splice;
mod turn;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;
use toolmend::Mender;
use tracing::Instrument;

use crate::config::ProxyConfig;
use crate::error::Api;
use crate::mend::Unsaved;
use crate::stream::Framing;
use crate::upstream::Upstream;
use splice::Splice;
use turn::{Piece, UpstreamTurn};

/// One item of the client's body.
type Chunk = Result<Bytes, std::io::Error>;

/// Chunks queued for the client before the proxy waits for it (each is about one event, so
/// this bounds what a slow client makes the proxy keep; the upstream waits in turn).
const CLIENT_QUEUE: usize = 16;

/// What a re-prompted stream needs from its first request, and from the router: its
/// configuration and the upstream client the follow-ups go out through.
pub(crate) struct Prompted {
    pub(crate) api: Api,
    pub(crate) config: Arc<ProxyConfig>,
    pub(crate) upstream: Arc<Upstream>,
    pub(crate) mender: Arc<Mender>,
    pub(crate) model: String,
    /// The request as sent upstream (history mended).
    pub(crate) request: Bytes,
    pub(crate) parts: Parts,
}

/// The client's body for a streamed upstream answer under `--reprompt N`.
pub(crate) fn respond(
    prompted: Prompted,
    first: crate::upstream::Response,
) -> impl Stream<Item = Chunk> + Send + 'static {
    let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
    let run = drive(prompted, first, tx).instrument(tracing::Span::current());
    tokio::spawn(run);
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    })
}

/// One upstream answer as it goes to the client: its events before the first call sent,
/// the rest held.
struct Answer {
    held: Vec<Bytes>,
    held_bytes: usize,
    /// Held past the buffering limit: everything goes out as it comes.
    gave_up: bool,
    /// The upstream stream was cut (its error ends the client's body after what is held).
    cut: Option<std::io::Error>,
    /// What the client had when holding began (the held events are recorded as sent; a
    /// re-prompt drops them and goes back to this).
    before_hold: Option<Splice>,
}

/// Runs the answers of one client stream; ends when the client goes away.
async fn drive(prompted: Prompted, first: crate::upstream::Response, tx: mpsc::Sender<Chunk>) {
    let Prompted {
        api,
        config,
        upstream: client,
        mender,
        model,
        mut request,
        parts,
    } = prompted;
    let route = api.route_label();
    let limit = config.limits.max_response_bytes;
    let mut splice = Splice::new(api);
    let mut upstream = first;
    let mut spent = 0u8;
    loop {
        let turn = Arc::new(Mutex::new(UpstreamTurn::new(api, limit)));
        let unsaved = Arc::new(Mutex::new(Vec::<Unsaved>::new()));
        let body = events_of(upstream, &turn);
        let history = crate::history::history_of(api, request.clone());
        let repaired = crate::stream::transform_reporting(
            api,
            body,
            Arc::clone(&mender),
            Arc::clone(&config),
            model.clone(),
            crate::mend::request_tag(&request),
            Box::new(history),
            Some(Arc::clone(&unsaved)),
        );
        let Some(answer) = stream_answer(api, repaired, &turn, &mut splice, limit, &tx).await
        else {
            return;
        };
        let unsaved = unsaved.lock().map(|u| u.clone()).unwrap_or_default();
        if spent > 0 {
            let cut = answer.cut.is_some() || turn.lock().is_ok_and(|t| t.cut);
            let outcome = match (cut, unsaved.is_empty()) {
                (true, _) => "upstream_error",
                (false, true) => "fixed",
                (false, false) => "unsaved",
            };
            crate::metrics::count_reprompt(route, outcome);
        }
        let again = !unsaved.is_empty()
            && spent < config.reprompt
            && !answer.gave_up
            && answer.cut.is_none()
            && turn.lock().is_ok_and(|t| !t.cut);
        let next = match again.then(|| follow_up(api, &request, &turn, &unsaved)) {
            Some(Some(next)) => Some(next),
            _ => None,
        };
        if let Some(next) = next {
            spent += 1;
            let sent = tokio::select! {
                sent = send(&client, &parts, next.clone()) => sent,
                () = tx.closed() => return,
            };
            if let Some(response) = sent {
                if let Some(before) = answer.before_hold {
                    splice = before;
                }
                tracing::info!(spent, "a streamed call could not be saved: asked again");
                for close in splice.next_answer() {
                    if tx.send(Ok(close)).await.is_err() {
                        return;
                    }
                }
                (upstream, request) = (response, next);
                continue;
            }
            crate::metrics::count_reprompt(route, "upstream_error");
        }
        release(api, answer, spent, &tx).await;
        return;
    }
}

/// The upstream body cut into whole events, each read into `turn` as it passes.
fn events_of(
    upstream: crate::upstream::Response,
    turn: &Arc<Mutex<UpstreamTurn>>,
) -> impl Stream<Item = crate::upstream::BodyChunk> + Send + Unpin + 'static {
    let split = Arc::clone(turn);
    let read = Arc::clone(turn);
    let last = Arc::clone(turn);
    let pieces = upstream.bytes_stream().map(move |chunk| {
        let items: Vec<Result<Piece, crate::upstream::UpstreamError>> = match (chunk, split.lock())
        {
            (Ok(chunk), Ok(mut turn)) => turn.split(chunk).into_iter().map(Ok).collect(),
            (Ok(chunk), Err(_)) => vec![Ok(Piece::Bytes(chunk))],
            (Err(e), Ok(mut turn)) => {
                // A cut: the partial event goes first, as received, then the error.
                turn.cut = true;
                let rest = turn.rest().map(|rest| Ok(Piece::Bytes(rest)));
                rest.into_iter().chain([Err(e)]).collect()
            }
            (Err(e), Err(_)) => vec![Err(e)],
        };
        futures_util::stream::iter(items)
    });
    let bytes = pieces.flatten().map(move |piece| {
        Ok(match piece? {
            Piece::Event(event) => {
                if let Ok(mut turn) = read.lock() {
                    turn.read(&event);
                }
                event.raw
            }
            Piece::Bytes(bytes) => bytes,
        })
    });
    let rest =
        futures_util::stream::once(
            async move { last.lock().ok().and_then(|mut turn| turn.rest()) },
        )
        .filter_map(|rest| std::future::ready(rest.map(Ok)));
    Box::pin(bytes.chain(rest))
}

/// Sends one answer's events: those before its first call as they come, the rest held.
/// `None` when the client went away.
async fn stream_answer(
    api: Api,
    repaired: impl Stream<Item = Chunk>,
    turn: &Mutex<UpstreamTurn>,
    splice: &mut Splice,
    limit: usize,
    tx: &mpsc::Sender<Chunk>,
) -> Option<Answer> {
    let mut repaired = std::pin::pin!(repaired);
    let mut framing = Framing::for_api(api);
    let mut events = Vec::new();
    let mut answer = Answer {
        held: Vec::new(),
        held_bytes: 0,
        gave_up: false,
        cut: None,
        before_hold: None,
    };
    let mut ready = VecDeque::new();
    while let Some(chunk) = repaired.next().await {
        let bytes = match chunk {
            Ok(bytes) => bytes,
            Err(e) => {
                answer.cut = Some(e);
                break;
            }
        };
        framing.push(&bytes, &mut events);
        let holding = turn.lock().is_ok_and(|t| t.call_started && !t.overflow);
        for event in events.drain(..) {
            if holding && !answer.gave_up && answer.before_hold.is_none() {
                answer.before_hold = Some(splice.clone());
            }
            let Some(bytes) = splice.send(event) else {
                continue;
            };
            if holding && !answer.gave_up {
                answer.held_bytes += bytes.len();
                answer.held.push(bytes);
                if answer.held_bytes > limit {
                    // Too much to hold: it goes out, and this answer is not re-prompted.
                    answer.gave_up = true;
                    answer.before_hold = None;
                    ready.extend(answer.held.drain(..));
                }
            } else {
                ready.push_back(bytes);
            }
        }
        while let Some(bytes) = ready.pop_front() {
            tx.send(Ok(bytes)).await.ok()?;
        }
    }
    // What the transformer wrote last without its blank line (a cut NDJSON line) goes last.
    framing.finish(&mut events);
    for event in events.drain(..) {
        answer.held.push(event.raw);
    }
    Some(answer)
}

/// The last answer's held events, after the count of re-prompts spent; then the cut, if any.
async fn release(api: Api, answer: Answer, spent: u8, tx: &mpsc::Sender<Chunk>) {
    if spent > 0 && api != Api::Ollama && !answer.held.is_empty() {
        let comment = format!(": {}: {spent}\n\n", crate::reprompt::REPROMPTS_HEADER);
        if tx.send(Ok(Bytes::from(comment))).await.is_err() {
            return;
        }
    }
    for bytes in answer.held {
        if tx.send(Ok(bytes)).await.is_err() {
            return;
        }
    }
    if let Some(cut) = answer.cut {
        let _ = tx.send(Err(cut)).await;
    }
}

/// The follow-up request of a turn with unsaved calls; `None` when it cannot be built.
fn follow_up(
    api: Api,
    request: &Bytes,
    turn: &Mutex<UpstreamTurn>,
    unsaved: &[Unsaved],
) -> Option<Bytes> {
    let response = turn.lock().ok()?.response()?;
    let request = serde_json::from_slice::<serde_json::Value>(request).ok()?;
    let next = crate::reprompt::follow_up(api, &request, &response, unsaved)?;
    serde_json::to_vec(&next).ok().map(Bytes::from)
}

/// Sends a follow-up upstream; `None` when it fails, is not a success or is not streamed.
async fn send(client: &Upstream, parts: &Parts, body: Bytes) -> Option<crate::upstream::Response> {
    let response = client.send_follow_up(parts, body).await?;
    let streamed = crate::upstream::is_streamed(response.headers());
    let plain = crate::upstream::undecoded_encoding(response.headers()).is_none();
    (streamed && plain).then_some(response)
}
