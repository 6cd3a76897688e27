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
    /// Limits.
    pub limits: ProxyLimits,
    /// Re-prompts per response holding a call that cannot be saved (0, the default: none;
    /// at most [`MAX_REPROMPT`]). Non-streaming responses only.
    pub reprompt: u8,
    /// The tools (a JSON array, as text) used for requests that carry none (`--tools FILE`).
    pub default_tools: Option<String>,
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
            .field("limits", &self.limits)
            .field("reprompt", &self.reprompt)
            .field(
                "default_tools",
                &self.default_tools.as_ref().map(String::len),
            )
            .finish()
    }
}

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
            limits: ProxyLimits::default(),
            reprompt: 0,
            default_tools: None,
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
            limits,
            reprompt,
            tools,
        } = file;
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
            } = limits;
            let l = &mut self.limits;
            set_opt(&mut l.max_request_bytes, max_request_bytes);
            set_opt(&mut l.max_response_bytes, max_response_bytes);
            set_opt(&mut l.max_call_arguments_bytes, max_call_arguments_bytes);
            set_opt(&mut l.max_concurrent_requests, max_concurrent_requests);
            set_opt(&mut l.tool_cache_entries, tool_cache_entries);
            if let Some(ms) = connect_timeout_ms {
                l.connect_timeout = Duration::from_millis(ms);
            }
            if let Some(ms) = read_timeout_ms {
                l.read_timeout = Duration::from_millis(ms);
            }
        }
        Ok(())
    }

    /// Applies `TOOLMEND_*` variables (`TOOLMEND_UPSTREAM`, `TOOLMEND_LISTEN`,
    /// `TOOLMEND_RECOVER`, `TOOLMEND_MODE`, `TOOLMEND_INVALID`, `TOOLMEND_STORM`,
    /// `TOOLMEND_API_KEY`, `TOOLMEND_UPSTREAM_API_KEY`, `TOOLMEND_READ_TIMEOUT_MS`,
    /// `TOOLMEND_CONNECT_TIMEOUT_MS`, `TOOLMEND_MAX_CONCURRENT_REQUESTS`); other variables are
    /// ignored.
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
            "read_timeout_ms" => self.limits.read_timeout = Duration::from_millis(number()?),
            "connect_timeout_ms" => self.limits.connect_timeout = Duration::from_millis(number()?),
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
    limits: Option<FileLimits>,
    reprompt: Option<u64>,
    /// A path to a JSON file holding a tools array.
    tools: Option<String>,
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
    fn debug_redacts_secrets() {
        let mut config = ProxyConfig::new("http://a");
        config.api_key = Some("sk-secret".into());
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
