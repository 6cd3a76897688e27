//! GLM-4.5 / 4.6 / 4.7 / GLM-5 (Zhipu / Z.ai): GRAMMARS §2.6.
//!
//! ```text
//! <tool_call>web_search
//! <arg_key>query</arg_key>
//! <arg_value>sveltekit form actions progressive enhancement</arg_value>
//! </tool_call>
//! ```
//!
//! **Detects** `<tool_call>NAME` followed by `<arg_key>K</arg_key><arg_value>V</arg_value>`
//! pairs and `</tool_call>`, with or without newlines between the tags (4.5/4.6 write them,
//! 4.7/5 do not), including the zero-argument `<tool_call>NAME</tool_call>`. Keys are trimmed;
//! values are taken as written, line breaks at their ends included (every GLM template, and
//! Laguna's, Ling 3's and Spark 2.5's, writes `<arg_value>{{ v }}</arg_value>`: vLLM's
//! `.strip()` loses a file's trailing newline), and are converted with the tool's schema (a
//! non-string value trimmed first; without a schema they stay strings, unlike vLLM/SGLang
//! which JSON-parse every non-string value).
//!
//! Output escaped twice (GLM 4.5/4.7 through some servers) is read as meant: a literal `\n`
//! after the name or between tags is a line break, and a `\"`-escaped JSON value for an
//! object or array parameter is read once unescaped (only when it does not parse as it is).
//!
//! A block whose `</tool_call>` is missing at the end of the message (GLM-4.6 stops so) is a
//! finished call only when its pairs hold every parameter the tool declares: a pair list has
//! no end of its own, so only then can no pair still be missing (the end-of-message policy,
//! [`super::close_or_eos`], with that proof of completeness).
//!
//! **Never accepts** a name that is not a single token on the tag's line, text between pairs,
//! or a block without `</tool_call>` before more text or missing a declared parameter.

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::{Args, Field, RawCall};
use crate::recover::cursor::{MAX_NAME_BYTES, Step, Stop, expect_ws, find_before, name, skip_ws};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "glm",
    sentinels: &["<tool_call>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (name, i) = name_line(s, body)?;
    let fields = match pairs(s, i, "</tool_call>") {
        Err(Stop::Incomplete) if input.message_end => eos_pairs(input, &name, i)?,
        other => other?,
    };
    Block::new(
        fields.1,
        vec![RawCall {
            name,
            args: Args::Fields(fields.0),
        }],
    )
}

/// The pairs of a block the message ends in without `</tool_call>`: finished only when they
/// hold every parameter the declared tool `name` has (at least one).
fn eos_pairs(input: &Input<'_>, name: &str, at: usize) -> Step<(Vec<(String, Field)>, usize)> {
    let declared: Vec<&String> = input
        .tools
        .get(name)
        .and_then(|tool| tool.schema())
        .and_then(|schema| schema.get("properties"))
        .and_then(serde_json::Value::as_object)
        .map(|props| props.keys().collect())
        .unwrap_or_default();
    // Read the pairs as if the closer followed the text (`close_or_eos` takes the end).
    let mut fields = Vec::new();
    let mut i = at;
    loop {
        if let Ok(end) = close_or_eos(input, i, "</tool_call>") {
            let complete = !declared.is_empty()
                && declared
                    .iter()
                    .all(|key| fields.iter().any(|(k, _)| k == *key));
            return if complete {
                Ok((fields, end))
            } else {
                Err(Stop::Incomplete)
            };
        }
        let (pair, next) = one_pair(input.text, i, GLM_TAGS)?;
        fields.push(pair);
        i = next;
    }
}

/// The name after the opening tag: text up to the first `<` or line break.
pub(crate) fn name_line(s: &str, at: usize) -> Step<(String, usize)> {
    let from = skip_ws(s, at);
    let b = s.as_bytes();
    if matches!(b.get(from), Some(b'{' | b'[' | b'<' | b'"' | b'\'')) {
        return Err(Stop::Invalid);
    }
    let mut i = from;
    while i < b.len() && b[i] != b'<' && b[i] != b'\n' {
        if i - from > MAX_NAME_BYTES {
            return Err(Stop::Invalid);
        }
        i += 1;
    }
    if i == b.len() {
        return Err(Stop::Incomplete);
    }
    // Output escaped twice: a literal `\n` (backslash, n) after the name.
    let mut to = i;
    while s[from..to].ends_with("\\n") {
        to -= 2;
    }
    Ok((name(s, from, to)?, i))
}

