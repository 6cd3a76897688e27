//! DeepSeek DSML (V3.2, V3.2-Speciale, V4-Pro / V4-Flash): GRAMMARS §2.3.
//!
//! ```text
//! <｜DSML｜tool_calls>
//! <｜DSML｜invoke name="run_tests">
//! <｜DSML｜parameter name="filter" string="true">storage::compaction</｜DSML｜parameter>
//! <｜DSML｜parameter name="jobs" string="false">4</｜DSML｜parameter>
//! <｜DSML｜parameter name="fail_fast" string="false">true</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜tool_calls>
//! ```
//!
//! **Detects** a `tool_calls`, `function_calls` or `tool_use` section (V4 models that write
//! `function_calls` leak under SGLang's V4 parser: accept both) holding `invoke` elements, or a
//! bare complete `invoke`. The bar around `DSML` may be `｜` (U+FF5C), doubled, `‖` (U+2016),
//! ASCII `|` or `||`, missing on the leading side, and spaced (`< | DSML | tool_calls>`). An
//! invoke body is `parameter` elements or a JSON object. `string="true"` values are the raw text
//! as written, line breaks at their ends included (the V3.2 and V4 templates add none);
//! `string="false"` values are trimmed and JSON-decoded, else kept raw; a parameter with no
//! `string` attribute is converted with the tool's schema. Values may span lines and hold `<`,
//! `&` and quotes: a value ends only at its exact closing `parameter` tag. The section closer is
//! optional.
//!
//! **Never accepts** an invoke without its closing tag (SGLang drops truncated invokes too), or
//! the fragments left when special tokens are stripped.

use serde_json::Value;

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{Step, Stop, attr, expect, expect_ws, find, name, skip_ws};
use crate::recover::json::object_span;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "dsml",
    // `<`, the leading bar (any style, possibly spaced or missing), and `DSML`: what follows is
    // read by `tag`.
    sentinels: &[
        "<｜DSML",
        "<｜｜DSML",
        "<‖DSML",
        "<‖‖DSML",
        "<|DSML",
        "<||DSML",
        "<DSML",
        "< | DSML",
        "< |DSML",
        "<| DSML",
        "< || DSML",
        "< ｜ DSML",
        "< ｜DSML",
    ],
    parse,
};

const SECTIONS: [&str; 3] = ["tool_calls>", "function_calls>", "tool_use>"];

/// The bar characters around `DSML`.
fn is_bar(c: char) -> bool {
    matches!(c, '｜' | '‖' | '|' | ' ')
}

/// Reads `<`, an optional `/`, bars, `DSML`, bars at `at`; returns whether it closes and the
/// index of the tag word.
fn tag(s: &str, at: usize) -> Step<(bool, usize)> {
    let mut i = expect(s, at, "<")?;
    i = skip_ws(s, i);
    let closing = s.as_bytes().get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    i = bars(s, i)?;
    i = expect(s, i, "DSML")?;
    i = bars(s, i)?;
    Ok((closing, i))
}

/// Skips up to eight bar or space characters.
fn bars(s: &str, at: usize) -> Step<usize> {
    let mut i = at;
    for _ in 0..8 {
        match s[i..].chars().next() {
            None => return Err(Stop::Incomplete),
            Some(c) if is_bar(c) => i += c.len_utf8(),
            Some(_) => return Ok(i),
        }
    }
    Err(Stop::Invalid)
}

/// A closing tag for `word` (`parameter>`, `invoke>`, …) at `at`; returns the index after it.
fn close(s: &str, at: usize, word: &str) -> Step<usize> {
    let (closing, i) = tag(s, at)?;
    if !closing {
        return Err(Stop::Invalid);
    }
    expect(s, i, word)
}

