//! Counts repaired calls whose string swallowed structure: a silently wrong value (issue #11 §1).
//!
//! For each small and medium case of `bench/out/corpus.jsonl` (written by
//! `../shared/bench/make_corpus.py`), each junk snippet of `answer_digest` inserted at each of
//! its 16 places, the call is repaired against an open schema. A `repaired` answer is counted
//! when one of its strings (at any depth) differs from the one at the same place of the case's
//! intended value (`expect`) and holds more `", "`, `": ` or `":"` than it: text that was
//! structure, read as content.
//! Junk inserted inside a string is content there, so some counts are expected (mostly
//! `, "k": ` put into a string); a rise elsewhere is a swallowing reading to look at.
//!
//! ```text
//! cargo run --release -p toolmend --example swallow_scan               # counts per snippet
//! cargo run --release -p toolmend --example swallow_scan -- '"]"'      # and examples of one
//! ```

// An example's job is to print its results.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolmend::{Mender, Status, ToolSet};
#[path = "../benches/support/corpus.rs"]
mod corpus;
#[path = "../benches/support/mutations.rs"]
mod mutations;
use mutations::{JUNK, insert, points};

/// How many examples of a snippet to print when asked.
const EXAMPLES: usize = 12;

/// How much the text looks like structure: JSON's separators between quoted tokens.
fn structure(text: &str) -> usize {
    ["\", \"", "\": ", "\":\""]
        .iter()
        .map(|p| text.matches(p).count())
        .sum()
}

/// Whether a string of `got` holds more structure than the string at the same place of
/// `intended` (objects by key, arrays by index).
fn swallows(got: &Value, intended: &Value) -> bool {
    match (got, intended) {
        (Value::String(a), Value::String(b)) => a != b && structure(a) > structure(b),
        (Value::Array(a), Value::Array(b)) => a.iter().zip(b).any(|(x, y)| swallows(x, y)),
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .any(|(key, x)| b.get(key).is_some_and(|y| swallows(x, y))),
        _ => false,
    }
}

fn main() {
    let cases = corpus::load("corpus.jsonl", &[]);
    let show = std::env::args().nth(1);
    let open = Mender::new(ToolSet::from_json(
        &json!([{"name": "t", "parameters": {"type": "object"}}]),
    ));
    let mut counts = BTreeMap::<String, usize>::new();
    let (mut repaired, mut shown) = (0, 0);
    for case in &cases {
        if case.is_large() {
            continue;
        }
        let input = case.input.as_str();
        let Value::Object(intended) = &case.expect else {
            continue;
        };
        for at in points(input) {
            for junk in JUNK {
                let text = insert(input, at, junk);
                let call = open.repair_call("t", &text);
                let Some(Value::Object(got)) = call.arguments.as_ref() else {
                    continue;
                };
                if call.status != Status::Repaired {
                    continue;
                }
                repaired += 1;
                let swallowed = got
                    .iter()
                    .any(|(key, value)| intended.get(key).is_some_and(|i| swallows(value, i)));
                if !swallowed {
                    continue;
                }
                let name = format!("{junk:?}");
                if show.as_deref() == Some(name.as_str()) && shown < EXAMPLES {
                    shown += 1;
                    println!("IN  {text:?}\nGOT {}\n", call.arguments_text);
                }
                *counts.entry(name).or_default() += 1;
            }
        }
    }
    println!("{repaired} repaired; with a string that swallowed structure, by snippet:");
    for (junk, count) in counts {
        println!("  {junk:12} {count}");
    }
}
