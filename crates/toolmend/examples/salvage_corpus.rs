//! Runs salvage over a corpus written by `make_corpus.py` and prints, per group, how many cases
//! came back exactly, how many came back wrong, and the time taken.
//!
//! ```text
//! python3 ../shared/bench/make_corpus.py bench/out/corpus.jsonl
//! cargo run --release -p toolmend --example salvage_corpus -- bench/out/corpus.jsonl [--json] [--reps N]
//! ```
//!
//! `--json` prints one JSON object per group instead of the table (read by `bench/peers/`).
//! `--jsonrepair-rs` measures the `jsonrepair-rs` crate instead (its output parsed with
//! `serde_json` for the exactness columns; the timing is `jsonrepair` alone).
//! A case is *exact* when salvage returns exactly one value equal to `expect`, *wrong* when it
//! returns anything else, and *refused* when it returns an error. Cases without `expect` (the
//! truncated variant, adversarial inputs) only count objects and refusals. Time is the best of
//! `--reps` runs over the whole group (default 5). The last column times `serde_json::from_str`
//! on the same inputs (it fails on most of them) as a yardstick.

// An example's job is to print its results.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolmend::salvage::{SalvageOptions, salvage};

#[derive(Default)]
struct Group {
    inputs: Vec<String>,
    expects: Vec<Option<Value>>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut as_json = false;
    let mut reps = 5usize;
    let mut peer = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => as_json = true,
            "--jsonrepair-rs" => peer = true,
            "--reps" => reps = args.next().ok_or("--reps needs a number")?.parse()?,
            _ => path = Some(arg),
        }
    }
    let path = path.ok_or("usage: salvage_corpus FILE.jsonl [--json] [--reps N]")?;
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for line in std::fs::read_to_string(&path)?.lines() {
        let case: Value = serde_json::from_str(line)?;
        let group = groups
            .entry(case["group"].as_str().unwrap_or("?").to_owned())
            .or_default();
        group
            .inputs
            .push(case["input"].as_str().unwrap_or_default().to_owned());
        group.expects.push(case.get("expect").cloned());
    }
    // Inputs over the default 256 KiB guard are part of the corpus; measure them all.
    let options = SalvageOptions::default().with_max_bytes(usize::MAX);
    if !as_json {
        println!(
            "{:<28} {:>5} {:>10} {:>6} {:>6} {:>7} {:>7} {:>11} {:>9} {:>11}",
            "group",
            "n",
            "bytes",
            "exact",
            "wrong",
            "refused",
            "objects",
            "ns/call",
            "MB/s",
            "serde ns/c"
        );
    }
    for (name, group) in &groups {
        let (mut exact, mut wrong, mut refused, mut objects) = (0, 0, 0, 0);
        for (input, expect) in group.inputs.iter().zip(&group.expects) {
            let values = if peer {
                jsonrepair_rs::jsonrepair(input)
                    .ok()
                    .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                    .map(|v| vec![v])
                    .ok_or(())
            } else {
                salvage(input, &options).map(|s| s.values).map_err(drop)
            };
            match values {
                Err(()) => refused += 1,
                Ok(values) => {
                    objects += usize::from(values.iter().all(Value::is_object));
                    match expect {
                        Some(e) if values.len() == 1 && &values[0] == e => exact += 1,
                        Some(_) => wrong += 1,
                        None => {}
                    }
                }
            }
        }
        let best = (0..reps.max(1))
            .map(|_| {
                let start = Instant::now();
                for input in &group.inputs {
                    if peer {
                        std::hint::black_box(
                            jsonrepair_rs::jsonrepair(std::hint::black_box(input)).ok(),
                        );
                    } else {
                        std::hint::black_box(salvage(std::hint::black_box(input), &options).ok());
                    }
                }
                start.elapsed()
            })
            .min()
            .unwrap_or(Duration::ZERO);
        let strict = (0..reps.max(1))
            .map(|_| {
                let start = Instant::now();
                for input in &group.inputs {
                    std::hint::black_box(serde_json::from_str::<Value>(input).ok());
                }
                start.elapsed()
            })
            .min()
            .unwrap_or(Duration::ZERO);
        let bytes: usize = group.inputs.iter().map(String::len).sum();
        let n = group.inputs.len();
        let ns_per_call = best.as_nanos() as f64 / n as f64;
        let mb_per_s = bytes as f64 / best.as_secs_f64() / 1e6;
        if as_json {
            let row = json!({"group": name, "n": n, "bytes": bytes, "exact": exact, "wrong": wrong,
                "refused": refused, "objects": objects, "ns": best.as_nanos() as u64,
                "serde_json_ns": strict.as_nanos() as u64});
            println!("{row}");
        } else {
            println!(
                "{name:<28} {n:>5} {bytes:>10} {exact:>6} {wrong:>6} {refused:>7} {objects:>7} {ns_per_call:>11.0} {mb_per_s:>9.0} {:>11.0}",
                strict.as_nanos() as f64 / n as f64
            );
        }
    }
    Ok(())
}
