//! Fast path cost as a ratio against its floor, measured interleaved in one process.
//!
//! Criterion runs one benchmark after the other, so on a shared or virtual machine a load
//! change between them shows up as a ratio change. Here each round times a batch of
//! `Mender::repair_call` on a valid call and a batch of `serde_json::from_str` + `is_valid` on
//! the same bytes back to back (in alternating order), and the median of the per-round
//! ratios is reported.
//!
//! Run with `cargo run --release -p toolmend --example fast_path_ratio`.

// An example program reports on stdout.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use serde_json::Value;
use toolmend::{Mender, Status, ToolSet};

#[path = "../benches/support/edit_call.rs"]
mod edit_call;
use edit_call::{edit_tool, valid_call};

const ROUNDS: usize = 201;

fn main() {
    let tools = edit_tool();
    let schema = tools[0]["function"]["parameters"].clone();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let mender = Mender::new(ToolSet::from_json(&tools));

    println!(
        "{:<8} {:>8} {:>14} {:>14} {:>8}",
        "size", "bytes", "toolmend", "floor", "ratio"
    );
    for (label, size, batch) in [
        ("100B", 100, 2000),
        ("2KB", 2_000, 400),
        ("200KB", 200_000, 4),
    ] {
        let call = valid_call(size);
        assert_eq!(mender.repair_call("edit", &call).status, Status::Valid);
        let toolmend = || {
            let start = Instant::now();
            for _ in 0..batch {
                black_box(mender.repair_call("edit", black_box(&call)));
            }
            start.elapsed().as_secs_f64() / f64::from(batch)
        };
        let floor = || {
            let start = Instant::now();
            for _ in 0..batch {
                let value: Value = serde_json::from_str(black_box(&call)).expect("valid JSON");
                black_box(validator.is_valid(&value));
            }
            start.elapsed().as_secs_f64() / f64::from(batch)
        };
        let (mut ratios, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let (a, b) = if round % 2 == 0 {
                (toolmend(), floor())
            } else {
                let b = floor();
                (toolmend(), b)
            };
            ratios.push(a / b);
            ours.push(a);
            theirs.push(b);
        }
        println!(
            "{label:<8} {:>8} {:>11.0} ns {:>11.0} ns {:>7.3}x",
            call.len(),
            median(&mut ours) * 1e9,
            median(&mut theirs) * 1e9,
            median(&mut ratios)
        );
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
