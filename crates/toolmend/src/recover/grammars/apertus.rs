//! Apertus (Swiss AI, 2509): GRAMMARS §2.28.
//!
//! ```text
//! <|tools_prefix|>[{"grep": {"pattern": "def test_"}}, {"list_dir": {"path": "tests"}}]<|tools_suffix|>
//! ```
//!
//! **Detects** `<|tools_prefix|>` + a JSON array of single-key objects `{"TOOL": {args}}` +
//! `<|tools_suffix|>`.
//!
//! **Never accepts** an element with more or fewer than one key, arguments that are not an
//! object, or a block without `<|tools_suffix|>` unless only whitespace or end tokens follow
//! the complete array to the end of the message (EOS, GRAMMARS §1.3).

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop};
use crate::recover::json::{arguments, value_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "apertus",
    sentinels: &["<|tools_prefix|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (from, to) = value_span(s, body)?;
    let items: Vec<BTreeMap<String, &RawValue>> =
        serde_json::from_str(&s[from..to]).map_err(|_| Stop::Invalid)?;
    let mut calls = Vec::new();
    for item in items {
        let mut entries = item.into_iter();
        let (Some((name, args)), None) = (entries.next(), entries.next()) else {
            return Err(Stop::Invalid);
        };
        let args = arguments(args)
            .filter(|_| args.get().trim_start().starts_with('{'))
            .ok_or(Stop::Invalid)?;
        calls.push(RawCall::json(name, args));
    }
    Block::new(close_or_eos(input, to, "<|tools_suffix|>")?, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const TWO: &str = "<|tools_prefix|>[{\"grep\": {\"pattern\": \"def test_\"}}, {\"list_dir\": {\"path\": \"tests\"}}]<|tools_suffix|>";

    #[test]
    fn recovers_the_sample() {
        recovers(
            TWO,
            &[
                ("grep", json!({"pattern": "def test_"})),
                ("list_dir", json!({"path": "tests"})),
            ],
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("<|tools_prefix|>[{\"grep\": {}, \"glob\": {}}]<|tools_suffix|>");
        ignores("Apertus wraps calls in <|tools_prefix|> and a suffix.");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation("<|tools_prefix|>[{\"grep\": {\"pattern\": \"x\"}}]<|tools_suffix|>");
    }
}
