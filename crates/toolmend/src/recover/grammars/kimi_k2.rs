//! Kimi K2 (K2-Instruct, K2-Thinking, K2.5 and later): GRAMMARS §2.7.
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.run_tests:4<|tool_call_argument_begin|>{"filter": "snapshot", "update": true}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! **Detects** a section (`<|tool_calls_section_begin|>`, or the singular
//! `<|tool_call_section_begin|>`) of calls `<|tool_call_begin|>ID<|tool_call_argument_begin|>
//! JSON<|tool_call_end|>`. The name is the ID without its `:INDEX` suffix (split on the last
//! `:`) and without a leading `functions.`: dotted MCP names and hyphens are kept (vLLM keeps
//! only the last dotted segment; SGLang rejects hyphens). Multi-line JSON is fine. The section
//! closer is optional (GRAMMARS §1.3), and so is the last call's `<|tool_call_end|>` when the
//! message ends right after its complete JSON (K2-Thinking stops so: the end-of-message policy,
//! [`super::close_or_eos`]).
//!
//! A call whose JSON is broken but reaches its own `<|tool_call_end|>` is left out and
//! reported as lost ([`crate::recover::LostCall`]); its valid neighbours in the section are
//! kept.
//!
//! **Never accepts** a call without `<|tool_call_end|>` before more text, arguments that are
//! not a strict JSON object, or cut off.

use super::{Block, Grammar, Input, json_call_until, section};
use crate::recover::call::RawCall;
use crate::recover::cursor::{MAX_NAME_BYTES, Step, expect_ws, find_within, name};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "kimi_k2",
    sentinels: &[
        "<|tool_calls_section_begin|>",
        "<|tool_call_section_begin|>",
    ],
    parse,
};

const CALL: &str = "<|tool_call_begin|>";
const ARGS: &str = "<|tool_call_argument_begin|>";
const END: &str = "<|tool_call_end|>";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let first = expect_ws(input.text, body, CALL)?;
    section(
        input,
        first,
        CALL,
        &["<|tool_calls_section_end|>", "<|tool_call_section_end|>"],
        one_call,
    )
}

/// One call after its `<|tool_call_begin|>`: `functions.NAME:IDX` + arguments + end.
fn one_call(input: &Input<'_>, i: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let args_at = find_within(s, i, ARGS, MAX_NAME_BYTES + 16)?;
    let id = s[i..args_at].trim();
    let id = id.rsplit_once(':').map_or(id, |(name, _index)| name);
    let id = id.strip_prefix("functions.").unwrap_or(id);
    let name = name(id, 0, id.len())?;
    let at = args_at + ARGS.len();
    json_call_until(input, name, at, END, &[CALL, "<|tool_calls_section_end|>"])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<|tool_calls_section_begin|><|tool_call_begin|>functions.run_tests:4<|tool_call_argument_begin|>{\"filter\": \"snapshot\", \"update\": true}<|tool_call_end|>";

    #[test]
    fn recovers_the_samples() {
        let text = format!("{ONE}<|tool_calls_section_end|>");
        assert_eq!(
            recovers(
                &text,
                &[("run_tests", json!({"filter": "snapshot", "update": true}))]
            ),
            ""
        );
        let two = "Both at once.<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.glob:5<|tool_call_argument_begin|>{\"pattern\": \"**/*.snap\"}<|tool_call_end|>\n<|tool_call_begin|>functions.bash:6<|tool_call_argument_begin|>{\"command\": \"git status --porcelain\"}<|tool_call_end|>\n<|tool_calls_section_end|>";
        let rest = recovers(
            two,
            &[
                ("glob", json!({"pattern": "**/*.snap"})),
                ("bash", json!({"command": "git status --porcelain"})),
            ],
        );
        assert_eq!(rest, "Both at once.");
    }

    #[test]
    fn keeps_dotted_and_hyphenated_names_and_multiline_json() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "fs.read-file"}]));
        let text = "<|tool_call_section_begin|><|tool_call_begin|>functions.fs.read-file:0<|tool_call_argument_begin|>{\n  \"path\": \"a\"\n}<|tool_call_end|><|tool_call_section_end|>";
        let found = crate::recover::recover_text(text, &tools, 16);
        assert_eq!(found.calls.len(), 1);
        assert_eq!(found.calls[0].name, "fs.read-file");
        assert_eq!(found.text, "");
    }

    #[test]
    fn ignores_look_alikes_and_unknown_names() {
        ignores("Kimi uses <|tool_calls_section_begin|> to open calls.");
        ignores(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.deploy:1<|tool_call_argument_begin|>{}<|tool_call_end|>",
        );
    }

    #[test]
    fn a_call_with_broken_json_does_not_lose_its_valid_neighbour() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0<|tool_call_argument_begin|>{\"command\": \"ls\"<|tool_call_end|><|tool_call_begin|>functions.read_file:1<|tool_call_argument_begin|>{\"path\": \"README.md\"}<|tool_call_end|><|tool_calls_section_end|>";
        assert_eq!(
            recovers(text, &[("read_file", json!({"path": "README.md"}))]),
            ""
        );
        ignores(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0<|tool_call_argument_begin|>{\"command\": ls}<|tool_call_end|><|tool_calls_section_end|>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }

    #[test]
    fn a_call_complete_at_the_end_of_the_message_needs_no_closer() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"a.rs\"}\n";
        assert_eq!(
            recovers(text, &[("read_file", json!({"path": "a.rs"}))]),
            ""
        );
        rejects_truncation(text);
        // More text after it: not the end of the message, no call.
        ignores(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"a.rs\"} and then",
        );
    }

    #[test]
    fn a_cut_off_second_call_leaves_the_first() {
        let text = format!(
            "{ONE}<|tool_call_begin|>functions.run_tests:5<|tool_call_argument_begin|>{{\"filter\": \"sn"
        );
        recovers(
            &text,
            &[("run_tests", json!({"filter": "snapshot", "update": true}))],
        );
    }
}
