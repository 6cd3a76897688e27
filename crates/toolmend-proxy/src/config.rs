//! [`ProxyConfig`]: flags, a TOML file and `TOOLMEND_*` environment overrides.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;
use toolmend::RecoverMode;

use crate::error::ConfigError;

/// Whether the proxy changes responses or only reports what it would change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Repair responses (the default).
    #[default]
    Repair,
    /// Never alter a response; count, log and annotate what would be repaired.
    Observe,
}

/// Whether the tool calls in a request's history are mended before it goes upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HistoryPolicy {
    /// Mend the arguments an upstream would reject (the default; see
    /// [`toolmend::Mender::mend_history`]): the request goes out as sent when none needs it.
    #[default]
    Repair,
    /// Send every request as the client sent it.
    Off,
}

/// What happens to a call that cannot be saved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidPolicy {
    /// Pass it through unchanged, annotated (header, metrics, log): the harness keeps its own
    /// error path (the default).
    #[default]
    Pass,
    /// Replace it with assistant text holding toolmend's retry message.
    Reject,
}

/// What happens to a call that repeats too often in the request's history (a storm).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StormPolicy {
    /// Keep the call; report it in the header and metrics (the default).
    #[default]
    Annotate,
    /// Drop the call and put the guard message into the assistant text.
    Suppress,
}

/// How `toolmend serve` runs its connections on the machine's cores (`--runtime`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Runtime {
    /// One work-stealing runtime over every core: a core busy with one long request leaves
    /// the other connections to the other cores. [`crate::serve`] called on the caller's own
    /// runtime serves this way whatever the setting.
    Shared,
    /// One single-threaded runtime per core (the default), each connection kept on one of
    /// them with its own upstream connections, as Envoy's and nginx's workers own theirs: no
    /// request crosses threads, so fewer wake-ups and context switches per request (on a
    /// stream at one connection the proxy's added p50 fell from +0.12 to +0.01 ms); but a
    /// connection waits while its core repairs another's body (bounded by the size limits).
    #[default]
    PerCore,
}

/// Every size, time and count bound of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyLimits {
    /// Largest request body read, in bytes (413 past it).
    pub max_request_bytes: usize,
    /// Largest non-streaming response body buffered for repair; a larger body is forwarded
    /// unrepaired.
    pub max_response_bytes: usize,
    /// Largest argument text buffered per streamed call; a larger call is forwarded as received.
    pub max_call_arguments_bytes: usize,
    /// Upstream connect timeout.
    pub connect_timeout: Duration,
    /// Upstream read timeout: the longest wait for the next bytes of a response.
    pub read_timeout: Duration,
    /// Most requests in flight; past it, 503 in the API's error shape.
    pub max_concurrent_requests: usize,
    /// Most compiled tool sets kept (least recently used evicted).
    pub tool_cache_entries: usize,
    /// Most raw `tools` text, in bytes, whose compiled sets are kept (a compiled set can take
    /// over 200 times its raw text: patterns compile to automata); least recently used
    /// evicted.
    pub tool_cache_bytes: usize,
    /// Largest `tools` array a request may carry, in bytes of its JSON text (400 past it).
    pub max_tools_bytes: usize,
    /// Longest wait for a client's request head; the connection is closed past it.
    pub header_read_timeout: Duration,
    /// Longest wait for the next piece of a request body, and the time every body gets on
    /// top of [`min_body_rate`](Self::min_body_rate) (408 past either).
    pub body_read_timeout: Duration,
    /// Slowest average a request body may arrive at, in bytes per second, after the first
    /// [`body_read_timeout`](Self::body_read_timeout).
    pub min_body_rate: u64,
    /// Most open connections from one client address (0: no limit); past it a new one gets a
    /// 503 and is closed. Off by default: behind a load balancer every client is one address.
    pub max_connections_per_peer: usize,
    /// After SIGTERM or Ctrl-C, how long requests in flight may take before their
    /// connections are closed.
    pub drain_timeout: Duration,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        Self {
            max_request_bytes: 16 * 1024 * 1024,
            max_response_bytes: 16 * 1024 * 1024,
            max_call_arguments_bytes: 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
            max_concurrent_requests: 1024,
            tool_cache_entries: 256,
            tool_cache_bytes: 1024 * 1024,
            max_tools_bytes: 2 * 1024 * 1024,
            header_read_timeout: Duration::from_secs(30),
            body_read_timeout: Duration::from_secs(30),
            min_body_rate: 8 * 1024,
            max_connections_per_peer: 0,
            drain_timeout: Duration::from_secs(30),
        }
    }
}

