//! Llama 3.1 / 3.2 / 3.3 JSON (`llama3_json`, `llama4_json`): GRAMMARS §2.11.
//!
//! ```text
//! <|python_tag|>{"name": "bash", "parameters": {"command": "ruff check --fix ."}}
//! ```
//!
//! **Detects** `<|python_tag|>` followed by one or more `{"name", "parameters"|"arguments"}`
//! objects joined by `;`. The end is end of sequence, so a call is complete when its object
//! closes. Without the tag, the same payload is recovered only as the whole message
//! ([`parse_whole`], GRAMMARS §1.6).
//!
//! The built-in form `<|python_tag|>brave_search.call(query="…")` is read as a pythonic call and
//! kept only when a tool of that exact name is declared (no engine maps built-ins to declared
//! tools; GRAMMARS §2.11 leaves them out of scope otherwise).
//!
//! **Never accepts** JSON found elsewhere in prose (vLLM raw-decodes at every `{`), an object
//! that does not close, or raw code-interpreter Python after the tag.
//!
//! Policy for JSON in prose (issue #28: `Here is the result: {"name": …, "parameters": {…}}
//! Would you like…`, or several joined by `;`): not recovered. A declared name with exactly the
//! family's keys `{"name", "parameters"}` is strong evidence of the *shape*, not of intent:
//! models quote a call as an example ("the call would be …"), and a call run from an example
//! cannot be taken back (never invent intent). The tag, or a message that is nothing but the
//! payload, is the model's own statement that it is calling.

use super::{Block, Grammar, Input, pythonic};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect, name_until, optional, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "llama",
    sentinels: &["<|python_tag|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    match input.text.as_bytes().get(skip_ws(input.text, body)) {
        None => Err(Stop::Incomplete),
        Some(b'{') => objects(input, body),
        Some(_) => builtin(input.text, body),
    }
}

/// A built-in tool call, `NAME.call(key=literal, ...)`: recovered only when a tool of that
/// name is declared (the name filter sees to that).
fn builtin(s: &str, at: usize) -> Step<Block> {
    let (name, dot) = name_until(s, skip_ws(s, at), b".")?;
    let call_at = expect(s, dot, ".")?;
    let (call, end) = pythonic::call(s, call_at)?;
    if call.name != "call" {
        return Err(Stop::Invalid);
    }
    Block::new(
        end,
        vec![RawCall {
            name,
            args: call.args,
        }],
    )
}

/// The bare payload as the whole message (see [`super::super::whole`]).
pub(crate) fn parse_whole(input: &Input<'_>, start: usize) -> Step<Block> {
    objects(input, start)
}

/// `OBJ (; OBJ)*` from `at`.
fn objects(input: &Input<'_>, at: usize) -> Step<Block> {
    let s = input.text;
    let mut calls = Vec::new();
    let mut i = at;
    loop {
        let (from, to) = object_span(s, i)?;
        calls.push(call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?);
        match optional(s, to, ";", input.eof)? {
            // `; ` then another object; a `;` followed by anything else ends the block before it.
            Some(next) => match object_span(s, next) {
                Ok(_) => i = next,
                Err(Stop::Incomplete) if !input.eof => return Err(Stop::Incomplete),
                Err(_) => return Block::new(to, calls),
            },
            None => return Block::new(to, calls),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TAGGED: &str =
        "<|python_tag|>{\"name\": \"bash\", \"parameters\": {\"command\": \"ruff check --fix .\"}}";

    #[test]
    fn recovers_the_samples() {
        recovers(
            TAGGED,
            &[("bash", json!({"command": "ruff check --fix ."}))],
        );
        let whole = "{\"name\": \"web_search\", \"parameters\": {\"query\": \"uv workspace dependency groups\"}}";
        recovers(
            whole,
            &[(
                "web_search",
                json!({"query": "uv workspace dependency groups"}),
            )],
        );
        let spaced = "\n  {\"name\": \"web_search\", \"parameters\": {\"query\": \"x\"}}\n";
        assert_eq!(
            recovers(spaced, &[("web_search", json!({"query": "x"}))]),
            "\n  \n"
        );
    }

    #[test]
    fn recovers_several_calls_joined_by_semicolons() {
        let text = "<|python_tag|>{\"name\": \"glob\", \"parameters\": {\"pattern\": \"*.py\"}}; {\"name\": \"git_diff\", \"arguments\": {}}";
        recovers(
            text,
            &[
                ("glob", json!({"pattern": "*.py"})),
                ("git_diff", json!({})),
            ],
        );
        let whole = "<think>two</think>{\"name\": \"glob\", \"parameters\": {\"pattern\": \"*\"}};{\"name\": \"git_diff\", \"parameters\": {}}";
        assert_eq!(
            recovers(
                whole,
                &[("glob", json!({"pattern": "*"})), ("git_diff", json!({}))]
            ),
            "<think>two</think>"
        );
    }

    #[test]
    fn recovers_a_declared_builtin_only() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "brave_search"}]));
        let text = "<|python_tag|>brave_search.call(query=\"rust 2024 edition\")<|eom_id|>";
        let found = crate::recover::recover_text(text, &tools, 16);
        assert_eq!(found.calls[0].name, "brave_search");
        assert_eq!(found.calls[0].arguments, r#"{"query":"rust 2024 edition"}"#);
        assert_eq!(found.text, "<|eom_id|>");
        ignores("<|python_tag|>wolfram_alpha.call(query=\"2+2\")");
        ignores("<|python_tag|>import os\nprint(os.getcwd())");
    }

    #[test]
    fn ignores_json_in_prose() {
        ignores(
            "Call it like {\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}} when needed.",
        );
        ignores("{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}} is the call.");
        ignores("{\"name\": \"deploy\", \"parameters\": {}}");
        ignores("```json\n{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}\n```");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TAGGED);
    }
}
