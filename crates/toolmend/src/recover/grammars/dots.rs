//! dots (rednote dots.llm): `<dots_function_call>` wrapping Anthropic-style invokes, or one
//! JSON call object.
//!
//! ```text
//! ok<dots_function_call><invoke name="grep"><parameter name="pattern">TODO</parameter><parameter name="max_count">5</parameter></invoke></dots_function_call>
//! <dots_function_call>{"name": "glob", "arguments": {"pattern": "*.toml"}}</dots_function_call>
//! ```
//!
//! **Detects** `<dots_function_call>`, then either one or more `<invoke name="NAME">` elements
//! (the Anthropic body, [`super::anthropic::invokes`]; values untyped, converted with the
//! tool's schema) or one `{name, arguments}` object, then `</dots_function_call>`.
//!
//! **Never accepts** a block without `</dots_function_call>`, text that is neither invokes nor
//! a call object (`<dots_function_call>garbage</dots_function_call>` stays text).

use super::{Block, Grammar, Input, anthropic};
use crate::recover::cursor::{Step, Stop, expect_ws, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "dots",
    sentinels: &["<dots_function_call>"],
    parse,
};

const CLOSE: &str = "</dots_function_call>";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    match s.as_bytes().get(skip_ws(s, body)) {
        None => Err(Stop::Incomplete),
        Some(b'{') => {
            let (from, to) = object_span(s, body)?;
            let call =
                call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
            Block::new(expect_ws(s, to, CLOSE)?, vec![call])
        }
        Some(_) => {
            let (calls, end) = anthropic::invokes(s, body, input.eof)?;
            Block::new(expect_ws(s, end, CLOSE)?, calls)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = "<dots_function_call><invoke name=\"grep\"><parameter name=\"pattern\">TODO</parameter><parameter name=\"max_count\">5</parameter></invoke><invoke name=\"read_file\"><parameter name=\"path\">src/lib.rs</parameter></invoke></dots_function_call>";

    #[test]
    fn recovers_invokes_and_the_json_form() {
        let text = format!("ok{TWO}");
        let rest = recovers(
            &text,
            &[
                ("grep", json!({"pattern": "TODO", "max_count": 5})),
                ("read_file", json!({"path": "src/lib.rs"})),
            ],
        );
        assert_eq!(rest, "ok");
        let json_form = "<dots_function_call>{\"name\":\"glob\",\"arguments\":{\"pattern\":\"*.toml\"}}</dots_function_call>";
        recovers(json_form, &[("glob", json!({"pattern": "*.toml"}))]);
    }

    #[test]
    fn ignores_garbage_unknown_names_and_prose() {
        ignores("<dots_function_call>garbage</dots_function_call>");
        ignores(
            "<dots_function_call><invoke name=\"ghost\"><parameter name=\"q\">x</parameter></invoke></dots_function_call>",
        );
        ignores("some text </dots_function_call>");
        ignores("dots wraps calls in <dots_function_call> tags.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(TWO);
    }
}
