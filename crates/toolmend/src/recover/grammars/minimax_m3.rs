//! MiniMax M3: GRAMMARS §2.17 (medium confidence in the source description).
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="grep">
//! ]<]minimax[>[<pattern>GenServer.call]<]minimax[>[</pattern>
//! ]<]minimax[>[<path>lib]<]minimax[>[</path>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! **Detects** the namespace token `]<]minimax[>[` before every tag: a `<tool_call>` holding
//! `<invoke name="NAME">` elements whose children are `<KEY>VALUE</KEY>` (keys may hold hyphens,
//! `-A`, `-n`), closed by `</invoke>` and `</tool_call>`. A zero-argument invoke gives `{}`.
//! Primitive values are raw text, converted with the tool's schema.
//!
//! **Never accepts** nested mappings and lists (`<key><item>…</item></key>`): their encoding is
//! only known second-hand, so such a block stays text. Nor a block without its closers.

use super::{Block, Grammar, Input};
use crate::recover::call::{Args, Field, RawCall};
use crate::recover::cursor::{
    Step, Stop, attr, expect, expect_ws, find, name, name_until, peek_ws, trim_newlines,
};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "minimax_m3",
    sentinels: &["]<]minimax[>[<tool_call>"],
    parse,
};

const NS: &str = "]<]minimax[>[";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut i = body;
    let mut calls = Vec::new();
    loop {
        let (call, end) = invoke(s, i)?;
        calls.push(call);
        match peek_ws(s, end, &format!("{NS}<invoke"))? {
            Some(_) => i = end,
            None => return Block::new(expect_ws(s, end, &format!("{NS}</tool_call>"))?, calls),
        }
    }
}

fn invoke(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let i = expect_ws(s, at, &format!("{NS}<invoke"))?;
    let (tool, i) = attr(s, i, "name")?;
    let tool = name(&tool, 0, tool.len())?;
    let mut i = expect_ws(s, i, ">")?;
    let mut fields = Vec::new();
    loop {
        match expect_ws(s, i, &format!("{NS}</invoke>")) {
            Ok(end) => {
                return Ok((
                    RawCall {
                        name: tool,
                        args: Args::Fields(fields),
                    },
                    end,
                ));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let open = expect_ws(s, i, NS)?;
        let key_at = expect(s, open, "<")?;
        let (key, gt) = name_until(s, key_at, b">")?;
        let close = format!("{NS}</{key}>");
        let value_end = find(s, gt + 1, &close)?;
        let value = &s[gt + 1..value_end];
        if value.contains(NS) {
            return Err(Stop::Invalid);
        }
        fields.push((key, Field::Untyped(trim_newlines(value).to_owned())));
        i = value_end + close.len();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const GREP: &str = "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"grep\">\n]<]minimax[>[<pattern>GenServer.call]<]minimax[>[</pattern>\n]<]minimax[>[<path>lib]<]minimax[>[</path>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>";

    #[test]
    fn recovers_the_sample() {
        recovers(
            GREP,
            &[("grep", json!({"pattern": "GenServer.call", "path": "lib"}))],
        );
    }

    #[test]
    fn recovers_several_invokes_hyphen_keys_and_zero_arguments() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "rg"}, {"name": "git_diff"}]));
        let text = "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"rg\">]<]minimax[>[<-A>3]<]minimax[>[</-A>]<]minimax[>[</invoke>]<]minimax[>[<invoke name=\"git_diff\">]<]minimax[>[</invoke>]<]minimax[>[</tool_call>";
        let found = crate::recover::recover_text(text, &tools, 16);
        let got: Vec<(&str, &str)> = found
            .calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(got, [("rg", r#"{"-A":"3"}"#), ("git_diff", "{}")]);
        assert_eq!(found.text, "");
    }

    #[test]
    fn ignores_nested_values_and_look_alikes() {
        ignores(
            "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"grep\">]<]minimax[>[<opts>]<]minimax[>[<item>a]<]minimax[>[</item>]<]minimax[>[</opts>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        );
        ignores("The ]<]minimax[>[<tool_call> prefix.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(GREP);
    }
}
