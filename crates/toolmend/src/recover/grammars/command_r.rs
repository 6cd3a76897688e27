//! Command R+ legacy tool use (CohereForAI c4ai-command-r-plus `tool_use` template): `Action:`
//! and a fenced JSON list of `{tool_name, parameters}`.
//!
//! ````text
//! Action:
//! ```json
//! [
//!     {
//!         "tool_name": "read_file",
//!         "parameters": {"path": "src/main.rs"}
//!     }
//! ]```
//! ````
//!
//! **Detects** `Action:` followed by a space or a line break, then ```` ```json ````, a JSON
//! array of `{"tool_name": …, "parameters": {…}}` objects, and the closing ```` ``` ```` (the
//! template writes it right after `]`, on the same line). `Action:` is the lead of the sentinel,
//! so the whole block leaves the text; here the fence is the format, not a Markdown code block.
//! Calls of undeclared tools (the template's `directly-answer`) are dropped one by one; an entry
//! whose arguments cannot be read loses only itself.
//!
//! **Never accepts** a fence that is not directly after `Action:`, a list without its closing
//! fence, or an element that is not a call object (then the list is no call list).

use serde_json::value::RawValue;

use super::{Block, Grammar, Input};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect_ws};
use crate::recover::json::{call_name, call_object, value_span};

/// The fence that opens the list.
const FENCE: &str = "```json";

/// `Action: ```json` (the model card's form).
pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "Action: ",
    family: "command_r",
    sentinels: &[FENCE],
    parse,
};

/// `Action:` + a line break + ```` ```json ```` (what the template writes).
pub(crate) const GRAMMAR_NEWLINE: Grammar = Grammar {
    lead: "Action:\n",
    family: "command_r",
    sentinels: &[FENCE],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    if s.as_bytes()
        .get(body)
        .is_some_and(|b| !b.is_ascii_whitespace())
    {
        return Err(Stop::Invalid);
    }
    let (from, to) = value_span(s, body)?;
    let items: Vec<&RawValue> = serde_json::from_str(&s[from..to]).map_err(|_| Stop::Invalid)?;
    let mut calls = Vec::with_capacity(items.len());
    for item in items {
        match call_object(item.get(), &["tool_name"], &["parameters"]) {
            Some(call) => calls.push(call),
            // A call whose arguments cannot be read: never recovered, reported as lost.
            None => match call_name(item.get(), &["tool_name"]) {
                Some(name) => calls.push(RawCall::unreadable(name, item.get().to_owned())),
                None => return Err(Stop::Invalid),
            },
        }
    }
    Block::new(expect_ws(s, to, "```")?, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TEMPLATE: &str = "Reading it.\nAction:\n```json\n[\n    {\n        \"tool_name\": \"read_file\",\n        \"parameters\": {\n            \"path\": \"src/main.rs\",\n            \"limit\": 40\n        }\n    },\n    {\n        \"tool_name\": \"directly-answer\",\n        \"parameters\": {}\n    }\n]```\n";

    #[test]
    fn recovers_the_template_form_and_the_model_card_form() {
        let read = ("read_file", json!({"path": "src/main.rs", "limit": 40}));
        assert_eq!(
            recovers(TEMPLATE, std::slice::from_ref(&read)),
            "Reading it.\n\n"
        );
        let card = "Action: ```json\n[{\"tool_name\": \"glob\", \"parameters\": {\"pattern\": \"*.rs\"}}]\n```";
        assert_eq!(recovers(card, &[("glob", json!({"pattern": "*.rs"}))]), "");
    }

    #[test]
    fn a_bad_entry_loses_only_itself() {
        let text = "Action:\n```json\n[{\"tool_name\": \"glob\", \"parameters\": 5}, {\"tool_name\": \"git_diff\", \"parameters\": {}}]\n```";
        recovers(text, &[("git_diff", json!({}))]);
    }

    #[test]
    fn ordinary_json_fences_stay_code() {
        ignores("```json\n[{\"tool_name\": \"glob\", \"parameters\": {\"pattern\": \"*\"}}]\n```");
        ignores("The action:\n```json\n[{\"tool_name\": \"glob\", \"parameters\": {}}]\n```");
        // The fence masks markup inside it as before.
        ignores("```json\n<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>\n```\n");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TEMPLATE);
    }
}
