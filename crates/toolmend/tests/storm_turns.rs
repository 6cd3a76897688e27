//! The storm breaker through whole turns: identical calls within a turn and across the turns of
//! a session, mutating and idempotent tools, and `run_last_turn` (which computes no signature
//! nothing compares) giving what `run_turn` gives (issue #29 §3).

use serde_json::json;
use toolmend::{AssistantTurn, Mender, Session, Status, ToolCall, ToolSet};

fn mender() -> Mender {
    let object = |hints: serde_json::Value| {
        json!({"type": "object", "properties": {"p": {"type": "string"}, "n": {"type": "number"}},
            "x-toolmend": hints})
    };
    Mender::new(ToolSet::from_json(&json!([
        {"name": "read", "parameters": object(json!({}))},
        {"name": "other", "parameters": object(json!({}))},
        {"name": "write", "parameters": object(json!({"mutating": true}))},
        {"name": "put", "parameters": object(json!({"mutating": true, "idempotent": true}))},
        {"name": "ls", "parameters": object(json!({"storm_exempt": true}))},
    ])))
}

/// A turn of `calls` (tool, arguments).
fn turn(calls: &[(&str, &str)]) -> AssistantTurn {
    let mut turn = AssistantTurn::default();
    turn.tool_calls = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall::new(format!("c{i}"), *name, *args))
        .collect();
    turn
}

/// Runs `turns` in one session and returns each turn's statuses; the last turn also through
/// `run_last_turn` on a copy of the session, which must give the same result.
fn statuses(turns: &[AssistantTurn]) -> Vec<Vec<Status>> {
    let mender = mender();
    let mut session = Session::new();
    let mut out = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let last = (i + 1 == turns.len()).then(|| mender.run_last_turn(session.clone(), turn));
        let result = mender.run_turn(&mut session, turn);
        if let Some(last) = last {
            assert_eq!(last, result, "turn {i}");
        }
        out.push(result.calls.iter().map(|c| c.status).collect());
    }
    out
}

const A: &str = r#"{"p":"a","n":1}"#;
/// `A` with its keys in another order and its number spelled another way.
const A2: &str = r#"{ "n": 1.0, "p": "a" }"#;
const B: &str = r#"{"p":"b"}"#;

#[test]
fn the_third_identical_call_of_a_turn_is_suppressed() {
    let got = statuses(&[turn(&[
        ("read", A),
        ("read", A2),
        ("other", A),
        ("read", A),
    ])]);
    assert_eq!(
        got,
        [vec![
            Status::Valid,
            Status::Valid,
            Status::Valid,
            Status::Suppressed
        ]]
    );
    let got = statuses(&[turn(&[("read", A), ("read", B), ("read", A)])]);
    assert_eq!(got, [vec![Status::Valid; 3]]);
}

#[test]
fn calls_of_earlier_turns_count_with_their_own_arguments() {
    let got = statuses(&[
        turn(&[("read", A)]),
        turn(&[("read", A2)]),
        turn(&[("read", A)]),
    ]);
    assert_eq!(got[2], [Status::Suppressed]);
    // An earlier turn's call is compared by its own arguments, never by a later turn's call
    // at the same position.
    let got = statuses(&[turn(&[("read", B)]), turn(&[("read", A), ("read", A)])]);
    assert_eq!(got[1], [Status::Valid, Status::Valid]);
    let got = statuses(&[
        turn(&[("read", B), ("other", A)]),
        turn(&[("other", B), ("read", B)]),
        turn(&[("read", B)]),
    ]);
    assert_eq!(got[1], [Status::Valid, Status::Valid]);
    assert_eq!(got[2], [Status::Suppressed]);
}

#[test]
fn writes_clear_reads_unless_an_idempotent_write_repeats() {
    let got = statuses(&[turn(&[("read", A), ("read", A), ("write", B), ("read", A)])]);
    assert_eq!(got[0][3], Status::Valid);
    let got = statuses(&[
        turn(&[("read", A), ("put", B), ("read", A)]),
        turn(&[("put", B), ("read", A), ("read", A)]),
    ]);
    assert_eq!(got[1], [Status::Valid, Status::Valid, Status::Suppressed]);
    let got = statuses(&[turn(&[("ls", A), ("ls", A), ("ls", A), ("ls", A)])]);
    assert_eq!(got, [vec![Status::Valid; 4]]);
}

#[test]
fn a_new_user_turn_starts_the_window_afresh() {
    let mut fresh = turn(&[("read", A)]);
    fresh.new_user_turn = true;
    let got = statuses(&[turn(&[("read", A), ("read", A)]), fresh]);
    assert_eq!(got[1], [Status::Valid]);
}
