//! Hunyuan (A13B, HY v3, Hy3) and Jamba 1.5: GRAMMARS §2.22.
//!
//! ```text
//! <tool_calls><tool_call>read_file<tool_sep><arg_key>path</arg_key><arg_value>deploy/values-prod.yaml</arg_value></tool_call><tool_call>list_dir<tool_sep><arg_key>path</arg_key><arg_value>deploy</arg_value></tool_call></tool_calls>
//! <tool_calls:opensource>
//! <tool_call:opensource>read_file<tool_sep:opensource>
//! <arg_key:opensource>path</arg_key:opensource>
//! <arg_value:opensource>deploy/values-prod.yaml</arg_value:opensource>
//! </tool_call:opensource>
//! </tool_calls:opensource>
//! ```
//!
//! **Detects** `<tool_calls>` followed by either a JSON array of `{name, arguments}` objects
//! (Hunyuan-A13B, Jamba) or HY v3 calls `<tool_call>NAME<tool_sep>` + `<arg_key>`/`<arg_value>`
//! pairs + `</tool_call>` (values converted with the tool's schema), then `</tool_calls>`.
//! Blocks inside `<think>` are recovered (vLLM's A13B parser skips them; GRAMMARS §1.5).
//!
//! **Hy3** (`tencent-Hy3`, the `hy_v4` parser in vLLM) writes the same HY v3 markup with a
//! checkpoint suffix baked into every tag: `<tool_calls:opensource>`, `<tool_sep:opensource>`,
//! `<arg_key:opensource>`, … (vLLM reads the suffix from the tokenizer: `:opensource`,
//! `:6124c78e`). Recovery has no tokenizer, so the suffix is read from the opening
//! `<tool_calls:SUFFIX>` (ASCII letters, digits and `_`, at most 32) and every tag of the
//! block must carry that same suffix.
//!
//! **Never accepts** a block without `</tool_calls>`, JSON that is not strict, or a suffixed
//! block whose tags change or drop the suffix (`<tool_calls:opensource><tool_call>…` stays
//! text).

use super::glm::{self, PairTags};
use super::{Block, Grammar, Input};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect_ws, name_until, peek_ws, skip_ws};
use crate::recover::json::call_list;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "hunyuan",
    sentinels: &["<tool_calls>"],
    parse,
};

/// Hy3: the same markup, every tag with a checkpoint suffix (`<tool_calls:opensource>`).
pub(crate) const GRAMMAR_SUFFIXED: Grammar = Grammar {
    lead: "",
    family: "hunyuan",
    sentinels: &["<tool_calls:"],
    parse: parse_suffixed,
};

/// Longest checkpoint suffix read after `<tool_calls:` (vLLM's are 8 to 10 bytes).
const MAX_SUFFIX_BYTES: usize = 32;

/// The tags of one block, all carrying the block's suffix (empty for HY v3).
struct Tags {
    calls_end: String,
    call: String,
    call_end: String,
    sep: String,
    key: String,
    key_end: String,
    value: String,
    value_end: String,
}

impl Tags {
    fn with_suffix(suffix: &str) -> Self {
        let tag = |name: &str| format!("<{name}{suffix}>");
        Self {
            calls_end: tag("/tool_calls"),
            call: tag("tool_call"),
            call_end: tag("/tool_call"),
            sep: tag("tool_sep"),
            key: tag("arg_key"),
            key_end: tag("/arg_key"),
            value: tag("arg_value"),
            value_end: tag("/arg_value"),
        }
    }

    fn pairs(&self) -> PairTags<'_> {
        PairTags {
            key: &self.key,
            key_end: &self.key_end,
            value: &self.value,
            value_end: &self.value_end,
        }
    }
}

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    calls(input, body, &Tags::with_suffix(""))
}

/// `<tool_calls:SUFFIX>`: `body` is just after the colon.
fn parse_suffixed(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let b = input.text.as_bytes();
    let mut i = body;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        if i - body >= MAX_SUFFIX_BYTES {
            return Err(Stop::Invalid);
        }
        i += 1;
    }
    match b.get(i) {
        None => Err(Stop::Incomplete),
        Some(b'>') if i > body => {
            // The suffix with its colon (`:opensource`).
            let suffix = &input.text[body - 1..i];
            calls(input, i + 1, &Tags::with_suffix(suffix))
        }
        Some(_) => Err(Stop::Invalid),
    }
}

