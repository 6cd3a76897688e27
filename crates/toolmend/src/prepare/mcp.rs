//! MCP tool lists: `tools/list` results read as they are, annotations read as flags.
//!
//! An MCP server describes its tools as `{name, title?, description?, inputSchema,
//! outputSchema?, annotations?}` (the Model Context Protocol's `Tool`), in a `tools/list` result
//! `{"tools": [...], "nextCursor"?}`. [`crate::ToolSet::from_json`] takes either the entries or
//! the whole result (or the JSON-RPC response around it), so an MCP tool list needs no
//! conversion.
//!
//! The annotations are hints from the server, and toolmend reads them as its own flags unless
//! the schema's `x-toolmend` says otherwise (explicit flags win):
//!
//! | MCP annotation | toolmend flag |
//! |---|---|
//! | `readOnlyHint: true` | `mutating: false`: a cut-off call may be closed instead of refused |
//! | `readOnlyHint: false`, or `destructiveHint: true` (not read-only) | `mutating: true`: never closed when cut off; clears reads from the storm window |
//! | `idempotentHint` | `idempotent`: a repeated identical call does not clear reads from the storm window |
//!
//! With no annotation the tool stays undeclared, which counts as mutating where safety asks.

use serde_json::Value;

use super::hints::ToolHints;

/// The tool entries of an MCP `tools/list` result (`{"tools": [...]}`) or of a JSON-RPC
/// response carrying one (`{"jsonrpc": "2.0", "id": …, "result": {"tools": [...]}}`); `None`
/// for anything else, such as a single tool object (which has a `name`).
pub(crate) fn tool_list(value: &Value) -> Option<&[Value]> {
    let object = value.as_object()?;
    if object.contains_key("name") {
        return None;
    }
    let result = match object.get("result") {
        Some(result) if !object.contains_key("tools") => result,
        _ => value,
    };
    result.get("tools")?.as_array().map(Vec::as_slice)
}

/// Sets the flags the MCP `annotations` imply, where the schema's own hints set none.
pub(crate) fn apply_annotations(hints: &mut ToolHints, annotations: Option<&Value>) {
    let Some(annotations) = annotations else {
        return;
    };
    let flag = |key: &str| annotations.get(key).and_then(Value::as_bool);
    if hints.mutating.is_none() {
        // `destructiveHint` is meaningful only when the tool is not read-only (MCP spec).
        hints.mutating = match (flag("readOnlyHint"), flag("destructiveHint")) {
            (Some(true), _) => Some(false),
            (Some(false), _) | (None, Some(true)) => Some(true),
            (None, _) => None,
        };
    }
    if hints.idempotent.is_none() {
        hints.idempotent = flag("idempotentHint");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolSet;

    fn flags(tool: &Value) -> (Option<bool>, Option<bool>) {
        let set = ToolSet::from_json(&json!([tool]));
        assert!(set.rejected().is_empty(), "{:?}", set.rejected());
        let hints = set.iter().next().unwrap().hints().clone();
        (hints.mutating, hints.idempotent)
    }

    #[test]
    fn annotations_set_the_flags() {
        let schema = json!({"type": "object"});
        let cases = [
            (json!({"readOnlyHint": true}), (Some(false), None)),
            // Read-only wins over a destructive hint, as the MCP spec says.
            (
                json!({"readOnlyHint": true, "destructiveHint": true}),
                (Some(false), None),
            ),
            (json!({"destructiveHint": true}), (Some(true), None)),
            (json!({"readOnlyHint": false}), (Some(true), None)),
            (
                json!({"readOnlyHint": false, "idempotentHint": true}),
                (Some(true), Some(true)),
            ),
            (json!({"destructiveHint": false}), (None, None)),
            (json!({"title": "Read"}), (None, None)),
            // Not booleans: no flag.
            (json!({"readOnlyHint": "yes"}), (None, None)),
        ];
        for (annotations, expected) in cases {
            let tool = json!({"name": "t", "inputSchema": schema, "annotations": annotations});
            assert_eq!(flags(&tool), expected, "{annotations}");
        }
        assert_eq!(
            flags(&json!({"name": "t", "inputSchema": schema})),
            (None, None)
        );
    }

    #[test]
    fn explicit_x_toolmend_flags_win() {
        let tool = json!({"name": "t",
            "inputSchema": {"type": "object", "x-toolmend": {"mutating": true, "idempotent": false}},
            "annotations": {"readOnlyHint": true, "idempotentHint": true}});
        assert_eq!(flags(&tool), (Some(true), Some(false)));
    }

    #[test]
    fn annotations_of_other_forms_are_not_read() {
        // Only an MCP tool object carries MCP annotations.
        let tool = json!({"name": "t", "parameters": {"type": "object"},
            "annotations": {"readOnlyHint": true}});
        assert_eq!(flags(&tool), (None, None));
    }

    #[test]
    fn a_read_only_tool_is_not_mutating() {
        let set = ToolSet::from_json(&json!([{"name": "read", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}}]));
        assert!(!set.get("read").unwrap().is_mutating());
    }

    #[test]
    fn a_cut_off_call_is_closed_only_for_a_read_only_tool() {
        use crate::{AssistantTurn, Mender, RepairKind, Session, Status, ToolCall};
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let status = |annotations: Value| {
            let set = ToolSet::from_json(&json!([{"name": "t", "inputSchema": schema,
                "annotations": annotations}]));
            let turn = AssistantTurn {
                tool_calls: vec![ToolCall::new("1", "t", r#"{"path": "/a/b"#)],
                finish_reason: Some("length".to_owned()),
                ..AssistantTurn::default()
            };
            let result = Mender::new(set).run_turn(&mut Session::new(), &turn);
            let call = &result.calls[0];
            (call.status, call.has(RepairKind::TruncationClosed))
        };
        assert_eq!(
            status(json!({"readOnlyHint": true})),
            (Status::Repaired, true)
        );
        assert_eq!(
            status(json!({"destructiveHint": true})),
            (Status::Invalid, false)
        );
        assert_eq!(status(json!({})), (Status::Invalid, false));
    }

    #[test]
    fn reads_a_whole_tools_list_result_and_response() {
        let tools = json!([
            {"name": "read_file", "description": "Read", "inputSchema": {"type": "object",
                "required": ["path"], "properties": {"path": {"type": "string"}}},
             "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
            {"name": "write_file", "inputSchema": {"type": "object"}}
        ]);
        let result = json!({"tools": tools, "nextCursor": "2"});
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        for input in [&tools, &result, &response] {
            let set = ToolSet::from_json(input);
            assert!(set.rejected().is_empty(), "{input}");
            assert_eq!(set.len(), 2, "{input}");
            let read = set.get("read_file").unwrap();
            assert_eq!(read.format(), crate::prepare::ToolFormat::Mcp);
            assert_eq!(read.description(), Some("Read"));
            assert!(read.is_valid(&json!({"path": "/a"})));
            assert!(!read.is_valid(&json!({})));
        }
    }

    #[test]
    fn a_single_tool_is_not_a_list() {
        assert!(tool_list(&json!({"name": "tools", "tools": []})).is_none());
        assert!(tool_list(&json!({"result": {"content": []}})).is_none());
        assert!(tool_list(&json!([])).is_none());
    }
}