/// The proxy's configuration.
///
/// Secrets (`api_key`, `upstream_api_key`) are never printed: `Debug` redacts them.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// The upstream server root, e.g. `http://127.0.0.1:8000`; the request path is appended.
    pub upstream: String,
    /// The address to listen on.
    pub listen: SocketAddr,
    /// Which text channels are scanned for leaked calls.
    pub recover: RecoverMode,
    /// Repair or only observe.
    pub mode: Mode,
    /// What happens to calls that cannot be saved.
    pub invalid: InvalidPolicy,
    /// What happens to storm calls.
    pub storm: StormPolicy,
    /// A key clients must present (`Authorization: Bearer K` or `x-api-key: K`).
    pub api_key: Option<String>,
    /// The key sent upstream in place of the client's.
    pub upstream_api_key: Option<String>,
    /// With an upstream key, the only paths forwarded (with that key); others get a 403. An
    /// entry ending in `*` is a prefix; `*` alone allows every path.
    pub allow_paths: Vec<String>,
    /// Whether `GET /metrics` asks for the client key too (when one is configured).
    pub metrics_need_key: bool,
    /// Forward the client's `X-Forwarded-*`, `X-Real-IP` and `Forwarded` headers (set it
    /// when a proxy you run sits in front); by default they are dropped.
    pub trust_forwarded: bool,
    /// Limits.
    pub limits: ProxyLimits,
    /// Re-prompts per response holding a call that cannot be saved (0, the default: none;
    /// at most [`MAX_REPROMPT`]). Non-streaming responses only.
    pub reprompt: u8,
    /// The tools (a JSON array, as text) used for requests that carry none, and after a
    /// request's own for calls of tools they lack (`--tools FILE`).
    pub default_tools: Option<String>,
    /// What happens to the tool calls in a request's history (`--history`).
    pub history: HistoryPolicy,
    /// How connections are spread over the cores (`--runtime`): the binary builds the
    /// runtimes ([`crate::serve_per_core`]); per core, the upstream pool is per thread.
    pub runtime: Runtime,
}

/// The most re-prompts `--reprompt` allows per response.
pub const MAX_REPROMPT: u8 = 5;

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redact = |k: &Option<String>| k.as_ref().map(|_| "<redacted>");
        f.debug_struct("ProxyConfig")
            .field("upstream", &self.upstream)
            .field("listen", &self.listen)
            .field("recover", &self.recover)
            .field("mode", &self.mode)
            .field("invalid", &self.invalid)
            .field("storm", &self.storm)
            .field("api_key", &redact(&self.api_key))
            .field("upstream_api_key", &redact(&self.upstream_api_key))
            .field("allow_paths", &self.allow_paths)
            .field("metrics_need_key", &self.metrics_need_key)
            .field("trust_forwarded", &self.trust_forwarded)
            .field("limits", &self.limits)
            .field("reprompt", &self.reprompt)
            .field(
                "default_tools",
                &self.default_tools.as_ref().map(String::len),
            )
            .field("history", &self.history)
            .field("runtime", &self.runtime)
            .finish()
    }
}

/// The paths forwarded with the upstream key by default: the repaired routes and model
/// listing.
pub const DEFAULT_ALLOW_PATHS: [&str; 7] = [
    "/v1/chat/completions",
    "/v1/messages",
    "/v1/responses",
    "/api/chat",
    "/v1/models",
    "/v1/models/*",
    "/api/tags",
];

/// The default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:4000";

