//! Cohere Command (Command R+, Command A reasoning, Command 4): GRAMMARS §2.27.
//!
//! ```text
//! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "web_search", "parameters": {"query": "cohere rerank v3 latency"}}]<|END_ACTION|>
//! ```
//!
//! **Detects** `<|START_ACTION|>` + a JSON array of `{tool_call_id, tool_name, parameters}` +
//! `<|END_ACTION|>`; `tool_name` is the name and `parameters` the arguments. The list is read
//! entry by entry ([`call_list`], issue #28): an action whose parameters cannot be read loses
//! only itself, and two actions missing the comma between them are both read.
//!
//! **Never accepts** a block without `<|END_ACTION|>` (SGLang completes partial JSON; this does
//! not).

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, expect_ws};
use crate::recover::json::call_list;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "cohere",
    sentinels: &["<|START_ACTION|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (calls, to) = call_list(s, body, &["tool_name"], &["parameters"])?;
    Block::new(expect_ws(s, to, "<|END_ACTION|>")?, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"web_search\", \"parameters\": {\"query\": \"cohere rerank v3 latency\"}}]<|END_ACTION|>";

    #[test]
    fn recovers_the_sample_and_several_calls() {
        recovers(
            ONE,
            &[("web_search", json!({"query": "cohere rerank v3 latency"}))],
        );
        let two = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"glob\", \"parameters\": {\"pattern\": \"*\"}}, {\"tool_call_id\": \"1\", \"tool_name\": \"git_diff\", \"parameters\": {}}]<|END_ACTION|>";
        recovers(
            two,
            &[("glob", json!({"pattern": "*"})), ("git_diff", json!({}))],
        );
    }

    #[test]
    fn a_bad_action_loses_only_itself() {
        let text = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"glob\", \"parameters\": \"*.rs\"}, {\"tool_call_id\": \"1\", \"tool_name\": \"list_dir\", \"parameters\": {\"path\": \"src\"}}]<|END_ACTION|>";
        recovers(text, &[("list_dir", json!({"path": "src"}))]);
        ignores(
            "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"glob\", \"parameters\": 5}]<|END_ACTION|>",
        );
    }

    #[test]
    fn two_actions_missing_their_comma_are_both_read() {
        let text = "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"glob\", \"parameters\": {\"pattern\": \"*\"}}\n{\"tool_call_id\": \"1\", \"tool_name\": \"git_diff\", \"parameters\": {}}]<|END_ACTION|>";
        recovers(
            text,
            &[("glob", json!({"pattern": "*"})), ("git_diff", json!({}))],
        );
        rejects_truncation(text);
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Cohere opens actions with <|START_ACTION|>.");
        ignores(
            "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"web_search\", \"parameters\": {}}]",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }
}
