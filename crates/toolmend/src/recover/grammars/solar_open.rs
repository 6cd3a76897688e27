//! Solar Open (Upstage Solar Open 100B, "Solar Open 2" in vLLM's parser list).
//!
//! ```text
//! <|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>read_file<|tool_call:args|>{"path": "pom.xml"}<|tool_call:end|><|calls|>
//! ```
//!
//! **Detects** calls `<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>JSON
//! <|tool_call:end|>`, one after another, in a section opened by `<|tool_calls|>` (the
//! template writes it after `<|begin|>assistant`, which the prompt supplies) or by the first
//! call's own `<|tool_call:begin|>` (models leak the calls without it), and closed by an
//! optional `<|calls|>`. The ID is the call id the template asks for (ten lowercase letters
//! or digits; any short run of letters, digits, `_` and `-`, or none, is taken) and is not
//! kept: recovered calls get ids of their own. The arguments are one strict JSON object,
//! passed through as written. The last call's `<|tool_call:end|>` may be missing when the
//! message ends right after its complete JSON (the end-of-message policy,
//! [`super::close_or_eos`]).
//!
//! A call whose JSON is broken but reaches its own `<|tool_call:end|>` loses only itself: it
//! is reported as unreadable, and its neighbours in the section are kept (as for Kimi K2).
//!
//! **Never accepts** a call without `<|tool_call:end|>` before more text, arguments that are
//! not a strict JSON object or are cut off, a name or ID that runs on (prose), or a
//! `<|tool_calls|>` followed by anything but a call.

use super::{Block, Grammar, Input, json_call_until, section};
use crate::recover::call::RawCall;
use crate::recover::cursor::{MAX_NAME_BYTES, Step, Stop, expect_ws, find_within, name};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "solar_open",
    sentinels: &[SECTION, CALL],
    parse,
};

const SECTION: &str = "<|tool_calls|>";
const CALL: &str = "<|tool_call:begin|>";
const NAME: &str = "<|tool_call:name|>";
const ARGS: &str = "<|tool_call:args|>";
const END: &str = "<|tool_call:end|>";
const CLOSE: &str = "<|calls|>";

/// Longest call id read before `<|tool_call:name|>`: the template asks for ten characters.
const MAX_ID_BYTES: usize = 64;

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let first = if input.text[start..body] == *SECTION {
        expect_ws(input.text, body, CALL)?
    } else {
        body
    };
    section(input, first, CALL, &[CLOSE], one_call)
}

/// One call after its `<|tool_call:begin|>`: id, name, arguments and end.
fn one_call(input: &Input<'_>, i: usize) -> Step<(RawCall, usize)> {
    let s = input.text;
    let name_at = find_within(s, i, NAME, MAX_ID_BYTES)?;
    let id = s[i..name_at].trim();
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Stop::Invalid);
    }
    let from = name_at + NAME.len();
    let args_at = find_within(s, from, ARGS, MAX_NAME_BYTES)?;
    let name = name(s, from, args_at)?;
    let at = args_at + ARGS.len();
    json_call_until(input, name, at, END, &[CALL, CLOSE])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    /// As the `upstage-Solar-Open-100B` template writes two calls after `<|begin|>assistant`.
    const TWO: &str = "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>read_file<|tool_call:args|>{\"path\": \"pom.xml\", \"limit\": 40}<|tool_call:end|><|tool_call:begin|>k9x8w7v6u5<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"mvn -q test\"}<|tool_call:end|><|calls|>";

    #[test]
    fn recovers_the_template_form() {
        assert_eq!(
            recovers(
                TWO,
                &[
                    ("read_file", json!({"path": "pom.xml", "limit": 40})),
                    ("bash", json!({"command": "mvn -q test"})),
                ],
            ),
            ""
        );
    }

    #[test]
    fn recovers_calls_leaked_without_their_section_tag() {
        let text = "Checking.<|tool_call:begin|><|tool_call:name|>list_dir<|tool_call:args|>{\"path\": \"src\"}<|tool_call:end|> Done.";
        assert_eq!(
            recovers(text, &[("list_dir", json!({"path": "src"}))]),
            "Checking. Done."
        );
        let reasoning = "<|think|>Need the tree.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>0<|tool_call:name|>list_dir<|tool_call:args|>{\"path\": \"src\"}<|tool_call:end|><|calls|>";
        assert_eq!(
            recovers(reasoning, &[("list_dir", json!({"path": "src"}))]),
            "<|think|>Need the tree.<|end|><|begin|>assistant"
        );
    }

    #[test]
    fn ignores_look_alikes_and_unknown_names() {
        ignores("Solar Open opens calls with <|tool_calls|> and <|tool_call:begin|> tokens.");
        ignores(
            "<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>deploy<|tool_call:args|>{}<|tool_call:end|><|calls|>",
        );
        // An id that is prose, a name with a space: text.
        ignores(
            "<|tool_call:begin|>see below <|tool_call:name|>bash<|tool_call:args|>{\"command\": \"ls\"}<|tool_call:end|>",
        );
        ignores(
            "<|tool_call:begin|>a1<|tool_call:name|>read file<|tool_call:args|>{\"path\": \"a\"}<|tool_call:end|>",
        );
        // JSON that is not strict, or not an object.
        ignores(
            "<|tool_call:begin|>a1<|tool_call:name|>bash<|tool_call:args|>{'command': 'ls'}<|tool_call:end|>",
        );
        ignores(
            "<|tool_call:begin|>a1<|tool_call:name|>bash<|tool_call:args|>[\"ls\"]<|tool_call:end|>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }

    const ONE: &str = "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"mvn -q test\"}<|tool_call:end|><|calls|>";

    #[test]
    fn a_call_complete_at_the_end_of_the_message_needs_no_closer() {
        let text = "<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>read_file<|tool_call:args|>{\"path\": \"a.rs\"}";
        assert_eq!(
            recovers(text, &[("read_file", json!({"path": "a.rs"}))]),
            ""
        );
        ignores(&format!("{text} and then"));
    }

    #[test]
    fn a_call_with_broken_json_loses_only_itself() {
        let text = "<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"ls\"<|tool_call:end|><|tool_call:begin|>a2<|tool_call:name|>read_file<|tool_call:args|>{\"path\": \"README.md\"}<|tool_call:end|><|calls|>";
        assert_eq!(
            recovers(text, &[("read_file", json!({"path": "README.md"}))]),
            ""
        );
        let found = crate::recover::recover_text(text, &super::super::testing::tools(), 16);
        assert_eq!(found.lost.len(), 1);
        assert_eq!(found.lost[0].name, "bash");
        assert_eq!(found.lost[0].text, "{\"command\": \"ls\"");
        assert_eq!(found.lost[0].position, 0);
    }

    #[test]
    fn a_cut_off_second_call_leaves_the_first() {
        let text = "<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>list_dir<|tool_call:args|>{\"path\": \"src\"}<|tool_call:end|><|tool_call:begin|>a2<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"rm -";
        recovers(text, &[("list_dir", json!({"path": "src"}))]);
    }
}
