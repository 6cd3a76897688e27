//! Hermes JSON in `<tool_call>` (Hermes 2 Pro / 3, Qwen2.5, Qwen3, QwQ, Granite 4, ERNIE 4.5,
//! LongCat): GRAMMARS §2.4 and §2.25.
//!
//! ```text
//! <tool_call>
//! {"name": "list_dir", "arguments": {"path": "packages/ui/src"}}
//! </tool_call>
//! ```
//!
//! **Detects** `<tool_call>` (or `<longcat_tool_call>`), optional whitespace, one JSON object
//! with a string `name` and an `arguments` (or `parameters`) object, optional whitespace, and
//! the closing tag. The JSON is raw-decoded from `{`, so a `</tool_call>` inside a string
//! argument does not cut the call (vLLM #45167). `arguments` given as a JSON string holding an
//! object is decoded. Several calls are several blocks.
//!
//! Also llama.cpp's Hermes-mode variant `<function name="NAME">{json}</function>`.
//!
//! A block whose closing tag is missing is recovered only when its JSON is complete and strict
//! and nothing but whitespace or end tokens follows until the end of the message (the model
//! stopped at EOS, GRAMMARS §1.3).
//!
//! **Never accepts** an incomplete payload, a missing closer followed by other text, JSON that
//! is not strict, arguments that are not an object.

use super::{Block, Grammar, Input, close_or_eos};
use crate::recover::call::RawCall;
use crate::recover::cursor::{Step, Stop, attr, expect_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_object, object_span};

/// llama.cpp's Hermes-mode variant: `<function name="NAME">{json}</function>`.
const FUNCTION_NAME: &str = "<function name=";

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "hermes",
    sentinels: &["<tool_call>", "<longcat_tool_call>", FUNCTION_NAME],
    parse,
};

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    if s[start..body] == *FUNCTION_NAME {
        let (name, i) = attr(s, body - "name=".len(), "name")?;
        let i = expect_ws(s, i, ">")?;
        let (from, to) = object_span(s, i)?;
        let end = expect_ws(s, to, "</function>")?;
        return Block::new(end, vec![RawCall::json(name, s[from..to].to_owned())]);
    }
    let close = if s[start..body].starts_with("<longcat") {
        "</longcat_tool_call>"
    } else {
        "</tool_call>"
    };
    let (from, to) = object_span(s, body)?;
    let call = call_object(&s[from..to], &["name"], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
    let end = close_or_eos(input, to, close)?;
    Block::new(end, vec![call])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \"packages/ui/src\"}}\n</tool_call>";

    #[test]
    fn recovers_the_sample() {
        assert_eq!(
            recovers(ONE, &[("list_dir", json!({"path": "packages/ui/src"}))]),
            ""
        );
    }

    #[test]
    fn recovers_several_calls_in_order_and_keeps_the_prose() {
        let text = "Both files are needed.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"vite.config.ts\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"tailwind.config.js\"}}\n</tool_call>";
        let rest = recovers(
            text,
            &[
                ("read_file", json!({"path": "vite.config.ts"})),
                ("read_file", json!({"path": "tailwind.config.js"})),
            ],
        );
        assert_eq!(rest, "Both files are needed.\n\n");
    }

    #[test]
    fn decodes_string_arguments() {
        let text = r#"<tool_call>{"name": "edit_file", "arguments": "{\"path\": \"go.sum\", \"old_string\": \"v1.2.0\", \"new_string\": \"v1.3.1\"}"}</tool_call>"#;
        recovers(
            text,
            &[(
                "edit_file",
                json!({"path": "go.sum", "old_string": "v1.2.0", "new_string": "v1.3.1"}),
            )],
        );
    }

    #[test]
    fn a_closing_tag_inside_a_string_does_not_cut_the_call() {
        let text = "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.md\", \"content\": \"use </tool_call> here\"}}</tool_call>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"path": "a.md", "content": "use </tool_call> here"}),
            )],
        );
    }

    #[test]
    fn passes_the_arguments_through_as_written() {
        let found = crate::recover::recover_text(
            "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\":   \"ls\"}}</tool_call>",
            &super::super::testing::tools(),
            16,
        );
        assert_eq!(found.calls[0].arguments, "{\"command\":   \"ls\"}");
    }

    #[test]
    fn recovers_ernie_after_think_and_longcat() {
        let ernie = "Need the changelog.\n</think>\n\n\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"CHANGES.rst\"}}\n</tool_call>";
        assert_eq!(
            recovers(ernie, &[("read_file", json!({"path": "CHANGES.rst"}))]),
            "Need the changelog.\n</think>\n\n\n"
        );
        let longcat = "<longcat_tool_call>{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}</longcat_tool_call>";
        recovers(longcat, &[("bash", json!({"command": "ls"}))]);
    }

    #[test]
    fn recovers_the_llama_cpp_function_name_variant() {
        let text = "<function name=\"bash\">{\"command\": \"ls\"}</function>";
        assert_eq!(recovers(text, &[("bash", json!({"command": "ls"}))]), "");
    }

    #[test]
    fn ignores_look_alikes_fences_inline_code_and_unknown_names() {
        ignores("Qwen wraps calls in <tool_call> tags, then JSON.");
        ignores(
            "Write `<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>` to call a tool.",
        );
        ignores("```xml\n<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>\n```\n");
        ignores("<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>");
        ignores("<tool_call>{\"name\": \"bash\", \"arguments\": [1]}</tool_call>");
        ignores("<tool_call>{'name': 'bash', 'arguments': {}}</tool_call>");
    }

    #[test]
    fn rejects_truncation_and_a_missing_closer_before_more_text() {
        rejects_truncation(ONE);
        ignores(
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\nThen I will",
        );
        ignores(
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_ca",
        );
        ignores("<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}\n");
    }

    #[test]
    fn a_complete_payload_at_end_of_sequence_needs_no_closer() {
        let eos =
            "Checking.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n";
        assert_eq!(
            recovers(eos, &[("bash", json!({"command": "ls"}))]),
            "Checking.\n"
        );
        let im_end =
            "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}<|im_end|>";
        assert_eq!(
            recovers(im_end, &[("bash", json!({"command": "ls"}))]),
            "<|im_end|>"
        );
    }
}
