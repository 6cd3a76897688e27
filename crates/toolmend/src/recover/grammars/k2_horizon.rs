//! K2-Horizon (`<ifm|…>` markup): JSON or key/value calls in an `<ifm|tool_calls>` section.
//!
//! ```text
//! <ifm|tool_calls><ifm|tool_call>{"name": "web_search", "arguments": {"query": "zig allocators"}}</ifm|tool_call></ifm|tool_calls>
//! <ifm|tool_calls><ifm|tool_call>grep<ifm|arg_key>pattern</ifm|arg_key><ifm|arg_value>fn main</ifm|arg_value></ifm|tool_call>
//! <ifm|tool_call>list_dir</ifm|tool_call></ifm|tool_calls>
//! ```
//!
//! **Detects** `<ifm|tool_calls>`, one or more `<ifm|tool_call>` elements separated by
//! whitespace, and `</ifm|tool_calls>`. A call is a `{name, arguments}` object, or a name
//! followed by `<ifm|arg_key>K</ifm|arg_key>` (optionally `<ifm|arg_type>T</ifm|arg_type>`)
//! `<ifm|arg_value>V</ifm|arg_value>` pairs. Untyped values are converted with the tool's
//! schema; a typed `string` value is the raw text, another type is JSON-decoded (else kept
//! raw). Values keep their whitespace.
//!
//! **Never accepts** a section or call without its closer, or anything else inside the section
//! (`<ifm|tool_calls>junk</ifm|tool_calls>` stays text).

use serde_json::Value;

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, expect, expect_ws, find_before, name_until, skip_ws,
};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "k2_horizon",
    sentinels: &["<ifm|tool_calls>"],
    parse,
};

const CALL: &str = "<ifm|tool_call>";
const END_CALL: &str = "</ifm|tool_call>";
const STOPS: &[&str] = &["<ifm|arg_key>", "<ifm|arg_value>", "<ifm|tool_call>"];

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let mut calls = Vec::new();
    let mut i = expect_ws(s, body, CALL)?;
    loop {
        let (call, end) = one_call(s, i)?;
        calls.push(call);
        match expect_ws(s, end, CALL) {
            Ok(next) => i = next,
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {
                return Block::new(expect_ws(s, end, "</ifm|tool_calls>")?, calls);
            }
        }
    }
}

/// One call after its `<ifm|tool_call>`; returns it and the index after `</ifm|tool_call>`.
fn one_call(s: &str, at: usize) -> Step<(RawCall, usize)> {
    if s.as_bytes().get(skip_ws(s, at)) == Some(&b'{') {
        let (from, to) = object_span(s, at)?;
        let call = call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
        return Ok((call, expect_ws(s, to, END_CALL)?));
    }
    let (name, mut i) = name_until(s, skip_ws(s, at), b"<")?;
    let mut fields: Vec<(String, Field)> = Vec::new();
    loop {
        match expect_ws(s, i, END_CALL) {
            Ok(end) => return Ok((RawCall::fields(name, fields), end)),
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let key_at = expect_ws(s, i, "<ifm|arg_key>")?;
        let key_end = find_before(s, key_at, "</ifm|arg_key>", STOPS)?;
        let key = s[key_at..key_end].trim();
        if key.is_empty() || key.len() > MAX_NAME_BYTES {
            return Err(Stop::Invalid);
        }
        let mut j = key_end + "</ifm|arg_key>".len();
        let mut kind = None;
        match expect_ws(s, j, "<ifm|arg_type>") {
            Ok(type_at) => {
                let type_end = find_before(s, type_at, "</ifm|arg_type>", STOPS)?;
                kind = Some(s[type_at..type_end].trim());
                j = type_end + "</ifm|arg_type>".len();
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let value_at = expect_ws(s, j, "<ifm|arg_value>")?;
        let value_end = find_before(s, value_at, "</ifm|arg_value>", STOPS)?;
        let raw = &s[value_at..value_end];
        let field = match kind {
            None => Field::Untyped(raw.to_owned()),
            Some("string" | "str") => Field::Typed(Value::String(raw.to_owned())),
            Some(_) => Field::Typed(
                serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_owned())),
            ),
        };
        fields.push((key.to_owned(), field));
        i = expect(s, value_end, "</ifm|arg_value>")?;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const XML: &str = "<ifm|tool_calls><ifm|tool_call>grep<ifm|arg_key>pattern</ifm|arg_key><ifm|arg_value>fn main</ifm|arg_value><ifm|arg_key>max_count</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>\n<ifm|tool_call>list_dir</ifm|tool_call></ifm|tool_calls>";

    #[test]
    fn recovers_key_value_calls_with_prose() {
        let text = format!("Before {XML} after.");
        let rest = recovers(
            &text,
            &[
                ("grep", json!({"pattern": "fn main", "max_count": 3})),
                ("list_dir", json!({})),
            ],
        );
        assert_eq!(rest, "Before  after.");
    }

    #[test]
    fn recovers_json_and_typed_calls() {
        let json_form = "<ifm|tool_calls><ifm|tool_call>{\"name\": \"web_search\", \"arguments\": {\"query\": \"zig allocators\"}}</ifm|tool_call></ifm|tool_calls>";
        recovers(
            json_form,
            &[("web_search", json!({"query": "zig allocators"}))],
        );
        let typed = "<ifm|tool_calls><ifm|tool_call>web_search<ifm|arg_key>query</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>42</ifm|arg_value><ifm|arg_key>max_results</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>2</ifm|arg_value></ifm|tool_call></ifm|tool_calls>";
        recovers(
            typed,
            &[("web_search", json!({"query": "42", "max_results": 2}))],
        );
    }

    #[test]
    fn ignores_junk_unknown_names_and_missing_closers() {
        ignores("<ifm|tool_calls>junk</ifm|tool_calls>");
        ignores("<ifm|tool_calls><ifm|tool_call>list_dir");
        ignores("<ifm|tool_calls><ifm|tool_call>list_dir</ifm|tool_call>");
        ignores(
            "<ifm|tool_calls><ifm|tool_call>{\"name\": \"missing\", \"arguments\": {}}</ifm|tool_call></ifm|tool_calls>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(XML);
    }
}
