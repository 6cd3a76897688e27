//! The request side of a repaired route in process, timed step by step on the body of
//! `../shared/bench/proxy` (and on an agent's turn whose history holds calls): what a request
//! that needs nothing pays before it goes upstream, without sockets or the runtime
//! (`cargo test --release -p toolmend-proxy --lib -- --ignored --nocapture request_timing`).
//! It prints, it asserts nothing.

#![allow(clippy::print_stderr)] // a timing probe prints its measurement
use std::hint::black_box;
use std::time::Instant;

use axum::http::Uri;
use bytes::Bytes;
use toolmend::RecoverMode;

use crate::body::{RequestView, SerdeView};
use crate::cache::MenderCache;
use crate::config::ProxyConfig;
use crate::error::Api;
use crate::upstream::Upstream;

const BODY: &str = r#"{"model":"mock-gpt","messages":[{"role":"system","content":"You are a helpful assistant that uses tools."},{"role":"user","content":"What's the weather in San Francisco for the next 5 days? I am planning an outdoor event."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the weather forecast for a location","parameters":{"type":"object","properties":{"location":{"type":"string","description":"City and state"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer","minimum":1,"maximum":14},"include_hourly":{"type":"boolean"},"fields":{"type":"array","items":{"type":"string"}},"notes":{"type":"string"}},"required":["location"]}}}],"tool_choice":"auto","stream":false}"#;

/// The bench body with `turns` earlier turns of a call and its result in its history.
fn agent_body(turns: usize) -> String {
    let turn = r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"San Francisco, CA\",\"unit\":\"celsius\",\"days\":5}"}}]},{"role":"tool","tool_call_id":"call_1","content":"{\"forecast\":[{\"day\":1,\"high\":18,\"low\":11,\"sky\":\"fog then sun\"}]}"},{"role":"user","content":"And the day after?"}"#;
    let history = vec![turn; turns].join(",");
    BODY.replacen(
        r#"planning an outdoor event."}"#,
        &format!(r#"planning an outdoor event."}},{history}"#),
        1,
    )
}

/// Runs `step` `n` times, twice; prints the second round's time per run.
fn time(name: &str, n: u32, mut step: impl FnMut()) {
    let mut per = 0.0;
    for _ in 0..2 {
        let start = Instant::now();
        for _ in 0..n {
            step();
        }
        per = start.elapsed().as_secs_f64() / f64::from(n) * 1e9;
    }
    eprintln!("{name:<44} {per:>8.0} ns");
}

#[test]
#[ignore]
fn request_timing() {
    let n = 200_000;
    let body = Bytes::from_static(BODY.as_bytes());
    let agent = Bytes::from(agent_body(8));
    eprintln!("bench body {} B, agent body {} B", body.len(), agent.len());
    time("view: serde (before)", n, || {
        black_box(SerdeView::read(black_box(&body)).is_some());
    });
    time("view: one pass", n, || {
        black_box(RequestView::read(black_box(&body), |_| None).is_some());
    });
    time("view: serde (before), agent body", n / 4, || {
        black_box(SerdeView::read(black_box(&agent)).is_some());
    });
    time("utf-8 check alone", n, || {
        black_box(std::str::from_utf8(black_box(&body)).is_ok());
    });
    time("view: one pass, agent body", n / 4, || {
        black_box(RequestView::read(black_box(&agent), |_| None).is_some());
    });
    let view = RequestView::read(&body, |_| None).unwrap();
    let tools = view.tools.unwrap();
    let cache = MenderCache::new(64, 4 << 20, RecoverMode::Content);
    let library = toolmend::MenderCache::new(64, 4 << 20);
    time("cache: the library's get (before)", n, || {
        let options = toolmend::MenderOptions::default()
            .with_recover(RecoverMode::Content)
            .with_model("mock-gpt");
        black_box(library.get(black_box(tools), &options));
    });
    time("cache: get (the front)", n, || {
        black_box(cache.get(black_box(tools), "mock-gpt", true));
    });
    time("view: one pass, tools known", n, || {
        black_box(RequestView::read(black_box(&body), |t| cache.known_tools(t)).is_some());
    });
    let mender = cache.get(tools, "mock-gpt", true);
    time("history: markers, a new searcher each (before)", n, || {
        black_box(
            memchr::memmem::find(black_box(&body), b"\"tool_calls\"").is_some()
                || memchr::memmem::find_iter(&body, b"\\u00").next().is_some(),
        );
    });
    time("history: mend_request, no call", n, || {
        black_box(crate::history::mend_request(
            Api::OpenAi,
            "chat",
            &mender,
            black_box(&body),
        ));
    });
    time("history: tree (before), agent body", n / 4, || {
        let mut value: serde_json::Value = serde_json::from_slice(black_box(&agent)).unwrap();
        black_box(mender.mend_history(toolmend::history::WireApi::OpenAiChat, &mut value));
    });
    time("history: mend_request, agent body", n / 4, || {
        black_box(crate::history::mend_request(
            Api::OpenAi,
            "chat",
            &mender,
            black_box(&agent),
        ));
    });
    time("request_tag", n, || {
        black_box(crate::mend::request_tag(black_box(&body)));
    });
    let upstream = Upstream::new(&ProxyConfig::new("http://127.0.0.1:18000")).unwrap();
    let uri: Uri = "/v1/chat/completions".parse().unwrap();
    time("url (before)", n, || {
        black_box(upstream.url(black_box(&uri)).is_ok());
    });
    let upstream = upstream
        .with_fixed_paths(&["/v1/chat/completions"])
        .unwrap();
    time("url, built once", n, || {
        black_box(upstream.url(black_box(&uri)).is_ok());
    });
}
