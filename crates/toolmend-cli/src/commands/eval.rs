//! `toolmend eval`: runs a corpus of turn cases with expectations (corpus/README.md).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;
use toolmend::TurnResult;

use crate::turn_line::{Defaults, TurnProcessor};

/// Flags of `toolmend eval`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The corpus folder (every `*.jsonl` in it) or one file; the bundled corpus by default.
    dir: Option<PathBuf>,
    /// Print every case, not only the failing ones.
    #[arg(long)]
    verbose: bool,
}

/// The bundled corpus, found from where the binary was built.
fn bundled_corpus() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("corpus")
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn add(&mut self, ok: bool) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let root = args.dir.clone().unwrap_or_else(bundled_corpus);
    let files = corpus_files(&root)?;
    if files.is_empty() {
        anyhow::bail!(
            "{} holds no `*.jsonl` file: nothing to evaluate (give a corpus folder or file)",
            root.display()
        );
    }
    let mut by_category: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_family: BTreeMap<String, Tally> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let mut total = Tally::default();
    let mut out = std::io::stdout().lock();

    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let mut processor = TurnProcessor::new(Defaults::default());
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let where_ = format!(
                "{}:{}",
                file.file_name().map_or_else(
                    || file.display().to_string(),
                    |f| f.to_string_lossy().into_owned()
                ),
                n + 1
            );
            let case: Value =
                serde_json::from_str(line).with_context(|| format!("{where_}: not JSON"))?;
            let id = case
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or(&where_)
                .to_owned();
            let category = case.get("category").and_then(Value::as_str).map_or_else(
                || id.split('/').next().unwrap_or("other").to_owned(),
                str::to_owned,
            );
            let diffs = match processor.process(&case) {
                Ok((result, output)) => check(&case, &result, &output),
                Err(error) => vec![format!("the case could not be processed: {error:#}")],
            };
            let ok = diffs.is_empty();
            total.add(ok);
            by_category.entry(category).or_default().add(ok);
            by_family.entry(model_family(&case)).or_default().add(ok);
            for kind in expected_kinds(&case) {
                by_kind.entry(kind).or_default().add(ok);
            }
            if args.verbose {
                writeln!(out, "{} {id}", if ok { "ok  " } else { "FAIL" })?;
            }
            if !ok {
                let mut entry = format!("FAIL {id} ({where_})\n");
                for diff in diffs {
                    let _ = writeln!(entry, "  {diff}");
                }
                failures.push(entry);
            }
        }
    }

    if total.passed + total.failed == 0 {
        anyhow::bail!(
            "{} holds no case (every `*.jsonl` line is blank): nothing to evaluate",
            root.display()
        );
    }
    write_table(&mut out, "category", &by_category)?;
    write_table(&mut out, "expected repair kind", &by_kind)?;
    write_table(&mut out, "model family", &by_family)?;
    for failure in &failures {
        write!(out, "{failure}")?;
    }
    writeln!(
        out,
        "eval: {} passed, {} failed",
        total.passed, total.failed
    )?;
    Ok(if total.failed == 0 && total.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One table: a header, then a row per key with cases, passed and failed, then a blank line.
fn write_table(
    out: &mut impl Write,
    title: &str,
    rows: &BTreeMap<String, Tally>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{title:<28} {:>6} {:>7} {:>7}",
        "cases", "passed", "failed"
    )?;
    for (key, tally) in rows {
        writeln!(
            out,
            "{key:<28} {:>6} {:>7} {:>7}",
            tally.passed + tally.failed,
            tally.passed,
            tally.failed
        )?;
    }
    writeln!(out)
}

