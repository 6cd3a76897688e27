//! `toolmend audit`: JSONL assistant turns in (the `turns` input), a report of where the model
//! breaks out: calls by status, repair rate by model, tool and repair kind, the top failing
//! tools and the silently-invalid calls, as a table or JSON.

use std::fmt::Write as _;
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::commands::turns::{for_each_line, parse_recover};
use crate::turn_line::{Defaults, TurnProcessor};
use anyhow::Context;
use serde_json::Value;
use toolmend::RecoverMode;
use toolmend::audit::{Counts, LineError, MAX_KEYS, Tally};

/// Flags of `toolmend audit`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSONL file of turns (`toolmend turns`'s input); `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// A tools array (JSON file) for lines that carry no `tools`.
    #[arg(long)]
    tools: Option<PathBuf>,
    /// table (for people), json (one document) or jsonl (one row per dimension and key).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// How many failing tools to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// The model id for lines that name none.
    #[arg(long)]
    model: Option<String>,
    /// Where leaked calls are recovered from: off, strip, content or all (a line's options win).
    #[arg(long, value_parser = parse_recover)]
    recover: Option<RecoverMode>,
}

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[non_exhaustive]
pub(crate) enum Format {
    Table,
    Json,
    Jsonl,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let tools = match &args.tools {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(
                serde_json::from_str::<Value>(&text)
                    .with_context(|| format!("{} is not JSON", path.display()))?,
            )
        }
        None => None,
    };
    let reader: Box<dyn BufRead> = match &args.file {
        Some(path) if path.as_os_str() != "-" => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        )),
        _ => Box::new(std::io::stdin().lock()),
    };
    let defaults = Defaults {
        recover: args.recover,
        model: args.model.clone(),
        tools,
        ..Defaults::default()
    };
    let tally = audit(reader, defaults)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => writeln!(out, "{}", tally.to_json(args.top))?,
        Format::Jsonl => {
            for row in tally.rows() {
                writeln!(out, "{row}")?;
            }
        }
        Format::Table => out.write_all(table(&tally, args.top).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs every line of `reader` as `toolmend turns` does and counts the results. Only an I/O
/// error stops it; an unreadable line is counted by why.
pub(crate) fn audit(reader: impl BufRead, defaults: Defaults) -> anyhow::Result<Tally> {
    let default_model = defaults.model.clone().unwrap_or_default();
    let mut processor = TurnProcessor::new(defaults);
    let mut tally = Tally::new(MAX_KEYS);
    let mut number = 0u64;
    for_each_line(reader, |line| {
        number += 1;
        let text = match line {
            Ok(text) if text.trim().is_empty() => return Ok(()),
            Ok(text) => text,
            Err(error) => {
                tally.add_error(number, LineError::NotUtf8, &default_model, error);
                return Ok(());
            }
        };
        let input: Value = match serde_json::from_str(text) {
            Ok(input) => input,
            Err(error) => {
                let message = format!("line {number} is not JSON: {error}");
                tally.add_error(number, LineError::NotJson, &default_model, message);
                return Ok(());
            }
        };
        match processor.run(&input) {
            Ok(ran) => tally.add_turn(&ran.model, &ran.turn, &ran.result),
            Err(error) => {
                let model = input
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or(&default_model);
                let message = format!("line {number} is rejected: {error:#}");
                tally.add_error(number, LineError::Rejected, model, message);
            }
        }
        Ok(())
    })?;
    Ok(tally)
}

/// Longest key shown in the table; longer ones are cut with `…`.
const KEY_WIDTH: usize = 40;

/// The report for people.
fn table(tally: &Tally, top: usize) -> String {
    let t = tally.total();
    let e = tally.errors();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "toolmend audit: {} lines, {} turns, {} unreadable (not UTF-8 {}, not JSON {}, rejected {})",
        tally.lines(),
        t.turns,
        e.total,
        e.not_utf8,
        e.not_json,
        e.rejected
    );
    for (_, error) in tally.error_examples() {
        let _ = writeln!(s, "  {}", cut(error, 120));
    }
    let _ = writeln!(
        s,
        "calls {}: valid {}, repaired {}, recovered {}, invalid {}, suppressed {}, unvalidated {}",
        t.calls, t.valid, t.repaired, t.recovered, t.invalid, t.suppressed, t.unvalidated
    );
    let _ = writeln!(
        s,
        "broken {} ({} of calls), saved {} (repair rate), silently invalid {} (strict JSON that failed the schema)",
        t.broken(),
        percent(t.broken_rate()),
        percent(t.repair_rate()),
        t.silently_invalid
    );
    let status_columns = [
        "calls",
        "valid",
        "repaired",
        "recovered",
        "invalid",
        "silent",
        "broken%",
        "repair%",
    ];
    let status_row = |c: &Counts| {
        vec![
            c.calls.to_string(),
            c.valid.to_string(),
            c.repaired.to_string(),
            c.recovered.to_string(),
            c.invalid.to_string(),
            c.silently_invalid.to_string(),
            percent(c.broken_rate()),
            percent(c.repair_rate()),
        ]
    };
    let section =
        |s: &mut String, title: &str, columns: &[&str], rows: Vec<(String, Vec<String>)>| {
            let _ = writeln!(s, "\n{title}");
            grid(s, columns, &rows);
        };
    let keyed = |rows: Vec<(&str, Counts)>| -> Vec<(String, Vec<String>)> {
        rows.into_iter()
            .map(|(k, c)| (cut(k, KEY_WIDTH), status_row(&c)))
            .collect()
    };
    let models = tally
        .models()
        .sorted()
        .into_iter()
        .map(|(k, c)| {
            let mut cells = vec![c.turns.to_string(), c.errors.to_string()];
            cells.extend(status_row(&c));
            (cut(k, KEY_WIDTH), cells)
        })
        .collect();
    section(
        &mut s,
        "by model",
        &[&["model", "turns", "errors"], &status_columns[..]].concat(),
        models,
    );
    section(
        &mut s,
        "by tool",
        &[&["tool"], &status_columns[..]].concat(),
        keyed(tally.tools().sorted()),
    );
    let kinds = tally
        .kinds()
        .sorted()
        .into_iter()
        .map(|(k, c)| {
            let cells = vec![
                c.calls.to_string(),
                c.repairs.to_string(),
                c.repaired.to_string(),
                c.recovered.to_string(),
                c.invalid.to_string(),
            ];
            (cut(k, KEY_WIDTH), cells)
        })
        .collect();
    section(
        &mut s,
        "by repair kind",
        &[
            "kind",
            "calls",
            "repairs",
            "repaired",
            "recovered",
            "invalid",
        ],
        kinds,
    );
    let failing = tally
        .top_failing_tools(top)
        .into_iter()
        .map(|(k, c)| {
            let cells = vec![
                c.broken().to_string(),
                c.invalid.to_string(),
                c.silently_invalid.to_string(),
                c.calls.to_string(),
                percent(c.broken_rate()),
            ];
            (cut(k, KEY_WIDTH), cells)
        })
        .collect();
    section(
        &mut s,
        &format!("top {top} failing tools"),
        &["tool", "broken", "invalid", "silent", "calls", "broken%"],
        failing,
    );
    s
}

/// Rows under a header: the key column left-aligned, the numbers right-aligned.
fn grid(s: &mut String, columns: &[&str], rows: &[(String, Vec<String>)]) {
    if rows.is_empty() {
        let _ = writeln!(s, "  (none)");
        return;
    }
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for (key, cells) in rows {
        widths[0] = widths[0].max(key.chars().count());
        for (i, cell) in cells.iter().enumerate() {
            if let Some(w) = widths.get_mut(i + 1) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut line = |key: &str, cells: &mut dyn Iterator<Item = &str>| {
        let _ = write!(s, "  {key:<width$}", width = widths[0]);
        for (cell, width) in cells.zip(&widths[1..]) {
            let _ = write!(s, "  {cell:>width$}");
        }
        s.push('\n');
    };
    line(columns[0], &mut columns[1..].iter().copied());
    for (key, cells) in rows {
        line(key, &mut cells.iter().map(String::as_str));
    }
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

/// `text` cut to `max` characters (the last one `…`), on one line.
fn cut(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut short: String = one_line.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}
