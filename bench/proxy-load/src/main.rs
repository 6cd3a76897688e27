//! proxy-load: what `toolmend serve` adds to a round trip, on loopback, for each API it
//! repairs: OpenAI Chat Completions, OpenAI Responses, Ollama's `/api/chat` and Anthropic
//! Messages.
//!
//! One run starts an in-process mock upstream (`mock.rs`), starts `toolmend serve` in front of
//! it as a child (`--listen 127.0.0.1:0`, address read from its stderr line), and measures the
//! mock called directly against the mock called through the proxy, interleaved:
//!
//! - latency p50/p99 at one connection each, alternating direct/proxy request by request, for
//!   the ~2 KB non-streaming response and the 50-event stream (time to the last byte), with
//!   valid arguments (passed through) and broken ones (repaired);
//! - throughput at `--concurrency` connections (64), rounds alternating direct/proxy;
//! - the proxy's peak RSS (`VmHWM` of /proc/PID/status) after all of it.
//!
//! Every phase is bounded by a request count and a time limit; every address is 127.0.0.1.
//! `--serve-mock S` only serves the mock for S seconds (at most an hour), for other load
//! clients (`stream-cpu.sh`).
//! Usage: `proxy-load [--toolmend PATH] [--requests N] [--seconds S] ...` (`--help`).

mod mock;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// The API of a request: its path, its request body and what a complete reply looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Ollama,
    Anthropic,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Self::Chat => "/v1/chat/completions",
            Self::Responses => "/v1/responses",
            Self::Ollama => "/api/chat",
            Self::Anthropic => "/v1/messages",
        }
    }

    /// Whether a reply body arrived whole: the stream's last event, or the call in the body.
    fn complete(self, bytes: &[u8], stream: bool) -> bool {
        let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
        match (self, stream) {
            (Self::Chat, true) => bytes.ends_with(b"data: [DONE]\n\n"),
            (Self::Responses, true) => {
                has(b"event: response.completed\n") && bytes.ends_with(b"\n\n")
            }
            (Self::Ollama, true) => has(b"\"done\":true") && bytes.ends_with(b"\n"),
            (Self::Anthropic, true) => has(b"event: message_stop\n") && bytes.ends_with(b"\n\n"),
            (Self::Anthropic, false) => has(b"\"tool_use\""),
            (Self::Chat | Self::Ollama, false) => has(b"\"tool_calls\""),
            (Self::Responses, false) => has(b"\"function_call\""),
        }
    }

    fn repaired_needle(self, stream: bool) -> &'static [u8] {
        match (self, stream) {
            (Self::Ollama, _) | (Self::Anthropic, false) => mock::REPAIRED_NEEDLE_OBJECT,
            _ => mock::REPAIRED_NEEDLE,
        }
    }
}

/// The request's one tool (the mock's call is `get_weather`).
const TOOLS: &str = r#"[{"type":"function","function":{"name":"get_weather","description":"Get the weather forecast for a location","parameters":{"type":"object","properties":{"location":{"type":"string","description":"City and state"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":14},"include_hourly":{"type":"boolean"},"fields":{"type":"array","items":{"type":"string"}},"notes":{"type":"string"}},"required":["location"]}}}]"#;
const USAGE: &str = "\
proxy-load: loopback load client, `toolmend serve` against the mock upstream called directly

Options (env in brackets):
  --toolmend PATH        the toolmend binary [TOOLMEND_BIN] (default target/release/toolmend)
  --serve-arg ARG        one more argument for `toolmend serve` (repeatable)
  --proxy-url URL        measure an already running proxy instead (needs --mock-listen;
                         --proxy-pid PID for its RSS)
  --mock-listen ADDR     the mock's address (default 127.0.0.1:0)
  --requests N           timed requests per target per latency cell (default 2000)
  --warmup N             untimed requests per target before each latency cell (default 200)
  --cell-seconds S       time limit of one latency cell (default 30)
  --seconds S            duration of one throughput round per target (default 5)
  --rounds N             throughput rounds (default 2)
  --concurrency N        connections for throughput (default 64)
  --client-threads N     the load client's runtime workers (default 1)
  --mock-threads N       the mock's runtime workers (default 1)
  --serve-mock S         only serve the mock on --mock-listen for S seconds (at most 3600)
";