fn parse(input: &Input<'_>, start: usize, _body: usize) -> Step<Block> {
    let s = input.text;
    let (closing, word) = tag(s, start)?;
    if closing {
        return Err(Stop::Invalid);
    }
    if let Ok(_) | Err(Stop::Incomplete) = expect(s, word, "invoke") {
        let (call, end) = invoke(s, start)?;
        return Block::new(end, vec![call]);
    }
    let section = SECTIONS
        .iter()
        .find_map(|w| expect(s, word, w).ok().map(|end| (w, end)));
    let Some((section, mut i)) = section else {
        return match SECTIONS
            .iter()
            .any(|w| expect(s, word, w) == Err(Stop::Incomplete))
        {
            true => Err(Stop::Incomplete),
            false => Err(Stop::Invalid),
        };
    };
    let mut calls = Vec::new();
    loop {
        let at = skip_ws(s, i);
        if at == s.len() {
            return if input.eof && !calls.is_empty() {
                Block::new(i, calls)
            } else {
                Err(Stop::Incomplete)
            };
        }
        match close(s, at, section) {
            Ok(end) => return Block::new(end, calls),
            Err(Stop::Incomplete) if !input.eof => return Err(Stop::Incomplete),
            _ => {}
        }
        match invoke(s, at) {
            Ok((call, end)) => {
                calls.push(call);
                i = end;
            }
            // The section closer is optional: after at least one invoke, anything else ends it.
            Err(Stop::Invalid) if !calls.is_empty() => return Block::new(i, calls),
            Err(Stop::Incomplete) if input.eof && !calls.is_empty() => return Block::new(i, calls),
            Err(stop) => return Err(stop),
        }
    }
}

/// `<D invoke name="NAME">` … `</D invoke>` at `at`.
fn invoke(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let (closing, word) = tag(s, at)?;
    if closing {
        return Err(Stop::Invalid);
    }
    let i = expect(s, word, "invoke")?;
    let (tool, i) = attr(s, i, "name")?;
    let tool = name(&tool, 0, tool.len())?;
    let mut i = expect_ws(s, i, ">")?;
    if s.as_bytes().get(skip_ws(s, i)) == Some(&b'{') {
        let (from, to) = object_span(s, i)?;
        let end = close(s, skip_ws(s, to), "invoke>")?;
        return Ok((RawCall::json(tool, s[from..to].to_owned()), end));
    }
    let mut fields = Vec::new();
    loop {
        let at = skip_ws(s, i);
        match close(s, at, "invoke>") {
            Ok(end) => {
                return Ok((RawCall::fields(tool, fields), end));
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let (closing, word) = tag(s, at)?;
        if closing {
            return Err(Stop::Invalid);
        }
        let j = expect(s, word, "parameter")?;
        let (key, j) = attr(s, j, "name")?;
        let (string, j) = match attr(s, j, "string") {
            Ok((flag, after)) => (Some(flag), after),
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => (None, j),
        };
        let value_at = expect_ws(s, j, ">")?;
        let (value_end, end) = param_close(s, value_at)?;
        // The V3.2/V4 templates write the value as it is: every byte up to the closer is the
        // value's, line breaks at its ends included (a non-string value is trimmed to decode).
        let raw = &s[value_at..value_end];
        let field = match string.as_deref() {
            Some("true") => Field::Typed(Value::String(raw.to_owned())),
            Some(_) => Field::Typed(
                serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_owned())),
            ),
            None => Field::Untyped(raw.to_owned()),
        };
        fields.push((key, field));
        i = end;
    }
}

