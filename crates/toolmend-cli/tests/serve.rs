//! `toolmend serve` as a process: the listening line, a request, SIGTERM → exit 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// `toolmend serve` in front of a closed port with `extra` flags, and the address its first
/// stderr line names.
fn spawn_serve(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args([
            "serve",
            "--upstream",
            "http://127.0.0.1:9",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(extra)
        .env_remove("TOOLMEND_LISTEN")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim_end()
        .strip_prefix("toolmend serve: listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (child, addr)
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
#[cfg(unix)]
fn serve_prints_its_address_answers_and_stops_on_sigterm() {
    let (mut child, addr) = spawn_serve(&[]);
    assert!(!addr.ends_with(":0"), "{addr}");

    let health = get(&addr, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.ends_with("ok"), "{health}");
    // The upstream (port 9) is down: a 502 in OpenAI's error shape.
    let models = get(&addr, "/v1/models");
    assert!(models.starts_with("HTTP/1.1 502"), "{models}");
    assert!(models.contains("\"error\""), "{models}");

    sigterm(&child);
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0));
}

#[test]
#[cfg(unix)]
fn sigterm_closes_a_stuck_connection_after_the_drain_timeout() {
    let (mut child, addr) = spawn_serve(&["--drain-timeout", "1"]);
    // A client that sends half a head and nothing more (the head timeout is 30 s).
    let mut stuck = TcpStream::connect(&addr).unwrap();
    write!(stuck, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    sigterm(&child);
    let started = std::time::Instant::now();
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if started.elapsed() > std::time::Duration::from_secs(15) {
            let _ = child.kill();
            panic!("still running 15 s after SIGTERM with a 1 s drain timeout");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(exit.code(), Some(0));
    drop(stuck);
}
