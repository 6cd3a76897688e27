//! Qwen3-Coder XML (Qwen3-Coder, Qwen3.5, Qwen3.6, Step-3.5): GRAMMARS §2.5.
//!
//! ```text
//! <tool_call>
//! <function=bash>
//! <parameter=command>
//! pnpm --filter web test -- --run
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! **Detects** `<tool_call>` then one or more `<function=NAME>` … `</function>` then
//! `</tool_call>`; also a bare `<function=NAME>` … `</function>` with no wrapper (vLLM's
//! fallback). Each `<parameter=KEY>` value loses exactly one leading and one trailing line
//! break (indentation is kept) and is converted with the tool's schema. A parameter with no
//! `</parameter>` ends at the next `<parameter=` or at `</function>` (both engines accept that).
//! Consecutive bare functions form one block. A bare function right after an opened wrapper
//! (or after a function that did not parse as a block) is not accepted: that wrapper is
//! truncated. A value that meets `<function=` before its closer belongs to a truncated call:
//! the closer found is the next call's, so the block is refused.
//! A function body that is a JSON object (`<function=NAME>{…}</function>`, llama.cpp's Hermes
//! variant) passes through as JSON.
//!
//! **Never accepts** a block without `</function>` (and, when wrapped, `</tool_call>`), text
//! between parameters, or an empty name. Values are never run through an XML parser: they often
//! hold `<`, `>` and backticks.

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    Step, Stop, expect, expect_ws, find_before, find_opt, name_until, peek_ws, skip_ws,
    strip_one_newline,
};
use crate::recover::json::object_span;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "qwen3_coder",
    sentinels: &["<tool_call>", "<function="],
    parse,
};

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    if s[start..body].starts_with("<function=") {
        // A bare function is vLLM's fallback for a missing wrapper, not a way around a wrapper
        // that was opened and never closed (that block is truncated: GRAMMARS §1.3).
        let before = s[..start].trim_end();
        if ["<tool_call>", "<seed:tool_call>", "</function>"]
            .iter()
            .any(|t| before.ends_with(t))
        {
            return Err(Stop::Invalid);
        }
        return bare(input, body);
    }
    calls(s, body, "</tool_call>", true, false)
}

/// What starts a new Qwen3-Coder or Seed-OSS call: met inside a value before its closer, it
/// means the value was cut off (the call is truncated) and the closer found belongs to the next
/// call, GRAMMARS §1.3. Only this family's own opener counts: a block of another family quoted
/// in a value has no closer of this one.
const STOPS: &[&str] = &["<function="];

/// Consecutive bare functions from `at` (just after the first `<function=`), as one block: a
/// bare function right after another is part of the same unwrapped output (vLLM's fallback
/// parses every one). A following function that can never complete ends the block before it.
fn bare(input: &Input<'_>, at: usize) -> Step<Block> {
    let s = input.text;
    let (call, mut end) = function(s, at, true, false)?;
    let mut calls = vec![call];
    loop {
        let next = match peek_ws(s, end, "<function=") {
            Ok(Some(next)) => next,
            Ok(None) => break,
            Err(Stop::Incomplete) if input.eof => break,
            Err(stop) => return Err(stop),
        };
        match function(s, next, true, false) {
            Ok((call, after)) => {
                calls.push(call);
                end = after;
            }
            Err(Stop::Incomplete) if !input.eof => return Err(Stop::Incomplete),
            Err(_) => break,
        }
    }
    Block::new(end, calls)
}

/// One or more `<function=…>` blocks after `at`, then `close`. Shared with Seed-OSS, whose
/// parameters must be closed (`lenient == false`).
/// `verbatim`: values are taken as written (Seed-OSS writes them so); otherwise one line break
/// at each end, which Qwen3-Coder's template writes around a value, is dropped.
pub(crate) fn calls(s: &str, at: usize, close: &str, lenient: bool, verbatim: bool) -> Step<Block> {
    let mut i = expect_ws(s, at, "<function=")?;
    let mut calls = Vec::new();
    loop {
        let (call, end) = function(s, i, lenient, verbatim)?;
        calls.push(call);
        match peek_ws(s, end, "<function=")? {
            Some(next) => i = next,
            None => return Block::new(expect_ws(s, end, close)?, calls),
        }
    }
}