/// The closing parameter tag after `from`: every `</` is a candidate, so a value may hold
/// `<`, `</b>` and the like. Returns the tag's start and end.
fn param_close(s: &str, from: usize) -> Step<(usize, usize)> {
    let mut i = from;
    loop {
        let at = find(s, i, "<")?;
        match close(s, at, "parameter>") {
            Ok(end) => return Ok((at, end)),
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => i = at + 1,
        }
        // A new section or invoke before the closer means the value was cut off (§1.3): the
        // next block's closer must not complete it.
        if let Ok((false, word)) = tag(s, at) {
            let opens = ["invoke"].iter().chain(SECTIONS.iter());
            for w in opens {
                match expect(s, word, w) {
                    Ok(_) => return Err(Stop::Invalid),
                    Err(Stop::Incomplete) => return Err(Stop::Incomplete),
                    Err(Stop::Invalid) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const RUN: &str = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"run_tests\">\n<｜DSML｜parameter name=\"filter\" string=\"true\">storage::compaction</｜DSML｜parameter>\n<｜DSML｜parameter name=\"jobs\" string=\"false\">4</｜DSML｜parameter>\n<｜DSML｜parameter name=\"fail_fast\" string=\"false\">true</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            RUN,
            &[(
                "run_tests",
                json!({"filter": "storage::compaction", "jobs": 4, "fail_fast": true}),
            )],
        );
        let write = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">scripts/bump.sh</｜DSML｜parameter>\n<｜DSML｜parameter name=\"content\" string=\"true\">#!/bin/sh\nset -e\ncargo set-version --bump patch</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        recovers(
            write,
            &[(
                "write_file",
                json!({"path": "scripts/bump.sh", "content": "#!/bin/sh\nset -e\ncargo set-version --bump patch"}),
            )],
        );
        let glob = "<｜｜DSML｜｜tool_calls>\n<｜｜DSML｜｜invoke name=\"glob\">\n{\"pattern\": \"src/**/*.vue\"}\n</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>";
        recovers(glob, &[("glob", json!({"pattern": "src/**/*.vue"}))]);
    }

    #[test]
    fn accepts_every_bar_variant_and_a_bare_invoke() {
        for (open, close) in [
            ("<‖DSML‖", "</‖DSML‖"),
            ("<|DSML|", "</|DSML|"),
            ("<||DSML||", "</||DSML||"),
            ("< | DSML | ", "</ | DSML | "),
            ("<DSML｜", "</DSML｜"),
        ] {
            let text = format!(
                "{open}tool_calls>{open}invoke name=\"bash\">{open}parameter name=\"command\" string=\"true\">ls</{}parameter>{close}invoke>{close}tool_calls>",
                &close[2..]
            );
            recovers(&text, &[("bash", json!({"command": "ls"}))]);
        }
        let bare = "Run it: <｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\" string=\"true\">ls -la</｜DSML｜parameter></｜DSML｜invoke> done";
        assert_eq!(
            recovers(bare, &[("bash", json!({"command": "ls -la"}))]),
            "Run it:  done"
        );
    }

    #[test]
    fn values_may_hold_markup_and_untyped_values_use_the_schema() {
        let text = "<｜DSML｜tool_calls><｜DSML｜invoke name=\"write_file\"><｜DSML｜parameter name=\"content\" string=\"true\">a </b> <｜DSML｜ & \"q\"</｜DSML｜parameter><｜DSML｜parameter name=\"overwrite\">true</｜DSML｜parameter></｜DSML｜invoke>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"content": "a </b> <｜DSML｜ & \"q\"", "overwrite": true}),
            )],
        );
    }

    #[test]
    fn edge_line_breaks_are_the_value_s() {
        // What the V3.2/V4 templates render for `{"content": "\nx\n", "overwrite": true}`.
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"content\" string=\"true\">\nx\n</｜DSML｜parameter>\n<｜DSML｜parameter name=\"overwrite\" string=\"false\">\ntrue\n</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        recovers(
            text,
            &[("write_file", json!({"content": "\nx\n", "overwrite": true}))],
        );
    }

    #[test]
    fn recovers_several_invokes_without_a_section_closer() {
        let text = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"glob\">\n{\"pattern\": \"*.rs\"}\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"git_diff\">\n</｜DSML｜invoke>\nThat is all.";
        assert_eq!(
            recovers(
                text,
                &[
                    ("glob", json!({"pattern": "*.rs"})),
                    ("git_diff", json!({}))
                ]
            ),
            "\nThat is all."
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("DeepSeek V3.2 writes <｜DSML｜tool_calls> sections.");
        ignores("<｜DSML｜invoke name=\"nuke\"></｜DSML｜invoke>");
        ignores(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">ls</｜DSML｜parameter>\n",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"run_tests\">\n<｜DSML｜parameter name=\"jobs\" string=\"false\">4</｜DSML｜parameter>\n</｜DSML｜invoke>",
        );
    }
}
