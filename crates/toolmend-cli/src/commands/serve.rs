//! `toolmend serve`: the repairing HTTP proxy (the work is in `toolmend-proxy`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use toolmend_proxy::ProxyConfig;

/// Flags of `toolmend serve`; each overrides the config file and the `TOOLMEND_*` variables.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The upstream server root, e.g. `http://127.0.0.1:8000` (request paths are appended).
    #[arg(long)]
    upstream: Option<String>,
    /// The address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long)]
    listen: Option<String>,
    /// Where leaked calls are recovered from: off, content, all, strip.
    #[arg(long, value_parser = ["off", "content", "all", "strip"])]
    recover: Option<String>,
    /// repair (default) or observe (never alter; count and annotate).
    #[arg(long, value_parser = ["repair", "observe"])]
    mode: Option<String>,
    /// A call that cannot be saved: pass (unchanged, annotated) or reject (retry message).
    #[arg(long, value_parser = ["pass", "reject"])]
    invalid: Option<String>,
    /// A storm call: annotate (header, metrics) or suppress.
    #[arg(long, value_parser = ["annotate", "suppress"])]
    storm: Option<String>,
    /// A key clients must present (`Authorization: Bearer K` or `x-api-key: K`).
    #[arg(long)]
    api_key: Option<String>,
    /// The key sent upstream instead of the client's.
    #[arg(long)]
    upstream_api_key: Option<String>,
    /// With --upstream-api-key, the only paths forwarded (comma-separated; `*` at the end is a
    /// prefix, `*` alone is every path). Default: the repaired routes and model listing.
    #[arg(long, value_name = "PATHS")]
    allow_paths: Option<String>,
    /// `GET /metrics` asks for the --api-key too.
    #[arg(long)]
    metrics_need_key: bool,
    /// Forward the client's X-Forwarded-*, X-Real-IP and Forwarded headers (dropped by default).
    #[arg(long)]
    trust_forwarded: bool,
    /// After SIGTERM, seconds the requests in flight get before their connections close.
    #[arg(long, value_name = "SECONDS")]
    drain_timeout: Option<u64>,
    /// Re-prompts per non-streaming response holding a call that cannot be saved: the
    /// upstream is asked again with the retry message as that call's result (0 to 5; 0, the
    /// default, never).
    #[arg(long)]
    reprompt: Option<String>,
    /// A JSON file with a tools array, used for requests that carry no `tools` (clients that
    /// send only the new tool result on later turns), and for calls of tools a request's own
    /// `tools` lack (LiteLLM's `dummy_tool`).
    #[arg(long)]
    tools: Option<String>,
    /// Tool calls in a request's history whose arguments an upstream would reject (empty,
    /// broken JSON, not an object): `repair` (the default) mends them, `off` sends them as
    /// they are.
    #[arg(long, value_name = "repair|off")]
    history: Option<String>,
    /// per-core (the default): one single-threaded runtime per core, each connection and its
    /// upstream connections kept on one core (fewer wake-ups and context switches per
    /// request; a connection waits while its core repairs another's body); shared: one
    /// work-stealing runtime over all cores.
    #[arg(long, value_parser = ["shared", "per-core"])]
    runtime: Option<String>,
    /// A TOML file with the same settings (and `[limits]`).
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut config = ProxyConfig::new("");
    if let Some(path) = &args.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        config.merge_toml(&text)?;
    }
    config.merge_env(std::env::vars())?;
    let flags = [
        ("upstream", &args.upstream),
        ("listen", &args.listen),
        ("recover", &args.recover),
        ("mode", &args.mode),
        ("invalid", &args.invalid),
        ("storm", &args.storm),
        ("api_key", &args.api_key),
        ("upstream_api_key", &args.upstream_api_key),
        ("allow_paths", &args.allow_paths),
        ("reprompt", &args.reprompt),
        ("tools", &args.tools),
        ("history", &args.history),
        ("runtime", &args.runtime),
    ];
    for (key, value) in flags {
        if let Some(value) = value {
            config.set(key, value)?;
        }
    }
    if args.metrics_need_key {
        config.metrics_need_key = true;
    }
    if args.trust_forwarded {
        config.trust_forwarded = true;
    }
    if let Some(seconds) = args.drain_timeout {
        config.set(
            "drain_timeout_ms",
            &seconds.saturating_mul(1000).to_string(),
        )?;
    }
    if config.upstream.is_empty() {
        anyhow::bail!(
            "no upstream: pass --upstream URL (or set it in --config / TOOLMEND_UPSTREAM)"
        );
    }
    // Per core: the cores' runtimes serve the connections, this thread's only accepts them
    // and waits for the signal. Dropped (joined) after the runtime below, outside it.
    let cores = match config.runtime {
        toolmend_proxy::Runtime::PerCore => Some(
            toolmend_proxy::CoreRuntimes::start(
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            )
            .context("starting the runtimes")?,
        ),
        _ => None,
    };
    let runtime = match &cores {
        Some(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        None => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    }
    .context("starting the runtime")?;
    let workers = cores.as_ref().map(|c| c.handles().to_vec());
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("binding {}", config.listen))?;
        let addr = listener.local_addr()?;
        {
            #[allow(clippy::print_stderr)]
            let mut stderr = std::io::stderr().lock();
            writeln!(stderr, "toolmend serve: listening on http://{addr}")?;
            if config.api_key.is_none() && !addr.ip().is_loopback() {
                writeln!(
                    stderr,
                    "toolmend serve: warning: no --api-key on a non-loopback address: anyone \
                     who reaches it can use the upstream{}",
                    if config.upstream_api_key.is_some() {
                        " with --upstream-api-key"
                    } else {
                        ""
                    }
                )?;
            }
            stderr.flush()?;
        }
        match workers {
            Some(workers) => toolmend_proxy::serve_per_core(config, listener, &workers).await?,
            None => toolmend_proxy::serve(config, listener).await?,
        }
        anyhow::Ok(())
    })?;
    drop(runtime);
    drop(cores);
    Ok(ExitCode::SUCCESS)
}
