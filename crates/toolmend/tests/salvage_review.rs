//! Regressions from the review of the lenient JSON salvage parser: each test carries the inputs
//! of one finding, with the expected outcome written out by hand.

use serde_json::{Value, json};
use toolmend::RepairKind::{self, *};
use toolmend::salvage::{SalvageError, SalvageErrorKind, SalvageOptions, Salvaged, salvage};

fn run(text: &str) -> Result<Salvaged, SalvageError> {
    salvage(text, &SalvageOptions::default())
}

/// `text` salvages to exactly `expected` (one value, not truncated) with exactly `repairs`.
#[track_caller]
fn check(text: &str, expected: Value, repairs: &[RepairKind]) {
    let s = run(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(s.values, vec![expected], "{text:?}");
    let mut got: Vec<RepairKind> = s.repairs.iter().map(|r| r.kind).collect();
    got.sort();
    let mut want = repairs.to_vec();
    want.sort();
    assert_eq!(got, want, "{text:?}");
    assert!(!s.truncated, "{text:?}");
}

#[track_caller]
fn check_error(text: &str, kind: SalvageErrorKind) {
    match run(text) {
        Ok(s) => panic!("{text:?}: expected {kind:?}, got {:?}", s.values),
        Err(e) => assert_eq!(e.kind, kind, "{text:?}"),
    }
}

/// Finding 3: the shapes that made the prose search quadratic still give their outcome (the
/// time is measured in release, not here).
#[test]
fn quadratic_shapes_keep_their_outcome() {
    use SalvageErrorKind::{NoJson, Syntax};
    let n = 2_000;
    check_error(&format!("p {}", "{\u{201c}a ".repeat(n)), NoJson);
    check_error(&"{\u{201c}a ".repeat(n), Syntax);
    check_error(&format!("p {}\u{201d}", "{\u{201c}a ".repeat(n)), NoJson);
    check_error(&format!("p {}", "{/*".repeat(n)), NoJson);
    check_error(&format!("p {}", "{//".repeat(n)), NoJson);
    check_error(&"{/*".repeat(n), Syntax);
    check_error(&format!("p {}*/", "{/*".repeat(n)), NoJson);
    check_error(
        &format!("p {}\n\"{}", "{//".repeat(n), "a".repeat(n)),
        NoJson,
    );
    // The object after such a run is still found.
    let tail = r#" {"path": "x"}"#;
    for head in ["{\u{201c}a ", "{/*", "{//"] {
        let text = format!("p {}{tail}", head.repeat(n));
        let s = run(&text).unwrap_or_else(|e| panic!("{head:?}: {e}"));
        assert_eq!(s.values, vec![json!({"path": "x"})], "{head:?}");
    }
    check(
        &format!("p {}\n{tail}", "{\u{201c}a ".repeat(n)),
        json!({"path": "x"}),
        &[ProseStripped],
    );
}

/// Finding 3: a smart-quoted key that meets a line break or a `{` before its `”` is prose.
#[test]
fn smart_keys_stop_at_braces_and_line_breaks() {
    check("p {\u{201c}a {\"x\": 1}", json!({"x": 1}), &[ProseStripped]);
    check(
        "{\u{201c}a\u{201d}: \u{201c}b {c\u{201d}}",
        json!({"a": "b {c"}),
        &[QuotesNormalized],
    );
}
