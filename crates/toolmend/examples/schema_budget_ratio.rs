//! Worst-case cost of one call against a hostile schema, as a ratio against an invalid call of
//! a plain small schema measured in the same process (issue #8, items 1, 2 and 8).
//!
//! Each case builds its tool set once (compile time reported), then times `repair_call` on the
//! call that makes the validator do the most work: an invalid call for `anyOf` chains (every
//! branch fails and builds errors), a valid call for `oneOf` chains (every branch runs), a call
//! missing a required field on a 40 000-property schema (the retry message walks the schema),
//! and a lookahead `pattern` fed a catastrophic subject (the backtracking engine's limit).
//!
//! Run with `cargo run --release -p toolmend --example schema_budget_ratio [DEPTH...] [WORD...]`;
//! the default depths are 16, 22 and 26, and a word keeps only the cases whose label holds it.
//! Every case must report ≤ 10 ms per call. Cases that match keys against patterns also run
//! without the per-call key budget (`Limits::max_call_key_matches`), as they ran before it.

// An example program reports on stdout.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Map, Value, json};
use toolmend::{Limits, Mender, MenderOptions, ToolSet};

/// A `$defs` chain of `depth` levels, each a `combinator` of two branches into the next level.
/// `negated` makes the second branch `{"not": {"$ref": next}}`, so exactly one branch matches.
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

/// An object schema with `width` declared properties and one required one.
fn wide(width: usize) -> Value {
    let properties: Map<String, Value> = (0..width)
        .map(|i| (format!("field_{i}"), json!({"type": "string"})))
        .collect();
    json!({"type": "object", "required": ["field_0"], "properties": properties})
}

/// 16 `patternProperties` (`MAX_SCHEMA_PATTERN_PROPERTIES`), `^p{i}_[a-z0-9]+$`, integers.
fn sixteen_patterns() -> Map<String, Value> {
    (0..16)
        .map(|i| (format!("^p{i}_[a-z0-9]+$"), json!({"type": "integer"})))
        .collect()
}

