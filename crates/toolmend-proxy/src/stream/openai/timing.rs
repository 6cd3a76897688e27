//! The stream of `../shared/bench/proxy`'s mock upstream (50 events: role, 28 text deltas, a
//! call's header and 19 argument fragments, the finish, `[DONE]`) through the transformer in
//! process, timed: the transformer's own CPU per stream, without sockets or the runtime's other
//! work (`cargo test --release -p toolmend-proxy --lib -- --ignored --nocapture timing`; set
//! `GROUP=n` to deliver n events per upstream chunk, `N=n` for n streams per round). It
//! prints, it asserts nothing.

#![allow(clippy::print_stderr)] // a timing probe prints its measurement
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::json;
use toolmend::{Mender, MenderOptions, RecoverMode, ToolSet};

use crate::config::ProxyConfig;
use crate::error::Api;

const ARGS: &str = r#"{"location":"San Francisco, CA","unit":"celsius","days":5,"include_hourly":true,"fields":["temperature","precipitation","wind_speed","humidity"],"notes":"Forecast requested for planning an outdoor event; prefer metric units and include hourly breakdown where available."}"#;

fn chunk(delta: &str, finish: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-mock0000000000000000000002\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"mock-gpt\",\"system_fingerprint\":\"fp_mock0001\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":{finish}}}]}}\n\n"
    )
}

fn events() -> Vec<String> {
    let mut v = vec![chunk(r#"{"role":"assistant","content":""}"#, "null")];
    let words = "Let me check the current weather forecast for San Francisco so that your outdoor event planning can account for temperature, rain and wind over the coming days.";
    let ws: Vec<&str> = words.split(' ').collect();
    for i in 0..28 {
        let w = format!("{}{}", if i == 0 { "" } else { " " }, ws[i % ws.len()]);
        v.push(chunk(
            &format!(r#"{{"content":{}}}"#, serde_json::to_string(&w).unwrap()),
            "null",
        ));
    }
    v.push(chunk(r#"{"tool_calls":[{"index":0,"id":"call_mock000000000000000002","type":"function","function":{"name":"get_weather","arguments":""}}]}"#, "null"));
    let b = ARGS.as_bytes();
    for i in 0..19 {
        let (s, e) = (i * b.len() / 19, (i + 1) * b.len() / 19);
        let frag = std::str::from_utf8(&b[s..e]).unwrap();
        v.push(chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                serde_json::to_string(frag).unwrap()
            ),
            "null",
        ));
    }
    v.push(chunk("{}", r#""tool_calls""#));
    v.push("data: [DONE]\n\n".into());
    v
}

#[test]
#[ignore]
fn timing_of_the_bench_stream() {
    let tools = json!([{"type": "function", "function": {"name": "get_weather", "description": "Get the weather forecast for a location", "parameters": {"type": "object", "properties": {"location": {"type": "string", "description": "City and state"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer", "minimum": 1, "maximum": 14}, "include_hourly": {"type": "boolean"}, "fields": {"type": "array", "items": {"type": "string"}}, "notes": {"type": "string"}}, "required": ["location"]}}}]);
    let options = MenderOptions::default().with_recover(RecoverMode::Content);
    let mender = Arc::new(Mender::with_options(ToolSet::from_json(&tools), options));
    let config = Arc::new(ProxyConfig::new("http://h"));
    let events = events();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let grouped: Vec<usize> = std::env::var("GROUP")
        .ok()
        .and_then(|g| g.parse().ok())
        .into_iter()
        .collect();
    let group = grouped.first().copied().unwrap_or(1);
    let pieces: Vec<bytes::Bytes> = events
        .chunks(group)
        .map(|c| bytes::Bytes::from(c.concat()))
        .collect();
    let mut out_len = 0;
    // `N=…` streams per round (a longer run for a profiler).
    let n = std::env::var("N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3000);
    for round in 0..2 {
        let start = Instant::now();
        for _ in 0..n {
            let upstream = futures_util::stream::iter(
                pieces
                    .clone()
                    .into_iter()
                    .map(Ok::<_, crate::upstream::UpstreamError>),
            );
            let out = super::super::transform(
                Api::OpenAi,
                upstream,
                Arc::clone(&mender),
                Arc::clone(&config),
                "m".into(),
                "req_1".into(),
                Box::new(Vec::new),
            );
            let chunks: Vec<_> = runtime.block_on(out.collect());
            out_len = chunks.len();
        }
        let per = start.elapsed().as_secs_f64() / n as f64 * 1e6;
        eprintln!("round {round}: {per:.1} µs per stream (group {group}, {out_len} writes)");
    }
    let datas: Vec<String> = events
        .iter()
        .map(|e| e.trim_start_matches("data: ").trim_end().to_owned())
        .collect();
    let start = Instant::now();
    for _ in 0..n {
        for d in &datas {
            std::hint::black_box(super::chunk::read_chunk(d).is_ok());
        }
    }
    eprintln!(
        "read_chunk, each chunk whole: {:.1} µs per stream",
        start.elapsed().as_secs_f64() / n as f64 * 1e6
    );
    let start = Instant::now();
    for _ in 0..n {
        let mut seen = super::chunk::Envelope::default();
        for d in &datas {
            std::hint::black_box(super::chunk::read_chunk_after(d, &mut seen).is_ok());
        }
    }
    eprintln!(
        "read_chunk, the envelope known: {:.1} µs per stream",
        start.elapsed().as_secs_f64() / n as f64 * 1e6
    );
}
