//! The `syntax` cases of `corpus/salvage.jsonl`, checked at the salvage stage alone.
//!
//! The full expectations (status, shape repairs, retry messages) are checked by `toolmend eval`;
//! this test checks the part salvage owns: for each call that the corpus expects `repaired`, the
//! salvaged values and syntax kinds; for each truncation case, that salvage says so; for each
//! `invalid` case that is not about truncation or schema, that salvage refuses the text.

use std::collections::BTreeSet;

use serde_json::Value;
use toolmend::RepairKind;
use toolmend::salvage::{SalvageOptions, salvage};

fn cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/salvage.jsonl");
    std::fs::read_to_string(path)
        .expect("corpus/salvage.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The kinds of `repairs` (`kind` or `kind@path`).
fn expected_kinds(call: &Value) -> Vec<RepairKind> {
    call["repairs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str())
        .filter_map(|r| RepairKind::from_name(r.split('@').next().unwrap_or(r)))
        .collect()
}

#[test]
fn corpus_has_enough_cases_across_all_syntax_kinds() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let seen: BTreeSet<RepairKind> = cases
        .iter()
        .flat_map(|c| c["expect"]["calls"].as_array().cloned().unwrap_or_default())
        .flat_map(|call| expected_kinds(&call))
        .collect();
    // `opener_inserted` is a document reading (json_repair's drop-in): no call makes it.
    let call_kinds = RepairKind::ALL
        .iter()
        .filter(|k| k.is_syntax() && **k != RepairKind::OpenerInserted);
    for kind in call_kinds {
        assert!(seen.contains(kind), "no case expects {kind}");
    }
}

#[test]
fn salvage_matches_the_corpus_expectations() {
    let mut failures = Vec::new();
    for case in cases() {
        let id = case["id"].as_str().unwrap_or("?");
        let arguments = case["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        let calls = case["expect"]["calls"].as_array().unwrap();
        let got = salvage(arguments, &SalvageOptions::default());
        let first = &calls[0];
        let kinds = expected_kinds(first);
        let status = first["status"].as_str().unwrap();
        let syntax: BTreeSet<RepairKind> =
            kinds.iter().copied().filter(|k| k.is_syntax()).collect();
        let only_syntax = kinds
            .iter()
            .all(|k| k.is_syntax() || *k == RepairKind::ConcatenatedSplit);
        let cut_off = first["error_contains"]
            .as_array()
            .is_some_and(|e| e.iter().any(|s| s == "cut off"));
        match (&got, status) {
            (Ok(s), "repaired") if !kinds.contains(&RepairKind::RootStringWrapped) => {
                let got_kinds: BTreeSet<RepairKind> = s.repairs.iter().map(|r| r.kind).collect();
                if got_kinds != syntax {
                    failures.push(format!("{id}: kinds {got_kinds:?}, expected {syntax:?}"));
                }
                let want: Vec<Value> = calls.iter().map(|c| c["arguments"].clone()).collect();
                if only_syntax && s.values != want {
                    failures.push(format!("{id}: values {:?}, expected {want:?}", s.values));
                }
                if s.truncated != syntax.contains(&RepairKind::TruncationClosed) {
                    failures.push(format!("{id}: truncated = {}", s.truncated));
                }
            }
            (Ok(s), "invalid") if cut_off && !s.truncated => {
                failures.push(format!("{id}: expected a truncation"));
            }
            (Ok(_), "invalid") if cut_off || syntax.contains(&RepairKind::EmptyArguments) => {}
            // Repaired syntax, then a schema failure: the engine's part.
            (Ok(_), "invalid") if !kinds.is_empty() || id.contains("required-field") => {}
            (Ok(s), "invalid") => failures.push(format!("{id}: salvaged to {:?}", s.values)),
            (Err(_), "invalid") => {}
            (Err(_), _) if kinds.contains(&RepairKind::RootStringWrapped) => {}
            (Ok(_), _) if kinds.contains(&RepairKind::RootStringWrapped) => {
                failures.push(format!("{id}: a plain string must not salvage"));
            }
            (got, status) => {
                failures.push(format!("{id}: {status} expected, salvage gave {got:?}"))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
