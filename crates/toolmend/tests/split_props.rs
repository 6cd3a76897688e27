//! Property test of concatenated splits (issue #28): a stray closer inside an array of a call
//! never splits the call into parts that drop members the one-call reading keeps.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolmend::{AssistantTurn, Mender, Session, Status, ToolCall, ToolSet};

fn mender() -> Mender {
    Mender::new(ToolSet::from_json(
        &json!([{"type": "function", "function": {
        "name": "multi_edit",
        "parameters": {"type": "object", "required": ["path", "edits"],
            "additionalProperties": false,
            "properties": {"path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object",
                    "required": ["old_string", "new_string"],
                    "properties": {"old_string": {"type": "string"},
                                   "new_string": {"type": "string"}}}}}}}}]),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every call dispatched (valid or repaired) holds every edit that was sent; otherwise the
    /// call is refused whole.
    #[test]
    fn a_stray_closer_never_drops_an_edit(
        edits in proptest::collection::vec(("[a-z \"]{0,6}", "[a-z ,}\\]]{0,6}"), 2..5),
        at in 0usize..5,
        closer in prop_oneof![Just("}"), Just("}}"), Just("]"), Just("} ,")],
    ) {
        let items: Vec<String> = edits
            .iter()
            .map(|(old, new)| json!({"old_string": old, "new_string": new}).to_string())
            .collect();
        let at = at % items.len();
        let mut text = String::from(r#"{"path": "a.rs", "edits": ["#);
        for (k, item) in items.iter().enumerate() {
            if k > 0 {
                text.push_str(", ");
            }
            text.push_str(item);
            if k == at {
                text.push_str(closer);
            }
        }
        text.push_str("]}");
        let mut turn = AssistantTurn::default();
        turn.tool_calls.push(ToolCall::new("c1", "multi_edit", text.as_str()));
        let result = mender().run_turn(&mut Session::new(), &turn);
        for call in &result.calls {
            if matches!(call.status, Status::Valid | Status::Repaired) {
                let sent = call.arguments.as_ref().and_then(|a| a.get("edits"));
                prop_assert_eq!(
                    sent.and_then(Value::as_array).map(Vec::len),
                    Some(items.len()),
                    "{} dispatched as {}", text, call.arguments_text
                );
            }
        }
    }
}
