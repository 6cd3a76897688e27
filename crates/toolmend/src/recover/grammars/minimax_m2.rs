//! MiniMax M2 / M2.1 / M2.5 / M2.7: GRAMMARS §2.15.
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="bash">
//! <parameter name="command">poetry run alembic upgrade head</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! **Detects** `<minimax:tool_call>` followed by one or more invokes (the Anthropic-style body,
//! [`super::anthropic::invokes`]; single-quoted names accepted) and an optional
//! `</minimax:tool_call>`. Values are converted with the tool's schema; without one they stay
//! strings (vLLM's behaviour, not SGLang's, GRAMMARS §3).
//!
//! **Never accepts** an invoke without `</invoke>`, or the bracket-less MLX damage
//! (`invoke name="x">`, `valparameter>`): repairing it is too risky.

use super::{Block, Grammar, Input, anthropic};
use crate::recover::cursor::{Step, optional};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "minimax_m2",
    sentinels: &["<minimax:tool_call>"],
    parse,
};

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (calls, end) = anthropic::invokes(s, body, input.eof)?;
    let end = optional(s, end, "</minimax:tool_call>", input.eof)?.unwrap_or(end);
    Block::new(end, calls)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const BASH: &str = "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">poetry run alembic upgrade head</parameter>\n</invoke>\n</minimax:tool_call>";

    #[test]
    fn recovers_the_samples() {
        recovers(
            BASH,
            &[(
                "bash",
                json!({"command": "poetry run alembic upgrade head"}),
            )],
        );
        let edit = "<minimax:tool_call>\n<invoke name=\"edit_file\">\n<parameter name=\"path\">app/routes.py</parameter>\n<parameter name=\"old_string\">@app.get(\"/health\")</parameter>\n<parameter name=\"new_string\">@app.get(\"/healthz\")</parameter>\n</invoke>\n</minimax:tool_call>";
        recovers(
            edit,
            &[(
                "edit_file",
                json!({"path": "app/routes.py", "old_string": "@app.get(\"/health\")", "new_string": "@app.get(\"/healthz\")"}),
            )],
        );
    }

    #[test]
    fn recovers_several_invokes_and_schema_less_values_stay_strings() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "count"}]));
        let text = "<minimax:tool_call><invoke name='count'><parameter name=\"n\">10</parameter></invoke><invoke name=\"count\"><parameter name=\"n\">11</parameter></invoke></minimax:tool_call>";
        let found = crate::recover::recover_text(text, &tools, 16);
        let args: Vec<&str> = found.calls.iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(args, [r#"{"n":"10"}"#, r#"{"n":"11"}"#]);
    }

    #[test]
    fn edge_line_breaks_are_the_value_s() {
        // What the M2 template renders for `{"content": "\nx\n", "overwrite": true}`.
        let text = "<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"content\">\nx\n</parameter>\n<parameter name=\"overwrite\">true\n</parameter>\n</invoke>\n</minimax:tool_call>";
        recovers(
            text,
            &[("write_file", json!({"content": "\nx\n", "overwrite": true}))],
        );
    }

    #[test]
    fn ignores_look_alikes_and_damaged_markup() {
        ignores("MiniMax writes <minimax:tool_call> then invokes.");
        ignores(
            "<minimax:tool_call>\ninvoke name=\"bash\">\nparameter name=\"command\">lsparameter>\ninvoke>\n</minimax:tool_call>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>",
        );
    }
}