/// A function whose name starts at `at` (just after `<function=`); returns the call and the
/// index after `</function>`.
fn function(s: &str, at: usize, lenient: bool, verbatim: bool) -> Step<(RawCall, usize)> {
    let (name, gt) = name_until(s, at, b">")?;
    let mut i = skip_ws(s, gt + 1);
    if s.as_bytes().get(i) == Some(&b'{') {
        let (from, to) = object_span(s, i)?;
        let end = expect_ws(s, to, "</function>")?;
        return Ok((RawCall::json(name, s[from..to].to_owned()), end));
    }
    // Lenient parameters end at the next `<parameter=` or at `</function>` at the latest.
    let function_end = if lenient {
        Some(find_before(s, i, "</function>", STOPS)?)
    } else {
        None
    };
    let mut fields = Vec::new();
    loop {
        i = skip_ws(s, i);
        match expect(s, i, "</function>") {
            Ok(end) => {
                return Ok((RawCall::fields(name, fields), end));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let key_at = expect(s, i, "<parameter=")?;
        let (key, gt) = name_until(s, key_at, b">")?;
        let value_at = gt + 1;
        let (value_end, next) = match function_end {
            // Each search stays inside this parameter's own stretch of text, so a function with
            // many parameters is parsed in linear time.
            Some(function_end) => {
                let stretch =
                    find_opt(&s[..function_end], value_at, "<parameter=").unwrap_or(function_end);
                match find_opt(&s[..stretch], value_at, "</parameter>") {
                    Some(c) => (c, c + "</parameter>".len()),
                    None => (stretch, stretch),
                }
            }
            None => {
                let c = find_before(s, value_at, "</parameter>", STOPS)?;
                (c, c + "</parameter>".len())
            }
        };
        let raw = &s[value_at..value_end];
        let value = if verbatim {
            raw
        } else {
            strip_one_newline(raw)
        }
        .to_owned();
        fields.push((key, Field::Untyped(value)));
        i = next;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const BASH: &str = "<tool_call>\n<function=bash>\n<parameter=command>\npnpm --filter web test -- --run\n</parameter>\n</function>\n</tool_call>";

    #[test]
    fn recovers_the_sample() {
        assert_eq!(
            recovers(
                BASH,
                &[(
                    "bash",
                    json!({"command": "pnpm --filter web test -- --run"})
                )]
            ),
            ""
        );
    }

    #[test]
    fn keeps_indentation_and_strips_one_newline() {
        let text = "<tool_call>\n<function=edit_file>\n<parameter=path>\nlib/src/parse.rs\n</parameter>\n<parameter=old_string>\n    let n: usize = s.parse().unwrap();\n</parameter>\n<parameter=new_string>\n    let n: usize = s.parse().map_err(Error::BadCount)?;\n</parameter>\n</function>\n</tool_call>";
        recovers(
            text,
            &[(
                "edit_file",
                json!({
                "path": "lib/src/parse.rs",
                "old_string": "    let n: usize = s.parse().unwrap();",
                "new_string": "    let n: usize = s.parse().map_err(Error::BadCount)?;"}),
            )],
        );
    }

    #[test]
    fn converts_values_with_the_schema() {
        let text = "<tool_call>\n<function=read_file>\n<parameter=path>\na.rs\n</parameter>\n<parameter=limit>\n40\n</parameter>\n</function>\n</tool_call>";
        recovers(text, &[("read_file", json!({"path": "a.rs", "limit": 40}))]);
        let text = "<tool_call><function=read_file><parameter=limit>all</parameter></function></tool_call>";
        recovers(text, &[("read_file", json!({"limit": "all"}))]);
    }

    #[test]
    fn tolerates_a_missing_parameter_close_and_a_missing_wrapper() {
        let text = "<tool_call>\n<function=grep>\n<parameter=pattern>\nfoo\n<parameter=path>\nsrc\n</function>\n</tool_call>";
        recovers(text, &[("grep", json!({"pattern": "foo", "path": "src"}))]);
        let bare =
            "Running it.\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>";
        assert_eq!(
            recovers(bare, &[("bash", json!({"command": "ls"}))]),
            "Running it.\n"
        );
    }

    #[test]
    fn recovers_several_calls_and_json_bodies() {
        let text = "<tool_call>\n<function=glob>\n<parameter=pattern>*.rs</parameter>\n</function>\n<function=git_diff>\n</function>\n</tool_call>";
        recovers(
            text,
            &[
                ("glob", json!({"pattern": "*.rs"})),
                ("git_diff", json!({})),
            ],
        );
        recovers(
            "<function=bash>{\"command\": \"ls\"}</function>",
            &[("bash", json!({"command": "ls"}))],
        );
    }

    #[test]
    fn values_may_hold_markup_and_backticks() {
        let text = "<tool_call>\n<function=write_file>\n<parameter=path>\na.tsx\n</parameter>\n<parameter=content>\nconst x = <A<B>> `t`;\n```\n</parameter>\n</function>\n</tool_call>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"path": "a.tsx", "content": "const x = <A<B>> `t`;\n```"}),
            )],
        );
    }

    #[test]
    fn ignores_look_alikes_and_unknown_names() {
        ignores("Qwen3-Coder writes <function=NAME> blocks.");
        ignores(
            "<tool_call>\n<function=deploy>\n<parameter=env>\nprod\n</parameter>\n</function>\n</tool_call>",
        );
        ignores(
            "~~~\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>\n~~~",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(BASH);
    }
}
