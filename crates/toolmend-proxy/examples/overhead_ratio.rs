//! The proxy's added latency, measured against the same upstream called directly.
//!
//! Run with `cargo run --release -p toolmend-proxy --example overhead_ratio [requests]`.
//! A fixed-answer upstream and the proxy run in this process on 127.0.0.1; one keep-alive
//! client sends the same tool-calling request N times directly and N times through the proxy
//! (valid call, and a call that needs repair). Reported: p50/p99 of each path, the overhead
//! (proxy minus direct) and the ratio. The full load test (req/s, RSS) is `bench/`.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use serde_json::json;

fn answer(arguments: &str) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": "read_file", "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    .to_string()
}

fn request(model: &str) -> serde_json::Value {
    let tools: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            json!({"type": "function", "function": {
                "name": if i == 0 { "read_file".to_owned() } else { format!("tool_{i}") },
                "description": "A tool with a realistic schema.",
                "parameters": {"type": "object", "required": ["path"], "properties": {
                    "path": {"type": "string"}, "max_lines": {"type": "integer"},
                    "mode": {"type": "string", "enum": ["a", "b", "c"]}}}}})
        })
        .collect();
    json!({"model": model, "tools": tools, "messages": [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Read the notes."}]})
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn measure(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
    n: usize,
) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let response = client.post(url).json(body).send().await.unwrap();
        let _ = response.bytes().await.unwrap();
        times.push(started.elapsed());
    }
    times.sort_unstable();
    times
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let valid = answer("{\"path\": \"notes.txt\", \"max_lines\": 20}");
    let broken = answer("{\"file_path\": \"notes.txt\", \"max_lines\": \"20\",}");
    let upstream = Router::new().fallback(move |body: axum::body::Bytes| {
        let text = if body.windows(6).any(|w| w == b"broken") {
            broken.clone()
        } else {
            valid.clone()
        };
        async move {
            Response::builder()
                .header("content-type", "application/json")
                .body(Body::from(text))
                .unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, upstream).await.unwrap() });
    let config = toolmend_proxy::ProxyConfig::new(format!("http://{upstream_addr}"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { toolmend_proxy::serve(config, listener).await.unwrap() });

    let client = reqwest::Client::new();
    for (label, model) in [("valid call", "valid"), ("repaired call", "broken")] {
        let body = request(model);
        let direct_url = format!("http://{upstream_addr}/v1/chat/completions");
        let proxy_url = format!("http://{proxy_addr}/v1/chat/completions");
        // Warm-up: connections, the compiled tool set.
        measure(&client, &direct_url, &body, 200).await;
        measure(&client, &proxy_url, &body, 200).await;
        let direct = measure(&client, &direct_url, &body, n).await;
        let proxied = measure(&client, &proxy_url, &body, n).await;
        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        for p in [0.5, 0.99] {
            let d = percentile(&direct, p);
            let x = percentile(&proxied, p);
            println!(
                "{label:>13} p{:<2}: direct {:7.1} µs, via proxy {:7.1} µs, overhead {:7.1} µs, ratio {:.2}",
                (p * 100.0) as u32,
                micros(d),
                micros(x),
                micros(x) - micros(d),
                micros(x) / micros(d)
            );
        }
    }
}
