//! Phi-4-mini (`phi4_mini_json`): GRAMMARS §2.20.
//!
//! ```text
//! functools[{"name": "run_tests", "arguments": {"markers": ["slow", "db"]}}, {"name": "git_diff", "arguments": {}}]
//! ```
//!
//! **Detects** `functools` + a JSON array of `{name, arguments|parameters}` objects. The array
//! is bracket-matched with string awareness, so nested arrays and `]` inside strings do not cut
//! it (vLLM's non-greedy `functools\[(.*?)\]` does). Complete when the array closes.
//!
//! The automaton keys on the `[` and the scanner checks that `functools` precedes it (a `lead`):
//! a sentinel starting with a letter would make the prefilter stop all over ordinary prose.
//!
//! **Never accepts** an array that does not close or is not strict JSON, or the word in prose.

use super::{Block, Grammar, Input};
use crate::recover::cursor::Step;
use crate::recover::json::{ARGS_OR_PARAMETERS, call_list};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "functools",
    family: "phi4",
    sentinels: &["["],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (calls, to) = call_list(s, body - 1, &["name"], ARGS_OR_PARAMETERS)?;
    Block::new(to, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    #[test]
    fn recovers_the_samples() {
        let one =
            "functools[{\"name\": \"grep\", \"arguments\": {\"pattern\": \"\\\\bFIXME\\\\b\"}}]";
        recovers(one, &[("grep", json!({"pattern": "\\bFIXME\\b"}))]);
        let two = "functools[{\"name\": \"run_tests\", \"arguments\": {\"markers\": [\"slow\", \"db\"]}}, {\"name\": \"git_diff\", \"arguments\": {}}]";
        recovers(
            two,
            &[
                ("run_tests", json!({"markers": ["slow", "db"]})),
                ("git_diff", json!({})),
            ],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Python's functools[...] is not a list.");
        ignores("functools[{\"name\": \"grep\"");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation("functools[{\"name\": \"grep\", \"arguments\": {\"pattern\": \"]\"}}]");
    }
}
