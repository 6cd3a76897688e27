//! Step-3 (StepFun): GRAMMARS §2.24.
//!
//! ```text
//! <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="bash"><steptml:parameter name="command">nvidia-smi --query-gpu=name --format=csv</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//! ```
//!
//! **Detects** `<｜tool_calls_begin｜>` (U+FF5C bars, **ASCII** underscores, unlike DeepSeek)
//! then calls `<｜tool_call_begin｜>function<｜tool_sep｜>` + a `steptml:invoke` element (the
//! Anthropic-style body, [`super::anthropic::invoke`]) + `<｜tool_call_end｜>`. Values are
//! converted with the tool's schema and may hold `<` (vLLM's `[^<]*` rejects that). The section
//! closer is optional.
//!
//! **Never accepts** a call type other than `function`, or a call without
//! `<｜tool_call_end｜>`.

use super::{Block, Grammar, Input, anthropic};
use crate::recover::cursor::{Step, expect_ws, optional};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "step3",
    sentinels: &["<｜tool_calls_begin｜>"],
    parse,
};

const CALL: &str = "<｜tool_call_begin｜>";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut i = expect_ws(s, body, CALL)?;
    let mut calls = Vec::new();
    loop {
        let j = expect_ws(s, i, "function")?;
        let j = expect_ws(s, j, "<｜tool_sep｜>")?;
        let (call, end) = anthropic::invoke(s, crate::recover::cursor::skip_ws(s, j))?;
        let end = expect_ws(s, end, "<｜tool_call_end｜>")?;
        calls.push(call);
        match optional(s, end, CALL, input.eof)? {
            Some(next) => i = next,
            None => {
                let close = optional(s, end, "<｜tool_calls_end｜>", input.eof)?;
                return Block::new(close.unwrap_or(end), calls);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const BASH: &str = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"bash\"><steptml:parameter name=\"command\">nvidia-smi --query-gpu=name --format=csv</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>";

    #[test]
    fn recovers_the_sample() {
        assert_eq!(
            recovers(
                BASH,
                &[(
                    "bash",
                    json!({"command": "nvidia-smi --query-gpu=name --format=csv"})
                )]
            ),
            ""
        );
    }

    #[test]
    fn recovers_several_calls_with_markup_in_values() {
        let text = "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"read_file\"><steptml:parameter name=\"limit\">5</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"bash\"><steptml:parameter name=\"command\">echo a<b</steptml:parameter></steptml:invoke><｜tool_call_end｜>";
        recovers(
            text,
            &[
                ("read_file", json!({"limit": 5})),
                ("bash", json!({"command": "echo a<b"})),
            ],
        );
    }

    #[test]
    fn ignores_look_alikes_and_the_deepseek_spelling() {
        ignores("Step-3 opens with <｜tool_calls_begin｜> then calls.");
        ignores(
            "<｜tool_calls_begin｜><｜tool_call_begin｜>plugin<｜tool_sep｜><steptml:invoke name=\"bash\"></steptml:invoke><｜tool_call_end｜>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"bash\"><steptml:parameter name=\"command\">ls</steptml:parameter></steptml:invoke><｜tool_call_end｜>",
        );
    }
}
