//! A scripted mock upstream and a real proxy socket in front of it, both on 127.0.0.1:0.
//!
//! The mock picks its answer by the request's `model` field, so one mock serves every test of
//! a file; it records every request it got.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use toolmend_proxy::ProxyConfig;

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Script {
    /// A body with a status and content type.
    Body(u16, &'static str, String),
    /// SSE chunks sent one by one with a pause between them.
    Chunks(Vec<Vec<u8>>),
    /// SSE chunks, then the connection is cut without ending the body.
    Cut(Vec<Vec<u8>>),
    /// NDJSON chunks (Ollama's streaming) sent one by one.
    Lines(Vec<Vec<u8>>),
    /// NDJSON chunks, then the connection is cut.
    LinesCut(Vec<Vec<u8>>),
    /// Never answers.
    Hang,
    /// Raw chunks with these headers (e.g. a `content-encoding` the client never asked for);
    /// with `gate`, the chunks from that index on wait for [`Mock::open_gate`].
    Raw {
        headers: Vec<(&'static str, String)>,
        chunks: Vec<Vec<u8>>,
        gate: Option<usize>,
    },
}

impl Script {
    /// A `200 application/json` body.
    pub fn json(body: impl Into<String>) -> Self {
        Self::Body(200, "application/json", body.into())
    }
}

/// What the mock received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Debug)]
pub struct Mock {
    pub scripts: Mutex<HashMap<String, Script>>,
    pub received: Mutex<Vec<Received>>,
    /// Streamed bodies the mock is still sending (a guard counts down when one is dropped).
    pub live_streams: Arc<AtomicUsize>,
    /// Holds [`Script::Raw`] chunks past their gate until opened.
    pub gate: Arc<tokio::sync::Semaphore>,
}

impl Default for Mock {
    fn default() -> Self {
        Self {
            scripts: Mutex::default(),
            received: Mutex::default(),
            live_streams: Arc::default(),
            gate: Arc::new(tokio::sync::Semaphore::new(0)),
        }
    }
}

/// Counts a live mock stream until dropped.
#[derive(Debug)]
struct Live(Arc<AtomicUsize>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Mock {
    pub fn script(&self, model: &str, script: Script) {
        self.scripts
            .lock()
            .unwrap()
            .insert(model.to_owned(), script);
    }

    /// Lets every gated [`Script::Raw`] body go on.
    pub fn open_gate(&self) {
        self.gate.add_permits(1 << 20);
    }

    pub fn last(&self) -> Received {
        self.received
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a request")
    }
}

async fn answer(State(mock): State<Arc<Mock>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    mock.received.lock().unwrap().push(Received {
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: parts.headers.clone(),
        body: body.clone(),
    });
    let model = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("model").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_default();
    let script = mock.scripts.lock().unwrap().get(&model).cloned();
    match script {
        None => Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Body::from(format!("{{\"echo\":\"{}\"}}", parts.uri.path())))
            .unwrap(),
        Some(Script::Body(status, content_type, text)) => Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header("content-type", content_type)
            .header("x-upstream", "mock")
            .body(Body::from(text))
            .unwrap(),
        Some(Script::Chunks(chunks)) => sse(chunks, false, &mock.live_streams),
        Some(Script::Cut(chunks)) => sse(chunks, true, &mock.live_streams),
        Some(Script::Lines(chunks)) => ndjson(sse(chunks, false, &mock.live_streams)),
        Some(Script::LinesCut(chunks)) => ndjson(sse(chunks, true, &mock.live_streams)),
        Some(Script::Raw {
            headers,
            chunks,
            gate,
        }) => {
            let semaphore = Arc::clone(&mock.gate);
            let stream = futures_util::stream::unfold(
                (chunks.into_iter().enumerate(), semaphore),
                move |(mut it, semaphore)| async move {
                    let (index, chunk) = it.next()?;
                    if gate == Some(index) {
                        let _ = semaphore.acquire().await.unwrap();
                    }
                    Some((Ok::<_, std::io::Error>(Bytes::from(chunk)), (it, semaphore)))
                },
            );
            let mut response = Response::builder().status(200);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from_stream(stream)).unwrap()
        }
        Some(Script::Hang) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Response::new(Body::empty())
        }
    }
}

