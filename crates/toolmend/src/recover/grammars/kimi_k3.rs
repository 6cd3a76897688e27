//! Kimi K3 "XTML" channel markup: GRAMMARS §2.8.
//!
//! ```text
//! <|open|>tools<|sep|><|open|>call tool="list_dir" index="2"<|sep|><|open|>argument key="path" type="string"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>
//! ```
//!
//! **Detects** `<|open|>tools<|sep|>`, one or more `<|open|>call tool="NAME" …<|sep|>` elements
//! holding `<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>` children and
//! closed by `<|close|>call<|sep|>`, and an optional `<|close|>tools<|sep|>`. Attribute values
//! have `&quot;` and `&amp;` unescaped. `type="string"` values are the raw text; other types are
//! JSON-decoded, else kept raw; an argument without a type is converted with the tool's schema.
//!
//! **Never accepts** a call without `<|close|>call<|sep|>`, or the damaged leaked forms with
//! pieces of tokens missing (`<|open|>toolscall tool=…`).

use serde_json::Value;

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, attr, expect, expect_ws, find_before, find_within, name, optional,
    peek_ws,
};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "kimi_k3",
    sentinels: &["<|open|>tools<|sep|>"],
    parse,
};

const SEP: &str = "<|sep|>";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut i = expect_ws(s, body, "<|open|>call")?;
    let mut calls = Vec::new();
    loop {
        let (call, end) = call(s, i)?;
        calls.push(call);
        match peek_ws(s, end, "<|open|>call")? {
            Some(next) => i = next,
            None => {
                let close = optional(s, end, "<|close|>tools<|sep|>", input.eof)?;
                return Block::new(close.unwrap_or(end), calls);
            }
        }
    }
}

/// The attribute `key` among the attributes in `header`.
fn attribute(header: &str, key: &str) -> Option<String> {
    let mut i = 0;
    while let Some(off) = header[i..].find(key) {
        let at = i + off;
        let boundary = at == 0 || header.as_bytes()[at - 1].is_ascii_whitespace();
        if boundary {
            if let Ok((value, _)) = attr(header, at, key) {
                return Some(value);
            }
        }
        i = at + key.len();
    }
    None
}

/// A call whose `<|open|>call` ends at `at`; returns it and the index after its closer.
fn call(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let sep = find_within(s, at, SEP, MAX_NAME_BYTES * 2)?;
    let tool = attribute(&s[at..sep], "tool").ok_or(Stop::Invalid)?;
    let tool = name(&tool, 0, tool.len())?;
    let mut i = sep + SEP.len();
    let mut fields = Vec::new();
    loop {
        match expect_ws(s, i, "<|close|>call<|sep|>") {
            Ok(end) => {
                return Ok((RawCall::fields(tool, fields), end));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let open = expect_ws(s, i, "<|open|>argument")?;
        expect(s, open, " ")?;
        let sep = find_within(s, open, SEP, MAX_NAME_BYTES * 2)?;
        let header = &s[open..sep];
        let key = attribute(header, "key").ok_or(Stop::Invalid)?;
        let value_at = sep + SEP.len();
        // A new section or call before the closer means the value was cut off (§1.3).
        let value_end = find_before(
            s,
            value_at,
            "<|close|>argument<|sep|>",
            &["<|open|>tools<|sep|>", "<|open|>call"],
        )?;
        let raw = &s[value_at..value_end];
        let field = match attribute(header, "type").as_deref() {
            Some("string") => Field::Typed(Value::String(raw.to_owned())),
            Some(_) => Field::Typed(
                serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_owned())),
            ),
            None => Field::Untyped(raw.to_owned()),
        };
        fields.push((key, field));
        i = value_end + "<|close|>argument<|sep|>".len();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const LIST: &str = "<|open|>tools<|sep|><|open|>call tool=\"list_dir\" index=\"2\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";

    #[test]
    fn recovers_the_samples() {
        let grep = "<|open|>tools<|sep|><|open|>call tool=\"grep\" index=\"1\"<|sep|><|open|>argument key=\"pattern\" type=\"string\"<|sep|>TODO\\(perf\\)<|close|>argument<|sep|><|open|>argument key=\"max_count\" type=\"integer\"<|sep|>25<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        recovers(
            grep,
            &[(
                "grep",
                json!({"pattern": "TODO\\(perf\\)", "max_count": 25}),
            )],
        );
        recovers(LIST, &[("list_dir", json!({"path": "proto"}))]);
    }

    #[test]
    fn recovers_several_calls() {
        let text = "<|open|>tools<|sep|><|open|>call tool=\"glob\" index=\"1\"<|sep|><|open|>argument key=\"pattern\" type=\"string\"<|sep|>*.rs<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"git_diff\" index=\"2\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        recovers(
            text,
            &[
                ("glob", json!({"pattern": "*.rs"})),
                ("git_diff", json!({})),
            ],
        );
    }

    #[test]
    fn ignores_damaged_forms() {
        ignores(
            "<|open|>toolscall tool=\"bash\" index=\"1\"<|sep|><|open|>argument key=\"command\" type=\"string\"<|sep|>ls<|close|>argument<|sep|><|close|>call<|sep|>",
        );
        ignores("Kimi K3 opens <|open|>tools<|sep|> then calls.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<|open|>tools<|sep|><|open|>call tool=\"list_dir\" index=\"2\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|>",
        );
    }
}
