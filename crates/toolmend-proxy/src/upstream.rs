//! The upstream side: one pooled client ([`crate::client`]), the upstream target of a request,
//! header forwarding.

use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::uri::{Authority, PathAndQuery, Scheme};
use axum::http::{Method, Request, Uri};
use bytes::Bytes;
use http_body_util::Full;

pub(crate) use crate::client::{BodyChunk, Response, UpstreamError};
use crate::client::{ClientError, HttpClient};
use crate::config::ProxyConfig;
use crate::error::{Api, ProxyError};

/// Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus `host`.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Headers a client could use to claim another address, host or scheme to the upstream;
/// dropped unless `trust_forwarded` (the proxy in front of toolmend sets them).
const FORWARDED: [&str; 6] = [
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-forwarded-port",
    "x-real-ip",
];

/// The header names listed in `Connection:` (lowercase): hop-by-hop too (RFC 9110 §7.6.1).
fn connection_named(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The upstream server and the client that talks to it.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    client: HttpClient,
    scheme: Scheme,
    authority: Authority,
    /// The root's path without a trailing `/` (empty for the server root).
    root: String,
    /// The root ends in `/v1`.
    root_has_v1: bool,
    api_key: Option<String>,
    upstream_api_key: Option<String>,
    /// The paths a request may take to get the upstream key (`*` at the end: a prefix).
    allow_paths: Vec<String>,
    /// Forward the client's `X-Forwarded-*` and `Forwarded` headers.
    trust_forwarded: bool,
    /// The upstream URLs of the paths every repaired request takes (without a query), built
    /// once ([`Upstream::with_fixed_paths`]) instead of per request.
    fixed: Vec<(&'static str, Uri)>,
}

impl Upstream {
    /// The upstream of a configuration: its root parsed once (`http` or `https`, a host, a
    /// path prefix, no query), and the client. Redirects are never followed: the proxy
    /// forwards what it gets, a redirect goes back to the client.
    pub(crate) fn new(config: &ProxyConfig) -> Result<Self, ClientError> {
        let trimmed = config.upstream.trim_end_matches('/');
        let root: Uri = trimmed
            .parse()
            .map_err(|e| ClientError::new(format!("upstream URL {trimmed:?}: {e}")))?;
        let scheme = root
            .scheme()
            .filter(|s| *s == &Scheme::HTTP || *s == &Scheme::HTTPS)
            .cloned()
            .ok_or_else(|| ClientError::new(format!("upstream URL {trimmed:?}: not http(s)")))?;
        let authority = root
            .authority()
            .cloned()
            .ok_or_else(|| ClientError::new(format!("upstream URL {trimmed:?}: no host")))?;
        if root.query().is_some() {
            return Err(ClientError::new(format!(
                "upstream URL {trimmed:?}: a query cannot prefix request paths"
            )));
        }
        let root = root.path().trim_end_matches('/').to_owned();
        let client = HttpClient::new(
            config.limits.connect_timeout,
            config.limits.read_timeout,
            config.runtime == crate::config::Runtime::PerCore,
        )?;
        Ok(Self {
            root_has_v1: root.ends_with("/v1"),
            root,
            scheme,
            authority,
            client,
            api_key: config.api_key.clone(),
            upstream_api_key: config.upstream_api_key.clone(),
            allow_paths: config.allow_paths.clone(),
            trust_forwarded: config.trust_forwarded,
            fixed: Vec::new(),
        })
    }

    /// The same upstream with the URLs of `paths` (requests without a query) built now.
    ///
    /// # Errors
    ///
    /// When one of them makes no URL with this root.
    pub(crate) fn with_fixed_paths(mut self, paths: &[&'static str]) -> Result<Self, ProxyError> {
        for &path in paths {
            let url = self.url(&Uri::from_static(path))?;
            self.fixed.push((path, url));
        }
        Ok(self)
    }

    /// The upstream path and query of a request: the root's path plus the path and query as
    /// received; a root ending in `/v1` is not doubled for a `/v1/…` path, and Ollama's
    /// native `/api/…` paths go to the root without its `/v1` (`--upstream
    /// http://host:11434/v1` serves both APIs).
    fn path_and_query(&self, uri: &Uri) -> String {
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let (root, rest) = if self.root_has_v1 && path.starts_with("/api/") {
            (&self.root[..self.root.len() - "/v1".len()], path)
        } else {
            match path.strip_prefix("/v1") {
                Some(rest)
                    if self.root_has_v1 && (rest.starts_with('/') || rest.starts_with('?')) =>
                {
                    (self.root.as_str(), rest)
                }
                _ => (self.root.as_str(), path),
            }
        };
        let mut joined = String::with_capacity(root.len() + rest.len() + 1);
        if !root.starts_with('/') && !rest.starts_with('/') {
            joined.push('/');
        }
        joined.push_str(root);
        joined.push_str(rest);
        joined
    }

    /// The upstream URL of a request (the root plus its path and query).
    pub(crate) fn url(&self, uri: &Uri) -> Result<Uri, ProxyError> {
        if uri.query().is_none()
            && let Some((_, url)) = self.fixed.iter().find(|(path, _)| *path == uri.path())
        {
            return Ok(url.clone());
        }
        let path = PathAndQuery::try_from(self.path_and_query(uri))
            .map_err(|e| ProxyError::UpstreamUnreachable(format!("upstream URL: {e}")))?;
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
            .map_err(|e| ProxyError::UpstreamUnreachable(format!("upstream URL: {e}")))
    }

    /// Checks the proxy key when one is configured (`Authorization: Bearer K`, the scheme in
    /// any case, or `x-api-key: K`) and removes every header holding it, so a client sending
    /// the key in both never has one forwarded; refuses a path outside `--allow-paths` when
    /// the request would get the upstream key.
    pub(crate) fn authorize(&self, path: &str, headers: &mut HeaderMap) -> Result<(), ProxyError> {
        self.check_key(headers)?;
        if self.upstream_api_key.is_some() && !self.allows(path) {
            return Err(ProxyError::PathNotAllowed);
        }
        Ok(())
    }

    /// Checks the proxy key when one is configured and removes every header holding it.
    pub(crate) fn check_key(&self, headers: &mut HeaderMap) -> Result<(), ProxyError> {
        if let Some(key) = &self.api_key {
            let bearer_ok = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| bearer(v.as_bytes()))
                .is_some_and(|b| constant_time_eq(b, key.as_bytes()));
            let x_api_key_ok = headers
                .get("x-api-key")
                .is_some_and(|v| constant_time_eq(v.as_bytes(), key.as_bytes()));
            if !bearer_ok && !x_api_key_ok {
                return Err(ProxyError::Unauthorized);
            }
            if bearer_ok {
                headers.remove(header::AUTHORIZATION);
            }
            if x_api_key_ok {
                headers.remove("x-api-key");
            }
        }
        Ok(())
    }

    /// Whether `path` is in `--allow-paths`.
    fn allows(&self, path: &str) -> bool {
        self.allow_paths
            .iter()
            .any(|allowed| match allowed.strip_suffix('*') {
                Some(prefix) => path.starts_with(prefix),
                None => path == allowed,
            })
    }

    /// Sends a re-prompt's follow-up `body` with the client request's method, target and headers,
    /// asking for a body the proxy can read; `None` when it fails or is not a success.
    pub(crate) async fn send_follow_up(
        &self,
        request: &axum::http::request::Parts,
        body: Bytes,
    ) -> Option<Response> {
        let response = self
            .send(
                request.method.clone(),
                &request.uri,
                &request.headers,
                body,
                true,
            )
            .await
            .ok()?;
        response.status().is_success().then_some(response)
    }

    /// Sends a request upstream with the client's headers (hop-by-hop ones removed).
    ///
    /// `repairing` asks for an uncompressed body (`Accept-Encoding: identity`), since the proxy
    /// will read it, and decodes a compressed one the upstream sends anyway: the response then
    /// has no `Content-Encoding` (unless the encoding was one it cannot decode) and no
    /// `Content-Length`.
    pub(crate) async fn send(
        &self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
        repairing: bool,
    ) -> Result<Response, ProxyError> {
        let mut out = HeaderMap::with_capacity(headers.len() + 1);
        let named = connection_named(headers);
        for (name, value) in headers {
            if HOP_BY_HOP.contains(&name.as_str())
                || named.iter().any(|n| n == name.as_str())
                // The body was read whole: the upstream has nothing to continue.
                || name == header::EXPECT
                || (!self.trust_forwarded && FORWARDED.contains(&name.as_str()))
                || (repairing
                    && (name == header::ACCEPT_ENCODING || name == header::CONTENT_LENGTH))
            {
                continue;
            }
            out.append(name.clone(), value.clone());
        }
        if repairing {
            // Without it a server may pick any encoding, and the proxy could not read the answer.
            out.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        if let Some(key) = &self.upstream_api_key {
            // Only the header the target API reads carries the key; neither client header
            // goes on beside it.
            out.remove(header::AUTHORIZATION);
            out.remove("x-api-key");
            match Api::of_path(uri.path()) {
                Api::Anthropic => {
                    if let Ok(v) = HeaderValue::from_str(key) {
                        out.insert(HeaderName::from_static("x-api-key"), sensitive(v));
                    }
                }
                Api::OpenAi | Api::Responses | Api::Ollama => {
                    if let Ok(v) = HeaderValue::from_str(&format!("Bearer {key}")) {
                        out.insert(header::AUTHORIZATION, sensitive(v));
                    }
                }
            }
        }
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.url(uri)?;
        *request.headers_mut() = out;
        self.client
            .send(request, repairing)
            .await
            .map_err(|e| upstream_error(&e))
    }
}

/// The credentials of an `Authorization: Bearer …` value, the scheme matched in any case
/// (RFC 9110 §11.1).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| rest.trim_ascii_start())
}

fn sensitive(mut value: HeaderValue) -> HeaderValue {
    value.set_sensitive(true);
    value
}

/// The proxy error for a failed upstream request (the error text never holds headers nor
/// the upstream URL).
pub(crate) fn upstream_error(error: &UpstreamError) -> ProxyError {
    match error {
        UpstreamError::Timeout => ProxyError::UpstreamTimeout,
        UpstreamError::Failed(text) => ProxyError::UpstreamUnreachable(text.clone()),
    }
}

/// The response headers to send back: all but hop-by-hop ones and, when the body may change,
/// its length.
pub(crate) fn response_headers(from: &HeaderMap, body_may_change: bool) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(from.len());
    let named = connection_named(from);
    for (name, value) in from {
        if HOP_BY_HOP.contains(&name.as_str())
            || named.iter().any(|n| n == name.as_str())
            || (body_may_change && name == header::CONTENT_LENGTH)
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// [`response_headers`] done in place on headers the caller owns: the same headers kept,
/// none copied.
pub(crate) fn strip_response_headers(mut headers: HeaderMap, body_may_change: bool) -> HeaderMap {
    let named = connection_named(&headers);
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        if headers.contains_key(name) {
            headers.remove(name);
        }
    }
    if body_may_change {
        headers.remove(header::CONTENT_LENGTH);
    }
    headers
}

/// The `Content-Encoding` of a response the proxy could not decode (one other than
/// `identity` left after the decoding client), `None` when the body is plain.
pub(crate) fn undecoded_encoding(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::CONTENT_ENCODING)?;
    let text = value.to_str().unwrap_or("?").trim();
    (!text.is_empty() && !text.eq_ignore_ascii_case("identity")).then_some(text)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether a body is a stream of events: SSE, or Ollama's NDJSON.
pub(crate) fn is_streamed(headers: &HeaderMap) -> bool {
    is_type(headers, "text/event-stream") || is_type(headers, "application/x-ndjson")
}

/// Whether the content type is `kind`.
pub(crate) fn is_type(headers: &HeaderMap, kind: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream(root: &str) -> Upstream {
        Upstream::new(&ProxyConfig::new(root)).unwrap()
    }

    #[test]
    fn url_appends_the_path_and_never_doubles_v1() {
        let url = |root: &str, path: &str| {
            let uri: Uri = path.parse().unwrap();
            upstream(root).url(&uri).unwrap().to_string()
        };
        let chat = "/v1/chat/completions?x=1";
        assert_eq!(
            url("http://h:8000", chat),
            "http://h:8000/v1/chat/completions?x=1"
        );
        assert_eq!(
            url("http://h:8000/v1/", chat),
            "http://h:8000/v1/chat/completions?x=1"
        );
        assert_eq!(url("http://h/v1", "/v1?x=1"), "http://h/v1?x=1");
        assert_eq!(url("http://h/v1", "/api/tags"), "http://h/api/tags");
        assert_eq!(url("http://h", "/api/tags"), "http://h/api/tags");
        assert_eq!(
            url("https://h/prefix/v1", "/v1/models"),
            "https://h/prefix/v1/models"
        );
        assert_eq!(
            url("http://h/v1", "/v1beta/models"),
            "http://h/v1/v1beta/models"
        );
    }

    #[test]
    fn a_fixed_path_gets_the_url_it_would_get() {
        for root in ["http://h:8000", "http://h/v1/", "https://h/prefix/v1"] {
            let fixed = upstream(root)
                .with_fixed_paths(&["/v1/chat/completions", "/api/chat"])
                .unwrap();
            for path in [
                "/v1/chat/completions",
                "/api/chat",
                "/v1/chat/completions?x=1",
                "/v1/messages",
            ] {
                let uri: Uri = path.parse().unwrap();
                assert_eq!(fixed.url(&uri).unwrap(), upstream(root).url(&uri).unwrap());
            }
        }
    }

    #[test]
    fn an_upstream_root_that_is_no_http_url_is_refused() {
        for root in ["", "h:8000", "ftp://h", "http://h/x?q=1", "/v1"] {
            assert!(
                Upstream::new(&ProxyConfig::new(root)).is_err(),
                "{root:?} was taken"
            );
        }
        assert!(Upstream::new(&ProxyConfig::new("https://api.example.com/v1")).is_ok());
    }

    #[test]
    fn proxy_key_is_checked_and_removed() {
        let mut config = ProxyConfig::new("http://h");
        config.api_key = Some("k1".into());
        let up = Upstream::new(&config).unwrap();
        let mut headers = HeaderMap::new();
        assert!(up.authorize("/", &mut headers).is_err());
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k1"));
        assert!(up.authorize("/", &mut headers).is_ok());
        assert!(headers.get(header::AUTHORIZATION).is_none());
        headers.insert("x-api-key", HeaderValue::from_static("k2"));
        assert!(up.authorize("/", &mut headers).is_err());
        // The scheme in any case; both headers holding the key are removed.
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("bEARER k1"));
        headers.insert("x-api-key", HeaderValue::from_static("k1"));
        assert!(up.authorize("/", &mut headers).is_ok());
        assert!(headers.is_empty(), "{headers:?}");
    }
}
