//! xLAM (Salesforce Llama-xLAM-2, xLAM-fc-r): GRAMMARS §2.21.
//!
//! ```text
//! [{"name": "web_search", "arguments": {"query": "otel collector tail sampling"}}, {"name": "read_file", "arguments": {"path": "otel/collector.yaml"}}]
//! ```
//!
//! **Detects** a bare JSON array of `{name, arguments}` objects, only as the whole trimmed
//! message (or the whole text after `</think>`), with every name declared (GRAMMARS §1.6). It
//! has no sentinel: [`super::super::whole`] calls [`parse_whole`]. One extra `]` right after the
//! complete array (models close the list twice) belongs to the payload.
//!
//! **The fenced form** ([`GRAMMAR_FENCED`]): xLAM models also wrap the list in a ```` ```json ````
//! (or bare ```` ``` ````) fence, and for this family the fence *is* the format (vLLM's xLAM
//! parser reads it). Every other family keeps the rule that nothing inside a code fence is a
//! call, so the family must be known from the fence alone, without a model name (recovery
//! never sees one): the fence opens a line, its whole content is a JSON array whose every
//! element has exactly the keys `name` and `arguments` (an object) and names a declared tool,
//! the fence closes on its own line, and nothing but whitespace and end tokens follows it to
//! the end of the message (the model stopped after its calls). Prose before the fence stays
//! text. A list with any other key (`parameters`, `id`), an undeclared name, or text after the
//! fence leaves the fence a code block, its content masked as before.
//!
//! **Never accepts** an array inside prose, an element that is not a call object, or (fenced)
//! anything short of the rules above.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, find_within, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_array, value_span};

/// The fenced list (see the module doc); its sentinels are the fence openers.
pub(crate) const GRAMMAR_FENCED: Grammar = Grammar {
    lead: "",
    family: "xlam",
    sentinels: &["```json", "```"],
    parse: parse_fenced,
};

/// Longest info string read on a fence's opening line.
const MAX_INFO: usize = 64;

/// Text no message holds: [`close_or_eos`] with it decides by the end of the message alone.
const NO_CLOSER: &str = "\u{0}\u{0}";

fn parse_fenced(input: &Input<'_>, start: usize, _body: usize) -> Step<Block> {
    let s = input.text;
    let b = s.as_bytes();
    if indent_before(b, start).is_none() {
        return Err(Stop::Invalid);
    }
    let run = b[start..].iter().take_while(|&&c| c == b'`').count();
    let line_end = find_within(s, start + run, "\n", MAX_INFO)?;
    if !matches!(s[start + run..line_end].trim(), "" | "json") {
        return Err(Stop::Invalid);
    }
    let (from, to) = value_span(s, line_end + 1)?;
    if b[from] != b'[' {
        return Err(Stop::Invalid);
    }
    let calls = exact_calls(&s[from..to]).ok_or(Stop::Invalid)?;
    // The closing fence, on its own line: a run at least as long, then only blanks.
    let close = skip_ws(s, to);
    if close == s.len() {
        return Err(Stop::Incomplete);
    }
    if !s[to..close].contains('\n') || indent_before(b, close).is_none() {
        return Err(Stop::Invalid);
    }
    let close_run = b[close..].iter().take_while(|&&c| c == b'`').count();
    if close + close_run == s.len() && !input.eof {
        return Err(Stop::Incomplete);
    }
    if close_run < run {
        return Err(Stop::Invalid);
    }
    let after = close + close_run;
    let line = after
        + b[after..]
            .iter()
            .take_while(|&&c| c == b' ' || c == b'\t' || c == b'\r')
            .count();
    if !matches!(b.get(line), None | Some(b'\n')) {
        return Err(Stop::Invalid);
    }
    Block::new(close_or_eos(input, after, NO_CLOSER)?, calls)
}

/// The number of spaces (at most 3) between the line's start and `at`, or `None` when `at` does
/// not open a line.
fn indent_before(b: &[u8], at: usize) -> Option<usize> {
    let indent = b[..at]
        .iter()
        .rev()
        .take(4)
        .take_while(|&&c| c == b' ')
        .count();
    (indent <= 3 && (at == indent || b[at - indent - 1] == b'\n')).then_some(indent)
}

/// The calls of an array whose every element has exactly the keys `name` (a string) and
/// `arguments` (an object): the xLAM key set, the evidence that the fence is this family's.
fn exact_calls(text: &str) -> Option<Vec<RawCall>> {
    let items: Vec<BTreeMap<&str, &RawValue>> = serde_json::from_str(text).ok()?;
    if items.is_empty() {
        return None;
    }
    items
        .into_iter()
        .map(|fields| {
            let keys: Vec<&str> = fields.keys().copied().collect();
            if keys != ["arguments", "name"] {
                return None;
            }
            let name: String = serde_json::from_str(fields["name"].get()).ok()?;
            let args = fields["arguments"].get().trim();
            args.starts_with('{')
                .then(|| RawCall::json(name, args.to_owned()))
        })
        .collect()
}

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
    fn ignores_arrays_in_prose_and_undeclared_names() {
        ignores(&format!("Here: {TWO}"));
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
        rejects_truncation(&format!("```json\n{TWO}\n```"));
    }

    #[test]
    fn a_fenced_list_with_the_exact_key_set_ending_the_message_is_xlams() {
        let calls = [
            (
                "web_search",
                json!({"query": "otel collector tail sampling"}),
            ),
            ("read_file", json!({"path": "otel/collector.yaml"})),
        ];
        assert_eq!(recovers(&format!("```json\n{TWO}\n```"), &calls), "");
        let rest = recovers(
            &format!("I'll search first.\n```\n{TWO}\n```\n<|eot_id|>"),
            &calls,
        );
        assert_eq!(rest, "I'll search first.\n<|eot_id|>");
    }

    #[test]
    fn any_other_fence_stays_code() {
        // Text after the fence, another key, an undeclared name, another info string.
        ignores(&format!(
            "```json\n{TWO}\n```\nThat is how you would call them."
        ));
        ignores("```json\n[{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}]\n```");
        ignores("```json\n[{\"name\": \"read_file\", \"arguments\": {}, \"id\": 1}]\n```");
        ignores("```json\n[{\"name\": \"deploy\", \"arguments\": {}}]\n```");
        ignores(&format!("```python\n{TWO}\n```"));
        ignores(&format!("Say ```json {TWO}```"));
        // The fence still masks other markup.
        ignores("```json\n<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>\n```\n");
    }
}