/// Median seconds per call over `runs` runs (at least one).
fn per_call(mender: &Mender, arguments: &str, runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            black_box(mender.repair_call("t", black_box(arguments)));
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let depths: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    // A word argument keeps only the cases whose label contains it (the reference always runs).
    let filters: Vec<&String> = args
        .iter()
        .filter(|a| a.parse::<usize>().is_err())
        .collect();
    let depths = if depths.is_empty() {
        vec![16, 22, 26]
    } else {
        depths
    };
    let plain = json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string"}, "limit": {"type": "integer"}}});
    let mut cases: Vec<(String, Value, String)> = vec![(
        "plain small schema, invalid call".to_owned(),
        plain,
        r#"{"limit": "x"}"#.to_owned(),
    )];
    for &depth in &depths {
        cases.push((
            format!("anyOf chain depth {depth}, invalid call"),
            chain("anyOf", depth, false),
            r#"{"x": 5}"#.to_owned(),
        ));
        cases.push((
            format!("oneOf/not chain depth {depth}, valid call"),
            chain("oneOf", depth, true),
            r#"{"x": "a"}"#.to_owned(),
        ));
    }
    // The most expensive schemas still under `MAX_SCHEMA_EVALUATIONS` (256): a depth-6
    // `anyOf` chain (254 evaluations at `/x`), a depth-5 `oneOf`/`not` chain (depth 6 is 317)
    // and one `anyOf` of 250 object branches; then the same shapes one step over the bound,
    // which must be refused (`unvalidated`) at compile time.
    cases.push((
        "largest anyOf chain accepted (depth 6), invalid".to_owned(),
        chain("anyOf", 6, false),
        // An array: no rule can turn it into the string at the chain's end.
        r#"{"x": [5]}"#.to_owned(),
    ));
    cases.push((
        "largest oneOf/not chain accepted (depth 5), valid".to_owned(),
        chain("oneOf", 5, true),
        r#"{"x": "a"}"#.to_owned(),
    ));
    for width in [250, 500] {
        let branches: Vec<Value> = (0..width)
            .map(|i| json!({"type": "object", "required": [format!("k{i}")]}))
            .collect();
        cases.push((
            format!("anyOf of {width} object branches, invalid"),
            json!({"type": "object", "properties": {"x": {"anyOf": branches}}}),
            r#"{"x": {"none": 1}}"#.to_owned(),
        ));
    }
    // Wide and long shapes an attacker can send within the size limit.
    // Each at its limit (accepted) and past it (refused at compile time).
    for size in [4_096, 40_000] {
        let members: Vec<Value> = (0..size).map(|i| json!(format!("v{i}"))).collect();
        cases.push((
            format!("enum of {size} strings, miss"),
            json!({"type": "object", "properties": {"x": {"enum": members}}}),
            r#"{"x": "nope"}"#.to_owned(),
        ));
    }
    for size in [1_024, 40_000] {
        let required: Vec<String> = (0..size).map(|i| format!("field_{i}")).collect();
        let mut huge_required = wide(size);
        huge_required["required"] = json!(required);
        cases.push((
            format!("{size} required, all missing"),
            huge_required,
            r#"{"other": 1}"#.to_owned(),
        ));
    }
    for count in [16, 200] {
        let patterns: Map<String, Value> = (0..count)
            .map(|i| (format!("^p{i}_[a-z0-9]+$"), json!({"type": "integer"})))
            .collect();
        let keys: Vec<String> = (0..2_000)
            .map(|i| format!(r#""p{}_k{i}": "x""#, i % count))
            .collect();
        cases.push((
            format!("{count} patternProperties, 2000 wrong keys"),
            json!({"type": "object", "patternProperties": patterns}),
            format!("{{{}}}", keys.join(", ")),
        ));
    }
    // Width times call size (issue #8, item 1 leftovers): each keyword at its limit, applied
    // to every item of a 2 000-item array (a 6–40 KB call).
    let valid_keys: Vec<String> = (0..2_000)
        .map(|i| format!(r#""p{}_k{i}": 1"#, i % 16))
        .collect();
    cases.push((
        "16 patternProperties, 2000 keys, valid".to_owned(),
        json!({"type": "object", "patternProperties": sixteen_patterns()}),
        format!("{{{}}}", valid_keys.join(", ")),
    ));
    // The widest call within the key budget (`MAX_CALL_KEY_MATCHES` / 16 keys), every key wrong.
    let budget_keys = usize::try_from(toolmend::limits::MAX_CALL_KEY_MATCHES / 16).unwrap_or(0);
    let wrong_keys: Vec<String> = (0..budget_keys)
        .map(|i| format!(r#""p{}_k{i}": "x""#, i % 16))
        .collect();
    cases.push((
        format!("16 patternProperties, {budget_keys} wrong keys (at the key budget)"),
        json!({"type": "object", "patternProperties": sixteen_patterns()}),
        format!("{{{}}}", wrong_keys.join(", ")),
    ));
    let stray_keys: Vec<String> = (0..2_000).map(|i| format!(r#""zz_k{i}": 1"#)).collect();
    cases.push((
        "16 patternProperties + additionalProperties false, 2000 stray keys".to_owned(),
        json!({"type": "object", "patternProperties": sixteen_patterns(),
               "additionalProperties": false}),
        format!("{{{}}}", stray_keys.join(", ")),
    ));
    cases.push((
        "propertyNames pattern, 2000 wrong keys".to_owned(),
        json!({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}}),
        format!("{{{}}}", stray_keys.join(", ")),
    ));
    let members: Vec<Value> = (0..4_096).map(|i| json!(format!("v{i}"))).collect();
    cases.push((
        "enum of 4096 x 2000 items, every item a miss".to_owned(),
        json!({"type": "object", "properties": {"x": {"type": "array", "items": {"enum": members}}}}),
        format!(r#"{{"x": [{}]}}"#, vec![r#""nope""#; 2_000].join(", ")),
    ));
    // Width × call size past the error budget (`Limits::max_call_errors` plus one per value),
    // refused before the validator builds the errors; then the widest calls within it.
    let required: Vec<String> = (0..1_024).map(|i| format!("field_{i}")).collect();
    for (objects, note) in [(200, ""), (2, " (widest within the error budget)")] {
        cases.push((
            format!("required 1024 x {objects} objects, all missing{note}"),
            json!({"type": "object", "properties": {"x": {"type": "array",
                "items": {"type": "object", "required": required}}}}),
            format!(r#"{{"x": [{}]}}"#, vec!["{}"; objects].join(", ")),
        ));
    }
    let branches: Vec<Value> = (0..250)
        .map(|i| json!({"type": "object", "required": [format!("k{i}")]}))
        .collect();
    for (items, note) in [(200, ""), (8, " (widest within the error budget)")] {
        cases.push((
            format!("anyOf of 250 branches x {items} items, invalid{note}"),
            json!({"type": "object", "properties": {"x": {"type": "array",
                "items": {"anyOf": branches}}}}),
            format!(r#"{{"x": [{}]}}"#, vec![r#"{"none": 1}"#; items].join(", ")),
        ));
    }
    // An ordinary big repair is within the budget: one error per value.
    cases.push((
        "2000 integers sent as strings, repaired".to_owned(),
        json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "integer"}}}}),
        format!(r#"{{"x": [{}]}}"#, vec![r#""5""#; 2_000].join(", ")),
    ));
    let all_of: Vec<Value> = (0..200)
        .map(|i| json!({"properties": {format!("a{i}"): {"type": "string"}}}))
        .collect();
    cases.push((
        "allOf of 200 parts, wrong types".to_owned(),
        json!({"type": "object", "allOf": all_of}),
        format!(
            "{{{}}}",
            (0..200)
                .map(|i| format!(r#""a{i}": 1"#))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ));
    cases.push((
        "40k properties, missing field".to_owned(),
        wide(40_000),
        r#"{"field_1": "a"}"#.to_owned(),
    ));
    cases.push((
        "lookahead pattern, catastrophic subject".to_owned(),
        json!({"type": "object", "properties": {"path": {"type": "string",
            "pattern": "^(?!/etc)(a+)+$"}}}),
        format!(r#"{{"path": "{}b"}}"#, "a".repeat(40)),
    ));

    let long_fancy = format!(
        "^(?!/etc)({})+$",
        (0..300)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join("|")
    );
    cases.push((
        "lookahead pattern of 300 alternatives, 8 KB subject".to_owned(),
        json!({"type": "object", "properties": {"path": {"type": "string", "pattern": long_fancy}}}),
        format!(r#"{{"path": "{}!"}}"#, "w1".repeat(4_000)),
    ));

    println!(
        "{:<52} {:>11} {:>12} {:>10} {:>12}",
        "case", "compile", "per call", "ratio", "status"
    );
    let mut reference = None;
    // Cases matching keys against patterns run twice: with the key budget
    // (`Limits::max_call_key_matches`) and without it, which is how they ran before it.
    let mut runs: Vec<(String, Value, String, bool)> = Vec::new();
    for (label, schema, arguments) in cases {
        if label.contains("pattern") && !label.contains("lookahead") {
            runs.push((
                format!("{label}, no key budget"),
                schema.clone(),
                arguments.clone(),
                false,
            ));
        }
        runs.push((label, schema, arguments, true));
    }
    for (index, (label, schema, arguments, budget)) in runs.into_iter().enumerate() {
        if index > 0 && !filters.is_empty() && !filters.iter().any(|f| label.contains(f.as_str())) {
            continue;
        }
        let start = Instant::now();
        let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]));
        let compile = start.elapsed().as_secs_f64();
        let mut limits = Limits::default();
        if !budget {
            limits.max_call_key_matches = u64::MAX;
        }
        let mender = Mender::with_options(tools, MenderOptions::default().with_limits(limits));
        let status = mender.repair_call("t", &arguments).status;
        let one = per_call(&mender, &arguments, 1);
        // Repeat cheap cases for a stable median; one run is enough for slow ones.
        let runs = if one < 0.01 { 51 } else { 1 };
        let seconds = per_call(&mender, &arguments, runs).min(one);
        let base = *reference.get_or_insert(seconds);
        println!(
            "{label:<52} {:>8.2} ms {:>9.3} ms {:>9.1}x {:>12}",
            compile * 1e3,
            seconds * 1e3,
            seconds / base,
            format!("{status:?}").to_lowercase()
        );
    }
}
