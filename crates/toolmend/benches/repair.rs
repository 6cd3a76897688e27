//! The fast path against its floor, and the repair path per rule.
//!
//! `fast_path/<size>/toolmend` is a whole `Mender::repair_call` on a valid call;
//! `fast_path/<size>/serde_json+is_valid` is the floor it is measured against in the same run:
//! parsing the same bytes into a `Value` and validating with the same compiled validator.
//! `repair/<rule>` mends one small call that needs exactly that rule.

// criterion_group! generates undocumented functions.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use toolmend::{Mender, Status, ToolSet};

#[path = "support/edit_call.rs"]
mod edit_call;
use edit_call::{edit_tool, valid_call};

fn fast_path(c: &mut Criterion) {
    let tools = edit_tool();
    let schema = tools[0]["function"]["parameters"].clone();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mender = Mender::new(ToolSet::from_json(&tools));
    let mut group = c.benchmark_group("fast_path");
    for (label, size) in [("100B", 100), ("2KB", 2_000), ("200KB", 200_000)] {
        let call = valid_call(size);
        assert_eq!(mender.repair_call("edit", &call).status, Status::Valid);
        group.throughput(Throughput::Bytes(call.len() as u64));
        group.bench_with_input(BenchmarkId::new("toolmend", label), &call, |b, call| {
            b.iter(|| mender.repair_call("edit", black_box(call)));
        });
        group.bench_with_input(
            BenchmarkId::new("serde_json+is_valid", label),
            &call,
            |b, call| {
                b.iter(|| {
                    let value: Value = serde_json::from_str(black_box(call)).unwrap();
                    validator.is_valid(&value)
                });
            },
        );
    }
    group.finish();
}

fn repair_rules(c: &mut Criterion) {
    let tools = json!([{"name": "t", "parameters": {
        "type": "object", "required": ["path"], "additionalProperties": false,
        "properties": {
            "path": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "limit": {"type": "integer"},
            "mode": {"enum": ["fast", "in_depth"]},
            "id": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"},
            "options": {"type": "object", "properties": {"depth": {"type": "integer"}}}}}},
        {"name": "bash", "parameters": {"type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}}}}]);
    let mender = Mender::new(ToolSet::from_json(&tools));
    let cases: [(&str, &str, &str); 13] = [
        (
            "arguments_unwrapped",
            "t",
            r#"{"name": "t", "arguments": {"path": "/a"}}"#,
        ),
        ("field_renamed", "t", r#"{"file_path": "/a"}"#),
        ("unflattened", "t", r#"{"path": "/a", "options.depth": 2}"#),
        ("null_stripped", "t", r#"{"path": "/a", "limit": null}"#),
        (
            "json_string_to_array",
            "t",
            r#"{"path": "/a", "paths": "[\"a\",\"b\"]"}"#,
        ),
        (
            "json_string_to_object",
            "t",
            r#"{"path": "/a", "headers": "{\"A\": \"b\"}"}"#,
        ),
        ("object_to_array", "t", r#"{"path": "/a", "paths": {}}"#),
        (
            "single_key_object_to_array",
            "t",
            r#"{"path": "/a", "paths": {"path": "x"}}"#,
        ),
        (
            "bare_value_to_array",
            "t",
            r#"{"path": "/a", "paths": "x"}"#,
        ),
        ("scalar_coerced", "t", r#"{"path": "/a", "limit": "20"}"#),
        (
            "enum_case_fixed",
            "t",
            r#"{"path": "/a", "mode": "In Depth"}"#,
        ),
        ("anchor_stripped", "t", r#"{"path": "/a", "id": "^ab-1$"}"#),
        ("root_string_wrapped", "bash", "ls -la"),
    ];
    let mut group = c.benchmark_group("repair");
    for (rule, tool, args) in cases {
        let call = mender.repair_call(tool, args);
        assert_eq!(call.status, Status::Repaired, "{rule}: {:?}", call.error);
        assert_eq!(call.repairs[0].kind.name(), rule);
        group.bench_function(rule, |b| {
            b.iter(|| mender.repair_call(tool, black_box(args)))
        });
    }
    group.finish();
}

criterion_group!(benches, fast_path, repair_rules);
criterion_main!(benches);
