//! Prints every answer `repair_call` gives over the corpus and mutations of it, one line each,
//! so that two builds can be compared byte for byte.
//!
//! A change meant to be faster, not different (issue #11 §3), must print the same lines:
//!
//! ```text
//! cargo run --release -p toolmend --example answer_digest > before.txt   # on main
//! cargo run --release -p toolmend --example answer_digest > after.txt    # on the branch
//! cmp before.txt after.txt
//! cargo run --release -p toolmend --example answer_digest -- --show N   # line N in full
//! cargo run --release -p toolmend --example answer_digest -- --salvage   # salvage's own answers
//! ```
//!
//! The inputs: every case of `bench/out/corpus.jsonl` (written by
//! `../shared/bench/make_corpus.py`), and for the small and medium cases, each cut at 16
//! points, and with one of 12 junk snippets (`,}`, ` True`, `"`, `\u00e9`, `'`, `\`, a raw
//! newline, …) inserted at 16 points, each ended 4 ways. Each input is repaired against the
//! corpus's `write_file` schema and against an open one. A line holds the status, repairs,
//! notes, outcome, error, the value and `arguments_text` (the call id, generated, is left out);
//! by default only its number and a 64-bit hash of it are printed (the full lines are ~2.7 GB).
//!
//! `--salvage` prints, for the same inputs, salvage's own answers instead: `salvage` and
//! `salvage_to_text` with default options, each line their whole `Debug` form, so the offsets of
//! the salvage repairs and the spans are compared too (a call's answer keeps only the repairs'
//! kinds and paths: a build that noted a wrong offset printed the same `repair_call` lines).

// An example's job is to print its results.
#![allow(clippy::print_stdout)]

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;

use serde_json::{Value, json};
use toolmend::salvage::{SalvageOptions, salvage, salvage_to_text};
use toolmend::{Mender, ToolSet};
#[path = "../benches/support/corpus.rs"]
mod corpus;
#[path = "../benches/support/mutations.rs"]
mod mutations;
#[path = "../benches/support/variants.rs"]
mod variants;
#[path = "../benches/support/write_file.rs"]
mod write_file;
use write_file::write_file_tool;

fn main() {
    let cases = corpus::load("corpus.jsonl", &[]);
    let write_file = Mender::new(ToolSet::from_json(&write_file_tool()));
    let open = Mender::new(ToolSet::from_json(
        &json!([{"name": "write_file", "parameters": {"type": "object"}}]),
    ));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show: Option<usize> = args
        .iter()
        .position(|a| a == "--show")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok());
    let salvage_mode = args.iter().any(|a| a == "--salvage");
    let options = SalvageOptions::default();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut number = 0_usize;
    let mut answer = |input: &str| {
        for which in 0..2 {
            number += 1;
            if show.is_some_and(|n| n != number) {
                continue;
            }
            let line = if salvage_mode {
                if which == 0 {
                    format!("{:?}", salvage(input, &options))
                } else {
                    format!("{:?}", salvage_to_text(input, &options))
                }
            } else {
                let mender = if which == 0 { &write_file } else { &open };
                let call = mender.repair_call("write_file", input);
                let mut line = serde_json::to_value(&call).expect("a call serializes");
                if let Value::Object(fields) = &mut line {
                    fields.remove("id");
                    fields.insert("text".into(), Value::String(call.arguments_text.clone()));
                }
                line.to_string()
            };
            if show.is_some() {
                writeln!(out, "input: {input:?}\n{line}").expect("write to stdout");
            } else {
                let mut hash = DefaultHasher::new();
                line.hash(&mut hash);
                writeln!(out, "{number} {:016x}", hash.finish()).expect("write to stdout");
            }
        }
    };
    variants::for_each_variant(&cases, &mut answer);
}
