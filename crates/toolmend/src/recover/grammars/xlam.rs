//! xLAM (Salesforce Llama-xLAM-2, xLAM-fc-r): GRAMMARS §2.21.
//!
//! ```text
//! [{"name": "web_search", "arguments": {"query": "otel collector tail sampling"}}, {"name": "read_file", "arguments": {"path": "otel/collector.yaml"}}]
//! ```
//!
//! **Detects** a bare JSON array of `{name, arguments}` objects, only as the whole trimmed
//! message (or the whole text after `</think>`), with every name declared (GRAMMARS §1.6). It
//! has no sentinel, so it has no entry in the family table: [`super::super::whole`] calls
//! [`parse_whole`]. One extra `]` right after the complete array (models close the list
//! twice) belongs to the payload.
//!
//! **Never accepts** an array inside prose or inside a ```` ```json ```` fence (vLLM does), or
//! an element that is not a call object.

use super::{Block, Input};
use crate::recover::cursor::{Step, Stop, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_array, value_span};

/// The array as the whole message.
pub(crate) fn parse_whole(input: &Input<'_>, start: usize) -> Step<Block> {
    let s = input.text;
    if s.as_bytes().get(start) != Some(&b'[') {
        return Err(Stop::Invalid);
    }
    let (from, to) = value_span(s, start)?;
    let calls = call_array(&s[from..to], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
    // A list closed twice: the extra `]` is the payload's, not text after it.
    let extra = skip_ws(s, to);
    let end = if s.as_bytes().get(extra) == Some(&b']') {
        extra + 1
    } else {
        to
    };
    Block::new(end, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = "[{\"name\": \"web_search\", \"arguments\": {\"query\": \"otel collector tail sampling\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"otel/collector.yaml\"}}]";

    #[test]
    fn recovers_the_sample() {
        recovers(
            TWO,
            &[
                (
                    "web_search",
                    json!({"query": "otel collector tail sampling"}),
                ),
                ("read_file", json!({"path": "otel/collector.yaml"})),
            ],
        );
        let after_think = format!("<think>Search first.</think>\n{TWO}\n");
        let rest = recovers(
            &after_think,
            &[
                (
                    "web_search",
                    json!({"query": "otel collector tail sampling"}),
                ),
                ("read_file", json!({"path": "otel/collector.yaml"})),
            ],
        );
        assert_eq!(rest, "<think>Search first.</think>\n\n");
    }

    #[test]
    fn ignores_arrays_in_prose_fences_and_undeclared_names() {
        ignores(&format!("Here: {TWO}"));
        ignores(&format!("```json\n{TWO}\n```"));
        ignores(
            "[{\"name\": \"web_search\", \"arguments\": {}}, {\"name\": \"deploy\", \"arguments\": {}}]",
        );
        ignores("[1, 2, 3]");
        ignores("[]");
    }

    #[test]
    fn an_extra_closing_bracket_belongs_to_the_list() {
        let rest = recovers(
            "[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}]]\n",
            &[("read_file", json!({"path": "a.rs"}))],
        );
        assert_eq!(rest, "\n");
        // Only one.
        ignores("[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}]]]");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TWO);
    }
}