/// Whitespace and, in output escaped twice, literal `\n` / `\r` / `\t` between tags.
fn skip_gap(s: &str, mut i: usize) -> Step<usize> {
    loop {
        i = skip_ws(s, i);
        match s.get(i..i + 2) {
            Some("\\n" | "\\r" | "\\t") => i += 2,
            // A lone backslash at the end: the next byte decides.
            _ if &s[i..] == "\\" => return Err(Stop::Incomplete),
            _ => return Ok(i),
        }
    }
}

/// The four tags of a key/value pair: GLM's, or Hunyuan's with a checkpoint suffix
/// (`<arg_key:opensource>`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PairTags<'a> {
    /// Opens a key (`<arg_key>`).
    pub key: &'a str,
    /// Closes a key (`</arg_key>`).
    pub key_end: &'a str,
    /// Opens a value (`<arg_value>`).
    pub value: &'a str,
    /// Closes a value (`</arg_value>`).
    pub value_end: &'a str,
}

/// GLM's (and HY v3's unsuffixed) pair tags.
pub(crate) const GLM_TAGS: PairTags<'static> = PairTags {
    key: "<arg_key>",
    key_end: "</arg_key>",
    value: "<arg_value>",
    value_end: "</arg_value>",
};

/// `<arg_key>`/`<arg_value>` pairs from `at` up to and including `close`; returns the fields
/// and the index after `close`. Shared with Hunyuan HY v3.
pub(crate) fn pairs(s: &str, at: usize, close: &str) -> Step<(Vec<(String, Field)>, usize)> {
    pairs_tagged(s, at, close, GLM_TAGS)
}

