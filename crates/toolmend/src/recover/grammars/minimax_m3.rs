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
//! Primitive values are raw text taken as written, line breaks at their ends included (the
//! template adds none), converted with the tool's schema (a non-string value trimmed first).
//!
//! Nested mappings are child elements and lists are `<item>` children (`<opts><item>a
//! </item></opts>` → `{"opts": ["a"]}`); nested text is converted with the nested schema
//! (`properties`, `items`), and without one stays a string except `true`/`false`.
//!
//! **Never accepts** text mixed with child elements, or a block without its closers.

use serde_json::{Map, Value};

use super::{Block, Grammar, Input};
use crate::limits::MAX_DEPTH;
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    Step, Stop, attr, expect, expect_ws, find, name, name_until, peek_ws,
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
                return Ok((RawCall::fields(tool, fields), end));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let (key, node, end) = element(s, i, 0)?;
        let field = match node {
            Node::Text(text) => Field::Untyped(text),
            nested => Field::Nested(nested.into_value()),
        };
        fields.push((key, field));
        i = end;
    }
}

/// An element's content: raw text, or child elements (a mapping, or a list of `<item>`s).
enum Node {
    Text(String),
    Children(Vec<(String, Node)>),
}

impl Node {
    /// The JSON value of a nested node: `<item>` children make a list, other children an
    /// object; nested text stays a string except the JSON booleans the template writes.
    fn into_value(self) -> Value {
        match self {
            Node::Text(text) => match text.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::String(text),
            },
            Node::Children(children)
                if !children.is_empty() && children.iter().all(|(k, _)| k == "item") =>
            {
                Value::Array(
                    children
                        .into_iter()
                        .map(|(_, node)| node.into_value())
                        .collect(),
                )
            }
            Node::Children(children) => Value::Object(
                children
                    .into_iter()
                    .map(|(k, node)| (k, node.into_value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// `NS<key>` content `NS</key>` at `at` (after optional whitespace). Raw text never holds the
/// namespace token, so text ends at the next one; otherwise the content is child elements.
fn element(s: &str, at: usize, depth: usize) -> Step<(String, Node, usize)> {
    if depth > MAX_DEPTH {
        return Err(Stop::Invalid);
    }
    let open = expect_ws(s, at, NS)?;
    let key_at = expect(s, open, "<")?;
    if s.as_bytes().get(key_at) == Some(&b'/') {
        return Err(Stop::Invalid);
    }
    let (key, gt) = name_until(s, key_at, b">")?;
    let close = format!("{NS}</{key}>");
    let mut i = gt + 1;
    let next_ns = find(s, i, NS)?;
    if s[i..next_ns].trim().is_empty() && !s[next_ns..].starts_with(&close) {
        // Child elements.
        let mut children = Vec::new();
        loop {
            match expect_ws(s, i, &close) {
                Ok(end) => return Ok((key, Node::Children(children), end)),
                Err(Stop::Incomplete) => return Err(Stop::Incomplete),
                Err(Stop::Invalid) => {}
            }
            let (child, node, end) = element(s, i, depth + 1)?;
            children.push((child, node));
            i = end;
        }
    }
    let end = expect(s, next_ns, &close)?;
    // The template writes text as it is (`NS<k>{{ v }}NS</k>`): a line break at its ends is
    // the value's own.
    Ok((key, Node::Text(s[i..next_ns].to_owned()), end))
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
    fn edge_line_breaks_are_the_value_s() {
        // What the M3 template renders for `{"content": "\nx\n", "overwrite": true}`.
        let text = "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"write_file\">]<]minimax[>[<content>\nx\n]<]minimax[>[</content>]<]minimax[>[<overwrite> true\n]<]minimax[>[</overwrite>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>";
        recovers(
            text,
            &[("write_file", json!({"content": "\nx\n", "overwrite": true}))],
        );
    }

    #[test]
    fn nests_mappings_and_lists() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "rg"}]));
        let text = "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"rg\">]<]minimax[>[<opts>\n]<]minimax[>[<globs>]<]minimax[>[<item>*.rs]<]minimax[>[</item>]<]minimax[>[<item>*.toml]<]minimax[>[</item>]<]minimax[>[</globs>\n]<]minimax[>[<hidden>true]<]minimax[>[</hidden>]<]minimax[>[</opts>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>";
        let found = crate::recover::recover_text(text, &tools, 16);
        let args: serde_json::Value = serde_json::from_str(&found.calls[0].arguments).unwrap();
        assert_eq!(
            args,
            json!({"opts": {"globs": ["*.rs", "*.toml"], "hidden": true}})
        );
        assert_eq!(found.text, "");
    }

    #[test]
    fn types_nested_text_with_the_nested_schema() {
        let int = json!({"type": "integer"});
        let tools = crate::ToolSet::from_json(&json!([{"name": "rg", "parameters": {
            "type": "object", "properties": {"opts": {"type": "object", "properties": {
                "depth": int, "sizes": {"type": "array", "items": int},
                "tz": {"type": "object", "properties": {"offset": int}}}}}}}]));
        let text = "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"rg\">]<]minimax[>[<opts>]<]minimax[>[<depth>9]<]minimax[>[</depth>]<]minimax[>[<sizes>]<]minimax[>[<item>1]<]minimax[>[</item>]<]minimax[>[<item>2]<]minimax[>[</item>]<]minimax[>[</sizes>]<]minimax[>[<tz>]<]minimax[>[<offset>0]<]minimax[>[</offset>]<]minimax[>[</tz>]<]minimax[>[<note>7]<]minimax[>[</note>]<]minimax[>[</opts>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>";
        let found = crate::recover::recover_text(text, &tools, 16);
        let args: serde_json::Value = serde_json::from_str(&found.calls[0].arguments).unwrap();
        assert_eq!(
            args,
            json!({"opts": {"depth": 9, "sizes": [1, 2], "tz": {"offset": 0}, "note": "7"}})
        );
    }

    #[test]
    fn ignores_mixed_content_and_look_alikes() {
        ignores(
            "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"grep\">]<]minimax[>[<opts>text]<]minimax[>[<item>a]<]minimax[>[</item>]<]minimax[>[</opts>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>",
        );
        ignores("The ]<]minimax[>[<tool_call> prefix.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(GREP);
    }
}