fn sse(chunks: Vec<Vec<u8>>, cut: bool, live: &Arc<AtomicUsize>) -> Response {
    live.fetch_add(1, Ordering::SeqCst);
    let start = (chunks.into_iter(), cut, Live(Arc::clone(live)));
    let stream = futures_util::stream::unfold(start, |(mut it, cut, guard)| async move {
        match it.next() {
            Some(chunk) => {
                tokio::time::sleep(Duration::from_millis(2)).await;
                Some((
                    Ok::<_, std::io::Error>(Bytes::from(chunk)),
                    (it, cut, guard),
                ))
            }
            None if cut => {
                // Let the bytes before the cut reach the wire first.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Err(std::io::Error::other("cut")), (it, false, guard)))
            }
            None => None,
        }
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// The same streamed body as NDJSON.
fn ndjson(mut response: Response) -> Response {
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/x-ndjson"),
    );
    response
}

/// Starts the mock upstream; returns it and its address.
pub async fn start_mock() -> (Arc<Mock>, SocketAddr) {
    let mock = Arc::new(Mock::default());
    let router = Router::new().fallback(answer).with_state(Arc::clone(&mock));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (mock, addr)
}

/// Starts a proxy with `config` (its upstream is set by the caller); returns its base URL.
/// With `--runtime per-core` in `config` (the default), its connections run on two
/// single-threaded runtimes shared by the test binary; `TOOLMEND_TEST_RUNTIME=shared` or
/// `per-core` sets the runtime for the whole run.
pub async fn start_proxy(mut config: ProxyConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    match std::env::var("TOOLMEND_TEST_RUNTIME").as_deref() {
        Ok("per-core") => config.runtime = toolmend_proxy::Runtime::PerCore,
        Ok("shared") => config.runtime = toolmend_proxy::Runtime::Shared,
        _ => {}
    }
    if config.runtime == toolmend_proxy::Runtime::PerCore {
        static CORES: std::sync::OnceLock<toolmend_proxy::CoreRuntimes> =
            std::sync::OnceLock::new();
        let workers = CORES
            .get_or_init(|| toolmend_proxy::CoreRuntimes::start(2).unwrap())
            .handles()
            .to_vec();
        tokio::spawn(async move {
            toolmend_proxy::serve_until_on(config, listener, std::future::pending(), &workers)
                .await
                .unwrap()
        });
    } else {
        tokio::spawn(async move { toolmend_proxy::serve(config, listener).await.unwrap() });
    }
    format!("http://{addr}")
}

/// A mock and a proxy in front of it with `edit` applied to the default configuration.
/// One mock and one default proxy on a runtime of their own, for a test binary's many cases.
pub struct World {
    pub runtime: tokio::runtime::Runtime,
    pub mock: Arc<Mock>,
    pub base: String,
}

/// The test binary's one [`World`], started on first use (sockets are real, the runtime is shared).
pub fn world() -> &'static World {
    static WORLD: std::sync::OnceLock<World> = std::sync::OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (mock, base) = runtime.block_on(start(|_| {}));
        World {
            runtime,
            mock,
            base,
        }
    })
}

pub async fn start(edit: impl FnOnce(&mut ProxyConfig)) -> (Arc<Mock>, String) {
    let (mock, addr) = start_mock().await;
    let mut config = ProxyConfig::new(format!("http://{addr}"));
    edit(&mut config);
    (mock, start_proxy(config).await)
}

/// POSTs `body` as JSON to the proxy at `base` + `path`, with these extra headers.
pub async fn post_json(
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(body);
    for &(name, value) in headers {
        request = request.header(name, value);
    }
    request.send().await.unwrap()
}

/// [`post_json`] without extra headers, read to the end as text.
pub async fn post_text(base: &str, path: &str, body: &serde_json::Value) -> String {
    post_json(base, path, &[], body).await.text().await.unwrap()
}

