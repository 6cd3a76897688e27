//! Nemotron Nano v2 (`nemotron_json`): a JSON call list in `<TOOLCALL>` tags.
//!
//! ```text
//! <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]</TOOLCALL>
//! ```
//!
//! **Detects** `<TOOLCALL>` followed by a strict JSON array of `{name, arguments|parameters}`
//! objects (bracket-matched with string awareness), then `</TOOLCALL>`. A complete array at the
//! end of the message without `</TOOLCALL>` is a finished call: the model stopped at end of
//! sequence (the end-of-message policy of every family, [`super::close_or_eos`]).
//!
//! **Never accepts** an array that does not close or is not strict JSON, or text other than
//! blanks and end tokens between the array and the end of a message missing its closer.

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::cursor::{Step, Stop, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_list};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "nemotron",
    sentinels: &["<TOOLCALL>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let at = skip_ws(s, body);
    match s.as_bytes().get(at) {
        None => Err(Stop::Incomplete),
        Some(b'[') => {
            let (calls, to) = call_list(s, at, &["name"], ARGS_OR_PARAMETERS)?;
            Block::new(close_or_eos(input, to, "</TOOLCALL>")?, calls)
        }
        Some(_) => Err(Stop::Invalid),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"a]b.txt\"}}]</TOOLCALL>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            TWO,
            &[
                ("get_weather", json!({"city": "Paris", "days": 3})),
                ("read_file", json!({"path": "a]b.txt"})),
            ],
        );
        assert_eq!(
            recovers(
                "Checking. <TOOLCALL>[{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}]</TOOLCALL>",
                &[("list_dir", json!({"path": "src"}))],
            ),
            "Checking. "
        );
    }

    #[test]
    fn a_complete_list_at_the_end_of_the_message_is_a_call() {
        recovers(
            "<TOOLCALL>[{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}]",
            &[("list_dir", json!({"path": "src"}))],
        );
    }

    #[test]
    fn a_bad_entry_loses_only_itself() {
        recovers(
            "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": 5}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]</TOOLCALL>",
            &[("read_file", json!({"path": "a"}))],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Nemotron wraps calls in <TOOLCALL> tags.");
        ignores(
            "<TOOLCALL>[{\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}] and more text",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TWO);
    }
}
