//! OLMo 3 (Instruct): GRAMMARS §2.13.
//!
//! ```text
//! <function_calls>
//! grep(pattern="@deprecated", path="src")
//! git_diff(ref="origin/main")
//! </function_calls>
//! ```
//!
//! **Detects** `<function_calls>`, one pythonic keyword call per line (no list brackets), and
//! `</function_calls>`. Literals are Python's plus JSON's `true`, `false` and `null`. Shares its
//! sentinel with the Anthropic form, which is tried first (a body starting with `<invoke`).
//!
//! **Never accepts** positional arguments, non-literal values, or a block without
//! `</function_calls>`.

use super::{Block, Grammar, Input, pythonic};
use crate::recover::cursor::{Step, Stop, peek_ws};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "olmo3",
    sentinels: &["<function_calls>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut calls = Vec::new();
    let mut i = body;
    loop {
        let (call, end) = pythonic::call(s, i)?;
        calls.push(call);
        match peek_ws(s, end, "</function_calls>")? {
            Some(close) => return Block::new(close, calls),
            None if s[end..].starts_with(|c: char| c.is_ascii_whitespace()) => i = end,
            None => return Err(Stop::Invalid),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = "<function_calls>\ngrep(pattern=\"@deprecated\", path=\"src\")\ngit_diff(ref=\"origin/main\")\n</function_calls>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            TWO,
            &[
                ("grep", json!({"pattern": "@deprecated", "path": "src"})),
                ("git_diff", json!({"ref": "origin/main"})),
            ],
        );
        let json_literals = "<function_calls>\nwrite_file(path=\"out/summary.json\", content=\"{}\", overwrite=false)\n</function_calls>";
        recovers(
            json_literals,
            &[(
                "write_file",
                json!({"path": "out/summary.json", "content": "{}", "overwrite": false}),
            )],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("OLMo writes <function_calls> then one call per line.");
        ignores("<function_calls>\ngrep(\"x\")\n</function_calls>");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TWO);
    }
}