/// The block's calls from `body` (just after the opening tag) through its closing tag.
fn calls(input: &Input<'_>, body: usize, tags: &Tags) -> Step<Block> {
    let s = input.text;
    let at = skip_ws(s, body);
    match s.as_bytes().get(at) {
        None => Err(Stop::Incomplete),
        Some(b'[') => {
            let (calls, to) = call_list(s, at, &["name"], &["arguments"])?;
            Block::new(expect_ws(s, to, &tags.calls_end)?, calls)
        }
        Some(_) => {
            let mut i = expect_ws(s, at, &tags.call)?;
            let mut calls = Vec::new();
            loop {
                let (name, sep) = name_until(s, skip_ws(s, i), b"<")?;
                let j = expect_ws(s, sep, &tags.sep)?;
                let (fields, end) = glm::pairs_tagged(s, j, &tags.call_end, tags.pairs())?;
                calls.push(RawCall::fields(name, fields));
                match peek_ws(s, end, &tags.call)? {
                    Some(next) => i = next,
                    None => return Block::new(expect_ws(s, end, &tags.calls_end)?, calls),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const A13B: &str = "<tool_calls>[{\"name\": \"web_search\", \"arguments\": {\"query\": \"tencent cos multipart upload limits\"}}]</tool_calls>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            A13B,
            &[(
                "web_search",
                json!({"query": "tencent cos multipart upload limits"}),
            )],
        );
        let v3 = "<tool_calls><tool_call>read_file<tool_sep><arg_key>path</arg_key><arg_value>deploy/values-prod.yaml</arg_value></tool_call><tool_call>list_dir<tool_sep><arg_key>path</arg_key><arg_value>deploy</arg_value></tool_call></tool_calls>";
        recovers(
            v3,
            &[
                ("read_file", json!({"path": "deploy/values-prod.yaml"})),
                ("list_dir", json!({"path": "deploy"})),
            ],
        );
    }

    #[test]
    fn recovers_inside_think_with_schema_types() {
        let text = "<think>look <tool_calls><tool_call>read_file<tool_sep><arg_key>limit</arg_key><arg_value>9</arg_value></tool_call></tool_calls></think>";
        assert_eq!(
            recovers(text, &[("read_file", json!({"limit": 9}))]),
            "<think>look </think>"
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Hunyuan wraps calls in <tool_calls> tags.");
        ignores("<tool_calls>[{\"name\": \"web_search\", \"arguments\": {}}]");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(A13B);
        rejects_truncation(HY3);
    }

    /// As the `tencent-Hy3` template writes two calls (non-string values as JSON).
    const HY3: &str = "<tool_calls:opensource>\n<tool_call:opensource>read_file<tool_sep:opensource>\n<arg_key:opensource>path</arg_key:opensource>\n<arg_value:opensource>deploy/values-prod.yaml</arg_value:opensource>\n<arg_key:opensource>limit</arg_key:opensource>\n<arg_value:opensource>40</arg_value:opensource>\n</tool_call:opensource>\n<tool_call:opensource>list_dir<tool_sep:opensource>\n<arg_key:opensource>path</arg_key:opensource>\n<arg_value:opensource>deploy\n</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>";

    #[test]
    fn recovers_hy3_tags_with_a_checkpoint_suffix() {
        let text = format!("<think:opensource></think:opensource>{HY3}<｜hy_eos:opensource｜>");
        assert_eq!(
            recovers(
                &text,
                &[
                    (
                        "read_file",
                        json!({"path": "deploy/values-prod.yaml", "limit": 40})
                    ),
                    ("list_dir", json!({"path": "deploy\n"})),
                ],
            ),
            "<think:opensource></think:opensource><｜hy_eos:opensource｜>"
        );
        // Any suffix the checkpoint uses, as long as every tag carries it.
        let other = "<tool_calls:6124c78e><tool_call:6124c78e>list_dir<tool_sep:6124c78e><arg_key:6124c78e>path</arg_key:6124c78e><arg_value:6124c78e>src</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>";
        recovers(other, &[("list_dir", json!({"path": "src"}))]);
    }

    #[test]
    fn a_suffixed_block_keeps_one_suffix() {
        // Mixed suffixes, a dropped suffix, an empty or over-long one: text.
        ignores(&HY3.replace("<tool_sep:opensource>", "<tool_sep>"));
        ignores(&HY3.replace("</tool_calls:opensource>", "</tool_calls:other>"));
        ignores("<tool_calls:><tool_call:>list_dir<tool_sep:></tool_call:></tool_calls:>");
        let long = "x".repeat(40);
        ignores(&HY3.replace("opensource", &long));
        ignores("Hy3 opens calls with <tool_calls:opensource> tags.");
    }
}
