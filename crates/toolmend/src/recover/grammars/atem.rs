//! Muse Glimmer ATEM `<atem:function_calls>` XML, with or without its Harmony-style message
//! header.
//!
//! ```text
//! <|start|>assistant to=read_file<|message|><atem:function_calls>
//! <atem:invoke name="read_file">
//! <atem:parameter name="path">src/main.rs</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls><|eom|>
//! ```
//!
//! **Detects** `<atem:function_calls>`, one or more `<atem:invoke name="NAME">` elements holding
//! `<atem:parameter name="KEY">VALUE</atem:parameter>` children (the Anthropic body,
//! [`super::anthropic::invokes_with`]), and `</atem:function_calls>`; scanned anywhere. The
//! message around it belongs to the block: a `<|start|>assistant` header (` to=RECIPIENT` or no
//! recipient) up to `<|message|>`, a bare `<|message|>` right before the block, and one `<|eom|>`
//! or `<|call|>` right after it (`<|eot|>` ends the turn and stays text, like other families' end
//! tokens). The invoke's name decides the tool: a recipient that is missing, wrong (`to=self`,
//! `to=user`, another tool) or doubled (`to=get_weather.get_weather`) is ignored once the block
//! itself is complete and names a declared tool. A message that starts mid-header
//! (` to=read_file<|message|>…`, the prompt supplied `<|start|>assistant`) keeps its
//! ` to=read_file` as text: a stream has released it before `<|message|>` arrives.
//!
//! Values are the text between the tags, whitespace and all (the family's system prompt: "spaces
//! for string values are not stripped"; the template writes no line break around them), and are
//! converted with the tool's schema (GRAMMARS §1.8): lists and objects are written as JSON.
//!
//! **Never accepts** a block without `</atem:invoke>` or `</atem:function_calls>`, text between
//! parameters, or a header that holds anything but a recipient.

use super::{Block, Grammar, Input, anthropic};
use crate::recover::cursor::{Step, Stop, expect, expect_ws, find_within, optional, skip_ws};

/// The block's opening tag.
const OPEN: &str = "<atem:function_calls>";
/// The header's end (and, bare, the start of the message body).
const MESSAGE: &str = "<|message|>";
/// A message header with its role.
const START: &str = "<|start|>assistant";

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "atem",
    sentinels: &[OPEN, MESSAGE, START],
    parse,
};

/// Longest header (` to=RECIPIENT`) read before `<|message|>`.
const MAX_HEADER: usize = 256;

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let open = match &s[start..body] {
        OPEN => start,
        MESSAGE => skip_ws(s, body),
        _ => {
            let message = find_within(s, body, MESSAGE, MAX_HEADER)?;
            if !is_header(&s[body..message]) {
                return Err(Stop::Invalid);
            }
            skip_ws(s, message + MESSAGE.len())
        }
    };
    let inner = expect(s, open, OPEN)?;
    let (calls, end) = anthropic::invokes(s, inner, input.eof)?;
    let end = expect_ws(s, end, "</atem:function_calls>")?;
    // The message's end marker when more of the turn follows (`<|eom|>`), or the call token.
    let end = match optional(s, end, "<|eom|>", input.eof)? {
        Some(after) => after,
        None => optional(s, end, "<|call|>", input.eof)?.unwrap_or(end),
    };
    Block::new(end, calls)
}

/// Whether `header` (between `<|start|>assistant` and `<|message|>`) is empty or one
/// ` to=RECIPIENT`.
fn is_header(header: &str) -> bool {
    let header = header.trim();
    header.is_empty()
        || header
            .strip_prefix("to=")
            .is_some_and(|r| !r.is_empty() && !r.contains(|c: char| c.is_whitespace() || c == '<'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const READ: &str = "<atem:function_calls>\n<atem:invoke name=\"read_file\">\n<atem:parameter name=\"path\">src/main.rs</atem:parameter>\n<atem:parameter name=\"limit\">40</atem:parameter>\n</atem:invoke>\n</atem:function_calls>";

    #[test]
    fn recovers_a_bare_block_and_one_after_prose() {
        let read = ("read_file", json!({"path": "src/main.rs", "limit": 40}));
        assert_eq!(recovers(READ, std::slice::from_ref(&read)), "");
        let rest = recovers(&format!("Reading it.\n{READ}"), &[read]);
        assert_eq!(rest, "Reading it.\n");
    }

    #[test]
    fn the_message_framing_belongs_to_the_block() {
        // What the Muse Glimmer template renders after its `<|start|>assistant` prompt.
        let turn = format!(
            " to=edit_file<|message|>{}<|eom|><|start|>assistant to=read_file<|message|>{READ}<|eot|>",
            "<atem:function_calls>\n<atem:invoke name=\"edit_file\">\n<atem:parameter name=\"path\">a.txt</atem:parameter>\n<atem:parameter name=\"old_string\">\nx\n</atem:parameter>\n<atem:parameter name=\"new_string\">y\n</atem:parameter>\n</atem:invoke>\n</atem:function_calls>"
        );
        let rest = recovers(
            &turn,
            &[
                (
                    "edit_file",
                    json!({"path": "a.txt", "old_string": "\nx\n", "new_string": "y\n"}),
                ),
                ("read_file", json!({"path": "src/main.rs", "limit": 40})),
            ],
        );
        assert_eq!(rest, " to=edit_file<|eot|>");
    }

    #[test]
    fn a_wrong_or_missing_recipient_does_not_decide() {
        let read = ("read_file", json!({"path": "src/main.rs", "limit": 40}));
        for header in [
            "<|start|>assistant to=self<|message|>",
            "<|start|>assistant to=bash<|message|>",
            "<|start|>assistant to=read_file.read_file<|message|>",
            "<|start|>assistant<|message|>",
            "<|message|>",
        ] {
            assert_eq!(
                recovers(
                    &format!("{header}{READ}<|eom|>"),
                    std::slice::from_ref(&read)
                ),
                ""
            );
        }
    }

    #[test]
    fn values_keep_their_whitespace_and_follow_the_schema() {
        let text = "<atem:function_calls><atem:invoke name=\"write_file\"><atem:parameter name=\"content\">  indented\n</atem:parameter><atem:parameter name=\"overwrite\">true</atem:parameter></atem:invoke></atem:function_calls>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"content": "  indented\n", "overwrite": true}),
            )],
        );
    }

    #[test]
    fn ignores_look_alikes_undeclared_names_and_bad_headers() {
        ignores("Muse writes <atem:function_calls> blocks.");
        ignores("<|start|>assistant to=user<|message|>Done.<|eot|>");
        ignores(
            "<atem:function_calls><atem:invoke name=\"drop_db\"></atem:invoke></atem:function_calls>",
        );
        // A header with more than a recipient is not this family's: the block alone is.
        let rest = recovers(
            &format!("<|start|>assistant to=x y<|message|>{READ}"),
            &[("read_file", json!({"path": "src/main.rs", "limit": 40}))],
        );
        assert_eq!(rest, "<|start|>assistant to=x y");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(READ);
        rejects_truncation(&format!(
            "<|start|>assistant to=read_file<|message|>{READ}<|eom|>"
        ));
    }
}
