//! Kimi K3 "XTML" channel markup: GRAMMARS §2.8.
//!
//! ```text
//! <|open|>tools<|sep|><|open|>call tool="list_dir" index="2"<|sep|><|open|>argument key="path" type="string"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>
//! ```
//!
//! **Detects** `<|open|>tools<|sep|>`, one or more `<|open|>call tool="NAME" …<|sep|>` elements
//! holding `<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>` children and
//! closed by `<|close|>call<|sep|>`, and an optional `<|close|>tools<|sep|>`. Attribute values
//! are read as the template writes them (issue #28): it escapes only `&` and `"`
//! (`tool="a&amp;b"`, `key="say &quot;hi&quot;"`), so a value ends at the next `"`, may hold
//! `<` and `>` (`key="List<int>"`), and has exactly `&quot;` and `&amp;` unescaped. The header's
//! attributes are read in order, so a value that holds ` type=` is never taken for one. `type="string"` values are the raw text; other types are
//! JSON-decoded, else kept raw; an argument without a type is converted with the tool's schema.
//!
//! **Never accepts** a call without `<|close|>call<|sep|>`, or the damaged leaked forms with
//! pieces of tokens missing (`<|open|>toolscall tool=…`).

use serde_json::Value;

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, expect, expect_ws, find_before, find_within, name, optional,
    peek_ws, skip_ws,
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

/// The attributes of a tag header (the text between the tag word and `<|sep|>`), in order:
/// ` NAME="VALUE"` pairs, each value unescaped (see [`unescape`]). Anything else in the header
/// (a missing quote, text that is no attribute) means it is no K3 tag.
fn attributes(header: &str) -> Step<Vec<(&str, String)>> {
    let b = header.as_bytes();
    let mut pairs = Vec::new();
    let mut i = skip_ws(header, 0);
    while i < b.len() {
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-' | b':')) {
            i += 1;
        }
        if i == start {
            return Err(Stop::Invalid);
        }
        let key = &header[start..i];
        let quote = expect(header, expect(header, i, "=")?, "\"")?;
        let close = header[quote..].find('"').ok_or(Stop::Invalid)? + quote;
        pairs.push((key, unescape(&header[quote..close])));
        let next = close + 1;
        i = skip_ws(header, next);
        if i == next && i < b.len() {
            return Err(Stop::Invalid);
        }
    }
    Ok(pairs)
}

/// An attribute value as the template escaped it (`&` → `&amp;`, `"` → `&quot;`), back.
fn unescape(raw: &str) -> String {
    raw.replace("&quot;", "\"").replace("&amp;", "&")
}

/// The value of attribute `key` among `pairs`.
fn attribute(pairs: &[(&str, String)], key: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
}

/// A call whose `<|open|>call` ends at `at`; returns it and the index after its closer.
fn call(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let sep = find_within(s, at, SEP, MAX_NAME_BYTES * 2)?;
    let tool = attribute(&attributes(&s[at..sep])?, "tool").ok_or(Stop::Invalid)?;
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
        let header = attributes(&s[open..sep])?;
        let key = attribute(&header, "key").ok_or(Stop::Invalid)?;
        let value_at = sep + SEP.len();
        // A new section or call before the closer means the value was cut off (§1.3).
        let value_end = find_before(
            s,
            value_at,
            "<|close|>argument<|sep|>",
            &["<|open|>tools<|sep|>", "<|open|>call"],
        )?;
        let raw = &s[value_at..value_end];
        let field = match attribute(&header, "type").as_deref() {
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
    fn attribute_values_are_read_as_the_template_escapes_them() {
        // The template escapes `&` and `"` only: a key may hold `<`, `>` and an escaped quote.
        let tools = crate::ToolSet::from_json(&json!([{"name": "a&b", "parameters": {
            "type": "object", "properties": {
                "List<int>": {"type": "array"}, "say \"hi\"": {"type": "string"},
                "x type=": {"type": "string"}, "a&lt;b": {"type": "string"}}}}]));
        let text = "<|open|>tools<|sep|><|open|>call tool=\"a&amp;b\" index=\"1\"<|sep|><|open|>argument key=\"List<int>\" type=\"array\"<|sep|>[1, 2]<|close|>argument<|sep|><|open|>argument key=\"say &quot;hi&quot;\" type=\"string\"<|sep|>ok<|close|>argument<|sep|><|open|>argument key=\"x type=\" type=\"string\"<|sep|>7<|close|>argument<|sep|><|open|>argument key=\"a&amp;lt;b\" type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let found = crate::recover::recover_text(text, &tools, 4);
        assert_eq!(found.calls.len(), 1, "{found:?}");
        assert_eq!(found.calls[0].name, "a&b");
        let args: serde_json::Value = serde_json::from_str(&found.calls[0].arguments).unwrap();
        assert_eq!(
            args,
            json!({"List<int>": [1, 2], "say \"hi\"": "ok", "x type=": "7", "a&lt;b": "v"})
        );
        assert_eq!(found.text, "");
    }

    #[test]
    fn ignores_headers_that_are_not_attributes() {
        ignores(
            "<|open|>tools<|sep|><|open|>call tool=\"grep\" index=\"1\" stray<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        );
        ignores(
            "<|open|>tools<|sep|><|open|>call tool=\"grep<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        );
        ignores(
            "<|open|>tools<|sep|><|open|>call tool=\"grep\"index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
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
