//! GigaChat 3 and 3.1: GRAMMARS §2.30.
//!
//! ```text
//! function call<|role_sep|>
//! {"name": "bash", "arguments": {"command": "df -h"}}
//! <|function_call|>{"name": "get_weather", "arguments": {"city": "Kazan"}}
//! ```
//!
//! **Detects** `function call<|role_sep|>` (3.0) or `<|function_call|>` (3.1, [`GRAMMAR_31`]),
//! then one `{name, arguments}` object. There is no closing
//! token (a trailing `</s>` is not part of the block): complete when the object closes.
//!
//! The automaton keys on `<|role_sep|>`; the scanner checks that `function call` precedes it.
//!
//! **Never accepts** an object that does not close or is not strict JSON.

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, Stop};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "function call",
    family: "gigachat",
    sentinels: &["<|role_sep|>"],
    parse,
};

/// GigaChat 3.1's header, `<|function_call|>`: its own entry, since it has no lead.
pub(crate) const GRAMMAR_31: Grammar = Grammar {
    lead: "",
    family: "gigachat",
    sentinels: &["<|function_call|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (from, to) = object_span(s, body)?;
    let call = call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
    Block::new(to, vec![call])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str =
        "function call<|role_sep|>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"df -h\"}}";

    #[test]
    fn recovers_the_sample() {
        assert_eq!(
            recovers(
                &format!("{ONE}</s>"),
                &[("bash", json!({"command": "df -h"}))]
            ),
            "</s>"
        );
    }

    #[test]
    fn recovers_several_messages() {
        let two = format!("{ONE}<|message_sep|>{ONE}");
        let call = ("bash", json!({"command": "df -h"}));
        assert_eq!(recovers(&two, &[call.clone(), call]), "<|message_sep|>");
    }

    #[test]
    fn recovers_the_3_1_header() {
        let text = "Let me check.<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Kazan\"}}</s>";
        assert_eq!(
            recovers(text, &[("get_weather", json!({"city": "Kazan"}))]),
            "Let me check.</s>"
        );
        rejects_truncation(
            "<|function_call|>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
        );
        ignores("GigaChat 3.1 writes <|function_call|> before its JSON.");
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("A function call<|role_sep|> marker alone.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }
}
