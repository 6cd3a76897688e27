/*!
`toolmend serve`: an HTTP proxy that repairs tool calls on their way from an LLM server.

Point a client's base URL at the proxy and every tool call in every response arrives repaired,
streaming included. The proxy speaks OpenAI Chat Completions (`POST /v1/chat/completions`),
OpenAI Responses (`POST /v1/responses`), Anthropic Messages (`POST /v1/messages`) and Ollama's
native chat (`POST /api/chat`, NDJSON streaming); every other path is forwarded verbatim.

- [`app`] builds the [`axum::Router`] for a [`ProxyConfig`], testable without a socket.
- [`serve`] runs it on a bound listener until Ctrl-C or SIGTERM, draining in-flight requests
  for at most the drain timeout; [`serve_until`] stops on any future.

# Behaviour worth knowing

- Bodies are re-serialised only when something changed; a valid response is forwarded as the
  upstream's bytes. Compiled tool sets are cached by a hash of the raw `tools` text (bounded
  LRU), so repeated tools never recompile.
- Streams: the `x-toolmend-repairs` header cannot follow the body, so streamed repairs are
  reported in the metrics and logs only. Markup consumed from streamed text that the library
  then declines to turn into a call (an invalid call, or `--recover content` in a turn that
  also has native calls) comes back as text at the end of the message, not in place.
- Storms are judged from the request's own history (the assistant turns since the last user
  message), so any number of instances may run behind a load balancer.

What it never does: lose data. A body it cannot read, an upstream error, a timeout or a cut
stream reaches the client as received; only the proxy's own errors are its own JSON, in the
client API's error shape.
*/
#![deny(missing_docs)]

mod anthropic_views;
mod app;
mod body;
mod cache;
mod client;
mod config;
mod error;
mod fallback_tools;
mod history;
mod mend;
mod metrics;
mod ollama_views;
#[cfg(test)]
mod openai_views;
pub mod path;
mod reprompt;
mod responses_views;
mod routes;
mod self_wake;
mod serve;
mod spans;
mod stream;
mod upstream;
pub mod wire;

pub use app::app;
pub use config::{
    DEFAULT_ALLOW_PATHS, DEFAULT_LISTEN, HistoryPolicy, InvalidPolicy, MAX_REPROMPT, Mode,
    ProxyConfig, ProxyLimits, Runtime, StormPolicy,
};
pub use error::ConfigError;
pub use reprompt::REPROMPTS_HEADER;
pub use serve::{CoreRuntimes, serve_until, serve_until_on};

/// The name of the response header listing the repairs made (`kind=count`, comma-separated).
pub const REPAIRS_HEADER: &str = mend::REPAIRS_HEADER;

/// Serves the proxy on `listener` until Ctrl-C or SIGTERM, then stops accepting and lets the
/// requests in flight finish, for at most [`ProxyLimits::drain_timeout`].
///
/// # Errors
///
/// When the router cannot be built.
pub async fn serve(config: ProxyConfig, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    serve_until(config, listener, shutdown_signal()).await
}

/// [`serve`] with the connections spread over `workers` (see [`serve_until_on`] and
/// [`CoreRuntimes`]: `--runtime per-core`).
///
/// # Errors
///
/// When the router cannot be built.
pub async fn serve_per_core(
    config: ProxyConfig,
    listener: tokio::net::TcpListener,
    workers: &[tokio::runtime::Handle],
) -> std::io::Result<()> {
    serve_until_on(config, listener, shutdown_signal(), workers).await
}

/// Resolves on Ctrl-C or (on Unix) SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