struct Options {
    toolmend: PathBuf,
    serve_args: Vec<String>,
    proxy_url: Option<String>,
    proxy_pid: Option<u32>,
    mock_listen: SocketAddr,
    requests: usize,
    warmup: usize,
    cell_seconds: f64,
    seconds: f64,
    rounds: usize,
    concurrency: usize,
    client_threads: usize,
    mock_threads: usize,
    serve_mock: Option<f64>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        toolmend: std::env::var_os("TOOLMEND_BIN")
            .map_or_else(|| PathBuf::from("target/release/toolmend"), PathBuf::from),
        serve_args: Vec::new(),
        proxy_url: None,
        proxy_pid: None,
        mock_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        requests: 2000,
        warmup: 200,
        cell_seconds: 30.0,
        seconds: 5.0,
        rounds: 2,
        concurrency: 64,
        client_threads: 1,
        mock_threads: 1,
        serve_mock: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            print!("{USAGE}");
            std::process::exit(0);
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        let count = |v: &str| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag}: not a count: {v}"))
        };
        match flag.as_str() {
            "--toolmend" => options.toolmend = PathBuf::from(value),
            "--serve-arg" => options.serve_args.push(value),
            "--proxy-url" => options.proxy_url = Some(value),
            "--proxy-pid" => options.proxy_pid = Some(count(&value)? as u32),
            "--mock-listen" => {
                options.mock_listen = value
                    .parse()
                    .map_err(|_| format!("--mock-listen: {value}"))?
            }
            "--requests" => options.requests = count(&value)?.max(1),
            "--warmup" => options.warmup = count(&value)?,
            "--cell-seconds" => options.cell_seconds = number(&value)?,
            "--seconds" => options.seconds = number(&value)?,
            "--rounds" => options.rounds = count(&value)?.max(1),
            "--concurrency" => options.concurrency = count(&value)?.clamp(1, 1024),
            "--client-threads" => options.client_threads = count(&value)?.max(1),
            "--mock-threads" => options.mock_threads = count(&value)?.max(1),
            "--serve-mock" => options.serve_mock = Some(number(&value)?.clamp(0.0, 3600.0)),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    if !options.mock_listen.ip().is_loopback() {
        return Err("--mock-listen must be a loopback address".into());
    }
    Ok(options)
}

/// The `toolmend serve` child; SIGTERM on drop if still running.
struct Proxy {
    child: Child,
    url: String,
}

impl Proxy {
    fn start(options: &Options, upstream: SocketAddr) -> Result<Self, String> {
        let mut child = Command::new(&options.toolmend)
            .args([
                "serve",
                "--upstream",
                &format!("http://{upstream}"),
                "--listen",
                "127.0.0.1:0",
            ])
            .args(&options.serve_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", options.toolmend.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the listening line, then keeps draining so the child never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("toolmend serve: listening on ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(url.trim().to_owned());
                    }
                } else if tx.is_some() {
                    eprintln!("toolmend: {line}");
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(url) if url.starts_with("http://127.0.0.1:") => Ok(Self { child, url }),
            Ok(url) => {
                let _ = child.kill();
                Err(format!("proxy listens on {url}, not on loopback"))
            }
            Err(_) => {
                let _ = child.kill();
                Err("toolmend serve printed no listening line within 20 s".into())
            }
        }
    }

    /// SIGTERM (through `kill`, no libc needed), then wait up to 10 s; the exit code.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.to_string();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        "did not exit within 10 s of SIGTERM (killed)".into()
    }
}

