//! The in-process mock upstream: a fixed ~2 KB `chat.completion` with one tool call, or a
//! 50-event SSE stream of the same turn, each event written on its own; the same turn as an
//! OpenAI Responses `response` (50 named SSE events streamed) on `/v1/responses` and as an
//! Ollama `/api/chat` reply (50 NDJSON lines streamed, arguments as an object) and as an
//! Anthropic `message` on `/v1/messages` (50 named SSE events streamed, `input` an object).
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
/// The same for Ollama, whose arguments are an object, not a string.
pub(crate) const REPAIRED_NEEDLE_OBJECT: &[u8] = br#""days":5"#;

/// Both canned replies of one API for one `arguments` text.
struct Canned {
    completion: Bytes,
    events: Arc<[Bytes]>,
}

/// The canned replies of every API for one `arguments` text.
struct Replies {
    chat: Canned,
    responses: Canned,
    ollama: Canned,
    anthropic: Canned,
}

/// The assistant text of the turn (the same in every API).
fn turn_text() -> String {
    "I will look up the forecast for San Francisco for the next five days, with \
     hourly temperature, precipitation, wind and humidity, so you can plan. "
        .repeat(9)
}

/// The stream's words: one text delta each.
fn words() -> Vec<&'static str> {
    "Let me check the forecast for San Francisco so your event can plan \
     around temperature, rain and wind over the coming days ahead now"
        .split_whitespace()
        .collect()
}

fn word(i: usize) -> String {
    let words = words();
    format!(
        "{}{}",
        if i == 0 { "" } else { " " },
        words[i % words.len()]
    )
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
        Self {
            chat: chat(arguments),
            responses: responses(arguments),
            ollama: ollama(arguments),
            anthropic: anthropic(arguments),
        }
    }
}

fn chat(arguments: &str) -> Canned {
    let text = turn_text();
    let completion = format!(
        r#"{{"id":"chatcmpl-bench","object":"chat.completion","created":1763700000,"model":"mock","choices":[{{"index":0,"message":{{"role":"assistant","content":{content},"tool_calls":[{{"id":"call_bench","type":"function","function":{{"name":"get_weather","arguments":{arguments}}}}}]}},"logprobs":null,"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":412,"completion_tokens":187,"total_tokens":599}}}}"#,
        content = quoted(&text),
        arguments = quoted(arguments),
    );
    Canned {
        completion: Bytes::from(completion),
        events: stream_events(arguments).into(),
    }
}

