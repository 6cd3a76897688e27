//! Criterion benchmarks of salvage on the `make_corpus.py` corpus, with `jsonrepair-rs` on the
//! same inputs as the yardstick.
//!
//! ```text
//! cargo bench -p toolmend --bench salvage
//! ```
//!
//! The corpus is generated into `bench/out/` on first use by
//! `python3 ../shared/bench/make_corpus.py` (override the script with `TOOLMEND_MAKE_CORPUS`).
//!
//! - `salvage/<size>/<variant>` and `jsonrepair_rs/<size>/<variant>`: every case of a group per
//!   iteration; throughput in bytes (medium ~2 KB, large ~200 KB) or calls (small ~100 B).
//! - `salvage/adversarial/<shape>/<n>`: the shapes that make other repairers quadratic, at n =
//!   100, 1 000 and 10 000.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolmend::salvage::{SalvageOptions, salvage};

#[path = "support/corpus.rs"]
mod corpus;
use corpus::Case;

/// The malformed variants (`valid` is the control; `truncated` has no single right answer but
/// is timed all the same).
const VARIANTS: [&str; 9] = [
    "valid",
    "fenced",
    "prose",
    "trailing_comma",
    "single_quotes",
    "python_literals",
    "raw_newlines",
    "mixed",
    "truncated",
];

fn group<'a>(cases: &'a [Case], name: &str) -> Vec<&'a str> {
    cases
        .iter()
        .filter(|case| case.group == name)
        .map(|case| case.input.as_str())
        .collect()
}

fn options() -> SalvageOptions {
    // The large variants are close to the 256 KiB guard; the benchmark measures the parser.
    SalvageOptions::default().with_max_bytes(usize::MAX)
}

fn bench_corpus(c: &mut Criterion) {
    let cases = corpus::load("corpus.jsonl", &[]);
    let options = options();
    for size in ["small", "medium", "large"] {
        for variant in VARIANTS {
            let inputs = group(&cases, &format!("{size}/{variant}"));
            if inputs.is_empty() {
                continue;
            }
            let bytes: usize = inputs.iter().map(|s| s.len()).sum();
            for tool in ["salvage", "jsonrepair_rs"] {
                let mut g = c.benchmark_group(format!("{tool}/{size}"));
                if size == "small" {
                    g.throughput(Throughput::Elements(inputs.len() as u64));
                } else {
                    g.throughput(Throughput::Bytes(bytes as u64));
                }
                if size == "large" {
                    g.sample_size(20);
                }
                g.bench_function(variant, |b| {
                    b.iter(|| {
                        for input in &inputs {
                            if tool == "salvage" {
                                std::hint::black_box(
                                    salvage(std::hint::black_box(input), &options).ok(),
                                );
                            } else {
                                std::hint::black_box(
                                    jsonrepair_rs::jsonrepair(std::hint::black_box(input)).ok(),
                                );
                            }
                        }
                    });
                });
                g.finish();
            }
        }
    }
}

fn bench_adversarial(c: &mut Criterion) {
    let cases = corpus::load("adversarial.jsonl", &["--adversarial"]);
    let options = options();
    let mut g = c.benchmark_group("salvage/adversarial");
    for Case { group, input, .. } in &cases {
        let name = group.trim_start_matches("adv/");
        let (shape, n) = name.rsplit_once('_').unwrap_or((name, "0"));
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::new(shape, n), input, |b, input| {
            b.iter(|| std::hint::black_box(salvage(std::hint::black_box(input), &options).ok()));
        });
    }
    g.finish();
}

/// The shapes that made the prose search quadratic (review finding 3), built here: each `{` is a
/// candidate that reads to the end of the text unless salvage remembers what it learnt.
fn bench_prose_candidates(c: &mut Criterion) {
    let shapes: [(&str, &str); 4] = [
        ("smart_key", "{\u{201c}a "),
        ("block_comment", "{/*"),
        ("line_comment", "{//"),
        ("smart_key_start", ""),
    ];
    let options = options();
    let mut g = c.benchmark_group("salvage/adversarial");
    // The quote heuristics of issue #11: every `, "b":` inside the string is a place where a
    // closing quote may be missing (a second reading that fails), and a long `+` chain.
    for n in [100usize, 1_000, 10_000] {
        let missing_quote = format!("{{\"c\": \"{{\"a\": 1{}}}\"}}", ", \"b\": 2".repeat(n));
        let concatenation = format!("[\"a\"{}]", " + \"a\"".repeat(n));
        for (shape, input) in [
            ("missing_quote", missing_quote),
            ("concatenation", concatenation),
        ] {
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_with_input(BenchmarkId::new(shape, n), &input, |b, input| {
                b.iter(|| {
                    std::hint::black_box(salvage(std::hint::black_box(input), &options).ok())
                });
            });
        }
    }
    for (shape, unit) in shapes {
        for n in [100usize, 1_000, 10_000] {
            let input = if unit.is_empty() {
                "{\u{201c}a ".repeat(n)
            } else {
                format!("p {}", unit.repeat(n))
            };
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_with_input(BenchmarkId::new(shape, n), &input, |b, input| {
                b.iter(|| {
                    std::hint::black_box(salvage(std::hint::black_box(input), &options).ok())
                });
            });
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_corpus,
    bench_adversarial,
    bench_prose_candidates
);
criterion_main!(benches);