fn corpus_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if root.is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .with_context(|| format!("reading {}", root.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// The model family of a case: its model id's first word without version digits
/// (`qwen3-coder` → `qwen`, `gpt-oss-120b` → `gpt`).
fn model_family(case: &Value) -> String {
    let Some(model) = case.get("model").and_then(Value::as_str) else {
        return "(no model)".to_owned();
    };
    let word = model.split(['-', '_', ' ', '/']).next().unwrap_or(model);
    let family = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if family.is_empty() {
        word.to_ascii_lowercase()
    } else {
        family.to_ascii_lowercase()
    }
}

/// The kinds a case expects, for the per-kind table.
fn expected_kinds(case: &Value) -> Vec<String> {
    let mut kinds: Vec<String> = case["expect"]["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["repairs"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .map(|r| r.split('@').next().unwrap_or(r).to_owned())
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// Every difference between the case's expectation and what happened.
fn check(case: &Value, result: &TurnResult, output: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let expect = &case["expect"];
    let actual_calls = output["calls"].as_array().cloned().unwrap_or_default();
    let expected_calls = expect["calls"].as_array().cloned().unwrap_or_default();
    if expected_calls.len() != actual_calls.len() {
        let names: Vec<String> = actual_calls
            .iter()
            .map(|c| format!("{}:{}", c["name"], c["status"]))
            .collect();
        diffs.push(format!(
            "expected {} calls, got {} [{}]",
            expected_calls.len(),
            actual_calls.len(),
            names.join(", ")
        ));
    }
    for (i, (want, got)) in expected_calls.iter().zip(&actual_calls).enumerate() {
        for field in ["name", "status", "origin", "outcome"] {
            if let Some(w) = want.get(field)
                && w != &got[field]
            {
                diffs.push(format!(
                    "call {i}: {field}: expected {w}, got {}",
                    got[field]
                ));
            }
        }
        if let Some(w) = want.get("arguments")
            && w != &got["arguments"]
        {
            diffs.push(format!(
                "call {i}: arguments: expected {w}, got {}",
                got["arguments"]
            ));
        }
        if let Some(w) = want.get("arguments_text").and_then(Value::as_str) {
            let text = result
                .calls
                .get(i)
                .map_or("", |c| c.arguments_text.as_str());
            if w != text {
                diffs.push(format!(
                    "call {i}: arguments_text: expected {w:?}, got {text:?}"
                ));
            }
        }
        if let Some(w) = want.get("repairs").and_then(Value::as_array) {
            let got_repairs: Vec<String> = got["repairs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    format!(
                        "{}@{}",
                        r["kind"].as_str().unwrap_or("?"),
                        r["path"].as_str().unwrap_or("")
                    )
                })
                .collect();
            if !repairs_match(w, &got_repairs) {
                diffs.push(format!(
                    "call {i}: repairs: expected {}, got {got_repairs:?}",
                    Value::Array(w.clone())
                ));
            }
        }
        for needle in want
            .get("error_contains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let needle = needle.as_str().unwrap_or_default();
            let error = got["error"].as_str().unwrap_or_default();
            if !error.contains(needle) {
                diffs.push(format!(
                    "call {i}: error does not contain {needle:?}: {error:?}"
                ));
            }
        }
    }
    if let Some(w) = expect.get("content") {
        let got = &output["message"]["content"];
        if w != got {
            diffs.push(format!("content: expected {w}, got {got}"));
        }
    }
    if let Some(report) = expect.get("report").and_then(Value::as_object) {
        for (key, w) in report {
            if w != &output["report"][key] {
                diffs.push(format!(
                    "report.{key}: expected {w}, got {}",
                    output["report"][key]
                ));
            }
        }
    }
    diffs
}

/// Whether the expected `kind` / `kind@path` list matches the actual `kind@path` list one to one.
fn repairs_match(expected: &[Value], actual: &[String]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let mut free: Vec<&String> = actual.iter().collect();
    // Exact `kind@path` entries first, then bare kinds take whatever of their kind is left:
    // a bare kind taking an exact entry's match first could fail a correct expectation.
    let (exact, bare): (Vec<&str>, Vec<&str>) = expected
        .iter()
        .map(|w| w.as_str().unwrap_or_default())
        .partition(|w| w.contains('@'));
    for want in exact.into_iter().chain(bare) {
        let position = free.iter().position(|got| {
            if want.contains('@') {
                *got == want
            } else {
                got.split('@').next() == Some(want)
            }
        });
        match position {
            Some(p) => {
                free.swap_remove(p);
            }
            None => return false,
        }
    }
    true
}