impl ProxyConfig {
    /// A configuration with defaults for everything but the upstream.
    #[must_use]
    pub fn new(upstream: impl Into<String>) -> Self {
        Self {
            upstream: upstream.into(),
            listen: DEFAULT_LISTEN.parse().expect("a valid literal address"),
            recover: RecoverMode::Content,
            mode: Mode::Repair,
            invalid: InvalidPolicy::Pass,
            storm: StormPolicy::Annotate,
            api_key: None,
            upstream_api_key: None,
            allow_paths: DEFAULT_ALLOW_PATHS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            metrics_need_key: false,
            trust_forwarded: false,
            limits: ProxyLimits::default(),
            reprompt: 0,
            default_tools: None,
            history: HistoryPolicy::Repair,
            runtime: Runtime::PerCore,
        }
    }

    /// Reads a TOML file's settings over `self` (keys as the long flags, with `_` for `-`;
    /// limits under `[limits]`).
    pub fn merge_toml(&mut self, text: &str) -> Result<(), ConfigError> {
        let file: FileConfig = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        let FileConfig {
            upstream,
            listen,
            recover,
            mode,
            invalid,
            storm,
            api_key,
            upstream_api_key,
            allow_paths,
            metrics_need_key,
            trust_forwarded,
            limits,
            reprompt,
            tools,
            history,
            runtime,
        } = file;
        if let Some(trust) = trust_forwarded {
            self.trust_forwarded = trust;
        }
        if let Some(paths) = allow_paths {
            self.allow_paths = paths;
        }
        if let Some(need) = metrics_need_key {
            self.metrics_need_key = need;
        }
        if let Some(n) = reprompt {
            self.set("reprompt", &n.to_string())?;
        }
        if let Some(path) = tools {
            self.set("tools", &path)?;
        }
        let pairs = [
            ("upstream", upstream),
            ("listen", listen),
            ("recover", recover),
            ("mode", mode),
            ("invalid", invalid),
            ("storm", storm),
            ("api_key", api_key),
            ("upstream_api_key", upstream_api_key),
            ("history", history),
            ("runtime", runtime),
        ];
        for (key, value) in pairs {
            if let Some(value) = value {
                self.set(key, &value)?;
            }
        }
        if let Some(limits) = limits {
            let FileLimits {
                max_request_bytes,
                max_response_bytes,
                max_call_arguments_bytes,
                connect_timeout_ms,
                read_timeout_ms,
                max_concurrent_requests,
                tool_cache_entries,
                tool_cache_bytes,
                max_tools_bytes,
                header_read_timeout_ms,
                body_read_timeout_ms,
                min_body_rate,
                max_connections_per_peer,
                drain_timeout_ms,
            } = limits;
            let l = &mut self.limits;
            set_opt(&mut l.max_request_bytes, max_request_bytes);
            set_opt(&mut l.max_response_bytes, max_response_bytes);
            set_opt(&mut l.max_call_arguments_bytes, max_call_arguments_bytes);
            set_opt(&mut l.max_concurrent_requests, max_concurrent_requests);
            set_opt(&mut l.tool_cache_entries, tool_cache_entries);
            set_opt(&mut l.tool_cache_bytes, tool_cache_bytes);
            set_opt(&mut l.max_tools_bytes, max_tools_bytes);
            set_opt(&mut l.max_connections_per_peer, max_connections_per_peer);
            if let Some(rate) = min_body_rate {
                l.min_body_rate = rate;
            }
            let times = [
                (&mut l.connect_timeout, connect_timeout_ms),
                (&mut l.read_timeout, read_timeout_ms),
                (&mut l.header_read_timeout, header_read_timeout_ms),
                (&mut l.body_read_timeout, body_read_timeout_ms),
                (&mut l.drain_timeout, drain_timeout_ms),
            ];
            for (slot, ms) in times {
                if let Some(ms) = ms {
                    *slot = Duration::from_millis(ms);
                }
            }
        }
        Ok(())
    }

