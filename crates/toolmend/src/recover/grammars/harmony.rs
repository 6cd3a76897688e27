//! gpt-oss Harmony (gpt-oss-20b / 120b): GRAMMARS §2.18.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants the route table.<|end|><|start|>assistant<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{"pattern":"router\\.(get|post)","path":"server"}<|call|>
//! ```
//!
//! **Detects** a message (`<|start|>assistant` …, or the first message's bare `<|channel|>` …)
//! whose header holds `to=functions.NAME` (before or after the channel, on any channel: calls on
//! `analysis` happen), whose body is a JSON object, and which ends in `<|call|>`, or at the end
//! of the message right after the object (servers strip the `<|call|>` stop token). A message
//! may start mid-header, ` to=functions.NAME<|channel|>…`, when the prompt supplied
//! `<|start|>assistant` (as the gpt-oss template does): that recipient counts, and the text
//! before `<|channel|>` stays text (a stream has released it already). A name glued
//! to its content type (`to=functions.shelljson`) loses the `json` suffix only when the stripped
//! name is declared and the full one is not. A recipient without `functions.` (`browser.search`,
//! `python`) is recovered only when a tool of exactly that name is declared.
//!
//! **Never accepts** a message ended by anything but `<|call|>` or the end of the message
//! (`<|end|>`), a message without a recipient (plain `analysis` or `final` messages stay
//! text), or the special-token-stripped form
//! (`assistantcommentary to=functions.bash json{...}`): too ambiguous.

use super::{Block, Grammar, Input};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect_ws, find_within};
use crate::recover::json::object_span;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "harmony",
    sentinels: &["<|channel|>", "<|start|>assistant"],
    parse,
};

/// Longest header (recipient, channel, content type) read before `<|message|>`.
const MAX_HEADER: usize = 256;

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let message = find_within(s, body, "<|message|>", MAX_HEADER)?;
    let header = &s[body..message];
    let recipient = header
        .split(|c: char| c.is_whitespace() || c == '<' || c == '>')
        .find_map(|word| word.strip_prefix("to="))
        .or_else(|| leading_recipient(s, start))
        .ok_or(Stop::Invalid)?;
    let name = tool_name(input, recipient).ok_or(Stop::Invalid)?;
    let (from, to) = object_span(s, message + "<|message|>".len())?;
    let end = match expect_ws(s, to, "<|call|>") {
        Ok(end) => end,
        // End of message right after the arguments: the stop token was stripped.
        Err(_) if input.message_end && s[to..].trim().is_empty() => s.len(),
        Err(stop) => return Err(stop),
    };
    Block::new(end, vec![RawCall::json(name, s[from..to].to_owned())])
}

/// The recipient of a message that starts mid-header: the text before the `<|channel|>` at
/// `start` is nothing but ` to=RECIPIENT` (the prompt ended with `<|start|>assistant`).
fn leading_recipient(s: &str, start: usize) -> Option<&str> {
    if !s[start..].starts_with("<|channel|>") {
        return None;
    }
    let recipient = s[..start].trim_start().strip_prefix("to=")?;
    let valid =
        !recipient.is_empty() && !recipient.contains(|c: char| c.is_whitespace() || c == '<');
    valid.then_some(recipient)
}

/// The tool a recipient names.
fn tool_name(input: &Input<'_>, recipient: &str) -> Option<String> {
    let name = recipient.strip_prefix("functions.").unwrap_or(recipient);
    if name.is_empty() {
        return None;
    }
    if input.tools.get(name).is_none() {
        if let Some(stripped) = name.strip_suffix("json") {
            if input.tools.get(stripped).is_some() {
                return Some(stripped.to_owned());
            }
        }
    }
    Some(name.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const READ: &str = "<|start|>assistant to=functions.read_file<|channel|>commentary json<|message|>{\"path\":\"server/index.js\",\"limit\":50}<|call|>";

    #[test]
    fn recovers_the_samples() {
        let text = "<|channel|>analysis<|message|>The user wants the route table.<|end|><|start|>assistant<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{\"pattern\":\"router\\\\.(get|post)\",\"path\":\"server\"}<|call|>";
        let rest = recovers(
            text,
            &[(
                "grep",
                json!({"pattern": "router\\.(get|post)", "path": "server"}),
            )],
        );
        assert_eq!(
            rest,
            "<|channel|>analysis<|message|>The user wants the route table.<|end|>"
        );
        recovers(
            READ,
            &[("read_file", json!({"path": "server/index.js", "limit": 50}))],
        );
    }

    #[test]
    fn strips_a_glued_json_suffix_and_accepts_the_analysis_channel() {
        let glued =
            "<|channel|>commentary to=functions.bashjson<|message|>{\"command\":\"ls\"}<|call|>";
        recovers(glued, &[("bash", json!({"command": "ls"}))]);
        let analysis =
            "<|channel|>analysis to=functions.glob<|message|>{\"pattern\":\"*\"}<|call|>";
        recovers(analysis, &[("glob", json!({"pattern": "*"}))]);
    }

    #[test]
    fn recovers_one_call_per_message() {
        let two = "<|channel|>commentary to=functions.glob <|constrain|>json<|message|>{\"pattern\":\"*.js\"}<|call|><|start|>assistant<|channel|>commentary to=functions.git_diff json<|message|>{}<|call|>";
        recovers(
            two,
            &[
                ("glob", json!({"pattern": "*.js"})),
                ("git_diff", json!({})),
            ],
        );
    }

    #[test]
    fn a_call_at_the_end_of_the_message_lacks_only_its_stop_token() {
        recovers(
            "<|start|>assistant<|channel|>commentary to=functions.read_file json<|message|>{\"path\":\"a.rs\"}\n",
            &[("read_file", json!({"path": "a.rs"}))],
        );
        // Not at the end of the message: more text follows, so no call.
        ignores("<|channel|>commentary to=functions.bash<|message|>{\"command\":\"ls\"} and more");
    }

    #[test]
    fn a_message_may_start_mid_header() {
        let rest = recovers(
            " to=functions.read_file<|channel|>commentary json<|message|>{\"path\": \"src/main.rs\", \"limit\": 40}<|call|>",
            &[("read_file", json!({"path": "src/main.rs", "limit": 40}))],
        );
        assert_eq!(rest, " to=functions.read_file");
        rejects_truncation(
            " to=functions.read_file<|channel|>commentary json<|message|>{\"path\": \"a\"}<|call|>",
        );
        // Only at the start of the message, and only a bare recipient before the channel.
        ignores(
            "Sure. to=functions.read_file<|channel|>commentary json<|message|>{\"path\": \"a\"}<|call|>",
        );
        ignores(
            "to=functions.read_file x<|channel|>commentary<|message|>{\"path\": \"a\"}<|call|>",
        );
    }

    #[test]
    fn ignores_plain_messages_builtins_and_stripped_tokens() {
        ignores("<|channel|>final<|message|>Done.<|return|>");
        ignores("<|channel|>commentary to=browser.search<|message|>{\"query\":\"x\"}<|call|>");
        ignores(
            "analysisNeed to list.assistantcommentary to=functions.bash json{\"command\":\"ls\"}",
        );
        ignores("<|channel|>commentary to=functions.bash<|message|>{\"command\":\"ls\"}<|end|>");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(READ);
    }
}
