//! InternLM 2 / 2.5: GRAMMARS §2.29.
//!
//! ```text
//! <|action_start|><|plugin|>
//! {"name": "read_file", "parameters": {"path": "configs/train.yaml"}}<|action_end|>
//! ```
//!
//! **Detects** `<|action_start|><|plugin|>` + one `{name, parameters|arguments}` object +
//! `<|action_end|>`. One call per block.
//!
//! **Never accepts** other actions (`<|interpreter|>` code), or a block without
//! `<|action_end|>`. vLLM strips everything before the first `{`; here only whitespace may.

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, Stop, expect_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "internlm",
    sentinels: &["<|action_start|>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let i = expect_ws(s, body, "<|plugin|>")?;
    let (from, to) = object_span(s, i)?;
    let call = call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
    Block::new(expect_ws(s, to, "<|action_end|>")?, vec![call])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<|action_start|><|plugin|>\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"configs/train.yaml\"}}<|action_end|>";

    #[test]
    fn recovers_the_sample_and_several_blocks() {
        recovers(ONE, &[("read_file", json!({"path": "configs/train.yaml"}))]);
        let two = format!("{ONE}\n{ONE}");
        let call = ("read_file", json!({"path": "configs/train.yaml"}));
        assert_eq!(recovers(&two, &[call.clone(), call]), "\n");
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("<|action_start|><|interpreter|>\nprint(1)<|action_end|>");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }
}
