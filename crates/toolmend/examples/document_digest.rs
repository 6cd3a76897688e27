//! Prints every answer the document reader gives over the corpus, its mutations and any extra
//! inputs, one line each, so that two builds can be compared byte for byte (issue #30).
//!
//! `answer_digest` covers tool calls; this covers the document readings only the Python and
//! Node drop-ins use (`DocumentOptions`: `trim_layout`, `lenient_scalars`, `trim_cut_strings`),
//! which calls never reach. A restructuring meant to change no answer must print the same lines:
//!
//! ```text
//! cargo run --release -p toolmend --example document_digest > before.txt            # on main
//! cargo run --release -p toolmend --example document_digest -- inputs.jsonl > after.txt
//! cmp before.txt after.txt
//! ```
//!
//! The inputs: every case of `bench/out/corpus.jsonl` and, for the small and medium cases, the
//! cuts and junk insertions of `answer_digest`; then each line of the optional files given,
//! each a JSON string (the input column of the peer suites' TSVs, for instance). Each input is
//! read with four option sets (the defaults; every document reading on; every reading on with
//! `TruncationPolicy::Refuse`; the readings on through `salvage_broken_document`). A line holds
//! its number and a 64-bit hash of the `Debug` form of the answer.

// An example's job is to print its results.
#![allow(clippy::print_stdout)]

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;

use toolmend::salvage::{
    DocumentOptions, TruncationPolicy, salvage_broken_document, salvage_document,
};
#[path = "../benches/support/corpus.rs"]
mod corpus;
#[path = "../benches/support/mutations.rs"]
mod mutations;
#[path = "../benches/support/variants.rs"]
mod variants;

fn main() {
    let cases = corpus::load("corpus.jsonl", &[]);
    let readings = DocumentOptions::default()
        .with_trim_layout(true)
        .with_lenient_scalars(true)
        .with_trim_cut_strings(true);
    let refuse = readings.with_truncation(TruncationPolicy::Refuse);
    let plain = DocumentOptions::default();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut number = 0_usize;
    let mut answer = |input: &str| {
        let answers = [
            format!("{:?}", salvage_document(input, &plain)),
            format!("{:?}", salvage_document(input, &readings)),
            format!("{:?}", salvage_document(input, &refuse)),
            format!("{:?}", salvage_broken_document(input, &readings)),
        ];
        for line in answers {
            number += 1;
            let mut hash = DefaultHasher::new();
            line.hash(&mut hash);
            writeln!(out, "{number} {:016x}", hash.finish()).expect("write to stdout");
        }
    };
    variants::for_each_variant(&cases, &mut answer);
    for file in std::env::args().skip(1) {
        let lines = std::fs::read_to_string(&file).expect("read the inputs file");
        for line in lines.lines() {
            if let Ok(serde_json::Value::String(input)) = serde_json::from_str(line) {
                answer(&input);
            }
        }
    }
}
