//! `toolmend turns`: JSONL assistant turns in, one result line per turn out (DESIGN §9).

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use toolmend::RecoverMode;

use crate::turn_line::{Defaults, TurnProcessor};

/// Flags of `toolmend turns`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The JSONL file; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Where leaked calls are recovered from: off, strip, content or all (a line's options win).
    #[arg(long, value_parser = parse_recover)]
    recover: Option<RecoverMode>,
    /// The model id for lines that name none.
    #[arg(long)]
    model: Option<String>,
    /// Retry messages per identical invalid call before giving up (0–5, default 1).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=5))]
    max_reprompts: Option<u8>,
    /// Quote received values (bounded) in retry messages; messages are value-free otherwise.
    #[arg(long)]
    include_values: bool,
}

/// Calls `each` with every line of `reader` (without its line break): the line's text, or why
/// it is not text (a line that is not UTF-8). Only an I/O error stops the loop.
pub(crate) fn for_each_line(
    mut reader: impl BufRead,
    mut each: impl FnMut(Result<&str, String>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .context("reading input")?
            == 0
        {
            return Ok(());
        }
        number += 1;
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match std::str::from_utf8(line) {
            Ok(text) => each(Ok(text))?,
            Err(error) => each(Err(format!(
                "line {number} is not UTF-8: {error} (byte {} of the line)",
                error.valid_up_to() + 1
            )))?,
        }
    }
}

pub(crate) fn parse_recover(name: &str) -> Result<RecoverMode, String> {
    RecoverMode::from_name(name)
        .ok_or_else(|| format!("`{name}` is not one of off, strip, content, all"))
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let defaults = Defaults {
        include_values: args.include_values,
        recover: args.recover,
        model: args.model.clone(),
        max_reprompts: args.max_reprompts,
        tools: None,
    };
    let mut processor = TurnProcessor::new(defaults);
    let reader: Box<dyn BufRead> = match &args.file {
        Some(path) if path.as_os_str() != "-" => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        )),
        _ => Box::new(std::io::stdin().lock()),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for_each_line(reader, |line| {
        let output = match line {
            Ok(line) if line.trim().is_empty() => return Ok(()),
            Ok(line) => processor.process_line(line),
            // One bad line costs one error line, never the lines after it (DESIGN §9).
            Err(error) => serde_json::json!({"id": null, "error": error}),
        };
        writeln!(out, "{output}")?;
        Ok(())
    })?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
