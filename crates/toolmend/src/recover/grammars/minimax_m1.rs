//! MiniMax M1 / Text-01 (vLLM parser `minimax`): GRAMMARS §2.16.
//!
//! ```text
//! <tool_calls>
//! {"name": "read_file", "arguments": {"path": "notebooks/eda.ipynb"}}
//! </tool_calls>
//! ```
//!
//! **Detects** `<tool_calls>`, one `{name, arguments}` JSON object per line, and
//! `</tool_calls>`. Shares its sentinel with Hunyuan/Jamba (a `[` or `<tool_call>` body), which
//! is tried first. Blocks inside `<think>` are recovered (vLLM deletes them; GRAMMARS §1.5).
//!
//! **Never accepts** a block without `</tool_calls>`, or objects that are not strict JSON
//! (vLLM trims a duplicated trailing `}}`; this does not guess).

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, Stop, expect_ws, peek_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "minimax_m1",
    sentinels: &["<tool_calls>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut calls = Vec::new();
    let mut i = body;
    loop {
        let (from, to) = object_span(s, i)?;
        calls.push(call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?);
        if let Some(end) = peek_ws(s, to, "</tool_calls>")? {
            return Block::new(end, calls);
        }
        i = to;
        expect_ws(s, i, "{")?;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<tool_calls>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notebooks/eda.ipynb\"}}\n</tool_calls>";

    #[test]
    fn recovers_the_sample_and_several_lines() {
        recovers(
            ONE,
            &[("read_file", json!({"path": "notebooks/eda.ipynb"}))],
        );
        let two = "<tool_calls>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.ipynb\"}}\n{\"name\": \"git_diff\", \"arguments\": {}}\n</tool_calls>";
        recovers(
            two,
            &[
                ("glob", json!({"pattern": "*.ipynb"})),
                ("git_diff", json!({})),
            ],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores(
            "<tool_calls>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}}\n</tool_calls>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }
}
