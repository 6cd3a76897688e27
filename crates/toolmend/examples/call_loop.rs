//! The Rust engine alone over a batch of calls: the reference of `bench/python/arrow_batch.py`
//! (issue #32: `toolmend.arrow.repair_calls` within 1.5× of it).
//!
//! `cargo run --release -p toolmend --example call_loop -- TOOLS.json CALLS.jsonl [ROUNDS]`:
//! `TOOLS.json` is the tool list, each line of `CALLS.jsonl` a `[name, arguments]` pair (the
//! bench script writes both). Each round is one loop of `Mender::repair_call` over every call,
//! reading each result's status; prints one JSON line with the seconds of every round and the
//! count of each status (the bench checks them against the Python side's).

// An example's job is to print its results.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Instant;

use serde_json::{Value, json};
use toolmend::{Mender, ToolSet};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(tools), Some(calls)) = (args.first(), args.get(1)) else {
        eprintln!("usage: call_loop TOOLS.json CALLS.jsonl [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let read = |path: &str| {
        std::fs::read_to_string(path).unwrap_or_else(|e| {
            eprintln!("call_loop: {path}: {e}");
            std::process::exit(1);
        })
    };
    let tools: Value = serde_json::from_str(&read(tools)).unwrap_or(Value::Null);
    let calls: Vec<(String, String)> = read(calls)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let mender = Mender::new(ToolSet::from_json(&tools));
    let mut seconds = Vec::with_capacity(rounds);
    let mut statuses = HashMap::new();
    for _ in 0..rounds {
        statuses.clear();
        let start = Instant::now();
        for (name, arguments) in &calls {
            let call = black_box(mender.repair_call(black_box(name), black_box(arguments)));
            *statuses.entry(call.status).or_insert(0_u64) += 1;
        }
        seconds.push(start.elapsed().as_secs_f64());
    }
    let statuses: BTreeMap<String, u64> = statuses
        .into_iter()
        .map(|(status, n)| {
            let name = serde_json::to_value(status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            (name, n)
        })
        .collect();
    println!(
        "{}",
        json!({"rows": calls.len(), "seconds": seconds, "statuses": statuses})
    );
}
