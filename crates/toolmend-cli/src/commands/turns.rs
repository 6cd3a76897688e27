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
    };
    let mut processor = TurnProcessor::new(defaults);
    let reader: Box<dyn BufRead> = match &args.file {
        Some(path) if path.as_os_str() != "-" => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
        )),
        _ => Box::new(std::io::stdin().lock()),
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in reader.lines() {
        let line = line.context("reading input")?;
        if line.trim().is_empty() {
            continue;
        }
        let output = processor.process_line(&line);
        writeln!(out, "{output}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
