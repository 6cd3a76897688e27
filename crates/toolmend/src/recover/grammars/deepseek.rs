//! DeepSeek V3 / R1 and V3.1: GRAMMARS §2.1 and §2.2.
//!
//! ````text
//! Checking the lockfile.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file
//! ```json
//! {"path": "poetry.lock", "limit": 40}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
//! ````
//!
//! **Detects** `<｜tool▁calls▁begin｜>` (U+FF5C bars, U+2581 word separators) followed by calls.
//! V3: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` + a ```` ```json ```` fence holding the
//! arguments + `<｜tool▁call▁end｜>` (that fence belongs to the grammar). V3.1:
//! `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>JSON<｜tool▁call▁end｜>`. A call whose text before the
//! separator is `function` is V3 when a name line and the fence follow, V3.1 otherwise.
//! Multi-line JSON is fine (vLLM's regex is not DOTALL). The section closer is optional.
//! Some templates write the tokens with ASCII bars (`<|tool▁calls▁begin|>`): a block uses
//! the bars its opener has, throughout.
//!
//! **Never accepts** a call without `<｜tool▁call▁end｜>`, or arguments that are not a strict
//! JSON object. The trailing `<｜end▁of▁sentence｜>` is not part of the block and stays in the
//! text.

use super::{Block, Grammar, Input, section};
use crate::recover::call::RawCall;
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, expect_ws, find_within, name, name_until,
};
use crate::recover::json::object_span;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "deepseek",
    sentinels: &["<｜tool▁calls▁begin｜>", "<|tool▁calls▁begin|>"],
    parse,
};

/// One spelling of the special tokens.
struct Tokens {
    call: &'static str,
    sep: &'static str,
    call_end: &'static str,
    calls_end: &'static str,
}

/// The tokens as DeepSeek's tokenizer has them (U+FF5C bars).
const FULLWIDTH: Tokens = Tokens {
    call: "<｜tool▁call▁begin｜>",
    sep: "<｜tool▁sep｜>",
    call_end: "<｜tool▁call▁end｜>",
    calls_end: "<｜tool▁calls▁end｜>",
};

/// The tokens as some templates write them (ASCII bars).
const ASCII: Tokens = Tokens {
    call: "<|tool▁call▁begin|>",
    sep: "<|tool▁sep|>",
    call_end: "<|tool▁call▁end|>",
    calls_end: "<|tool▁calls▁end|>",
};

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let ascii = input.text[start..].starts_with("<|");
    let t = if ascii { &ASCII } else { &FULLWIDTH };
    let first = expect_ws(input.text, body, t.call)?;
    if ascii {
        section(input, first, t.call, &[t.calls_end], |input, i| {
            one_call(&ASCII, input, i)
        })
    } else {
        section(input, first, t.call, &[t.calls_end], |input, i| {
            one_call(&FULLWIDTH, input, i)
        })
    }
}

/// One call after its `<｜tool▁call▁begin｜>`, V3 or V3.1.
fn one_call(t: &Tokens, input: &Input<'_>, i: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let sep = find_within(s, i, t.sep, MAX_NAME_BYTES)?;
    let after = sep + t.sep.len();
    if s[i..sep].trim() == "function" {
        match v3(t, s, after) {
            Err(Stop::Invalid) => v31(t, s, i, sep),
            other => other,
        }
    } else {
        v31(t, s, i, sep)
    }
}

/// `NAME\n```json\nJSON\n```<｜tool▁call▁end｜>` after the separator.
fn v3(t: &Tokens, s: &str, at: usize) -> Step<(RawCall, usize)> {
    let (name, nl) = name_until(s, at, b"\n")?;
    let fence = expect_ws(s, nl, "```json")?;
    let (from, to) = object_span(s, fence)?;
    let end = expect_ws(s, expect_ws(s, to, "```")?, t.call_end)?;
    Ok((RawCall::json(name, s[from..to].to_owned()), end))
}

/// `NAME<｜tool▁sep｜>JSON<｜tool▁call▁end｜>`.
fn v31(t: &Tokens, s: &str, at: usize, sep: usize) -> Step<(RawCall, usize)> {
    let name = name(s, at, sep)?;
    let (from, to) = object_span(s, sep + t.sep.len())?;
    let end = expect_ws(s, to, t.call_end)?;
    Ok((RawCall::json(name, s[from..to].to_owned()), end))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const V3: &str = "Checking the lockfile.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"poetry.lock\", \"limit\": 40}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>";

    #[test]
    fn recovers_the_v3_samples() {
        let rest = recovers(
            V3,
            &[("read_file", json!({"path": "poetry.lock", "limit": 40}))],
        );
        assert_eq!(rest, "Checking the lockfile.<｜end▁of▁sentence｜>");
        let two = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>bash\n```json\n{\"command\": \"pip list --outdated\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>web_search\n```json\n{\"query\": \"pydantic v2 migration validators\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        recovers(
            two,
            &[
                ("bash", json!({"command": "pip list --outdated"})),
                (
                    "web_search",
                    json!({"query": "pydantic v2 migration validators"}),
                ),
            ],
        );
    }

    #[test]
    fn recovers_the_v31_samples() {
        let one = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>grep<｜tool▁sep｜>{\"pattern\": \"panic!\", \"path\": \"crates\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        recovers(
            one,
            &[("grep", json!({"pattern": "panic!", "path": "crates"}))],
        );
        let two = "Let me check both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \".env.example\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>list_dir<｜tool▁sep｜>{\"path\": \"config\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        let rest = recovers(
            two,
            &[
                ("read_file", json!({"path": ".env.example"})),
                ("list_dir", json!({"path": "config"})),
            ],
        );
        assert_eq!(rest, "Let me check both.");
    }

    #[test]
    fn multi_line_json_is_fine() {
        let text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>grep<｜tool▁sep｜>{\n  \"pattern\": \"x\"\n}<｜tool▁call▁end｜>";
        recovers(text, &[("grep", json!({"pattern": "x"}))]);
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("DeepSeek opens with <｜tool▁calls▁begin｜> and then calls.");
        ignores(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>grep<｜tool▁sep｜>{\"pattern\": \"x\"}<｜tool▁call▁end>",
        );
    }

    #[test]
    fn a_cut_off_second_call_leaves_the_first() {
        let text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"a.go\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"b.g";
        recovers(text, &[("read_file", json!({"path": "a.go"}))]);
    }

    #[test]
    fn reads_ascii_bars() {
        let text = "Checking.<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>read_file\n```json\n{\"path\": \"a.rs\"}\n```<|tool▁call▁end|><|tool▁call▁begin|>grep<|tool▁sep|>{\"pattern\": \"x\"}<|tool▁call▁end|><|tool▁calls▁end|>";
        let rest = recovers(
            text,
            &[
                ("read_file", json!({"path": "a.rs"})),
                ("grep", json!({"pattern": "x"})),
            ],
        );
        assert_eq!(rest, "Checking.");
        rejects_truncation(
            "<|tool▁calls▁begin|><|tool▁call▁begin|>grep<|tool▁sep|>{\"pattern\": \"x\"}<|tool▁call▁end|>",
        );
        // Bars are not mixed within a block.
        ignores(
            "<|tool▁calls▁begin|><｜tool▁call▁begin｜>grep<｜tool▁sep｜>{\"pattern\": \"x\"}<｜tool▁call▁end｜>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"poetry.lock\"}\n```<｜tool▁call▁end｜>",
        );
    }
}
