//! Issue #8 ("Reliability"), items 1, 2, 3 and the retry-message part of 8: schemas from
//! strangers. Each test fails on the code before the fix (noted per test); speed is measured in
//! `examples/schema_budget_ratio.rs`, never here.

use serde_json::{Map, Value, json};
use toolmend::turn::Session;
use toolmend::{AssistantTurn, Error, Limits, Mender, MenderOptions, Status, ToolCall, ToolSet};

fn one_tool(schema: Value) -> ToolSet {
    ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]))
}

/// A `$defs` chain of `depth` levels, each a `combinator` of two branches into the next level;
/// `negated` makes the second branch `{"not": …}`, so exactly one branch of a `oneOf` matches.
fn chain(combinator: &str, depth: usize, negated: bool) -> Value {
    let mut defs = Map::new();
    for level in 0..depth {
        let next = json!({"$ref": format!("#/$defs/d{}", level + 1)});
        let second = if negated {
            json!({"not": next})
        } else {
            next.clone()
        };
        defs.insert(format!("d{level}"), json!({combinator: [next, second]}));
    }
    defs.insert(format!("d{depth}"), json!({"type": "string"}));
    json!({"type": "object", "required": ["x"], "properties": {"x": {"$ref": "#/$defs/d0"}},
           "$defs": defs})
}

fn schema_error(set: &ToolSet) -> &str {
    match set.rejected() {
        [Error::Schema { reason, .. }] => reason,
        other => panic!("expected one schema error, got {other:?}"),
    }
}

/// Item 1: an exponential `anyOf` chain is refused when the tool set is built, naming the
/// construct, and its calls are `unvalidated`. Before: it compiled, and an invalid call took
/// seconds building 2^16 branch errors before it came back `invalid`.
#[test]
fn item1_an_exponential_any_of_chain_is_refused_by_name() {
    let set = one_tool(chain("anyOf", 16, false));
    let reason = schema_error(&set);
    assert!(
        reason.contains("`anyOf` at `#/$defs/d")
            && reason.contains(&toolmend::limits::MAX_SCHEMA_EVALUATIONS.to_string()),
        "{reason}"
    );
    let call = Mender::new(set).repair_call("t", r#"{"x": 5}"#);
    assert_eq!(call.status, Status::Unvalidated);
    assert!(!call.is_dispatchable());
}

/// Item 1: the `oneOf` chain that cost a *valid* call 2^depth evaluations on the fast path.
/// Before: the call was `valid` after evaluating every branch.
#[test]
fn item1_an_exponential_one_of_chain_is_refused_even_for_valid_calls() {
    let set = one_tool(chain("oneOf", 16, true));
    assert!(schema_error(&set).contains("`oneOf`"));
    let call = Mender::new(set).repair_call("t", r#"{"x": "a"}"#);
    assert_eq!(call.status, Status::Unvalidated);
}

/// Item 1: a chain under the budget still validates and reports calls as before.
#[test]
fn item1_a_small_chain_still_validates_and_reports() {
    let set = one_tool(chain("anyOf", 6, false));
    assert!(set.rejected().is_empty());
    let mender = Mender::new(set);
    assert_eq!(
        mender.repair_call("t", r#"{"x": "a"}"#).status,
        Status::Valid
    );
    let call = mender.repair_call("t", r#"{"x": [1]}"#);
    assert_eq!(call.status, Status::Invalid);
    assert!(call.error.unwrap().contains("`/x`"));
}

/// Item 1: recursion that doubles at every instance level, and a `$ref` cycle that never
/// descends (which could not even be bounded by the instance's depth).
#[test]
fn item1_recursion_that_doubles_or_never_descends_is_refused() {
    let doubling = one_tool(json!({"anyOf": [
        {"type": "object", "properties": {"c": {"$ref": "#"}}},
        {"type": "object", "properties": {"c": {"$ref": "#"}}}]}));
    assert!(schema_error(&doubling).contains("property `c`"));
    let endless = one_tool(json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}},
        "$ref": "#/$defs/a"}));
    assert!(schema_error(&endless).contains("never ends"));
}

