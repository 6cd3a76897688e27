//! The Rust side of the Python crossing (issue #31): median time of one `Mender::repair_call`
//! per ~100 B group of `bench/out/corpus.jsonl`, against an open object schema (the small
//! calls are of five different tools; the open schema keeps the Rust work at what salvage and
//! the report cost, so the crossing's own cost shows).
//!
//! `bench/python/crossing.sh` runs it beside `bench/python/crossing.py`, which times the same
//! calls through the Python package, so the ratio of the two is the cost of the crossing
//! (argument conversion, the result object) measured in one run.
//!
//! Run with `cargo run --release -p toolmend --example small_calls` (JSON lines
//! `{"group": …, "calls": …, "ns": …}` on stdout); `-- --schema` prints the tool list instead.
//! Each round times one pass over a group's calls; the median of 21 rounds is reported, so the
//! rounds another process slowed are dropped.

// An example's job is to print its results.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;
use toolmend::{Mender, ToolSet};
#[path = "../benches/support/corpus.rs"]
mod corpus;

/// Rounds per group; the median is reported.
const ROUNDS: usize = 21;
/// Passes over a group per round (a round of ~100 calls of ~1 µs is too short to time alone).
const PASSES: usize = 20;

fn main() {
    let tools = json!([{"name": "write_file", "parameters": {"type": "object"}}]);
    if std::env::args().any(|a| a == "--schema") {
        println!("{tools}");
        return;
    }
    let cases = corpus::load("corpus.jsonl", &[]);
    let mender = Mender::new(ToolSet::from_json(&tools));
    let mut groups: Vec<&str> = cases
        .iter()
        .filter(|c| c.group.starts_with("small/"))
        .map(|c| c.group.as_str())
        .collect();
    groups.sort_unstable();
    groups.dedup();
    for group in groups {
        let inputs: Vec<&str> = cases
            .iter()
            .filter(|c| c.group == group)
            .map(|c| c.input.as_str())
            .collect();
        let mut rounds: Vec<f64> = (0..ROUNDS)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..PASSES {
                    for input in &inputs {
                        black_box(mender.repair_call("write_file", black_box(input)));
                    }
                }
                start.elapsed().as_secs_f64() * 1e9 / (PASSES * inputs.len()) as f64
            })
            .collect();
        rounds.sort_by(f64::total_cmp);
        let ns = rounds[ROUNDS / 2];
        println!(
            "{}",
            json!({"group": group, "calls": inputs.len(), "ns": ns})
        );
    }
}
