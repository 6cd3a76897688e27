//! Checks shared by the salvage test files (`salvage.rs`, `salvage_review.rs`).

use serde_json::Value;
use toolmend::RepairKind;
use toolmend::salvage::{SalvageError, SalvageErrorKind, SalvageOptions, Salvaged, salvage};

/// Salvages `text` with the default options.
pub(crate) fn run(text: &str) -> Result<Salvaged, SalvageError> {
    salvage(text, &SalvageOptions::default())
}

/// The kinds of the repairs, in order.
pub(crate) fn kinds(s: &Salvaged) -> Vec<RepairKind> {
    s.repairs.iter().map(|r| r.kind).collect()
}

/// `text` salvages to exactly `expected` (one value, not truncated) with exactly `repairs`.
#[track_caller]
pub(crate) fn check(text: &str, expected: Value, repairs: &[RepairKind]) {
    let s = run(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(s.values, vec![expected], "{text:?}");
    let mut got = kinds(&s);
    got.sort();
    let mut want = repairs.to_vec();
    want.sort();
    assert_eq!(got, want, "{text:?}");
    assert!(!s.truncated, "{text:?}");
}

/// `text` is refused with an error of `kind`.
#[track_caller]
pub(crate) fn check_error(text: &str, kind: SalvageErrorKind) {
    match run(text) {
        Ok(s) => panic!("{text:?}: expected {kind:?}, got {:?}", s.values),
        Err(e) => assert_eq!(e.kind, kind, "{text:?}"),
    }
}
