//! `toolmend mcp` relaying a fake stdio MCP server (`support/fake_mcp_server.py`, python3):
//! what is mended, what passes byte for byte, and the faults — the server exits, writes
//! garbage or an oversized line, the client disconnects — where nothing may hang or be lost.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Long enough for a debug build on a busy machine; a hang fails the test instead of the run.
const TIMEOUT: Duration = Duration::from_secs(30);

struct Relay {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
}

fn relay(mode: &str, extra: &[&str]) -> Relay {
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/fake_mcp_server.py"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .arg("mcp")
        .args(extra)
        .args(["--", "python3", server, mode])
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let stdout = child.stdout.take().expect("stdout");
    let (send, lines) = channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if send.send(line).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let stdin = child.stdin.take();
    Relay {
        child,
        stdin,
        lines,
    }
}

impl Relay {
    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    fn line(&self) -> Vec<u8> {
        self.lines
            .recv_timeout(TIMEOUT)
            .expect("a line from the relay in time")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.line()).expect("a JSON line")
    }

    fn list(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
        assert_eq!(self.json()["result"]["tools"][0]["name"], "read_many");
    }

    /// Closes stdin and waits for the exit; returns the exit code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let status = wait(&mut self.child);
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("read stderr");
        (status, stderr)
    }
}

/// Waits for the relay to exit, failing (after killing it) if it hangs.
fn wait(child: &mut Child) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.code();
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("the relay did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn call(id: u32, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_many","arguments":{arguments}}}}}"#
    )
}

/// The request line the fake server says it received.
fn received(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

#[test]
fn mends_calls_and_relays_the_rest_byte_for_byte() {
    let mut relay = relay("plain", &[]);
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18", "capabilities":{}}}"#;
    relay.send(initialize);
    assert_eq!(received(&relay.json()), format!("{initialize}\n"));
    relay.list();

    // Valid, with unusual spacing and number spelling: the server gets the same bytes.
    let valid = call(1, r#"{ "paths" : [ "a" ] , "x": 1.50 }"#);
    relay.send(&valid);
    assert_eq!(received(&relay.json()), format!("{valid}\n"));

    // Malformed: repaired before the server sees it; the note follows the server's content.
    relay.send(&call(2, r#"{"paths": "[\"a\", \"b\"]"}"#));
    let answer = relay.json();
    assert_eq!(
        received(&answer),
        format!("{}\n", call(2, r#"{"paths":["a","b"]}"#))
    );
    let note = answer["result"]["content"][1]["text"].as_str().unwrap();
    assert!(
        note.starts_with("Note: `paths` was sent as a string"),
        "{note}"
    );

    // Hopeless: answered by the relay, with the retry message; the server never sees it.
    relay.send(&call(3, r#"{"limit": 5}"#));
    let answer = relay.json();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["isError"], true);
    assert!(received(&answer).contains("`/paths` is required but missing"));
    relay.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    // initialize, tools/list, 1, 2 and now the ping: four lines before it, not five.
    assert_eq!(relay.json()["result"]["count"], 5);

    // Notifications pass and get no answer; the relay ends with the server's exit code.
    relay.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#);
    let (code, stderr) = relay.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn garbage_from_the_server_reaches_the_client_as_it_came() {
    let mut relay = relay("garbage", &[]);
    relay.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert_eq!(relay.line(), b"this is not JSON {\n");
    assert_eq!(relay.json()["id"], 1);
    relay.finish();
}

#[test]
fn the_servers_exit_code_is_the_relays_even_with_the_client_still_connected() {
    let mut relay = relay("exit3", &[]);
    relay.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    // stdin stays open: the relay must still notice the server is gone and exit.
    let code = wait(&mut relay.child);
    assert_eq!(code, Some(3));
}

#[test]
fn lines_over_the_bound_are_relayed_whole_and_said_so() {
    let mut relay = relay("big", &["--max-line-bytes", "1024"]);
    relay.list();
    // Client → server: an oversized call reaches the server unmended but whole.
    let big = call(1, &json!({"paths": "x".repeat(5000)}).to_string());
    relay.send(&big);
    let answer = relay.line();
    // Server → client: its 200 KB answer arrives whole, as one line.
    assert!(answer.len() > 200_000 && answer.ends_with(b"}\n"));
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["id"], 1);
    // A small call after them is mended as usual.
    relay.send(&call(2, r#"{"paths": "a"}"#));
    let answer = relay.json();
    assert_eq!(
        received(&answer),
        format!("{}\n", call(2, r#"{"paths":["a"]}"#))
    );
    assert!(answer["result"]["content"][1]["text"].is_string());
    let (code, stderr) = relay.finish();
    assert_eq!(code, Some(0));
    assert!(
        stderr.contains("a client message longer than 1024 bytes is relayed uninspected"),
        "{stderr}"
    );
    assert!(
        stderr.contains("a server message longer than 1024 bytes"),
        "{stderr}"
    );
}

#[test]
fn a_client_that_stops_reading_does_not_hang_the_relay() {
    let mut relay = relay("big", &[]);
    relay.list();
    // The client stops reading its output: answers have nowhere to go.
    drop(std::mem::replace(&mut relay.lines, channel().1));
    for id in 0..20 {
        relay.send(&call(id, r#"{"paths": ["a"]}"#));
    }
    let (code, _) = relay.finish();
    assert_eq!(code, Some(0));
}