    /// Applies `TOOLMEND_*` variables (`TOOLMEND_UPSTREAM`, `TOOLMEND_LISTEN`,
    /// `TOOLMEND_RECOVER`, `TOOLMEND_MODE`, `TOOLMEND_INVALID`, `TOOLMEND_STORM`,
    /// `TOOLMEND_API_KEY`, `TOOLMEND_UPSTREAM_API_KEY`, `TOOLMEND_READ_TIMEOUT_MS`,
    /// `TOOLMEND_CONNECT_TIMEOUT_MS`, `TOOLMEND_MAX_CONCURRENT_REQUESTS`,
    /// `TOOLMEND_HEADER_READ_TIMEOUT_MS`, `TOOLMEND_BODY_READ_TIMEOUT_MS`,
    /// `TOOLMEND_MIN_BODY_RATE`, `TOOLMEND_MAX_CONNECTIONS_PER_PEER`,
    /// `TOOLMEND_DRAIN_TIMEOUT_MS`, `TOOLMEND_ALLOW_PATHS` (comma-separated),
    /// `TOOLMEND_METRICS_NEED_KEY`, `TOOLMEND_TRUST_FORWARDED`, `TOOLMEND_HISTORY`,
    /// `TOOLMEND_RUNTIME`); other
    /// variables are ignored.
    pub fn merge_env<K, V>(
        &mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<(), ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (key, value) in vars {
            let Some(key) = key.as_ref().strip_prefix("TOOLMEND_") else {
                continue;
            };
            let key = key.to_ascii_lowercase();
            self.set(&key, value.as_ref())?;
        }
        Ok(())
    }

    /// Sets one setting by its key (`recover`, `listen`, `read_timeout_ms`, …). Unknown keys
    /// are ignored (the environment holds unrelated `TOOLMEND_*` names, e.g. `TOOLMEND_LOG`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |what: &str| ConfigError(format!("`{key}`: {what} `{value}`"));
        let number = || value.parse::<u64>().map_err(|_| bad("not a number:"));
        match key {
            "upstream" => self.upstream = value.to_owned(),
            "listen" => self.listen = value.parse().map_err(|_| bad("not an address:"))?,
            "recover" => {
                self.recover = RecoverMode::from_name(value)
                    .ok_or_else(|| bad("expected off|strip|content|all, got"))?;
            }
            "history" => {
                self.history = match value {
                    "repair" => HistoryPolicy::Repair,
                    "off" => HistoryPolicy::Off,
                    _ => return Err(bad("expected repair|off, got")),
                };
            }
            "runtime" => {
                self.runtime = match value {
                    "shared" => Runtime::Shared,
                    "per-core" => Runtime::PerCore,
                    _ => return Err(bad("expected shared|per-core, got")),
                };
            }
            "mode" => {
                self.mode = match value {
                    "repair" => Mode::Repair,
                    "observe" => Mode::Observe,
                    _ => return Err(bad("expected repair|observe, got")),
                };
            }
            "invalid" => {
                self.invalid = match value {
                    "pass" => InvalidPolicy::Pass,
                    "reject" => InvalidPolicy::Reject,
                    _ => return Err(bad("expected pass|reject, got")),
                };
            }
            "storm" => {
                self.storm = match value {
                    "annotate" => StormPolicy::Annotate,
                    "suppress" => StormPolicy::Suppress,
                    _ => return Err(bad("expected annotate|suppress, got")),
                };
            }
            "api_key" => self.api_key = Some(value.to_owned()).filter(|k| !k.is_empty()),
            "upstream_api_key" => {
                self.upstream_api_key = Some(value.to_owned()).filter(|k| !k.is_empty());
            }
            "allow_paths" => {
                self.allow_paths = value
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            "metrics_need_key" | "trust_forwarded" => {
                let flag = match value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad("expected true|false, got")),
                };
                match key {
                    "metrics_need_key" => self.metrics_need_key = flag,
                    _ => self.trust_forwarded = flag,
                }
            }
            "read_timeout_ms" => self.limits.read_timeout = Duration::from_millis(number()?),
            "connect_timeout_ms" => self.limits.connect_timeout = Duration::from_millis(number()?),
            "drain_timeout_ms" => self.limits.drain_timeout = Duration::from_millis(number()?),
            "header_read_timeout_ms" => {
                self.limits.header_read_timeout = Duration::from_millis(number()?);
            }
            "body_read_timeout_ms" => {
                self.limits.body_read_timeout = Duration::from_millis(number()?);
            }
            "min_body_rate" => self.limits.min_body_rate = number()?,
            "max_connections_per_peer" => {
                self.limits.max_connections_per_peer =
                    usize::try_from(number()?).map_err(|_| bad("too large:"))?;
            }
            "reprompt" => {
                self.reprompt = u8::try_from(number()?)
                    .ok()
                    .filter(|n| *n <= MAX_REPROMPT)
                    .ok_or_else(|| bad("expected 0 to 5, got"))?;
            }
            "tools" => {
                let text = std::fs::read_to_string(value)
                    .map_err(|e| ConfigError(format!("`tools`: reading `{value}`: {e}")))?;
                match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(serde_json::Value::Array(items)) if !items.is_empty() => {
                        self.default_tools = Some(text);
                    }
                    _ => return Err(bad("not a non-empty JSON array of tools:")),
                }
            }
            "max_concurrent_requests" => {
                self.limits.max_concurrent_requests =
                    usize::try_from(number()?).map_err(|_| bad("too large:"))?;
            }
            _ => {}
        }
        Ok(())
    }
}