/// `VmHWM` and `VmRSS` of a process, in kB.
fn memory_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|line| {
            line.strip_prefix(name)?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

/// One HTTP/1.1 keep-alive connection.
struct Conn {
    send: SendRequest<Full<Bytes>>,
    host: String,
}

/// What one response was: its time to the last byte and whether it looked right.
struct Outcome {
    elapsed: Duration,
    ok: bool,
    repaired: bool,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Self, String> {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake {addr}: {e}"))?;
        tokio::spawn(connection);
        Ok(Self {
            send,
            host: addr.to_string(),
        })
    }

    async fn post(&mut self, api: Api, body: &Bytes, stream: bool) -> Result<Outcome, String> {
        self.send.ready().await.map_err(|e| e.to_string())?;
        let request = Request::post(api.path())
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-bench-0000")
            .body(Full::new(body.clone()))
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        let response = self
            .send
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status_ok = response.status().is_success();
        let header = response.headers().contains_key("x-toolmend-repairs");
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        let elapsed = started.elapsed();
        let complete = api.complete(&bytes, stream);
        let needle = api.repaired_needle(stream);
        let repaired = header || bytes.windows(needle.len()).any(|w| w == needle);
        Ok(Outcome {
            elapsed,
            ok: status_ok && complete,
            repaired,
        })
    }
}

fn request_body(api: Api, model: &str, stream: bool) -> Bytes {
    let system = "You are a helpful assistant that uses tools.";
    let user =
        "What's the weather in San Francisco for the next 5 days? I am planning an outdoor event.";
    Bytes::from(match api {
        Api::Chat | Api::Ollama => format!(
            r#"{{"model":"{model}","messages":[{{"role":"system","content":"{system}"}},{{"role":"user","content":"{user}"}}],"tools":{TOOLS},"tool_choice":"auto","stream":{stream}}}"#
        ),
        // Anthropic's tools: name, description and `input_schema`.
        Api::Anthropic => format!(
            r#"{{"model":"{model}","max_tokens":1024,"system":"{system}","messages":[{{"role":"user","content":"{user}"}}],"tools":{},"stream":{stream}}}"#,
            TOOLS
                .replacen(r#"{"type":"function","function":{"name""#, r#"{"name""#, 1)
                .replacen(r#""parameters""#, r#""input_schema""#, 1)
                .replacen("}}]", "}]", 1)
        ),
        // The Responses API's flat tools: `function`'s fields one level up.
        Api::Responses => format!(
            r#"{{"model":"{model}","instructions":"{system}","input":[{{"role":"user","content":"{user}"}}],"tools":{},"tool_choice":"auto","stream":{stream}}}"#,
            TOOLS
                .replacen(r#""function":{"name""#, r#""name""#, 1)
                .replacen("}}]", "}]", 1)
        ),
    })
}

/// Nearest-rank percentile of sorted samples, in milliseconds.
fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

struct LatencyCell {
    name: &'static str,
    direct: Vec<Duration>,
    proxied: Vec<Duration>,
    errors: usize,
    repaired_direct: usize,
    repaired_proxied: usize,
}

/// Alternates direct and proxied requests one by one (the order flips every pair), so both see
/// the same machine noise; bounded by `requests` pairs and `seconds`.
async fn latency_cell(
    name: &'static str,
    api: Api,
    direct: SocketAddr,
    proxied: SocketAddr,
    body: &Bytes,
    stream: bool,
    options: &Options,
) -> Result<LatencyCell, String> {
    let (mut d, mut p) = (Conn::open(direct).await?, Conn::open(proxied).await?);
    for _ in 0..options.warmup {
        d.post(api, body, stream).await?;
        p.post(api, body, stream).await?;
    }
    let mut cell = LatencyCell {
        name,
        direct: Vec::with_capacity(options.requests),
        proxied: Vec::with_capacity(options.requests),
        errors: 0,
        repaired_direct: 0,
        repaired_proxied: 0,
    };
    let deadline = Instant::now() + Duration::from_secs_f64(options.cell_seconds);
    for i in 0..options.requests {
        if Instant::now() >= deadline {
            break;
        }
        let (a, b) = if i % 2 == 0 {
            (&mut d, &mut p)
        } else {
            (&mut p, &mut d)
        };
        let first = a.post(api, body, stream).await?;
        let second = b.post(api, body, stream).await?;
        let (od, op) = if i % 2 == 0 {
            (first, second)
        } else {
            (second, first)
        };
        cell.errors += usize::from(!od.ok) + usize::from(!op.ok);
        cell.repaired_direct += usize::from(od.repaired);
        cell.repaired_proxied += usize::from(op.repaired);
        cell.direct.push(od.elapsed);
        cell.proxied.push(op.elapsed);
    }
    cell.direct.sort_unstable();
    cell.proxied.sort_unstable();
    Ok(cell)
}

/// Requests per second at `concurrency` connections for `seconds` (at most 10 M requests).
async fn throughput(
    api: Api,
    addr: SocketAddr,
    body: &Bytes,
    stream: bool,
    options: &Options,
) -> Result<(f64, u64), String> {
    const MAX_REQUESTS: u64 = 10_000_000;
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let mut conns = Vec::with_capacity(options.concurrency);
    for _ in 0..options.concurrency {
        conns.push(Conn::open(addr).await?);
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(options.seconds);
    let mut tasks = Vec::with_capacity(conns.len());
    for mut conn in conns {
        let (done, errors, body) = (done.clone(), errors.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < deadline && done.load(Ordering::Relaxed) < MAX_REQUESTS {
                match conn.post(api, &body, stream).await {
                    Ok(outcome) if outcome.ok => done.fetch_add(1, Ordering::Relaxed),
                    Ok(_) => errors.fetch_add(1, Ordering::Relaxed),
                    Err(_) => return errors.fetch_add(1, Ordering::Relaxed),
                };
            }
            0
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    Ok((
        done.load(Ordering::Relaxed) as f64 / elapsed,
        errors.load(Ordering::Relaxed),
    ))
}

fn url_addr(url: &str) -> Result<SocketAddr, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// URL: {url}"))?;
    let addr: SocketAddr = rest
        .trim_end_matches('/')
        .parse()
        .map_err(|_| format!("not host:port: {url}"))?;
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(format!("{url} is not loopback"))
    }
}

fn main() {
    let code = match parse_options().and_then(run) {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("proxy-load: {message}");
            1
        }
    };
    std::process::exit(code);
}

fn run(options: Options) -> Result<(), String> {
    let (upstream, completion_bytes, stream_bytes) =
        mock::start(options.mock_listen, options.mock_threads).map_err(|e| format!("mock: {e}"))?;
    if let Some(seconds) = options.serve_mock {
        println!("proxy-load: mock listening on http://{upstream}");
        std::thread::sleep(Duration::from_secs_f64(seconds));
        return Ok(());
    }
    let (proxy, proxy_url, proxy_pid) = match &options.proxy_url {
        Some(url) => (None, url.clone(), options.proxy_pid),
        None => {
            let proxy = Proxy::start(&options, upstream)?;
            let (url, pid) = (proxy.url.clone(), proxy.child.id());
            (Some(proxy), url, Some(pid))
        }
    };
    let proxied = url_addr(&proxy_url)?;
    let idle = proxy_pid.and_then(memory_kb);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.client_threads)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let result = runtime.block_on(measure(&options, upstream, proxied));
    let peak = proxy_pid.and_then(memory_kb);
    let exit = proxy.map(Proxy::stop);
    let (cells, rates) = result?;

    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    println!("# proxy-load: toolmend serve vs the mock upstream called directly (127.0.0.1)");
    println!();
    println!(
        "proxy {proxy_url} ({}{}), {cpus} CPUs, mock {completion_bytes} B completion / 50-event stream {stream_bytes} B, \
         client {} thread(s), mock {} thread(s), {:.1} s in all",
        options.proxy_url.as_deref().map_or_else(
            || options.toolmend.display().to_string(),
            |_| "external".into()
        ),
        options
            .serve_args
            .iter()
            .map(|a| format!(" {a}"))
            .collect::<String>(),
        options.client_threads,
        options.mock_threads,
        started.elapsed().as_secs_f64(),
    );
    println!();
    println!(
        "Latency, one connection each, direct and proxied requests alternating (ms, time to last byte):"
    );
    println!();
    println!(
        "| cell | n | direct p50 | direct p99 | proxy p50 | proxy p99 | +p50 | +p99 | errors | repaired (proxy) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for cell in &cells {
        let (dp50, dp99) = (
            percentile_ms(&cell.direct, 0.50),
            percentile_ms(&cell.direct, 0.99),
        );
        let (pp50, pp99) = (
            percentile_ms(&cell.proxied, 0.50),
            percentile_ms(&cell.proxied, 0.99),
        );
        println!(
            "| {} | {} | {dp50:.3} | {dp99:.3} | {pp50:.3} | {pp99:.3} | {:+.3} | {:+.3} | {} | {} |",
            cell.name,
            cell.direct.len(),
            pp50 - dp50,
            pp99 - dp99,
            cell.errors,
            if cell.name.contains("broken") {
                format!("{}/{}", cell.repaired_proxied, cell.proxied.len())
            } else {
                "–".into()
            },
        );
        if cell.name.contains("broken") && cell.repaired_direct > 0 {
            println!(
                "(warning: {} direct responses of {} looked repaired: the check is off)",
                cell.repaired_direct, cell.name
            );
        }
    }
    println!();
    println!(
        "Throughput at {} connections, {} round(s) of {:.0} s per target, alternating:",
        options.concurrency, options.rounds, options.seconds
    );
    println!();
    println!("| response | direct req/s | proxy req/s | proxy/direct | errors (direct/proxy) |");
    println!("|---|---:|---:|---:|---:|");
    for (name, direct, proxied, errors) in &rates {
        let span = |v: &[f64]| {
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, 0f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
            if v.len() > 1 {
                format!("{lo:.0}–{hi:.0}")
            } else {
                format!("{lo:.0}")
            }
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "| {name} | {} | {} | {:.2} | {}/{} |",
            span(direct),
            span(proxied),
            mean(proxied) / mean(direct),
            errors.0,
            errors.1
        );
    }
    println!();
    match (idle, peak) {
        (Some((_, idle_rss)), Some((hwm, _))) => {
            println!(
                "Proxy memory: {:.1} MB RSS idle, {:.1} MB peak (VmHWM) after the run",
                idle_rss as f64 / 1024.0,
                hwm as f64 / 1024.0
            )
        }
        _ => println!("Proxy memory: unknown (no pid)"),
    }
    if let Some(exit) = exit {
        println!("Proxy exit on SIGTERM: {exit}");
    }
    Ok(())
}

type Rates = Vec<(&'static str, Vec<f64>, Vec<f64>, (u64, u64))>;

async fn measure(
    options: &Options,
    direct: SocketAddr,
    proxied: SocketAddr,
) -> Result<(Vec<LatencyCell>, Rates), String> {
    let mut cells = Vec::new();
    for (name, api, model, stream) in [
        (
            "2 KB completion, valid call",
            Api::Chat,
            "bench-valid",
            false,
        ),
        (
            "2 KB completion, broken call",
            Api::Chat,
            "bench-repair",
            false,
        ),
        (
            "50-event stream, valid call",
            Api::Chat,
            "bench-valid",
            true,
        ),
        (
            "50-event stream, broken call",
            Api::Chat,
            "bench-repair",
            true,
        ),
        (
            "Responses body, valid call",
            Api::Responses,
            "bench-valid",
            false,
        ),
        (
            "Responses body, broken call",
            Api::Responses,
            "bench-repair",
            false,
        ),
        (
            "Responses 50-event stream, valid call",
            Api::Responses,
            "bench-valid",
            true,
        ),
        (
            "Responses 50-event stream, broken call",
            Api::Responses,
            "bench-repair",
            true,
        ),
        (
            "Anthropic 50-event stream, valid call",
            Api::Anthropic,
            "bench-valid",
            true,
        ),
        (
            "Anthropic 50-event stream, broken call",
            Api::Anthropic,
            "bench-repair",
            true,
        ),
        ("Ollama body, valid call", Api::Ollama, "bench-valid", false),
        (
            "Ollama body, broken call",
            Api::Ollama,
            "bench-repair",
            false,
        ),
        (
            "Ollama 50-line stream, valid call",
            Api::Ollama,
            "bench-valid",
            true,
        ),
        (
            "Ollama 50-line stream, broken call",
            Api::Ollama,
            "bench-repair",
            true,
        ),
    ] {
        let body = request_body(api, model, stream);
        cells.push(latency_cell(name, api, direct, proxied, &body, stream, options).await?);
    }
    let mut rates = Vec::new();
    for (name, api, stream) in [
        ("2 KB completion, valid call", Api::Chat, false),
        ("50-event stream, valid call", Api::Chat, true),
        ("Responses body, valid call", Api::Responses, false),
        (
            "Responses 50-event stream, valid call",
            Api::Responses,
            true,
        ),
        (
            "Anthropic 50-event stream, valid call",
            Api::Anthropic,
            true,
        ),
        ("Ollama body, valid call", Api::Ollama, false),
        ("Ollama 50-line stream, valid call", Api::Ollama, true),
    ] {
        let body = request_body(api, "bench-valid", stream);
        let (mut d, mut p, mut errors) = (Vec::new(), Vec::new(), (0, 0));
        for _ in 0..options.rounds {
            let (rate, e) = throughput(api, direct, &body, stream, options).await?;
            d.push(rate);
            errors.0 += e;
            let (rate, e) = throughput(api, proxied, &body, stream, options).await?;
            p.push(rate);
            errors.1 += e;
        }
        rates.push((name, d, p, errors));
    }
    Ok((cells, rates))
}
