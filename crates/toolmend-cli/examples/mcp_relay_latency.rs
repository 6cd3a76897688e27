//! Added latency of `toolmend mcp` per `tools/call`: round trips through the relay against the
//! same round trips straight to the server, in one run.
//!
//! Run with `cargo build --release --bin toolmend && cargo run --release --example
//! mcp_relay_latency [-- PATH_TO_TOOLMEND [ROUNDS]]`. The server is this example itself
//! (`--serve`): a minimal stdio MCP server answering `tools/list` with one filesystem-like tool
//! and every other request with an empty result, so the time measured is pipes and relay.
//! Direct and relayed rounds alternate in batches, so machine load hits both alike.

#![allow(clippy::print_stdout)] // an example prints its measurement

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const TOOLS: &str = r#"{"tools":[{"name":"read_text_file","description":"Read a file","inputSchema":{"type":"object","required":["path"],"properties":{"path":{"type":"string"},"head":{"type":"number"},"tail":{"type":"number"}},"additionalProperties":false},"annotations":{"readOnlyHint":true}}]}"#;

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if first.as_deref() == Some("--serve") {
        serve();
        return;
    }
    let toolmend = first.unwrap_or_else(|| "target/release/toolmend".to_owned());
    let rounds: usize = args.next().map_or(4000, |n| n.parse().expect("ROUNDS"));
    let me = std::env::current_exe().expect("current exe");

    let mut direct = Peer::spawn(Command::new(&me).arg("--serve"));
    let mut relayed = Peer::spawn(
        Command::new(&toolmend)
            .args(["mcp", "--no-storm-guard", "--"])
            .arg(&me)
            .arg("--serve"),
    );
    for peer in [&mut direct, &mut relayed] {
        peer.round(r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#);
    }
    let cases = [
        (
            "valid",
            r#"{"path": "/home/user/project/src/main.rs", "head": 40}"#,
        ),
        (
            "repaired",
            r#"{"file_path": "/home/user/project/src/main.rs", "head": "40"}"#,
        ),
    ];
    println!("toolmend mcp: added latency per tools/call round trip ({rounds} rounds each)");
    println!(
        "{:<9} {:>12} {:>12} {:>12} {:>12}",
        "call", "direct p50", "relay p50", "added p50", "added p90"
    );
    for (label, arguments) in cases {
        let request = |id: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_text_file","arguments":{arguments}}}}}"#
            )
        };
        // Warm up both paths.
        for id in 1..200 {
            direct.round(&request(id));
            relayed.round(&request(id));
        }
        let (mut d, mut r) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for batch in 0..rounds / 100 {
            for i in 0..100 {
                let id = 1000 + batch * 100 + i;
                d.push(direct.round(&request(id)));
                r.push(relayed.round(&request(id)));
            }
        }
        let (dp50, rp50) = (percentile(&mut d, 50), percentile(&mut r, 50));
        let (dp90, rp90) = (percentile(&mut d, 90), percentile(&mut r, 90));
        println!(
            "{label:<9} {:>9.1} µs {:>9.1} µs {:>9.1} µs {:>9.1} µs",
            micros(dp50),
            micros(rp50),
            micros(rp50) - micros(dp50),
            micros(rp90) - micros(dp90),
        );
    }
    direct.close();
    relayed.close();
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort_unstable();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// A client end: the spawned process's stdin and stdout.
struct Peer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
}

impl Peer {
    fn spawn(command: &mut Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Self {
            child,
            input,
            output,
            line: String::new(),
        }
    }

    /// One request out, one answer back: the elapsed time.
    fn round(&mut self, request: &str) -> Duration {
        let start = Instant::now();
        self.input.write_all(request.as_bytes()).expect("write");
        self.input.write_all(b"\n").expect("write");
        self.line.clear();
        self.output.read_line(&mut self.line).expect("read");
        let elapsed = start.elapsed();
        assert!(self.line.ends_with('\n'), "the server hung up");
        elapsed
    }

    fn close(self) {
        drop(self.input);
        let mut child = self.child;
        child.wait().expect("wait");
    }
}

/// The bench server: `tools/list` gets the tool list; every other request an empty result.
fn serve() {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let line = line.expect("read");
        let message: Value = serde_json::from_str(&line).expect("JSON");
        let Some(id) = message.get("id") else {
            continue;
        };
        let result = if message["method"] == "tools/list" {
            TOOLS.to_owned()
        } else {
            r#"{"content":[{"type":"text","text":"ok"}]}"#.to_owned()
        };
        writeln!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).expect("write");
        out.flush().expect("flush");
    }
}
