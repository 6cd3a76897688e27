//! Anthropic-style `<function_calls><invoke>` XML: GRAMMARS §2.14.
//!
//! ```text
//! <function_calls>
//! <invoke name="glob">
//! <parameter name="pattern">**/Dockerfile*</parameter>
//! </invoke>
//! </function_calls>
//! ```
//!
//! **Detects** `<function_calls>`, one or more `<invoke name="NAME">` elements holding
//! `<parameter name="KEY">VALUE</parameter>` children, and `</function_calls>`. Tags may carry a
//! namespace prefix (`<p:invoke>`, `<p:parameter>`). Values are raw text taken as written, line
//! breaks at their ends included (MiniMax M2's template writes `<parameter name="k">{{ v }}
//! </parameter>` and adds none), and are converted with the tool's schema (GRAMMARS §1.8, the
//! MiniMax rules; a non-string value trimmed first). Scanned anywhere, not only at the message start.
//! The invoke body parser is shared with MiniMax M2 and Step-3.
//!
//! **Never accepts** a block without `</invoke>` or `</function_calls>`, or text between
//! parameters. Values are not XML-unescaped and never run through an XML parser.

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{Step, Stop, attr, expect, expect_ws, find_before, skip_ws};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "anthropic",
    sentinels: &["<function_calls>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (calls, end) = invokes(s, body, input.eof)?;
    Block::new(expect_ws(s, end, "</function_calls>")?, calls)
}

/// One or more invokes from `at`; returns them and the index after the last `</invoke>`. With
/// `eof`, a text that ends after an invoke has no further invoke (the caller's closer may be
/// optional).
pub(crate) fn invokes(s: &str, at: usize, eof: bool) -> Step<(Vec<RawCall>, usize)> {
    let mut calls = Vec::new();
    let mut i = skip_ws(s, at);
    loop {
        let (call, end) = invoke(s, i)?;
        calls.push(call);
        let next = skip_ws(s, end);
        match prefixed(s, next, "invoke") {
            Ok(_) => i = next,
            Err(Stop::Incomplete) if !eof => return Err(Stop::Incomplete),
            Err(_) => return Ok((calls, end)),
        }
    }
}

/// `<` + an optional `prefix:` + `word` at `at`; returns the prefix (with its colon) and the
/// index after `word`.
fn prefixed<'a>(s: &'a str, at: usize, word: &str) -> Step<(&'a str, usize)> {
    let i = expect(s, at, "<")?;
    let b = s.as_bytes();
    let mut j = i;
    while j < b.len()
        && j - i < 32
        && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'-')
    {
        j += 1;
    }
    let prefix = match b.get(j) {
        None => return Err(Stop::Incomplete),
        Some(b':') => &s[i..=j],
        Some(_) => "",
    };
    let end = expect(s, i + prefix.len(), word)?;
    Ok((prefix, end))
}

