//! The tracing events of DESIGN §8: targets, names and fields, and no argument values.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolmend::{
    AssistantTurn, Mender, MenderOptions, RecoverMode, RepairKind, Session, ToolCall, ToolSet,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One captured event: its target and every field as text.
#[derive(Debug, Clone)]
struct Captured {
    target: String,
    fields: Vec<(String, String)>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default, Clone)]
struct Collector(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for Collector {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let target = event.metadata().target().to_owned();
        self.0.lock().unwrap().push(Captured { target, fields });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn capture(run: impl FnOnce()) -> Vec<Captured> {
    let collector = Collector::default();
    let events = Arc::clone(&collector.0);
    tracing::subscriber::with_default(collector, run);
    events.lock().unwrap().clone()
}

fn mender() -> Mender {
    let tools = ToolSet::from_json(&json!([{"name": "read", "parameters": {"type": "object",
        "required": ["path"], "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}]));
    Mender::with_options(tools, MenderOptions::default().with_model("glm-4.6"))
}

#[test]
fn a_repaired_call_emits_tool_input_repaired_and_its_outcome() {
    let mender = mender();
    let events = capture(|| {
        let _ = mender.repair_call("read", r#"{"path": "/secret/file", "limit": null}"#);
    });
    let repaired = events
        .iter()
        .find(|e| e.field("message") == Some("tool_input_repaired"))
        .expect("repaired event");
    assert_eq!(repaired.target, "tool_repair");
    assert_eq!(repaired.field("tool"), Some("read"));
    assert_eq!(repaired.field("model"), Some("glm-4.6"));
    assert_eq!(repaired.field("repair_kind"), Some("null_stripped"));
    let outcome = events
        .iter()
        .find(|e| e.field("message") == Some("tool.call_repaired"))
        .expect("outcome event");
    assert_eq!(outcome.field("outcome"), Some("local-salvage"));
    let everything = format!("{events:?}");
    assert!(
        !everything.contains("/secret/file"),
        "an argument value reached the logs: {everything}"
    );
}

#[test]
fn an_invalid_call_emits_tool_input_invalid_and_re_prompt() {
    let mender = mender();
    let events = capture(|| {
        let _ = mender.repair_call("read", r#"{"limit": "many"}"#);
    });
    let invalid = events
        .iter()
        .find(|e| e.target == "tool_input_invalid")
        .expect("invalid event");
    assert_eq!(invalid.field("message"), Some("tool_input_invalid"));
    assert_eq!(invalid.field("tool"), Some("read"));
    let outcome = events
        .iter()
        .find(|e| e.field("message") == Some("tool.call_repaired"))
        .expect("outcome event");
    assert_eq!(outcome.field("outcome"), Some("re-prompt"));
}

#[test]
fn a_valid_call_emits_nothing() {
    let mender = mender();
    let events = capture(|| {
        let _ = mender.repair_call("read", r#"{"path": "/a"}"#);
    });
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(mender.stats().snapshot().calls, 1);
}

#[test]
fn a_dropped_duplicate_emits_duplicate_dropped_and_is_counted() {
    let tools = ToolSet::from_json(&json!([{"name": "read", "parameters": {"type": "object",
        "required": ["path"], "properties": {"path": {"type": "string"}}}}]));
    let options = MenderOptions::default()
        .with_model("qwen3")
        .with_recover(RecoverMode::All);
    let mender = Mender::with_options(tools, options);
    let mut turn = AssistantTurn::default();
    turn.content = Some(
        "Reading.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"/a\"}}\n</tool_call>"
            .to_owned(),
    );
    turn.tool_calls = vec![ToolCall::new("c1", "read", r#"{"path":"/a"}"#)];
    let mut session = Session::default();
    let mut result = None;
    let events = capture(|| result = Some(mender.run_turn(&mut session, &turn)));
    let result = result.expect("ran");
    assert_eq!(result.calls.len(), 1, "the duplicate is not listed");
    assert_eq!(result.report.duplicates_dropped, 1);
    assert_eq!(result.content.as_deref(), Some("Reading.\n"));
    let dropped = events
        .iter()
        .find(|e| e.field("repair_kind") == Some("duplicate_dropped"))
        .expect("duplicate event");
    assert_eq!(dropped.field("tool"), Some("read"));
    let kinds = mender.stats().snapshot().kinds;
    assert_eq!(kinds.get(&RepairKind::DuplicateDropped), Some(&1));
}
