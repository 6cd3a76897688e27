//! `toolmend audit` run as a user runs it, on a small fixture whose every count is known.

#[path = "support/run.rs"]
mod run;

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

fn data(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "data", name]
        .iter()
        .collect();
    path.to_str().expect("utf-8 path").to_owned()
}

fn toolmend(args: &[&str], stdin: &[u8]) -> Output {
    run::toolmend_with(args, Some(stdin), &[])
}

fn audit_json(args: &[&str], stdin: &[u8]) -> Value {
    let out = toolmend(&[&["audit", "--format", "json"], args].concat(), stdin);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The counts of a row (`key` and the rates left out).
fn counts(row: &Value) -> Value {
    let keys = [
        "calls",
        "valid",
        "repaired",
        "recovered",
        "invalid",
        "suppressed",
        "unvalidated",
        "silently_invalid",
        "repairs",
        "broken",
    ];
    Value::Object(
        keys.iter()
            .map(|k| ((*k).to_owned(), row[k].clone()))
            .collect(),
    )
}

fn row<'a>(rows: &'a Value, key: &str) -> &'a Value {
    rows.as_array()
        .and_then(|rows| rows.iter().find(|r| r["key"] == key))
        .unwrap_or_else(|| panic!("no row {key} in {rows}"))
}

// Every number below is counted by hand from tests/data/audit.jsonl (its lines: 1 valid read;
// 2 `limit: "2"` coerced; 3 a trailing comma; 4 `path` missing; a blank line; a line that is
// not JSON; 5 a valid write and a single-quoted read, with its own tools; 6 an unknown tool;
// 9 a `message` that is no object; 7 `limit` coerced but `extra` refused; 8 two valid reads;
// a line that is not UTF-8).
#[test]
fn audit_counts_the_fixture_exactly() {
    let report = audit_json(
        &[&data("audit.jsonl"), "--tools", &data("audit-tools.json")],
        b"",
    );
    assert_eq!(report["lines"], 11);
    assert_eq!(report["turns"], 8);
    assert_eq!(
        report["errors"],
        json!({"total": 3, "not_utf8": 1, "not_json": 1, "rejected": 1})
    );
    let lines: Vec<&Value> = report["error_examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["line"])
        .collect();
    assert_eq!(lines, [&json!(6), &json!(9), &json!(12)]);

    let total = &report["total"];
    assert_eq!(
        counts(total),
        json!({"calls": 10, "valid": 4, "repaired": 3, "recovered": 0, "invalid": 3,
               "suppressed": 0, "unvalidated": 0, "silently_invalid": 4, "repairs": 3,
               "broken": 6})
    );
    assert_eq!((&total["turns"], &total["errors"]), (&json!(8), &json!(3)));
    assert_eq!(total["repair_rate"], 0.5);
    assert_eq!(total["broken_rate"], 0.6);

    let models = &report["models"];
    let keys: Vec<&str> = models
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["model-a", "model-b", "(none)", "model-c"]);
    let a = row(models, "model-a");
    assert_eq!(
        counts(a),
        json!({"calls": 5, "valid": 3, "repaired": 2, "recovered": 0, "invalid": 0,
               "suppressed": 0, "unvalidated": 0, "silently_invalid": 1, "repairs": 2,
               "broken": 2})
    );
    assert_eq!((&a["turns"], &a["errors"]), (&json!(4), &json!(0)));
    let b = row(models, "model-b");
    assert_eq!(
        (&b["calls"], &b["invalid"], &b["silently_invalid"]),
        (&json!(4), &json!(2), &json!(2))
    );
    // The lines that are not JSON or not UTF-8 name no model; the rejected line names its own.
    let none = row(models, "(none)");
    assert_eq!(
        (&none["turns"], &none["errors"], &none["invalid"]),
        (&json!(1), &json!(2), &json!(1))
    );
    let c = row(models, "model-c");
    assert_eq!((&c["calls"], &c["errors"]), (&json!(0), &json!(1)));

    let tools = &report["tools"];
    assert_eq!(
        counts(row(tools, "read")),
        json!({"calls": 8, "valid": 3, "repaired": 3, "recovered": 0, "invalid": 2,
               "suppressed": 0, "unvalidated": 0, "silently_invalid": 3, "repairs": 3,
               "broken": 5})
    );
    assert_eq!(row(tools, "nope")["silently_invalid"], 1);
    assert_eq!(row(tools, "write")["valid"], 1);

    let kinds = &report["kinds"];
    for kind in [
        "scalar_coerced",
        "trailing_comma_removed",
        "quotes_normalized",
    ] {
        assert_eq!(
            (&row(kinds, kind)["calls"], &row(kinds, kind)["repaired"]),
            (&json!(1), &json!(1)),
            "{kind}"
        );
    }
    assert_eq!(kinds.as_array().unwrap().len(), 3);

    let top: Vec<(&str, &Value)> = report["top_failing_tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["key"].as_str().unwrap(), &t["broken"]))
        .collect();
    assert_eq!(top, [("read", &json!(5)), ("nope", &json!(1))]);
}

#[test]
fn audit_reads_stdin_and_tables_and_rows_agree_with_json() {
    let fixture = std::fs::read(data("audit.jsonl")).unwrap();
    let tools = data("audit-tools.json");
    let table = toolmend(&["audit", "-", "--tools", &tools, "--top", "1"], &fixture);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.starts_with("toolmend audit: 11 lines, 8 turns, 3 unreadable"),
        "{text}"
    );
    assert!(text.contains("silently invalid 4"), "{text}");
    assert!(text.contains("top 1 failing tools"), "{text}");

    let rows = toolmend(&["audit", "--tools", &tools, "--format", "jsonl"], &fixture);
    let rows: Vec<Value> = String::from_utf8(rows.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // total + 4 models + 3 tools + 3 kinds.
    assert_eq!(rows.len(), 11);
    assert_eq!(rows[0]["dimension"], "total");
    assert_eq!(rows[0]["calls"], 10);
    let tool = rows.iter().find(|r| r["dimension"] == "tool").unwrap();
    assert_eq!(
        (&tool["key"], &tool["turns"]),
        (&json!("read"), &Value::Null)
    );
}

#[test]
fn audit_caps_distinct_models_and_counts_the_rest_as_other() {
    let line = |i: usize| {
        json!({"model": format!("m{i}"), "tools": [{"name": "t", "parameters": {"type": "object"}}],
               "message": {"tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{}"}}]}})
        .to_string()
    };
    let input: String = (0..1003).map(|i| line(i) + "\n").collect();
    let report = audit_json(&["-"], input.as_bytes());
    let models = report["models"].as_array().unwrap();
    assert_eq!(models.len(), 1001);
    let other = models.last().unwrap();
    assert_eq!(
        (&other["key"], &other["calls"], &other["turns"]),
        (&json!("(other)"), &json!(3), &json!(3))
    );
    assert_eq!(report["total"]["valid"], 1003);
}

#[test]
fn audit_refuses_a_missing_tools_file_with_exit_2() {
    let out = toolmend(&["audit", "--tools", "/nonexistent/tools.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading /nonexistent/tools.json"));
}
