//! Cohere Command (Command R+, Command A reasoning, Command 4): GRAMMARS §2.27.
//!
//! ```text
//! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "web_search", "parameters": {"query": "cohere rerank v3 latency"}}]<|END_ACTION|>
//! ```
//!
//! **Detects** `<|START_ACTION|>` + a JSON array of `{tool_call_id, tool_name, parameters}` +
//! `<|END_ACTION|>`; `tool_name` is the name and `parameters` the arguments.
//!
//! **Never accepts** a block without `<|END_ACTION|>` (SGLang completes partial JSON; this does
//! not).

use serde_json::value::RawValue;

use super::{Block, Grammar, Input};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect_ws};
use crate::recover::json::{call_object, value_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "cohere",
    sentinels: &["<|START_ACTION|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (from, to) = value_span(s, body)?;
    let items: Vec<&RawValue> = serde_json::from_str(&s[from..to]).map_err(|_| Stop::Invalid)?;
    let calls = items
        .iter()
        .map(|item| call_object(item.get(), &["tool_name"], &["parameters"]))
        .collect::<Option<Vec<RawCall>>>()
        .ok_or(Stop::Invalid)?;
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