/// `<invoke name="NAME">` … `</invoke>` (any prefix) at `at`.
pub(crate) fn invoke(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let (prefix, i) = prefixed(s, at, "invoke")?;
    let (name, i) = attr(s, i, "name")?;
    let mut i = expect_ws(s, i, ">")?;
    let close_param = format!("</{prefix}parameter>");
    let close_invoke = format!("</{prefix}invoke>");
    // A new invoke before the value's closer means the value was cut off and the closer found
    // belongs to the next call (§1.3).
    let new_invoke = format!("<{prefix}invoke ");
    let stops = [new_invoke.as_str()];
    let mut fields = Vec::new();
    loop {
        match expect_ws(s, i, &close_invoke) {
            Ok(end) => {
                crate::recover::cursor::name(&name, 0, name.len())?;
                return Ok((RawCall::fields(name, fields), end));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let open = expect_ws(s, i, &format!("<{prefix}parameter"))?;
        let (key, after) = attr(s, open, "name")?;
        let value_at = expect_ws(s, after, ">")?;
        let value_end = value_close(s, value_at, prefix, &close_param, &stops)?;
        // MiniMax M2's and Step-3's templates write `<parameter name="k">{{ v }}</parameter>`:
        // a line break at the value's ends is the value's own, never markup.
        let value = s[value_at..value_end].to_owned();
        fields.push((key, Field::Untyped(value)));
        i = value_end + close_param.len();
    }
}

/// Where a parameter value starting at `from` ends: at its `</parameter>`, skipping one closer
/// per parameter tag opened inside the value. A value that quotes a Qwen3-Coder block
/// (`<parameter=command>ls</parameter>`, which shares this closer) would otherwise be cut at the
/// quoted block's closer, and the quoted call recovered in place of this one.
fn value_close(s: &str, from: usize, prefix: &str, close: &str, stops: &[&str]) -> Step<usize> {
    let open = format!("<{prefix}parameter");
    let mut depth = 0usize;
    let mut at = from;
    loop {
        let end = find_before(s, at, close, stops)?;
        depth += memchr::memmem::find_iter(&s.as_bytes()[at..end], open.as_bytes())
            .filter(|&i| {
                matches!(
                    s.as_bytes().get(at + i + open.len()),
                    Some(b'=' | b' ' | b'>')
                )
            })
            .count();
        if depth == 0 {
            return Ok(end);
        }
        depth -= 1;
        at = end + close.len();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const GLOB: &str = "<function_calls>\n<invoke name=\"glob\">\n<parameter name=\"pattern\">**/Dockerfile*</parameter>\n</invoke>\n</function_calls>";

    #[test]
    fn recovers_the_samples() {
        recovers(GLOB, &[("glob", json!({"pattern": "**/Dockerfile*"}))]);
        let two = "Checking the compose file and the env template.\n<function_calls>\n<invoke name=\"read_file\">\n<parameter name=\"path\">compose.yaml</parameter>\n</invoke>\n<invoke name=\"read_file\">\n<parameter name=\"path\">.env.sample</parameter>\n</invoke>\n</function_calls>";
        let rest = recovers(
            two,
            &[
                ("read_file", json!({"path": "compose.yaml"})),
                ("read_file", json!({"path": ".env.sample"})),
            ],
        );
        assert_eq!(rest, "Checking the compose file and the env template.\n");
    }

    #[test]
    fn converts_with_the_schema_and_accepts_prefixes() {
        let text = "<function_calls><x:invoke name=\"read_file\"><x:parameter name=\"path\">a.rs</x:parameter><x:parameter name=\"limit\">20</x:parameter></x:invoke></function_calls>";
        recovers(text, &[("read_file", json!({"path": "a.rs", "limit": 20}))]);
        let zero = "<function_calls><invoke name=\"git_diff\"></invoke></function_calls>";
        recovers(zero, &[("git_diff", json!({}))]);
    }

    #[test]
    fn keeps_indentation_in_values() {
        let text = "<function_calls>\n<invoke name=\"write_file\">\n<parameter name=\"content\">    indented <b>\n</parameter>\n</invoke>\n</function_calls>";
        recovers(
            text,
            &[("write_file", json!({"content": "    indented <b>\n"}))],
        );
        // Line breaks at a value's ends are the value's: no template writes them as markup.
        let edges = "<function_calls><invoke name=\"write_file\"><parameter name=\"content\">\nx\n</parameter></invoke></function_calls>";
        recovers(edges, &[("write_file", json!({"content": "\nx\n"}))]);
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Claude uses <function_calls> blocks with <invoke name=\"x\"> inside.");
        ignores(
            "<function_calls>\n<invoke name=\"glob\">\n<parameter name=\"pattern\">*</parameter>\n</invoke>\n",
        );
        ignores("<function_calls><invoke name=\"drop_db\"></invoke></function_calls>");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(GLOB);
    }
}
