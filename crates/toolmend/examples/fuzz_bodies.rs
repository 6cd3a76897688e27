//! The bodies of the `fuzz/` targets under a seeded random driver, for machines without
//! cargo-fuzz: texts built from markup tokens, JSON pieces and runs, cut into random chunks.
//!
//! Run with `cargo run --release -p toolmend --example fuzz_bodies -- SECONDS [SEED]`; it runs
//! the three bodies in turn until the time is up. A panic in salvage or repair stops it (the
//! input is in the message); a streamed/whole divergence is counted, the first one saved to
//! `fuzz_bodies-finding.json`, and the run fails at the end.

// An example program reports on stdout.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use serde_json::json;
use toolmend::recover::{StreamRecoverer, recover_text};
use toolmend::salvage::{SalvageOptions, salvage};
use toolmend::{Mender, Status, ToolSet};

/// Pieces the generator strings together: sentinels of several families, JSON, code markers.
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}\n</tool_call>",
    "<function=bash>",
    "<parameter=command>",
    "</parameter>",
    "</function>",
    "[TOOL_CALLS]",
    "[{\"name\": \"run\", \"arguments\": {\"n\": 1}}]",
    "{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}",
    "<|tool_call|>",
    "<|python_tag|>",
    "</think>",
    "```",
    "```json\n",
    "`",
    "~~~",
    "\n",
    "\n\n",
    "   ",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    ":",
    ",",
    "\\",
    "null",
    "1.50",
    "true",
    "path",
    "edits",
    "old",
    "é",
    "日本",
    "<",
    ">",
    "|",
];

/// xorshift64*: a seeded, reproducible generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}

fn text(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(40) {
        let piece = PIECES[rng.below(PIECES.len())];
        let times = if rng.below(8) == 0 { rng.below(200) } else { 1 };
        out.push_str(&piece.repeat(times));
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut rng = Rng(seed | 1);
    let tools = ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "run", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]));
    let schema = json!({"type": "object", "required": ["path", "edits"], "properties": {
        "path": {"type": "string"},
        "edits": {"type": "array", "items": {"type": "object", "required": ["old", "new"],
            "properties": {"old": {"type": "string"}, "new": {"type": "string"}, "all": {"type": "boolean"}}}},
        "mode": {"enum": ["fast", "careful"]},
        "limit": {"type": "integer"}}});
    let mender = Mender::new(ToolSet::from_json(
        &json!([{"name": "edit", "parameters": schema}]),
    ));
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut runs = [0u64; 3];
    let mut diverged = 0u64;
    let mut unreadable = 0u64;
    while Instant::now() < end {
        let input = text(&mut rng);
        // fuzz/fuzz_targets/salvage.rs
        if let Ok(salvaged) = salvage(&input, &SalvageOptions::default()) {
            assert!(!salvaged.values.is_empty(), "{input:?}");
            for value in &salvaged.values {
                // A value serde_json cannot read back (its recursion limit) is counted and saved.
                match serde_json::from_str::<serde_json::Value>(&value.to_string()) {
                    Ok(again) => assert_eq!(&again, value, "{input:?}"),
                    Err(_) => {
                        if unreadable == 0 {
                            let _ = std::fs::write("fuzz_bodies-salvage-finding.txt", &input);
                        }
                        unreadable += 1;
                    }
                }
            }
        }
        runs[0] += 1;
        // fuzz/fuzz_targets/repair_call.rs
        let call = mender.repair_call("edit", &input);
        match call.status {
            Status::Valid => assert_eq!(call.arguments_text, input, "{input:?}"),
            Status::Repaired => {
                let value: serde_json::Value = serde_json::from_str(&call.arguments_text)
                    .unwrap_or_else(|e| panic!("{e}: {input:?}"));
                assert!(
                    mender.tools().get("edit").unwrap().is_valid(&value),
                    "{input:?}"
                );
            }
            _ => assert!(call.error.is_some(), "{input:?}"),
        }
        runs[1] += 1;
        // fuzz/fuzz_targets/recover_stream.rs
        let whole = recover_text(&input, &tools, 16);
        let mut stream = StreamRecoverer::new(16);
        let (mut streamed_text, mut streamed_calls) = (String::new(), Vec::new());
        let mut at = 0;
        let mut cuts = Vec::new();
        while at < input.len() {
            let mut cut = (at + rng.below(16)).min(input.len());
            while !input.is_char_boundary(cut) {
                cut += 1;
            }
            cuts.push(cut);
            let out = stream.push(&tools, &input[at..cut]);
            streamed_text.push_str(&out.text);
            streamed_calls.extend(out.calls);
            at = cut;
        }
        let last = stream.finish(&tools);
        streamed_text.push_str(&last.text);
        streamed_calls.extend(last.calls);
        if streamed_text != whole.text || streamed_calls != whole.calls {
            // Kept going so the other bodies keep running; the first input is saved.
            if diverged == 0 {
                let finding = json!({"input": input, "cuts": cuts}).to_string();
                let _ = std::fs::write("fuzz_bodies-finding.json", &finding);
            }
            diverged += 1;
        }
        runs[2] += 1;
    }
    println!(
        "{seconds} s, seed {seed}: salvage {} runs, repair_call {} runs, recover_stream {} runs, \
         {diverged} streamed/whole divergences (first in fuzz_bodies-finding.json), \
         {unreadable} salvaged values serde_json cannot read back (fuzz_bodies-salvage-finding.txt)",
        runs[0], runs[1], runs[2]
    );
    assert_eq!(diverged + unreadable, 0, "findings");
}
