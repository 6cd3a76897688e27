//! `toolmend prepare`: a tools array rewritten for a model (DESIGN §7).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;
use toolmend::{PrepareOptions, prepare_tools};

/// Flags of `toolmend prepare`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The model id the tools are sent to (anchor stripping is per model).
    #[arg(long)]
    model: String,
    /// The tools array (OpenAI, flat or Anthropic objects); `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Keep `pattern` anchors even for models that copy them into values.
    #[arg(long)]
    no_anchor_strip: bool,
    /// Never present schemas with dot-notation keys.
    #[arg(long)]
    no_flatten: bool,
    /// Do not append contract hints to descriptions.
    #[arg(long)]
    no_contract_hints: bool,
    /// Keep `x-toolmend` / `dirge-hints` in what is sent.
    #[arg(long)]
    keep_hints: bool,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let text = match &args.file {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading stdin")?;
            text
        }
    };
    let tools: Value = serde_json::from_str(&text).context("the tools are not JSON")?;
    let mut options = PrepareOptions::default();
    options.strip_anchors = !args.no_anchor_strip;
    options.flatten = !args.no_flatten;
    options.contract_hints = !args.no_contract_hints;
    options.strip_hints = !args.keep_hints;
    let prepared = prepare_tools(&tools, &args.model, &options)?;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &prepared)?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}
