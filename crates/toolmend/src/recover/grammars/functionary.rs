//! functionary v3.2 (MeetKai functionary-small/medium v3.2): `>>>NAME` + a JSON object.
//!
//! ```text
//! >>>read_file
//! {"path": "src/main.rs", "limit": 40}>>>edit_file
//! {"path": "a.txt", "old_string": "x", "new_string": "y"}
//! ```
//!
//! **Detects** `>>>`, a declared-looking name up to the line break, and a JSON object: one call
//! per `>>>`. The family has no closing token, so a call is complete when its object closes and
//! what follows is the next `>>>`, or nothing but whitespace and end tokens to the end of the
//! message (GRAMMARS §1.3). The template's generation prompt ends with `>>>`, so the model's
//! first call usually starts with its bare name: a message that *starts* with `NAME\n{json}`,
//! NAME a declared tool, is read as the first call, under the whole-message policy of
//! GRAMMARS §1.6 ([`parse_whole`]: the whole message, or the whole text after `</think>`, is
//! then calls and nothing else, any later ones behind `>>>`).
//!
//! **Never accepts** `>>>all` (the recipient of plain text), `>>>python` followed by raw code
//! (not JSON), a call followed by more text, a name with spaces (Python's `>>> ` prompt), or a
//! message that starts with a name not declared.

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::RawCall;
use crate::recover::cursor::{MAX_NAME_BYTES, Step, Stop, name_until, reach, skip_ws};
use crate::recover::json::object_span;

/// The recipient marker.
const MARK: &str = ">>>";

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "functionary",
    sentinels: &[MARK],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let (call, end) = call(input, body)?;
    Block::new(end, vec![call])
}

/// One `NAME\n{json}` at `at`, and the index where the call's block ends.
fn call(input: &Input<'_>, at: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let (name, line_end) = name_until(s, at, b"\n")?;
    if name == "all" || s[at..line_end].trim() != &s[at..line_end] {
        return Err(Stop::Invalid);
    }
    let (from, to) = object_span(s, line_end + 1)?;
    // The next `>>>` starts the next call (its own block); the end of the message ends this one.
    let end = match close_or_eos(input, to, MARK)? {
        end if s[..end].ends_with(MARK) => to,
        end => end,
    };
    Ok((RawCall::json(name, s[from..to].to_owned()), end))
}

/// The message as functionary calls: the first with the prompt's `>>>` already written
/// (`NAME\n{json}` at `start`, NAME declared), each later one behind its own `>>>`.
///
/// Rules out prose within its first word: a byte no name holds, or a start that no declared
/// name begins with, is `Invalid` at once, so a streamed message is not held back while it
/// cannot be a call.
pub(crate) fn parse_whole(input: &Input<'_>, start: usize) -> Step<Block> {
    let s = input.text;
    let b = s.as_bytes();
    let mut i = start;
    loop {
        reach(i);
        match b.get(i) {
            None => return Err(Stop::Incomplete),
            Some(b'\n') => break,
            Some(&c) if c.is_ascii_whitespace() || b"<>\"'{}[]()`,;=".contains(&c) => {
                return Err(Stop::Invalid);
            }
            Some(_) if i - start >= MAX_NAME_BYTES => return Err(Stop::Invalid),
            Some(_) => i += 1,
        }
        let prefix = s.get(start..i).unwrap_or_default();
        if !prefix.is_empty() && !input.tools.iter().any(|t| t.name().starts_with(prefix)) {
            return Err(Stop::Invalid);
        }
    }
    if input.tools.get(&s[start..i]).is_none() {
        return Err(Stop::Invalid);
    }
    let mut calls = Vec::new();
    let mut at = start;
    loop {
        let (call, end) = call(input, at)?;
        calls.push(call);
        let next = skip_ws(s, end);
        if !s[next..].starts_with(MARK) {
            return Block::new(end, calls);
        }
        at = next + MARK.len();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = ">>>edit_file\n{\"path\": \"a.txt\", \"old_string\": \"x\", \"new_string\": \"y\"}>>>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}";

    fn two() -> [(&'static str, serde_json::Value); 2] {
        [
            (
                "edit_file",
                json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
            ),
            ("read_file", json!({"path": "src/main.rs", "limit": 40})),
        ]
    }

    #[test]
    fn recovers_calls_behind_their_marks() {
        assert_eq!(recovers(TWO, &two()), "");
        let rest = recovers(&format!(">>>all\nEditing now.\n{TWO}<|eot_id|>"), &two());
        assert_eq!(rest, ">>>all\nEditing now.\n<|eot_id|>");
    }

    #[test]
    fn a_message_may_start_with_the_bare_name_the_prompt_left_open() {
        let bare = &TWO[3..];
        assert_eq!(recovers(&format!("{bare}<|eot_id|>"), &two()), "");
        recovers(
            "read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}",
            &[("read_file", json!({"path": "src/main.rs", "limit": 40}))],
        );
        // Only a declared name, and only as the whole message.
        ignores("deploy\n{\"env\": \"prod\"}");
        ignores("read_file\n{\"path\": \"a\"} is what I would send.");
        ignores("Sure.\nread_file\n{\"path\": \"a\"}");
    }

    #[test]
    fn ignores_text_python_and_prompts() {
        ignores(">>>all\nHello there.");
        ignores(">>> import os\n>>> os.getcwd()");
        ignores(">>>python\nprint(1)");
        ignores(">>>bash\n{\"command\": \"ls\"} and then more");
        ignores("Quote:\n>>>read_file\n{\"path\": \"a\"}\nThat is the format.");
    }

    #[test]
    fn rejects_truncated_calls() {
        // One call each: a message cut after a whole call ends there, and that call counts.
        let one = ">>>read_file\n{\"path\": \"src/main.rs\", \"limit\": 40}";
        rejects_truncation(one);
        rejects_truncation(&one[3..]);
        rejects_truncation(&format!(">>>all\nReading.\n{one}<|eot_id|>"));
    }
}
