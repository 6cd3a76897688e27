//! Runs `repair_call` (or salvage alone) over one group of `bench/out/corpus.jsonl` in a loop,
//! for a profiler: the per-group instruction counts of issue #11 §3 come from it.
//!
//! ```text
//! cargo build --release -p toolmend --example profile_group
//! valgrind --tool=callgrind --collect-atstart=no \
//!     --toggle-collect='toolmend::mender::Mender::repair_call' \
//!     target/release/examples/profile_group medium/trailing_comma 30 [salvage]
//! ```
//!
//! Arguments: the group, the rounds over it (default 200), and `salvage` to run
//! `toolmend::salvage::salvage` alone instead of `repair_call` against the corpus's `write_file`
//! schema (toggle on `toolmend::salvage::entry::call::salvage` then), or `text` to run
//! `toolmend::salvage::salvage_to_text` (toggle on `…::call::salvage_to_text`). The small (~100 B) groups are
//! calls of five tools, so they run against an open `{"type": "object"}` schema instead, as
//! `fast_path_ratio -- small` times them.

// An example's job is to print its results.
#![allow(clippy::print_stdout)]

use toolmend::{Mender, ToolSet};
#[path = "../benches/support/corpus.rs"]
mod corpus;
#[path = "../benches/support/write_file.rs"]
mod write_file;
use write_file::write_file_tool;
fn main() {
    let mut args = std::env::args().skip(1);
    let group = args.next().expect("group");
    let reps: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    let mode = args.next();
    let salvage_only = mode.as_deref() == Some("salvage");
    let text_only = mode.as_deref() == Some("text");
    let inputs: Vec<String> = corpus::load("corpus.jsonl", &[])
        .into_iter()
        .filter_map(|case| (case.group == group).then_some(case.input))
        .collect();
    let tools = if group.starts_with("small/") {
        serde_json::json!([{"name": "write_file", "parameters": {"type": "object"}}])
    } else {
        write_file_tool()
    };
    let mender = Mender::new(ToolSet::from_json(&tools));
    let options = toolmend::salvage::SalvageOptions::default();
    let mut n = 0;
    for _ in 0..reps {
        for input in &inputs {
            if text_only {
                n += toolmend::salvage::salvage_to_text(std::hint::black_box(input), &options)
                    .map(|s| s.text.len())
                    .unwrap_or(0);
            } else if salvage_only {
                n += toolmend::salvage::salvage(std::hint::black_box(input), &options)
                    .map(|s| s.values.len())
                    .unwrap_or(0);
            } else {
                n += mender
                    .repair_call("write_file", std::hint::black_box(input))
                    .arguments_text
                    .len();
            }
        }
    }
    println!("{} inputs, {n}", inputs.len());
}