/// Item 2: a lookahead `pattern` compiles with the bounded backtracking engine and is
/// enforced. Before: the schema did not compile, and `{"path": 5, "junk": true}` was `valid`.
#[test]
fn item2_lookahead_patterns_are_enforced() {
    let set = one_tool(json!({"type": "object", "required": ["path"],
        "additionalProperties": false,
        "properties": {"path": {"type": "string", "pattern": "^(?!/etc)/.*$"}}}));
    assert!(set.rejected().is_empty(), "{:?}", set.rejected());
    let mender = Mender::new(set);
    let ok = r#"{"path": "/home/me/notes.txt"}"#;
    assert_eq!(mender.repair_call("t", ok).status, Status::Valid);
    assert_eq!(mender.repair_call("t", ok).arguments_text, ok);
    for bad in [r#"{"path": "/etc/passwd"}"#, r#"{"path": 5, "junk": true}"#] {
        assert_eq!(
            mender.repair_call("t", bad).status,
            Status::Invalid,
            "{bad}"
        );
    }
}

/// Item 2: a catastrophic lookahead pattern hits the backtrack limit and the value fails;
/// it is never let through.
#[test]
fn item2_a_catastrophic_pattern_fails_closed() {
    let mender = Mender::new(one_tool(json!({"type": "object", "properties": {
        "path": {"type": "string", "pattern": "^(?!/etc)(a+)+$"}}})));
    let subject = format!(r#"{{"path": "{}b"}}"#, "a".repeat(40));
    assert_eq!(mender.repair_call("t", &subject).status, Status::Invalid);
    assert_eq!(
        mender.repair_call("t", r#"{"path": "aaa"}"#).status,
        Status::Valid
    );
}

/// Item 2: a schema that compiles with neither engine fails closed: single calls and turns
/// agree on `unvalidated`, a recovered call of that tool is not dispatched, and the other tool
/// of the set works. Before: every object was `valid`.
#[test]
fn item2_an_uncompilable_schema_fails_closed_everywhere() {
    let tools = json!([
        {"name": "bad", "parameters": {"type": "object", "properties": {"x": {"pattern": "("}}}},
        {"name": "good", "parameters": {"type": "object", "required": ["x"]}}
    ]);
    let set = ToolSet::from_json(&tools);
    assert!(matches!(&set.rejected()[0], Error::Schema { tool, .. } if tool == "bad"));
    let mender = Mender::with_options(
        set,
        MenderOptions::default().with_recover(toolmend::RecoverMode::Content),
    );
    let single = mender.repair_call("bad", r#"{"path": 5, "junk": true}"#);
    assert_eq!(single.status, Status::Unvalidated);
    let error = single.error.clone().unwrap();
    assert!(
        error.contains("`bad`") && error.contains("do not retry"),
        "{error}"
    );
    assert_eq!(
        mender.repair_call("good", r#"{"x": 1}"#).status,
        Status::Valid
    );

    let mut turn = AssistantTurn::default();
    turn.tool_calls = vec![ToolCall::new("c1", "bad", r#"{"path": 5, "junk": true}"#)];
    let result = mender.run_turn(&mut Session::new(), &turn);
    assert_eq!(result.calls[0].status, single.status);
    assert_eq!(result.calls[0].error, single.error);
    assert!(!result.calls[0].is_dispatchable());
    assert_eq!(result.report.invalid, 1);

    let mut leaked = AssistantTurn::default();
    leaked.content =
        Some(r#"<tool_call>{"name": "bad", "arguments": {"x": 1}}</tool_call>"#.into());
    let result = mender.run_turn(&mut Session::new(), &leaked);
    assert!(
        result.calls.iter().all(|c| !c.is_dispatchable()),
        "{result:?}"
    );
    assert!(result.calls.iter().all(|c| c.status == Status::Unvalidated));
}

/// `unvalidated` is its own status on the wire.
#[test]
fn item2_unvalidated_serialises_as_its_own_status() {
    assert_eq!(
        serde_json::to_value(Status::Unvalidated).unwrap(),
        json!("unvalidated")
    );
}

/// Item 3: an undeclared key with backticks and newlines is escaped and bounded in the retry
/// message. Before: the 4 KiB key was echoed raw.
#[test]
fn item3_undeclared_keys_are_escaped_and_bounded() {
    let mender = Mender::new(one_tool(json!({"type": "object", "required": ["path"],
        "additionalProperties": false, "properties": {"path": {"type": "string"}}})));
    let key = format!("x`\n{}", "k".repeat(4096));
    let arguments = json!({"path": "/a", key.clone(): 1}).to_string();
    let call = mender.repair_call("t", &arguments);
    assert_eq!(call.status, Status::Invalid);
    let error = call.error.unwrap();
    assert!(!error.contains(&key[..64]), "raw key echoed: {error}");
    assert!(error.contains("x\\u{60}\\n"), "{error}");
    assert!(!error.contains(&"k".repeat(100)), "unbounded key: {error}");
}

/// Item 3: an unknown tool's name is escaped and bounded in its message.
#[test]
fn item3_unknown_tool_names_are_escaped() {
    let mender = Mender::new(one_tool(json!({"type": "object"})));
    let error = mender
        .repair_call("ev`il\nname", "{}")
        .error
        .expect("a message");
    assert!(
        error.starts_with("Tool `ev\\u{60}il\\nname` does not exist"),
        "{error}"
    );
}

/// Item 3: the salvage inside `json_string_to_array` honours the configured limits. Before:
/// it salvaged with the default 256 KiB whatever the mender was given.
#[test]
fn item3_embedded_json_is_salvaged_within_the_limits() {
    let schema = json!({"type": "object", "required": ["paths"],
        "properties": {"paths": {"type": "array", "items": {"type": "string"}}}});
    // Lenient JSON inside the string: needs salvage (single quotes).
    let arguments = json!({"paths": format!("['{}']", "a".repeat(200))}).to_string();
    let roomy = Mender::new(one_tool(schema.clone()));
    assert_eq!(roomy.repair_call("t", &arguments).status, Status::Repaired);
    let mut limits = Limits::default();
    limits.max_salvage_bytes = 64;
    let tight = Mender::with_options(
        one_tool(schema),
        MenderOptions::default().with_limits(limits),
    );
    assert_eq!(tight.repair_call("t", &arguments).status, Status::Invalid);
}

/// Item 8: the retry message of a 40 000-property schema names the missing field (its cost,
/// once quadratic, is measured in `examples/schema_budget_ratio.rs`).
#[test]
fn item8_wide_schemas_get_a_bounded_retry_message() {
    let properties: Map<String, Value> = (0..40_000)
        .map(|i| (format!("field_{i}"), json!({"type": "string"})))
        .collect();
    let mender = Mender::new(one_tool(
        json!({"type": "object", "required": ["field_0"], "properties": properties}),
    ));
    let call = mender.repair_call("t", r#"{"field_1": "a"}"#);
    assert_eq!(call.status, Status::Invalid);
    let error = call.error.unwrap();
    assert!(
        error.contains("`/field_0` is required but missing"),
        "{error}"
    );
    assert!(error.len() <= toolmend::limits::MAX_MESSAGE_BYTES);
}

/// `count` `patternProperties` (`^p{i}_[a-z0-9]+$`, each an integer) beside `extra`.
fn patterned(count: usize, extra: Value) -> Value {
    let patterns: Map<String, Value> = (0..count)
        .map(|i| (format!("^p{i}_[a-z0-9]+$"), json!({"type": "integer"})))
        .collect();
    let mut schema = json!({"type": "object", "patternProperties": patterns});
    if let (Value::Object(schema), Value::Object(extra)) = (&mut schema, extra) {
        schema.extend(extra);
    }
    schema
}

/// A call of `keys` keys `p{i % count}_k{i}` with `value`.
fn patterned_call(keys: usize, count: usize, value: &str) -> String {
    let members: Vec<String> = (0..keys)
        .map(|i| format!(r#""p{}_k{i}": {value}"#, i % count))
        .collect();
    format!("{{{}}}", members.join(", "))
}

/// Item 1: 2,000 keys against 16 `patternProperties` (32,000 matches a pass, 75–150 ms a
/// call) are over the call's key budget: refused before validation, `invalid` (never
/// `valid`), with a message that names the count and the budget. Before: the valid call was
/// `valid` and the invalid one listed its type errors, each after every pass had matched
/// every key against every pattern.
#[test]
fn item1_a_wide_call_against_many_patterns_is_refused_by_its_key_budget() {
    let budget = toolmend::limits::MAX_CALL_KEY_MATCHES;
    let mender = Mender::new(one_tool(patterned(16, json!({}))));
    for value in ["1", r#""x""#] {
        let call = mender.repair_call("t", &patterned_call(2_000, 16, value));
        assert_eq!(call.status, Status::Invalid, "{value}");
        assert!(!call.is_dispatchable());
        let error = call.error.unwrap_or_default();
        assert!(
            error.contains("2000 keys")
                && error.contains("16 patterns")
                && error.contains("32000 pattern matches")
                && error.contains(&format!("budget of {budget}"))
                && error.contains(&format!("at most {} keys", budget / 16)),
            "{error}"
        );
    }
    // The budget is what refuses it: loosened, the valid call is valid again.
    let mut limits = Limits::default();
    limits.max_call_key_matches = u64::MAX;
    let loose = Mender::with_options(
        one_tool(patterned(16, json!({}))),
        MenderOptions::default().with_limits(limits),
    );
    let valid = patterned_call(2_000, 16, "1");
    assert_eq!(loose.repair_call("t", &valid).status, Status::Valid);
}

/// Item 1: within the key budget nothing changes: a valid call passes byte for byte, an
/// invalid one gets its usual message. Keys of nested objects count, an
/// `additionalProperties` beside the patterns counts them twice (the validator matches every
/// key again), a `propertyNames` schema once, and a tool with no key pattern is never charged.
#[test]
fn item1_the_key_budget_counts_every_key_and_pattern() {
    let budget = usize::try_from(toolmend::limits::MAX_CALL_KEY_MATCHES).unwrap();
    let mender = Mender::new(one_tool(patterned(16, json!({}))));
    let within = patterned_call(budget / 16, 16, "1");
    let call = mender.repair_call("t", &within);
    assert_eq!(call.status, Status::Valid);
    assert_eq!(call.arguments_text, within);
    let wrong = patterned_call(budget / 16, 16, r#""x""#);
    let error = mender.repair_call("t", &wrong).error.unwrap_or_default();
    assert!(!error.contains("budget"), "{error}");
    let over = patterned_call(budget / 16 + 1, 16, "1");
    assert_eq!(mender.repair_call("t", &over).status, Status::Invalid);

    // Twice with `additionalProperties`: half the keys.
    let strict = Mender::new(one_tool(patterned(
        16,
        json!({"additionalProperties": false}),
    )));
    let half = patterned_call(budget / 32, 16, "1");
    assert_eq!(strict.repair_call("t", &half).status, Status::Valid);
    let call = strict.repair_call("t", &patterned_call(budget / 32 + 1, 16, "1"));
    assert_eq!(call.status, Status::Invalid);
    assert!(call.error.unwrap_or_default().contains("32 patterns"));

    // Keys of objects inside arrays count: 4 patterns, objects of 64 keys.
    let nested = Mender::new(one_tool(json!({"type": "object", "properties": {"rows": {
        "type": "array", "items": patterned(4, json!({}))}}})));
    let row = patterned_call(64, 4, "1");
    let rows = |n: usize| format!(r#"{{"rows": [{}]}}"#, vec![row.as_str(); n].join(", "));
    // 1 key at the top and 64 a row, each against 4 patterns.
    let most_rows = (budget / 4 - 1) / 64;
    assert_eq!(
        nested.repair_call("t", &rows(most_rows)).status,
        Status::Valid
    );
    let call = nested.repair_call("t", &rows(most_rows + 1));
    assert_eq!(call.status, Status::Invalid);
    assert!(call.error.unwrap_or_default().contains("4 patterns"));

    // `propertyNames`: one match a key.
    let names = Mender::new(one_tool(
        json!({"type": "object", "propertyNames": {"pattern": "^k"}}),
    ));
    let keys = |n: usize| {
        let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}": 1"#)).collect();
        format!("{{{}}}", members.join(", "))
    };
    assert_eq!(names.repair_call("t", &keys(budget)).status, Status::Valid);
    assert_eq!(
        names.repair_call("t", &keys(budget + 1)).status,
        Status::Invalid
    );

    // No pattern: never charged.
    let plain = Mender::new(one_tool(json!({"type": "object"})));
    let call = plain.repair_call("t", &keys(4 * budget));
    assert_eq!(call.status, Status::Valid);
}

/// `required` of 1,024 names over the items of `x`.
fn wide_required_items() -> Value {
    let names: Vec<String> = (0..1_024).map(|i| format!("field_{i}")).collect();
    json!({"type": "object", "properties": {"x": {"type": "array",
        "items": {"type": "object", "required": names}}}})
}

/// Item 1: a call whose errors grow with its size as well as the schema's width: 200 empty
/// objects against a `required` of 1,024 names is 204,800 validator errors (335–419 ms a call,
/// built twice), an `anyOf` of 250 branches over 200 items 50,200. Both are refused before the
/// validator builds them: `invalid` with a message that names the bound and the budget. Before:
/// the same status after every error had been built and described.
#[test]
fn item1_a_call_whose_errors_are_over_its_budget_is_refused_unchecked() {
    let objects = vec!["{}"; 200].join(", ");
    let mender = Mender::new(one_tool(wide_required_items()));
    let call = mender.repair_call("t", &format!(r#"{{"x": [{objects}]}}"#));
    assert_eq!(call.status, Status::Invalid);
    let error = call.error.unwrap_or_default();
    let budget = toolmend::limits::MAX_CALL_ERRORS + 202;
    assert!(
        error.contains("so far from the tool's schema")
            && error.contains(&format!("budget of {budget}")),
        "{error}"
    );

    let branches: Vec<Value> = (0..250)
        .map(|i| json!({"type": "object", "required": [format!("k{i}")]}))
        .collect();
    let any_of = json!({"type": "object", "properties": {"x": {"type": "array",
        "items": {"anyOf": branches}}}});
    let items = vec![r#"{"none": 1}"#; 200].join(", ");
    let call = Mender::new(one_tool(any_of)).repair_call("t", &format!(r#"{{"x": [{items}]}}"#));
    assert_eq!(call.status, Status::Invalid);
    assert!(call.error.unwrap_or_default().contains("so far from"));

    // The budget is what refuses it: loosened, the errors are collected and described.
    let mut limits = Limits::default();
    limits.max_call_errors = u64::MAX;
    let loose = Mender::with_options(
        one_tool(wide_required_items()),
        MenderOptions::default().with_limits(limits),
    );
    let call = loose.repair_call("t", &format!(r#"{{"x": [{objects}]}}"#));
    assert_eq!(call.status, Status::Invalid);
    let error = call.error.unwrap_or_default();
    assert!(
        error.contains("field_0") && !error.contains("budget"),
        "{error}"
    );
}

/// Item 1: within the error budget nothing changes. A big repair with one error per value
/// (2,000 integers sent as strings) is repaired, a valid call of the wide schema passes byte
/// for byte, and a call just within the budget gets its usual message.
#[test]
fn item1_calls_within_the_error_budget_are_repaired_as_before() {
    let integers = json!({"type": "object", "properties": {"x": {"type": "array",
        "items": {"type": "integer"}}}});
    let strings = vec![r#""5""#; 2_000].join(", ");
    let call =
        Mender::new(one_tool(integers)).repair_call("t", &format!(r#"{{"x": [{strings}]}}"#));
    assert_eq!(call.status, Status::Repaired);
    assert_eq!(call.arguments.unwrap()["x"][1999], json!(5));

    let mender = Mender::new(one_tool(wide_required_items()));
    let full: Map<String, Value> = (0..1_024)
        .map(|i| (format!("field_{i}"), json!(i)))
        .collect();
    let valid = json!({"x": [full.clone(), full]}).to_string();
    let call = mender.repair_call("t", &valid);
    assert_eq!(call.status, Status::Valid);
    assert_eq!(call.arguments_text, valid);
    // Two empty objects: 2,048 errors, within 2,048 + one per value (4).
    let call = mender.repair_call("t", r#"{"x": [{}, {}]}"#);
    assert_eq!(call.status, Status::Invalid);
    let error = call.error.unwrap_or_default();
    assert!(
        error.contains("field_0") && !error.contains("budget"),
        "{error}"
    );
}
