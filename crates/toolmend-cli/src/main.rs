//! The `toolmend` command: thin flag parsing and dispatch; the work is in the library.

mod commands;
mod turn_line;

use std::process::ExitCode;

/// jemalloc: see the comment on `tikv-jemallocator` in Cargo.toml (issue #29 §3).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::{Parser, Subcommand};

/// Repairs the tool calls LLMs get nearly right.
#[derive(Debug, Parser)]
#[command(name = "toolmend", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Repair one call's arguments against a schema or tool.
    Repair(commands::repair::Args),
    /// Process JSONL assistant turns (one per line) and write one result line per turn.
    Turns(commands::turns::Args),
    /// Report where models break over JSONL turns: repair rate by model, tool and kind.
    Audit(commands::audit::Args),
    /// Rewrite a tools array for a model: anchors, flattening, contract hints, hints removed.
    Prepare(commands::prepare::Args),
    /// Run a corpus of turn cases with expectations and print a table; exit 1 on any miss.
    Eval(commands::eval::Args),
    /// Run the repairing HTTP proxy in front of an OpenAI- or Anthropic-compatible server.
    // Boxed: its many flags would make every other command as large.
    Serve(Box<commands::serve::Args>),
    /// Relay an MCP stdio server (`toolmend mcp -- npx …`), repairing `tools/call` on the way.
    Mcp(commands::mcp::Args),
}

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Repair(args) => commands::repair::run(&args),
        Command::Turns(args) => commands::turns::run(&args),
        Command::Audit(args) => commands::audit::run(&args),
        Command::Eval(args) => commands::eval::run(&args),
        Command::Prepare(args) => commands::prepare::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Mcp(args) => commands::mcp::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("toolmend: {error:#}");
            }
            ExitCode::from(2)
        }
    }
}

/// With `RUST_LOG` set, the library's `tracing` events go to stderr, filtered by it
/// (`RUST_LOG=tool_repair=info,tool_input_invalid=info`); stdout keeps only the output.
fn init_tracing() {
    if std::env::var_os("RUST_LOG").is_none() {
        return;
    }
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
}
