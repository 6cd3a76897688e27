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
    sentinels: &["<｜tool▁calls▁begin｜>"],
    parse,
};

const CALL: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const CALL_END: &str = "<｜tool▁call▁end｜>";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let first = expect_ws(input.text, body, CALL)?;
    section(input, first, CALL, &["<｜tool▁calls▁end｜>"], one_call)
}

/// One call after its `<｜tool▁call▁begin｜>`, V3 or V3.1.
fn one_call(input: &Input<'_>, i: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let sep = find_within(s, i, SEP, MAX_NAME_BYTES)?;
    let after = sep + SEP.len();
    if s[i..sep].trim() == "function" {
        match v3(s, after) {
            Err(Stop::Invalid) => v31(s, i, sep),
            other => other,
        }
    } else {
        v31(s, i, sep)
    }
}

/// `NAME\n```json\nJSON\n```<｜tool▁call▁end｜>` after the separator.
fn v3(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let (name, nl) = name_until(s, at, b"\n")?;
    let fence = expect_ws(s, nl, "```json")?;
    let (from, to) = object_span(s, fence)?;
    let end = expect_ws(s, expect_ws(s, to, "```")?, CALL_END)?;
    Ok((RawCall::json(name, s[from..to].to_owned()), end))
}

/// `NAME<｜tool▁sep｜>JSON<｜tool▁call▁end｜>`.
fn v31(s: &str, at: usize, sep: usize) -> Step<(RawCall, usize)> {
    let name = name(s, at, sep)?;
    let (from, to) = object_span(s, sep + SEP.len())?;
    let end = expect_ws(s, to, CALL_END)?;
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
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"poetry.lock\"}\n```<｜tool▁call▁end｜>",
        );
    }
}
