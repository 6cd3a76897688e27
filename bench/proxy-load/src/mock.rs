//! The in-process mock upstream: a fixed ~2 KB `chat.completion` with one tool call, or a
//! 50-event SSE stream of the same turn, each event written on its own.
//!
//! The request's `model` picks the arguments: `bench-valid` sends arguments that validate
//! against [`crate::TOOLS`] (the proxy must pass them through), `bench-repair` sends the same
//! call with four repairable faults (an enum in the wrong case, a number as a string, an array
//! as a JSON string, a `null` optional field), so the proxy's repair path is what is timed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// Arguments that validate against `get_weather` (ASCII, compact).
const VALID_ARGS: &str = r#"{"location":"San Francisco, CA","unit":"celsius","days":5,"include_hourly":true,"fields":["temperature","precipitation","wind_speed","humidity"],"notes":"Forecast for an outdoor event; metric units and an hourly breakdown, please."}"#;
/// The same call as a model gets it wrong: `unit` case, `days` quoted, `fields` stringified,
/// `notes` null.
const BROKEN_ARGS: &str = r#"{"location":"San Francisco, CA","unit":"Celsius","days":"5","include_hourly":true,"fields":"[\"temperature\",\"precipitation\",\"wind_speed\",\"humidity\"]","notes":null}"#;
/// How each event of the stream spends its 50: role, text, call header, fragments, finish.
const TEXT_EVENTS: usize = 28;
const FRAGMENT_EVENTS: usize = 19;
/// The needle a repaired response carries and a broken one lacks (inside a JSON string).
pub(crate) const REPAIRED_NEEDLE: &[u8] = br#"\"days\":5"#;

/// Both canned replies for one `arguments` text.
struct Replies {
    completion: Bytes,
    events: Arc<[Bytes]>,
}

/// A JSON string literal for ASCII text (quotes and backslashes escaped).
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl Replies {
    fn new(arguments: &str) -> Self {
        let text = "I will look up the forecast for San Francisco for the next five days, with \
                    hourly temperature, precipitation, wind and humidity, so you can plan. "
            .repeat(9);
        let completion = format!(
            r#"{{"id":"chatcmpl-bench","object":"chat.completion","created":1763700000,"model":"mock","choices":[{{"index":0,"message":{{"role":"assistant","content":{content},"tool_calls":[{{"id":"call_bench","type":"function","function":{{"name":"get_weather","arguments":{arguments}}}}}]}},"logprobs":null,"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":412,"completion_tokens":187,"total_tokens":599}}}}"#,
            content = quoted(&text),
            arguments = quoted(arguments),
        );
        Self {
            completion: Bytes::from(completion),
            events: stream_events(arguments).into(),
        }
    }
}

fn chunk(delta: &str, finish: &str) -> Bytes {
    Bytes::from(format!(
        "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1763700000,\"model\":\"mock\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}]}}\n\n"
    ))
}

/// 50 `data:` events and `[DONE]`: role, 28 text deltas, the call header, 19 argument
/// fragments cut at even byte offsets (ASCII, so every cut is a char boundary), finish.
fn stream_events(arguments: &str) -> Vec<Bytes> {
    let mut events = vec![chunk(r#"{"role":"assistant","content":""}"#, "null")];
    let words: Vec<&str> = "Let me check the forecast for San Francisco so your event can plan \
                            around temperature, rain and wind over the coming days ahead now"
        .split_whitespace()
        .collect();
    for i in 0..TEXT_EVENTS {
        let word = format!(
            "{}{}",
            if i == 0 { "" } else { " " },
            words[i % words.len()]
        );
        events.push(chunk(
            &format!(r#"{{"content":{}}}"#, quoted(&word)),
            "null",
        ));
    }
    events.push(chunk(
        r#"{"tool_calls":[{"index":0,"id":"call_bench","type":"function","function":{"name":"get_weather","arguments":""}}]}"#,
        "null",
    ));
    let len = arguments.len();
    for i in 0..FRAGMENT_EVENTS {
        let piece = &arguments[i * len / FRAGMENT_EVENTS..(i + 1) * len / FRAGMENT_EVENTS];
        events.push(chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                quoted(piece)
            ),
            "null",
        ));
    }
    events.push(chunk("{}", r#""tool_calls""#));
    debug_assert_eq!(events.len(), 50);
    events.push(Bytes::from_static(b"data: [DONE]\n\n"));
    events
}

/// A body that hands out one event per poll and yields between events, so hyper writes each
/// event on its own, as a token-by-token upstream does.
struct Events {
    events: Arc<[Bytes]>,
    next: usize,
    yielded: bool,
}

impl Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let Some(event) = this.events.get(this.next) else {
            return Poll::Ready(None);
        };
        if this.next > 0 && !this.yielded {
            this.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        this.yielded = false;
        this.next += 1;
        Poll::Ready(Some(Ok(Frame::data(event.clone()))))
    }

    fn is_end_stream(&self) -> bool {
        self.next >= self.events.len()
    }
}

struct Mock {
    valid: Replies,
    broken: Replies,
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

async fn handle(
    request: Request<Incoming>,
    mock: Arc<Mock>,
) -> Result<Response<Either<Full<Bytes>, Events>>, Infallible> {
    if request.uri().path() != "/v1/chat/completions" {
        let mut response = Response::new(Either::Left(Full::new(Bytes::from_static(b"{}"))));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return Ok(response);
    }
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let replies = if contains(&body, br#""model":"bench-repair""#) {
        &mock.broken
    } else {
        &mock.valid
    };
    let response = if contains(&body, br#""stream":true"#) {
        Response::builder()
            .header("content-type", "text/event-stream")
            .header("cache-control", "no-cache")
            .body(Either::Right(Events {
                events: replies.events.clone(),
                next: 0,
                yielded: false,
            }))
    } else {
        Response::builder()
            .header("content-type", "application/json")
            .body(Either::Left(Full::new(replies.completion.clone())))
    };
    Ok(response.unwrap_or_else(|_| Response::new(Either::Left(Full::new(Bytes::new())))))
}

/// Binds `listen` and serves on a runtime of `threads` workers in a thread of its own, for the
/// life of the process. Returns the bound address and the sizes of the two replies.
pub(crate) fn start(
    listen: SocketAddr,
    threads: usize,
) -> std::io::Result<(SocketAddr, usize, usize)> {
    let listener = std::net::TcpListener::bind(listen)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let mock = Arc::new(Mock {
        valid: Replies::new(VALID_ARGS),
        broken: Replies::new(BROKEN_ARGS),
    });
    let sizes = (
        mock.valid.completion.len(),
        mock.valid.events.iter().map(Bytes::len).sum(),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("mock")
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("mock-main".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                loop {
                    let Ok((socket, _)) = listener.accept().await else {
                        continue;
                    };
                    let _ = socket.set_nodelay(true);
                    let mock = mock.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |request| handle(request, mock.clone()));
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(socket), service)
                            .await;
                    });
                }
            });
        })?;
    Ok((addr, sizes.0, sizes.1))
}
