//! Criterion benchmarks for recover: prose with no markup (target ≥ 1 GB/s, the automaton's
//! prefilter skips it) and prose with a leaked Hermes or Qwen3-Coder call every 4 KiB.

// criterion_group! generates undocumented functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolmend::ToolSet;
use toolmend::recover::{StreamRecoverer, recover_text};

const MB: usize = 1 << 20;

/// English-like prose with punctuation, line breaks and no markup.
fn prose(len: usize) -> String {
    let words = [
        "the", "model", "reads", "a", "file", "and", "then", "writes", "tests", "for", "each",
        "module,", "checking", "that", "nothing", "breaks.", "Results", "look", "good;", "next",
        "we", "deploy",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = 0usize;
    while out.len() < len {
        out.push_str(words[i % words.len()]);
        out.push(if i % 17 == 16 { '\n' } else { ' ' });
        i = i.wrapping_mul(31).wrapping_add(7) % 1009;
    }
    out.truncate(len);
    out
}

/// Prose with a complete call every 4 KiB, alternating two families.
fn with_calls(len: usize) -> String {
    let hermes = "\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}\n</tool_call>\n";
    let qwen = "\n<tool_call>\n<function=bash>\n<parameter=command>\ncargo test\n</parameter>\n</function>\n</tool_call>\n";
    let filler = prose(4096);
    let mut out = String::with_capacity(len + 4096);
    let mut n = 0;
    while out.len() < len {
        let call = if n % 2 == 0 { hermes } else { qwen };
        out.push_str(&filler[..4096 - call.len()]);
        out.push_str(call);
        n += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let tools = ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
    ]));
    let plain = prose(MB);
    let calls = with_calls(MB);
    // The cap is lifted so every call in the benchmark text is parsed.
    let max = usize::MAX;
    assert!(recover_text(&plain, &tools, max).calls.is_empty());
    assert_eq!(
        recover_text(&calls, &tools, max).calls.len(),
        calls.len().div_ceil(4096)
    );

    let mut group = c.benchmark_group("recover");
    group.throughput(Throughput::Bytes(MB as u64));
    group.bench_function("prose_1mb", |b| {
        b.iter(|| recover_text(black_box(&plain), &tools, max))
    });
    // Code and HTML are dense in `>` and `]`, where the scanner checks for a closing
    // reasoning tag (`</think:SUFFIX>`, `<|end|>`): that check's cost shows here.
    let code = "fn f(x: Vec<u8>) -> Option<()> { if a[i] > b[j] { g(x) } }\n<div><b>x</b></div>\n"
        .repeat(MB / 79);
    assert!(recover_text(&code, &tools, max).calls.is_empty());
    group.bench_function("code_1mb", |b| {
        b.iter(|| recover_text(black_box(&code), &tools, max))
    });
    group.bench_function("call_every_4kb_1mb", |b| {
        b.iter(|| recover_text(black_box(&calls), &tools, max))
    });
    group.bench_function("stream_prose_1mb_4kb_chunks", |b| {
        b.iter(|| {
            let mut stream = StreamRecoverer::new(max);
            let mut emitted = 0;
            for chunk in plain.as_bytes().chunks(4096) {
                emitted += stream
                    .push(&tools, std::str::from_utf8(chunk).unwrap())
                    .text
                    .len();
            }
            emitted + stream.finish(&tools).text.len()
        });
    });
    group.finish();

    // Adversarial: 1 MiB of sentinels whose blocks never end (each parse runs out of text).
    let hostile = "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"".repeat(MB / 52);
    let mut group = c.benchmark_group("recover");
    group.throughput(Throughput::Bytes(hostile.len() as u64));
    group.bench_function("unterminated_sentinels_1mb", |b| {
        b.iter(|| recover_text(black_box(&hostile), &tools, 16))
    });
    let qwen_params = format!(
        "<tool_call>\n<function=bash>\n{}</function>\n</tool_call>",
        "<parameter=command>\nls\n".repeat(200 * 1024 / 25)
    );
    group.throughput(Throughput::Bytes(qwen_params.len() as u64));
    group.bench_function("qwen_unclosed_params_200kb", |b| {
        b.iter(|| recover_text(black_box(&qwen_params), &tools, 16))
    });
    group.finish();

    // One 64 KiB leaked write_file call streamed in 16-byte chunks: the open block is
    // re-examined on every chunk until its terminator arrives.
    let content = prose(64 * 1024);
    let block = format!(
        "Writing it.\n<tool_call>\n<function=bash>\n<parameter=command>\ncat > notes.md <<EOF\n{content}\nEOF\n</parameter>\n</function>\n</tool_call>"
    );
    let mut group = c.benchmark_group("recover");
    group.throughput(Throughput::Bytes(block.len() as u64));
    group.bench_function("stream_64kb_block_16b_chunks", |b| {
        b.iter(|| {
            let mut stream = StreamRecoverer::new(16);
            let mut calls = 0;
            for chunk in block.as_bytes().chunks(16) {
                calls += stream
                    .push(&tools, std::str::from_utf8(chunk).unwrap())
                    .calls
                    .len();
            }
            calls + stream.finish(&tools).calls.len()
        });
    });

    // Review finding 5: a 200 KB Hermes write_file of code (full of `>`, `}` and `)`) streamed
    // in 4-byte chunks; before the fix every chunk re-parsed the block from its start (~4 s).
    let code = "fn f(x: Vec<u8>) -> Option<()> { if a > b { g(x) } }\n".repeat(200_000 / 53);
    let hermes = format!(
        "<tool_call>\n{{\"name\": \"bash\", \"arguments\": {{\"command\": {}}}}}\n</tool_call>",
        serde_json::to_string(&code).expect("a string serializes")
    );
    group.throughput(Throughput::Bytes(hermes.len() as u64));
    group.bench_function("stream_200kb_hermes_block_4b_chunks", |b| {
        b.iter(|| {
            let mut stream = StreamRecoverer::new(16);
            let mut calls = 0;
            for chunk in hermes.as_bytes().chunks(4) {
                calls += stream
                    .push(&tools, std::str::from_utf8(chunk).unwrap())
                    .calls
                    .len();
            }
            calls + stream.finish(&tools).calls.len()
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
