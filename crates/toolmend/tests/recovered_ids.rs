//! Ids of calls recovered from text are unique across the turns of a session and reproducible
//! (issue #24, item 1).

use serde_json::json;
use toolmend::{AssistantTurn, Mender, MenderOptions, RecoverMode, Session, ToolSet};

const LEAK: &str = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>";

fn mender() -> Mender {
    let tools = ToolSet::from_json(
        &json!([{"name": "read_file", "parameters": {"type": "object",
        "required": ["path"], "properties": {"path": {"type": "string"}}}}]),
    );
    Mender::with_options(
        tools,
        MenderOptions::default().with_recover(RecoverMode::Content),
    )
}

fn ids(mender: &Mender, session: &mut Session, id: Option<&str>) -> Vec<String> {
    let mut turn = AssistantTurn::default();
    turn.content = Some(LEAK.to_owned());
    turn.id = id.map(str::to_owned);
    let result = mender.run_turn(session, &turn);
    result.calls.iter().map(|c| c.id.clone()).collect()
}

#[test]
fn the_same_leak_in_two_turns_of_a_session_gets_new_ids() {
    let mender = mender();
    let mut session = Session::new();
    let first = ids(&mender, &mut session, None);
    let second = ids(&mender, &mut session, None);
    assert_eq!(first.len(), 2);
    assert!(
        first.iter().all(|id| id.starts_with("call_tm_")),
        "{first:?}"
    );
    assert_ne!(first[0], first[1]);
    assert!(
        first.iter().all(|id| !second.contains(id)),
        "{first:?} {second:?}"
    );
}

#[test]
fn ids_are_reproducible_and_follow_the_turn_id() {
    let mender = mender();
    let a = ids(&mender, &mut Session::new(), Some("resp_1"));
    assert_eq!(a, ids(&mender, &mut Session::new(), Some("resp_1")));
    let b = ids(&mender, &mut Session::new(), Some("resp_2"));
    assert!(a.iter().all(|id| !b.contains(id)), "{a:?} {b:?}");
}
