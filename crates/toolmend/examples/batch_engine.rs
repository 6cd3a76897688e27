//! The Rust engine alone over a dataset of recorded calls (issue #32): rows/s of
//! `Mender::repair_call` on one thread, the reference `bench/scale/batch.py`'s Python figures
//! are put against.
//!
//! Reads `DATA_DIR/tools.json` and every `DATA_DIR/jsonl/*.jsonl` (lines with `name` and
//! `arguments`, as `bench/scale/make_calls.py` writes them) into memory, then times `ROUNDS`
//! passes of `repair_call` over all rows (the result is dropped; reading files and JSON lines is
//! not timed). Prints one JSON line: `{"rows": …, "rounds_rows_per_s": [...], "statuses": {…}}`.
//!
//! Run with `cargo run --release -p toolmend --example batch_engine -- DATA_DIR [ROUNDS]`
//! (`bench/scale/batch.sh` does).

// An example's job is to print its results.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use toolmend::{Mender, ToolSet};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: batch_engine DATA_DIR [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(2);
    if let Err(message) = run(&dir, rounds) {
        eprintln!("batch_engine: {message}");
        std::process::exit(1);
    }
}

fn run(dir: &Path, rounds: usize) -> Result<(), String> {
    let tools_text = std::fs::read_to_string(dir.join("tools.json"))
        .map_err(|e| format!("{}: {e}", dir.join("tools.json").display()))?;
    let tools: Value = serde_json::from_str(&tools_text).map_err(|e| format!("tools.json: {e}"))?;
    let calls = load_calls(&dir.join("jsonl"))?;
    let mender = Mender::new(ToolSet::from_json(&tools));

    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    for (name, arguments) in &calls {
        let status = mender.repair_call(name, arguments).status;
        let label = serde_json::to_value(status).map_err(|e| e.to_string())?;
        *statuses
            .entry(label.as_str().unwrap_or("?").to_owned())
            .or_default() += 1;
    }
    let rates: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for (name, arguments) in &calls {
                black_box(mender.repair_call(black_box(name), black_box(arguments)));
            }
            calls.len() as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    println!(
        "{}",
        json!({"rows": calls.len(), "rounds_rows_per_s": rates, "statuses": statuses})
    );
    Ok(())
}

/// Every `(name, arguments)` of the folder's `.jsonl` files, in file-name order.
fn load_calls(folder: &Path) -> Result<Vec<(String, String)>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|e| format!("{}: {e}", folder.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    let mut calls = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (number, line) in text.lines().enumerate() {
            let row: Value = serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", file.display(), number + 1))?;
            let field = |key: &str| {
                row.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            };
            calls.push((field("name"), field("arguments")));
        }
    }
    Ok(calls)
}
