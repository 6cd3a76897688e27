//! The speed corpus of `../shared/bench/make_corpus.py` (small ~100 B, medium ~2 KB and large
//! ~200 KB calls in each malformation), shared by `benches/salvage.rs` and the examples that
//! time, profile or digest the malformed path, so that all of them read the same cases.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One case of the corpus.
#[allow(dead_code)] // Each user reads the fields it needs.
pub(crate) struct Case {
    /// Its size and variant: `medium/trailing_comma`.
    pub(crate) group: String,
    /// The call's argument text.
    pub(crate) input: String,
    /// The value it means (`null` where the text is cut off).
    pub(crate) expect: Value,
}

impl Case {
    /// Whether it is one of the ~200 KB calls.
    #[allow(dead_code)]
    pub(crate) fn is_large(&self) -> bool {
        self.group.starts_with("large")
    }
}

/// `bench/out/`, beside the workspace's `Cargo.toml`.
pub(crate) fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/out")
}

/// The cases of `bench/out/<name>`, written first by `make_corpus.py <args>` when missing
/// (`TOOLMEND_MAKE_CORPUS` names the script when it is not at `../shared/bench/`).
pub(crate) fn load(name: &str, args: &[&str]) -> Vec<Case> {
    let path = out_dir().join(name);
    if !path.exists() {
        std::fs::create_dir_all(out_dir()).expect("create bench/out");
        let script = std::env::var("TOOLMEND_MAKE_CORPUS").unwrap_or_else(|_| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            root.join("../shared/bench/make_corpus.py")
                .display()
                .to_string()
        });
        let status = Command::new("python3")
            .arg(&script)
            .arg(&path)
            .args(args)
            .status()
            .expect("run python3 make_corpus.py");
        assert!(status.success(), "{script} failed");
    }
    std::fs::read_to_string(&path)
        .expect("read corpus")
        .lines()
        .map(|line| {
            let mut case: Value = serde_json::from_str(line).expect("corpus line");
            let text = |field: &str| case[field].as_str().unwrap_or_default().to_owned();
            let (group, input) = (text("group"), text("input"));
            Case {
                group,
                input,
                expect: case["expect"].take(),
            }
        })
        .collect()
}
