//! Hunyuan (A13B, HY v3) and Jamba 1.5: GRAMMARS §2.22.
//!
//! ```text
//! <tool_calls><tool_call>read_file<tool_sep><arg_key>path</arg_key><arg_value>deploy/values-prod.yaml</arg_value></tool_call><tool_call>list_dir<tool_sep><arg_key>path</arg_key><arg_value>deploy</arg_value></tool_call></tool_calls>
//! ```
//!
//! **Detects** `<tool_calls>` followed by either a JSON array of `{name, arguments}` objects
//! (Hunyuan-A13B, Jamba) or HY v3 calls `<tool_call>NAME<tool_sep>` + `<arg_key>`/`<arg_value>`
//! pairs + `</tool_call>` (values converted with the tool's schema), then `</tool_calls>`.
//! Blocks inside `<think>` are recovered (vLLM's A13B parser skips them; GRAMMARS §1.5).
//!
//! **Never accepts** a block without `</tool_calls>`, or JSON that is not strict.

use super::{Block, Grammar, Input, glm};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, expect_ws, name_until, peek_ws, skip_ws};
use crate::recover::json::call_list;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "hunyuan",
    sentinels: &["<tool_calls>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let at = skip_ws(s, body);
    match s.as_bytes().get(at) {
        None => Err(Stop::Incomplete),
        Some(b'[') => {
            let (calls, to) = call_list(s, at, &["name"], &["arguments"])?;
            Block::new(expect_ws(s, to, "</tool_calls>")?, calls)
        }
        Some(_) => {
            let mut i = expect_ws(s, at, "<tool_call>")?;
            let mut calls = Vec::new();
            loop {
                let (name, sep) = name_until(s, i, b"<")?;
                let j = expect_ws(s, sep, "<tool_sep>")?;
                let (fields, end) = glm::pairs(s, j, "</tool_call>")?;
                calls.push(RawCall::fields(name, fields));
                match peek_ws(s, end, "<tool_call>")? {
                    Some(next) => i = next,
                    None => return Block::new(expect_ws(s, end, "</tool_calls>")?, calls),
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
    }
}