/// The turn as a Responses `response` body and as 50 numbered SSE events: created, the
/// message (added, part added, 21 text deltas, text done, part done, done), the call (added,
/// 18 argument fragments, arguments done, done), completed.
fn responses(arguments: &str) -> Canned {
    const DELTAS: usize = 21;
    const FRAGMENTS: usize = 18;
    let text = turn_text();
    let message = |text: &str, status: &str| {
        format!(
            r#"{{"type":"message","id":"msg_bench","status":"{status}","role":"assistant","content":[{{"type":"output_text","text":{},"annotations":[]}}]}}"#,
            quoted(text)
        )
    };
    let call = |arguments: &str, status: &str| {
        format!(
            r#"{{"type":"function_call","id":"fc_bench","call_id":"call_bench","name":"get_weather","arguments":{},"status":"{status}"}}"#,
            quoted(arguments)
        )
    };
    let response = |output: &str, status: &str| {
        format!(
            r#"{{"id":"resp_bench","object":"response","created_at":1763700000,"status":"{status}","model":"mock","output":[{output}],"usage":{{"input_tokens":412,"output_tokens":187,"total_tokens":599}}}}"#
        )
    };
    let completion = response(
        &format!(
            "{},{}",
            message(&text, "completed"),
            call(arguments, "completed")
        ),
        "completed",
    );
    let mut bodies = vec![
        format!(r#"{{"type":"response.created","response":{}}}"#, response("", "in_progress")),
        format!(
            r#"{{"type":"response.output_item.added","output_index":0,"item":{{"type":"message","id":"msg_bench","status":"in_progress","role":"assistant","content":[]}}}}"#
        ),
        r#"{"type":"response.content_part.added","item_id":"msg_bench","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}"#.to_owned(),
    ];
    let mut said = String::new();
    for i in 0..DELTAS {
        let piece = word(i);
        said.push_str(&piece);
        bodies.push(format!(
            r#"{{"type":"response.output_text.delta","item_id":"msg_bench","output_index":0,"content_index":0,"delta":{},"logprobs":[]}}"#,
            quoted(&piece)
        ));
    }
    bodies.push(format!(
        r#"{{"type":"response.output_text.done","item_id":"msg_bench","output_index":0,"content_index":0,"text":{},"logprobs":[]}}"#,
        quoted(&said)
    ));
    bodies.push(format!(
        r#"{{"type":"response.content_part.done","item_id":"msg_bench","output_index":0,"content_index":0,"part":{{"type":"output_text","text":{},"annotations":[]}}}}"#,
        quoted(&said)
    ));
    bodies.push(format!(
        r#"{{"type":"response.output_item.done","output_index":0,"item":{}}}"#,
        message(&said, "completed")
    ));
    bodies.push(format!(
        r#"{{"type":"response.output_item.added","output_index":1,"item":{}}}"#,
        call("", "in_progress")
    ));
    let len = arguments.len();
    for i in 0..FRAGMENTS {
        let piece = &arguments[i * len / FRAGMENTS..(i + 1) * len / FRAGMENTS];
        bodies.push(format!(
            r#"{{"type":"response.function_call_arguments.delta","item_id":"fc_bench","output_index":1,"delta":{}}}"#,
            quoted(piece)
        ));
    }
    bodies.push(format!(
        r#"{{"type":"response.function_call_arguments.done","item_id":"fc_bench","output_index":1,"arguments":{}}}"#,
        quoted(arguments)
    ));
    bodies.push(format!(
        r#"{{"type":"response.output_item.done","output_index":1,"item":{}}}"#,
        call(arguments, "completed")
    ));
    bodies.push(format!(
        r#"{{"type":"response.completed","response":{}}}"#,
        response(
            &format!(
                "{},{}",
                message(&said, "completed"),
                call(arguments, "completed")
            ),
            "completed"
        )
    ));
    debug_assert_eq!(bodies.len(), 50);
    let events = bodies
        .iter()
        .enumerate()
        .map(|(seq, body)| {
            let kind = body
                .split("\"type\":\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or("message");
            // `sequence_number` last: the body ends in `}`.
            let numbered = format!("{},\"sequence_number\":{seq}}}", &body[..body.len() - 1]);
            Bytes::from(format!("event: {kind}\ndata: {numbered}\n\n"))
        })
        .collect::<Vec<_>>();
    Canned {
        completion: Bytes::from(completion),
        events: events.into(),
    }
}

/// The turn as an Ollama `/api/chat` reply and as 50 NDJSON lines: 48 text lines, the call
/// (whole, as Ollama sends it), the done line.
fn ollama(arguments: &str) -> Canned {
    const TEXT_LINES: usize = 48;
    let head = r#"{"model":"mock","created_at":"2026-11-21T10:00:00.1Z","message":{"role":"assistant","content":"#;
    let done = r#""done":true,"done_reason":"stop","total_duration":912000000,"eval_count":187}"#;
    let call = format!(r#"[{{"function":{{"name":"get_weather","arguments":{arguments}}}}}]"#);
    let completion = format!(
        r#"{head}{},"tool_calls":{call}}},{done}"#,
        quoted(&turn_text())
    );
    let mut events = Vec::with_capacity(50);
    for i in 0..TEXT_LINES {
        events.push(Bytes::from(format!(
            "{head}{}}},\"done\":false}}\n",
            quoted(&word(i))
        )));
    }
    events.push(Bytes::from(format!(
        "{head}\"\",\"tool_calls\":{call}}},\"done\":false}}\n"
    )));
    events.push(Bytes::from(format!("{head}\"\"}},{done}\n")));
    Canned {
        completion: Bytes::from(completion),
        events: events.into(),
    }
}

/// The turn as an Anthropic `message` body and as 50 named SSE events: message start, the
/// text block (start, a ping, 24 text deltas, stop), the `tool_use` block (start, 18
/// `input_json_delta` fragments, stop), message delta and stop.
fn anthropic(arguments: &str) -> Canned {
    const DELTAS: usize = 24;
    const FRAGMENTS: usize = 18;
    let completion = format!(
        r#"{{"id":"msg_bench","type":"message","role":"assistant","model":"mock","content":[{{"type":"text","text":{}}},{{"type":"tool_use","id":"toolu_bench","name":"get_weather","input":{arguments}}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{{"input_tokens":412,"output_tokens":187}}}}"#,
        quoted(&turn_text())
    );
    let mut bodies = vec![
        r#"{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"mock","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":412,"output_tokens":1}}}"#.to_owned(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned(),
        r#"{"type":"ping"}"#.to_owned(),
    ];
    for i in 0..DELTAS {
        bodies.push(format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
            quoted(&word(i))
        ));
    }
    bodies.push(r#"{"type":"content_block_stop","index":0}"#.to_owned());
    bodies.push(r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_bench","name":"get_weather","input":{}}}"#.to_owned());
    let len = arguments.len();
    for i in 0..FRAGMENTS {
        let piece = &arguments[i * len / FRAGMENTS..(i + 1) * len / FRAGMENTS];
        bodies.push(format!(
            r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
            quoted(piece)
        ));
    }
    bodies.push(r#"{"type":"content_block_stop","index":1}"#.to_owned());
    bodies.push(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":187}}"#.to_owned());
    bodies.push(r#"{"type":"message_stop"}"#.to_owned());
    debug_assert_eq!(bodies.len(), 50);
    let events = bodies
        .iter()
        .map(|body| {
            let kind = body
                .split("\"type\":\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or("message");
            Bytes::from(format!("event: {kind}\ndata: {body}\n\n"))
        })
        .collect::<Vec<_>>();
    Canned {
        completion: Bytes::from(completion),
        events: events.into(),
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
    for i in 0..TEXT_EVENTS {
        events.push(chunk(
            &format!(r#"{{"content":{}}}"#, quoted(&word(i))),
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
    let api = match request.uri().path() {
        "/v1/chat/completions" => 0,
        "/v1/responses" => 1,
        "/api/chat" => 2,
        "/v1/messages" => 3,
        _ => {
            let mut response = Response::new(Either::Left(Full::new(Bytes::from_static(b"{}"))));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return Ok(response);
        }
    };
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
    let replies = match api {
        0 => &replies.chat,
        1 => &replies.responses,
        2 => &replies.ollama,
        _ => &replies.anthropic,
    };
    let content_type = if api == 2 {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    let response = if contains(&body, br#""stream":true"#) {
        Response::builder()
            .header("content-type", content_type)
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
        mock.valid.chat.completion.len(),
        mock.valid.chat.events.iter().map(Bytes::len).sum(),
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