/// The proxy's `/metrics` exposition text.
pub async fn metrics_text(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The value of a response's repairs header (the header must be there).
pub fn repairs(response: &reqwest::Response) -> String {
    response.headers()[toolmend_proxy::REPAIRS_HEADER]
        .to_str()
        .unwrap()
        .to_owned()
}

/// The tools every test uses, in OpenAI form.
pub fn openai_tools() -> serde_json::Value {
    serde_json::json!([
        {"type": "function", "function": {"name": "read_file", "parameters": {
            "type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}, "max_lines": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "list_dir", "parameters": {
            "type": "object", "required": ["dir"],
            "properties": {"dir": {"type": "string"}}}}}
    ])
}

/// The same tools in Anthropic form.
pub fn anthropic_tools() -> serde_json::Value {
    serde_json::json!([
        {"name": "read_file", "input_schema": {
            "type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}, "max_lines": {"type": "integer"}}}},
        {"name": "list_dir", "input_schema": {
            "type": "object", "required": ["dir"],
            "properties": {"dir": {"type": "string"}}}}
    ])
}

/// The same tools in the Responses API's flat form.
pub fn responses_tools() -> serde_json::Value {
    serde_json::json!([
        {"type": "function", "name": "read_file", "strict": false, "parameters": {
            "type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}, "max_lines": {"type": "integer"}}}},
        {"type": "function", "name": "list_dir", "parameters": {
            "type": "object", "required": ["dir"],
            "properties": {"dir": {"type": "string"}}}},
        {"type": "web_search_preview"}
    ])
}

/// The four repaired routes' paths.
pub const REPAIRED_PATHS: [&str; 4] = [
    "/v1/chat/completions",
    "/v1/messages",
    "/v1/responses",
    "/api/chat",
];

/// A one-user-message request with the usual test tools in `path`'s API shape.
pub fn user_request(path: &str, stream: bool) -> serde_json::Value {
    let (tools, key) = match path {
        "/v1/messages" => (anthropic_tools(), "messages"),
        "/v1/responses" => (responses_tools(), "input"),
        _ => (openai_tools(), "messages"),
    };
    let history = if key == "input" {
        serde_json::json!("read a.txt")
    } else {
        serde_json::json!([{"role": "user", "content": "read a.txt"}])
    };
    serde_json::json!({"model": "m", "stream": stream, "max_tokens": 50, "tools": tools, key: history})
}

/// Named SSE events (`event:` from each payload's `type`), numbered from 0 when `number`.
pub fn named_sse(events: &[serde_json::Value], number: bool) -> String {
    let mut out = String::new();
    for (seq, event) in events.iter().enumerate() {
        let mut event = event.clone();
        if number {
            event["sequence_number"] = serde_json::json!(seq);
        }
        out.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    out
}

/// NDJSON lines for these objects.
pub fn ndjson_body(lines: &[serde_json::Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// SSE `data:` events for these JSON chunks, then `[DONE]`.
pub fn sse_body(chunks: &[serde_json::Value]) -> String {
    let mut out = String::new();
    for chunk in chunks {
        out.push_str("data: ");
        out.push_str(&chunk.to_string());
        out.push_str("\n\n");
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// A body cut into pieces at these byte offsets.
pub fn cut_at(body: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::new();
    let mut at = 0;
    for p in points {
        out.push(body[at..p].to_vec());
        at = p;
    }
    out.push(body[at..].to_vec());
    out.retain(|c| !c.is_empty());
    out
}

/// The client-visible result of an OpenAI SSE body: joined content, reasoning, calls
/// (index → (id, name, arguments)), finish reasons, and whether `[DONE]` came.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Joined {
    pub content: String,
    pub reasoning: String,
    pub calls: std::collections::BTreeMap<u64, (String, String, String)>,
    pub finish: Vec<String>,
    pub done: bool,
    pub other: Vec<String>,
}

pub fn join_openai(body: &str) -> Joined {
    let mut joined = Joined::default();
    for block in body.split("\n\n") {
        let data: Vec<&str> = block
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect();
        if data.is_empty() {
            if !block.trim().is_empty() {
                joined.other.push(block.trim().to_owned());
            }
            continue;
        }
        let data = data.join("\n");
        if data == "[DONE]" {
            joined.done = true;
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&data).unwrap();
        let Some(choices) = value["choices"].as_array() else {
            joined.other.push(data);
            continue;
        };
        for choice in choices {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                joined.content.push_str(text);
            }
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta[key].as_str() {
                    joined.reasoning.push_str(text);
                }
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap();
                let entry = joined.calls.entry(index).or_default();
                if let Some(id) = call["id"].as_str() {
                    assert!(entry.0.is_empty(), "id sent twice for call {index}");
                    entry.0 = id.to_owned();
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    entry.1.push_str(name);
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    entry.2.push_str(args);
                }
            }
            if let Some(finish) = choice["finish_reason"].as_str() {
                joined.finish.push(finish.to_owned());
            }
        }
        if choices.is_empty() {
            joined.other.push(data);
        }
    }
    joined
}

/// Sends `request` (raw HTTP/1.1 bytes, e.g. a target no HTTP client would send) to the proxy
/// at `base` and reads the answer until the proxy closes the connection (10 s at most).
pub async fn raw_http(base: &str, request: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out)).await;
    if read.is_err() {
        out.extend_from_slice(b"\n<still open after 10 s>");
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An upstream on a raw socket: for every request it reads the head and a `content-length`
/// body, writes `answer` as it is (e.g. a head promising more bytes than follow), and closes.
pub async fn start_raw_upstream(answer: &'static [u8]) -> SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .filter_map(|l| l.split_once(':'))
                            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let _ = socket.write_all(answer).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    addr
}
