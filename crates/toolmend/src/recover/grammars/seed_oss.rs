//! Seed-OSS (ByteDance Seed-OSS-36B): GRAMMARS §2.23.
//!
//! ```text
//! <seed:tool_call>
//! <function=grep>
//! <parameter=pattern>unsafe impl Send</parameter>
//! <parameter=path>src</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! **Detects** the Qwen3-Coder body (§2.5) inside `<seed:tool_call>` … `</seed:tool_call>`;
//! values are taken as written, line breaks at their ends included (Seed-OSS's template writes
//! `<parameter=k>VALUE</parameter>`, unlike Qwen3-Coder's), and converted with the tool's
//! schema (a non-string value trimmed first). Calls after or inside `<seed:think>` are both
//! recovered (GRAMMARS §1.5; vLLM only looks after `</seed:think>`).
//!
//! **Never accepts** a parameter without `</parameter>` (vLLM's Seed regex does not either), a
//! block without `</function>` and `</seed:tool_call>`.

use super::{Block, Grammar, Input, qwen3_coder};
use crate::recover::cursor::Step;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "seed_oss",
    sentinels: &["<seed:tool_call>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    qwen3_coder::calls(input.text, body, "</seed:tool_call>", false, true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const GREP: &str = "<seed:tool_call>\n<function=grep>\n<parameter=pattern>unsafe impl Send</parameter>\n<parameter=path>src</parameter>\n</function>\n</seed:tool_call>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            GREP,
            &[(
                "grep",
                json!({"pattern": "unsafe impl Send", "path": "src"}),
            )],
        );
        let text = "<seed:think>Need the CI config.</seed:think><seed:tool_call>\n<function=read_file>\n<parameter=path>.gitlab-ci.yml</parameter>\n</function>\n</seed:tool_call>";
        let rest = recovers(text, &[("read_file", json!({"path": ".gitlab-ci.yml"}))]);
        assert_eq!(rest, "<seed:think>Need the CI config.</seed:think>");
    }

    #[test]
    fn values_keep_their_line_breaks_and_typed_ones_are_trimmed() {
        recovers(
            "<seed:tool_call>\n<function=write_file>\n<parameter=path>a.txt</parameter>\n<parameter=content>\nx\n</parameter>\n</function>\n</seed:tool_call>",
            &[("write_file", json!({"path": "a.txt", "content": "\nx\n"}))],
        );
        recovers(
            "<seed:tool_call>\n<function=read_file>\n<parameter=path>a.txt</parameter>\n<parameter=limit> 420\n</parameter>\n</function>\n</seed:tool_call>",
            &[("read_file", json!({"path": "a.txt", "limit": 420}))],
        );
    }

    #[test]
    fn recovers_several_blocks_and_inside_think() {
        let text = format!("<seed:think>try {GREP}</seed:think>{GREP}");
        let pair = (
            "grep",
            json!({"pattern": "unsafe impl Send", "path": "src"}),
        );
        assert_eq!(
            recovers(&text, &[pair.clone(), pair]),
            "<seed:think>try </seed:think>"
        );
    }

    #[test]
    fn ignores_look_alikes_and_unclosed_parameters() {
        ignores("Seed emits <seed:tool_call> blocks.");
        ignores(
            "<seed:tool_call>\n<function=grep>\n<parameter=pattern>x\n</function>\n</seed:tool_call>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(GREP);
    }
}