/// [`pairs`] with other tags (Hunyuan's suffixed ones).
pub(crate) fn pairs_tagged(
    s: &str,
    at: usize,
    close: &str,
    tags: PairTags<'_>,
) -> Step<(Vec<(String, Field)>, usize)> {
    let mut fields = Vec::new();
    let mut i = at;
    loop {
        i = skip_gap(s, i)?;
        match expect_ws(s, i, close) {
            Ok(end) => return Ok((fields, end)),
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let (pair, next) = one_pair(s, i, tags)?;
        fields.push(pair);
        i = next;
    }
}

/// One `<arg_key>K</arg_key><arg_value>V</arg_value>` pair at `at` (gaps skipped), and the
/// index after it.
fn one_pair(s: &str, at: usize, tags: PairTags<'_>) -> Step<((String, Field), usize)> {
    // What opens a key or value: met inside a key or value before its closer, it means the
    // call was cut off and the closer found belongs to the next call (GRAMMARS §1.3). Only
    // this family's own tags count: a block of another family quoted in a value has no closer
    // of this one.
    let stops = [tags.key, tags.value];
    let i = skip_gap(s, at)?;
    let key_at = expect_ws(s, i, tags.key)?;
    let key_end = find_before(s, key_at, tags.key_end, &stops)?;
    let value_at = expect_ws(s, skip_gap(s, key_end + tags.key_end.len())?, tags.value)?;
    let value_end = find_before(s, value_at, tags.value_end, &stops)?;
    let key = s[key_at..key_end].trim();
    if key.is_empty() || key.len() > MAX_NAME_BYTES {
        return Err(Stop::Invalid);
    }
    // The template writes a value as it is (`<arg_value>{{ v }}</arg_value>`): a line break at
    // its ends is the value's own (a file's trailing newline), never markup.
    let field = Field::Untyped(s[value_at..value_end].to_owned());
    Ok(((key.to_owned(), field), value_end + tags.value_end.len()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const SEARCH: &str = "<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>sveltekit form actions progressive enhancement</arg_value>\n</tool_call>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            SEARCH,
            &[(
                "web_search",
                json!({"query": "sveltekit form actions progressive enhancement"}),
            )],
        );
        let text = "<tool_call>read_file<arg_key>path</arg_key><arg_value>src/routes/+page.svelte</arg_value></tool_call><tool_call>git_diff</tool_call>";
        recovers(
            text,
            &[
                ("read_file", json!({"path": "src/routes/+page.svelte"})),
                ("git_diff", json!({})),
            ],
        );
    }

    #[test]
    fn converts_with_the_schema_only() {
        let text = "<tool_call>web_search<arg_key>query</arg_key><arg_value>10</arg_value><arg_key>max_results</arg_key><arg_value> 3 </arg_value></tool_call>";
        recovers(
            text,
            &[("web_search", json!({"query": "10", "max_results": 3}))],
        );
    }

    #[test]
    fn values_may_hold_angle_brackets() {
        let text = "<tool_call>bash<arg_key>command</arg_key><arg_value>test $n -lt 10 && echo <10</arg_value></tool_call>";
        recovers(
            text,
            &[("bash", json!({"command": "test $n -lt 10 && echo <10"}))],
        );
    }

    #[test]
    fn reads_output_escaped_twice_as_meant() {
        let text = r#"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>"#;
        recovers(text, &[("get_weather", json!({"city": "Beijing"}))]);
        let nested = r#"<tool_call>run_tests<arg_key>markers</arg_key><arg_value>[\"slow\", \"db\"]</arg_value><arg_key>filter</arg_key><arg_value>say \"hi\"</arg_value></tool_call>"#;
        recovers(
            nested,
            &[(
                "run_tests",
                json!({"markers": ["slow", "db"], "filter": "say \\\"hi\\\""}),
            )],
        );
    }

    #[test]
    fn a_sole_arguments_parameter_is_unwrapped() {
        let text = "<tool_call>read_file<arg_key>arguments</arg_key><arg_value>{\"path\": \"src/app.ts\", \"limit\": 40}</arg_value></tool_call>";
        recovers(
            text,
            &[("read_file", json!({"path": "src/app.ts", "limit": 40}))],
        );
        let two = "<tool_call>read_file<arg_key>arguments</arg_key><arg_value>{}</arg_value><arg_key>path</arg_key><arg_value>a</arg_value></tool_call>";
        recovers(
            two,
            &[("read_file", json!({"arguments": "{}", "path": "a"}))],
        );
        // `properties` too (the schema's key copied, issue #28), in every XML family.
        let properties = "<tool_call>read_file<arg_key>properties</arg_key><arg_value>{\"path\": \"a\"}</arg_value></tool_call>";
        recovers(properties, &[("read_file", json!({"path": "a"}))]);
    }

    #[test]
    fn values_keep_their_whitespace() {
        let text = "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.py</arg_value><arg_key>content</arg_key><arg_value>\n    return 1\n\n</arg_value></tool_call>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"path": "a.py", "content": "\n    return 1\n\n"}),
            )],
        );
    }

    #[test]
    fn edge_line_breaks_are_the_value_s_and_non_strings_are_trimmed() {
        // What the GLM-4.6 template renders for `{"content": "\nx\n"}`; a boolean written
        // with spaces around it is still typed.
        let text = "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>\nx\n</arg_value>\n<arg_key>overwrite</arg_key>\n<arg_value> true\n</arg_value>\n</tool_call>";
        recovers(
            text,
            &[("write_file", json!({"content": "\nx\n", "overwrite": true}))],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("GLM opens a call with <tool_call> and the name.");
        ignores("<tool_call>git_diff");
        ignores("<tool_call>deploy</tool_call>");
    }

    #[test]
    fn a_block_holding_every_declared_parameter_may_end_the_message_unclosed() {
        // `grep` declares pattern, path and max_count: all three present, then end of message.
        let all = "<tool_call>grep\n<arg_key>pattern</arg_key>\n<arg_value>fn main</arg_value>\n<arg_key>path</arg_key>\n<arg_value>src</arg_value>\n<arg_key>max_count</arg_key>\n<arg_value>3</arg_value>\n";
        assert_eq!(
            recovers(
                all,
                &[(
                    "grep",
                    json!({"pattern": "fn main", "path": "src", "max_count": 3})
                )]
            ),
            ""
        );
        rejects_truncation(all);
        // A declared parameter missing: another pair may have been coming; no call.
        ignores("<tool_call>grep\n<arg_key>pattern</arg_key>\n<arg_value>fn main</arg_value>\n");
        // Text after it: not the end of the message.
        ignores("<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls</arg_value>\nDone.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(SEARCH);
    }
}
