//! IBM Granite 3.0, 3.1 and Granite-20B-FC: GRAMMARS §2.19 (Granite 4 is Hermes, §2.4).
//!
//! ```text
//! <|tool_call|>[{"name": "list_dir", "arguments": {"path": "ansible/roles"}}, {"name": "read_file", "arguments": {"path": "ansible/site.yml"}}]
//! ```
//!
//! **Detects** `<|tool_call|>` then a JSON array of `{name, arguments}` (3.0); plain
//! `<tool_call>` then a JSON array with no closing tag (3.1; a `</tool_call>` right after is
//! consumed when present); `<function_call>` then one `{name, arguments}` object (20B-FC). With
//! no closer, a call is complete when its JSON closes.
//!
//! **Never accepts** JSON that does not close or is not strict. vLLM's "output starts with the
//! marker" rule is not required: the marker may follow prose.

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, Stop, optional};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_list, call_object, object_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "granite",
    sentinels: &["<|tool_call|>", "<tool_call>", "<function_call>"],
    parse,
};

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let sentinel = &s[start..body];
    if sentinel == "<function_call>" {
        let (from, to) = object_span(s, body)?;
        let call = call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
        return Block::new(to, vec![call]);
    }
    let at = crate::recover::cursor::skip_ws(s, body);
    match s.as_bytes().get(at) {
        None => return Err(Stop::Incomplete),
        Some(b'[') => {}
        Some(_) => return Err(Stop::Invalid),
    }
    let (calls, to) = call_list(s, at, &["name"], ARGS_OR_PARAMETERS)?;
    let end = if sentinel == "<tool_call>" {
        optional(s, to, "</tool_call>", input.eof)?.unwrap_or(to)
    } else {
        to
    };
    Block::new(end, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    #[test]
    fn recovers_the_samples() {
        let v30 = "<|tool_call|>[{\"name\": \"list_dir\", \"arguments\": {\"path\": \"ansible/roles\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"ansible/site.yml\"}}]";
        recovers(
            v30,
            &[
                ("list_dir", json!({"path": "ansible/roles"})),
                ("read_file", json!({"path": "ansible/site.yml"})),
            ],
        );
        let v31 =
            "<tool_call>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ansible-lint\"}}]";
        recovers(v31, &[("bash", json!({"command": "ansible-lint"}))]);
        let fc = "<function_call>{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.yml\"}} <function_call>{\"name\": \"git_diff\", \"arguments\": {}}";
        assert_eq!(
            recovers(
                fc,
                &[
                    ("glob", json!({"pattern": "*.yml"})),
                    ("git_diff", json!({}))
                ]
            ),
            " "
        );
    }

    #[test]
    fn consumes_an_optional_closer_after_the_31_array() {
        let text = "<tool_call>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]</tool_call> ok";
        assert_eq!(recovers(text, &[("bash", json!({"command": "ls"}))]), " ok");
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Granite 3.0 emits <|tool_call|> then an array.");
        ignores("<|tool_call|>[{\"name\": \"bash\", \"arguments\": \"ls\"}]");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<|tool_call|>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]",
        );
        rejects_truncation(
            "<function_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
        );
    }
}
