//! Poolside Laguna's JSON variant: a name line + JSON arguments inside `<tool_call>`.
//!
//! ```text
//! <tool_call>read_file
//! {"path": "src/main.rs", "limit": 40}
//! </tool_call>
//! ```
//!
//! Laguna's template writes GLM's `<arg_key>`/`<arg_value>` pairs ([`super::glm`] reads those);
//! the model also writes its arguments as one JSON object on the line after the name (Ollama's
//! Laguna parser reads both).
//!
//! **Detects** `<tool_call>`, the name up to its line break ([`super::glm::name_line`]), a JSON
//! object, and `</tool_call>` (or the end of the message right after the object, GRAMMARS
//! §1.3). The object passes through as written. A repeated opener before the first call is
//! closed belongs to the block: an empty one (`<tool_call>\n<tool_call>read_file\n{…}`), and
//! a first attempt the model wrote again whole before closing it
//! (`<tool_call>skill\n{…}\n<tool_call>skill\n{…}</tool_call>`, the same name and the same
//! arguments): one call.
//!
//! **Never accepts** a first attempt that differs from the call that follows it (that call is
//! recovered on its own, the attempt stays text), arguments that are not an object, or a
//! missing closer before more text.

use serde_json::Value;

use super::glm::name_line;
use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::{Args, RawCall};
use crate::recover::cursor::{Step, Stop, expect_ws, peek_ws};
use crate::recover::json::object_span;

/// The block's opener and closer.
const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "laguna",
    sentinels: &[OPEN],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut at = body;
    // An empty repeated opener.
    while let Some(next) = peek_ws(s, at, OPEN)? {
        at = next;
    }
    let (call, end) = call(input, at)?;
    Block::new(end, vec![call])
}

/// `NAME\n{json}` at `at`, and the index after its closer.
fn call(input: &Input<'_>, at: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let (name, line_end) = name_line(s, at)?;
    if s.as_bytes().get(line_end) != Some(&b'\n') {
        return Err(Stop::Invalid);
    }
    let (from, to) = object_span(s, line_end)?;
    let call = RawCall::json(name, s[from..to].to_owned());
    // The same call again before this one was closed: the first attempt was abandoned.
    match expect_ws(s, to, OPEN) {
        Ok(again) => {
            let (next, end) = call_after_openers(input, again)?;
            return if same(&call, &next) {
                Ok((next, end))
            } else {
                Err(Stop::Invalid)
            };
        }
        // More text may still bring the opener (or the closer).
        Err(Stop::Incomplete) if !input.eof => return Err(Stop::Incomplete),
        Err(_) => {}
    }
    Ok((call, close_or_eos(input, to, CLOSE)?))
}

/// [`call`] after any further empty openers.
fn call_after_openers(input: &Input<'_>, mut at: usize) -> Step<(RawCall, usize)> {
    while let Some(next) = peek_ws(input.text, at, OPEN)? {
        at = next;
    }
    call(input, at)
}

/// Whether two calls have the same name and the same arguments (as JSON values).
fn same(a: &RawCall, b: &RawCall) -> bool {
    let value = |call: &RawCall| match &call.args {
        Args::Json(text) => serde_json::from_str::<Value>(text).ok(),
        Args::Fields(_) | Args::Unreadable(_) => None,
    };
    a.name == b.name && value(a).is_some() && value(a) == value(b)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const READ: &str =
        "<tool_call>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}\n</tool_call>";

    fn read() -> (&'static str, serde_json::Value) {
        ("read_file", json!({"path": "src/main.rs", "limit": 40}))
    }

    #[test]
    fn recovers_a_name_line_and_json_arguments() {
        assert_eq!(recovers(READ, &[read()]), "");
        let two =
            format!("Reading both.\n{READ}\n<tool_call>bash\n{{\"command\": \"ls\"}}</tool_call>");
        let rest = recovers(&two, &[read(), ("bash", json!({"command": "ls"}))]);
        assert_eq!(rest, "Reading both.\n\n");
        // End of message right after the object.
        recovers(
            "<tool_call>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}\n",
            &[read()],
        );
    }

    #[test]
    fn a_repeated_opener_before_the_first_call_is_closed() {
        let empty = "<tool_call>\n<tool_call>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}</tool_call>";
        assert_eq!(recovers(empty, &[read()]), "");
        let again = "<tool_call>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}\n<tool_call>read_file\n{\"limit\": 40, \"path\": \"src/main.rs\"}</tool_call>";
        assert_eq!(recovers(again, &[read()]), "");
        // A different first attempt stays text; the closed call is recovered on its own.
        let changed = "<tool_call>bash\n{\"command\": \"rm -rf build\"}\n<tool_call>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}</tool_call>";
        assert_eq!(
            recovers(changed, &[read()]),
            "<tool_call>bash\n{\"command\": \"rm -rf build\"}\n"
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("<tool_call>read_file\n{\"path\": \"a\"} and more");
        ignores("<tool_call>read_file {\"path\": \"a\"}</tool_call>");
        ignores("<tool_call>deploy\n{\"env\": \"prod\"}</tool_call>");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(READ);
    }
}