fn set_opt(slot: &mut usize, value: Option<usize>) {
    if let Some(value) = value {
        *slot = value;
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    upstream: Option<String>,
    listen: Option<String>,
    recover: Option<String>,
    mode: Option<String>,
    invalid: Option<String>,
    storm: Option<String>,
    api_key: Option<String>,
    upstream_api_key: Option<String>,
    allow_paths: Option<Vec<String>>,
    metrics_need_key: Option<bool>,
    trust_forwarded: Option<bool>,
    limits: Option<FileLimits>,
    reprompt: Option<u64>,
    /// A path to a JSON file holding a tools array.
    tools: Option<String>,
    history: Option<String>,
    runtime: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    max_request_bytes: Option<usize>,
    max_response_bytes: Option<usize>,
    max_call_arguments_bytes: Option<usize>,
    connect_timeout_ms: Option<u64>,
    read_timeout_ms: Option<u64>,
    max_concurrent_requests: Option<usize>,
    tool_cache_entries: Option<usize>,
    tool_cache_bytes: Option<usize>,
    max_tools_bytes: Option<usize>,
    header_read_timeout_ms: Option<u64>,
    body_read_timeout_ms: Option<u64>,
    min_body_rate: Option<u64>,
    max_connections_per_peer: Option<usize>,
    drain_timeout_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_then_env_override() {
        let mut config = ProxyConfig::new("http://a");
        config
            .merge_toml(
                "upstream = \"http://b\"\nrecover = \"all\"\n[limits]\nread_timeout_ms = 50\n",
            )
            .unwrap();
        assert_eq!(config.upstream, "http://b");
        assert_eq!(config.recover, RecoverMode::All);
        assert_eq!(config.limits.read_timeout, Duration::from_millis(50));
        config
            .merge_env([
                ("TOOLMEND_RECOVER", "off"),
                ("PATH", "/bin"),
                ("TOOLMEND_LOG", "x"),
            ])
            .unwrap();
        assert_eq!(config.recover, RecoverMode::Off);
    }

    #[test]
    fn bad_values_are_errors() {
        let mut config = ProxyConfig::new("http://a");
        assert!(config.set("mode", "fix").is_err());
        assert!(config.merge_toml("nonsense = 1").is_err());
    }

    #[test]
    fn the_runtime_is_per_core_unless_asked_shared() {
        let mut config = ProxyConfig::new("http://a");
        assert_eq!(config.runtime, Runtime::PerCore);
        config.merge_toml("runtime = \"shared\"\n").unwrap();
        assert_eq!(config.runtime, Runtime::Shared);
        config
            .merge_env([("TOOLMEND_RUNTIME", "per-core")])
            .unwrap();
        assert_eq!(config.runtime, Runtime::PerCore);
        assert!(config.set("runtime", "threads").is_err());
    }

    #[test]
    fn debug_redacts_secrets() {
        let mut config = ProxyConfig::new("http://a");
        config.api_key = Some("sk-secret".into());
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
