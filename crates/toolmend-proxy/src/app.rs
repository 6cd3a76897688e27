//! The router: repair routes, health, metrics, and verbatim forwarding of every other path.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument;

use crate::body::RequestView;
use crate::cache::MenderCache;
use crate::config::ProxyConfig;
use crate::error::{Api, ConfigError, ProxyError};
use crate::history::history_of;
use crate::mend::REPAIRS_HEADER;
use crate::routes::{anthropic, ollama, openai, responses};
use crate::upstream::{Upstream, is_streamed, is_type, response_headers};

#[cfg(test)]
mod timing;

/// Shared state of one router.
#[derive(Debug)]
pub(crate) struct AppState {
    /// Shared with every stream of this router (`stream::Context`, `stream::reprompt`).
    pub(crate) config: Arc<ProxyConfig>,
    pub(crate) upstream: Arc<Upstream>,
    pub(crate) cache: MenderCache,
    permits: Arc<Semaphore>,
}

/// Builds the proxy's router for a configuration, without binding a socket.
///
/// # Errors
///
/// When the upstream client cannot be built (no TLS backend).
pub fn app(config: ProxyConfig) -> Result<Router, ConfigError> {
    Ok(Dispatch::new(config)?.router)
}

/// The proxy's request handler as `serve` runs it: the four repaired routes matched directly
/// on their method and path, every other request through the [`Router`].
///
/// The router's path-normalising middleware and its routing boxed two futures and matched the
/// path twice per request (issue #29 §3). A repaired route's path is one of four literals,
/// which normalise to themselves, so they skip nothing the middleware would do: the same
/// handler answers them either way, and any other path (dot segments, a trailing `/`, another
/// method) takes the router as before.
#[derive(Debug, Clone)]
pub(crate) struct Dispatch {
    state: Arc<AppState>,
    router: Router,
}

impl Dispatch {
    /// The handler for a configuration.
    ///
    /// # Errors
    ///
    /// When the upstream client cannot be built (no TLS backend).
    pub(crate) fn new(config: ProxyConfig) -> Result<Self, ConfigError> {
        let (state, router) = state_and_router(config)?;
        Ok(Self { state, router })
    }

    /// The repaired route a request is for, `None` for any other (left to the router).
    fn repaired_route(request: &Request) -> Option<Api> {
        if request.method() != axum::http::Method::POST {
            return None;
        }
        let path = request.uri().path();
        REPAIRED_ROUTES
            .iter()
            .find(|(route, _)| *route == path)
            .map(|&(_, api)| api)
    }

    /// Answers one request.
    pub(crate) async fn call(&self, request: Request) -> Response {
        match Self::repaired_route(&request) {
            Some(api) => repair_route(Arc::clone(&self.state), api, request).await,
            None => {
                let mut router = self.router.clone();
                match tower_service::Service::call(&mut router, request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                }
            }
        }
    }
}

/// The repaired routes (`POST` only) and the API each speaks: the router's table and
/// [`Dispatch`]'s direct match both read it.
const REPAIRED_ROUTES: [(&str, Api); 4] = [
    ("/v1/chat/completions", Api::OpenAi),
    ("/v1/messages", Api::Anthropic),
    ("/v1/responses", Api::Responses),
    ("/api/chat", Api::Ollama),
];

/// The shared state and the router for a configuration.
fn state_and_router(config: ProxyConfig) -> Result<(Arc<AppState>, Router), ConfigError> {
    let upstream =
        Upstream::new(&config).map_err(|e| ConfigError(format!("upstream client: {e}")))?;
    let upstream = upstream
        .with_fixed_paths(&REPAIRED_ROUTES.map(|(path, _)| path))
        .map_err(|e| ConfigError(format!("upstream URL: {e}")))?;
    let state = Arc::new(AppState {
        cache: MenderCache::new(
            config.limits.tool_cache_entries,
            config.limits.tool_cache_bytes,
            config.recover,
        ),
        permits: Arc::new(Semaphore::new(config.limits.max_concurrent_requests.max(1))),
        upstream: Arc::new(upstream),
        config: Arc::new(config),
    });
    // Installed at build time so `/metrics` lists the series from the first request on.
    let _ = crate::metrics::handle();
    let routes = REPAIRED_ROUTES
        .iter()
        .fold(Router::new(), |routes, &(path, api)| {
            let handler = move |State(state): State<Arc<AppState>>, request: Request| {
                repair_route(state, api, request)
            };
            routes.route(path, post(handler))
        })
        .route("/healthz", get(|| async { "ok" }))
        .route("/metrics", get(metrics))
        .fallback(passthrough)
        .with_state(Arc::clone(&state));
    // Outside the routes, so a path is normalised before it is routed.
    let router = Router::new()
        .fallback_service(routes)
        .layer(middleware::from_fn(normalise_path));
    Ok((state, router))
}

/// Resolves the dot segments of the request path (escaped ones too) before routing, and
/// answers 400 for a path that would climb above the upstream root: it is never forwarded.
async fn normalise_path(mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let normal = match crate::path::normalise_path(path) {
        Ok(Cow::Borrowed(_)) => return next.run(request).await,
        Ok(Cow::Owned(normal)) => normal,
        Err(_) => {
            tracing::info!(path, "request path climbs above the upstream root: refused");
            return ProxyError::PathEscapes.into_api_response(Api::of_path(path));
        }
    };
    let target = match request.uri().query() {
        Some(query) => format!("{normal}?{query}"),
        None => normal,
    };
    match target.parse() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return ProxyError::PathEscapes.into_api_response(Api::of_path(path)),
    }
    next.run(request).await
}

/// A slot among the requests in flight, taken once the request's body is read (a client
/// still sending holds none); 503 in the API's shape when all are taken.
fn admit(state: &AppState) -> Result<OwnedSemaphorePermit, ProxyError> {
    Arc::clone(&state.permits)
        .try_acquire_owned()
        .map_err(|_| ProxyError::Overloaded(state.config.limits.max_concurrent_requests))
}

/// The response, holding its slot until a streamed body ends or the client goes away.
fn hold(permit: OwnedSemaphorePermit, response: Response) -> Response {
    if !is_streamed(response.headers()) {
        return response;
    }
    // A stream counts as in flight until its body ends or the client goes away.
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// Prometheus text; with `metrics_need_key`, only for a client presenting the proxy key.
async fn metrics(State(state): State<Arc<AppState>>, mut headers: HeaderMap) -> Response {
    if state.config.metrics_need_key
        && let Err(e) = state.upstream.check_key(&mut headers)
    {
        return e.into_api_response(Api::OpenAi);
    }
    match crate::metrics::handle() {
        Some(handle) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            handle.render(),
        )
            .into_response(),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "another metrics recorder is installed in this process\n",
        )
            .into_response(),
    }
}

/// Handles one request of a repaired route in its `request` span (`route` is the route's
/// label, `model` is filled in once the body is read), and records its metrics.
async fn repair_route(state: Arc<AppState>, api: Api, request: Request) -> Response {
    let route = api.route_label();
    let span = tracing::info_span!("request", route, model = tracing::field::Empty);
    async move {
        let started = Instant::now();
        let response = repair_route_inner(&state, api, request).await;
        crate::metrics::record_request(
            route,
            response.status().as_u16(),
            started.elapsed().as_secs_f64(),
        );
        response
    }
    .instrument(span)
    .await
}

async fn repair_route_inner(state: &Arc<AppState>, api: Api, request: Request) -> Response {
    let config = &state.config;
    let (mut parts, body) = request.into_parts();
    if let Err(e) = state
        .upstream
        .authorize(parts.uri.path(), &mut parts.headers)
    {
        return e.into_api_response(api);
    }
    if let Err(e) = crate::body::check_declared_length(&parts.headers, &config.limits) {
        return e.into_api_response(api);
    }
    let bytes = match crate::body::read_body(body, &config.limits).await {
        Ok(bytes) => bytes,
        Err(e) => return e.into_api_response(api),
    };
    let permit = match admit(state) {
        Ok(permit) => permit,
        Err(e) => return e.into_api_response(api),
    };
    let response = repair_read(state, api, &parts, bytes).await;
    hold(permit, response)
}

/// A repair route's request once its body is read.
async fn repair_read(
    state: &Arc<AppState>,
    api: Api,
    parts: &axum::http::request::Parts,
    bytes: Bytes,
) -> Response {
    let config = &state.config;
    // A `tools` text this thread read and checked before is taken by comparison.
    let view = RequestView::read(&bytes, |text| state.cache.known_tools(text));
    // A request without tools gets the `--tools` set, if there is one.
    let tools = view
        .as_ref()
        .and_then(|v| v.tools)
        .filter(|t| !matches!(t.trim(), "[]" | "null"));
    if let Some(tools) = tools
        && tools.len() > config.limits.max_tools_bytes
    {
        tracing::info!(bytes = tools.len(), "tools over the size limit: refused");
        return ProxyError::ToolsTooLarge(config.limits.max_tools_bytes).into_api_response(api);
    }
    // The operator's `--tools` set is not held to the clients' size limit. With tools of its
    // own, a request gets it as a fallback for calls of tools it lacks.
    let merged = tools.zip(config.default_tools.as_deref());
    let merged = merged.map(|(own, fallback)| crate::fallback_tools::with_fallback(own, fallback));
    // Whether the set is the request's own `tools` text as read (not merged, not `--tools`).
    let own = merged
        .as_ref()
        .is_none_or(|m| matches!(m, Cow::Borrowed(_)))
        && tools.is_some();
    let tools = merged
        .as_deref()
        .or(tools)
        .or(config.default_tools.as_deref());
    let model = view.as_ref().and_then(|v| v.model.as_deref()).unwrap_or("");
    // Compiled (or found in the cache) before the request goes out: its history is mended
    // with the same tools.
    let mender = tools.map(|tools| state.cache.get(tools, model, own));
    let sent = match &mender {
        Some(mender) if config.history == crate::config::HistoryPolicy::Repair => {
            crate::history::mend_request(api, api.route_label(), mender, &bytes)
        }
        _ => bytes.clone(),
    };
    let upstream = state
        .upstream
        .send(
            parts.method.clone(),
            &parts.uri,
            &parts.headers,
            sent.clone(),
            mender.is_some(),
        )
        .await;
    // A re-prompt (`--reprompt N` in repair mode) sends the request again.
    let reprompts = config.reprompt > 0 && crate::mend::repairing(config);
    let upstream = match upstream {
        Ok(response) => response,
        Err(e) => {
            tracing::warn!(error = %e, "upstream request failed");
            return e.into_api_response(api);
        }
    };
    if view.is_none() {
        return pass_response(upstream);
    }
    if !upstream.status().is_success() {
        return pass_response(upstream);
    }
    if let Some(encoding) = crate::upstream::undecoded_encoding(upstream.headers()) {
        tracing::info!(
            encoding,
            "upstream answer in an encoding the proxy cannot decode"
        );
        crate::metrics::count_uninspected(api.route_label(), "content_encoding");
        return pass_response(upstream);
    }
    let Some(mender) = mender else {
        return untooled(api, upstream, config.limits.max_response_bytes).await;
    };
    tracing::Span::current().record("model", model);
    if mender.tools().is_empty() {
        return pass_response(upstream);
    }
    // What makes this response's turn unique in its conversation (the history grows with each
    // turn): recovered calls' ids derive from it, so they never repeat across turns.
    let turn_id = crate::mend::request_tag(&bytes);
    let history = history_of(api, sent.clone());
    let streamed = match api {
        Api::Ollama => is_type(upstream.headers(), "application/x-ndjson"),
        _ => is_type(upstream.headers(), "text/event-stream"),
    };
    if streamed && reprompts {
        let status = upstream.status();
        let headers = response_headers(upstream.headers(), true);
        let prompted = crate::stream::reprompt::Prompted {
            api,
            config: Arc::clone(&state.config),
            upstream: Arc::clone(&state.upstream),
            mender,
            model: model.to_owned(),
            request: sent,
            parts: parts.clone(),
        };
        let stream = crate::stream::reprompt::respond(prompted, upstream);
        return build(status, headers, Body::from_stream(stream));
    }
    if streamed {
        let status = upstream.status();
        let headers = response_headers(upstream.headers(), true);
        let stream = crate::stream::transform(
            api,
            upstream.bytes_stream(),
            mender,
            Arc::clone(&state.config),
            model.to_owned(),
            turn_id,
            Box::new(history),
        );
        return build(status, headers, Body::from_stream(stream));
    }

    let (status, headers, mut chunks) = upstream.into_parts();
    let mut body = crate::body::Gathered::default();
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(chunk) if body.len() + chunk.len() > config.limits.max_response_bytes => {
                // Too large to repair: forward what arrived and the rest as received (decoded,
                // when it came compressed: held no longer than one chunk).
                tracing::warn!("response over the buffering limit, forwarded unrepaired");
                crate::metrics::count_uninspected(api.route_label(), "too_large");
                body.push(chunk);
                let head = futures_util::stream::once(async move { Ok(body.freeze()) });
                let stream = head.chain(chunks.map(|c| c.map_err(cut_error)));
                return build(
                    status,
                    response_headers(&headers, true),
                    Body::from_stream(stream),
                );
            }
            Ok(chunk) => body.push(chunk),
            Err(e) => {
                // Cut mid-body: nothing was sent yet. With nothing read, a 502; else what
                // arrived, then the connection is closed (the client sees the cut, as it would
                // from the upstream itself; the upstream's length is not kept).
                let error = crate::upstream::upstream_error(&e);
                tracing::warn!(%error, "upstream body cut");
                crate::metrics::count_uninspected(api.route_label(), "upstream_cut");
                if body.is_empty() {
                    return error.into_api_response(api);
                }
                let head = futures_util::stream::once(async move { Ok(body.freeze()) });
                let stream =
                    head.chain(futures_util::stream::once(async move { Err(cut_error(e)) }));
                return build(
                    status,
                    response_headers(&headers, true),
                    Body::from_stream(stream),
                );
            }
        }
    }
    let body = body.freeze();
    drop(history);
    let cx = crate::mend::BodyContext {
        mender: &mender,
        config,
        model,
        turn_id: &turn_id,
    };
    let mut answer = repair_buffered(api, &cx, &sent, body, reprompts);
    let mut headers = headers;
    let mut status = status;
    let mut spent = 0u8;
    let mut request = sent.clone();
    // Re-prompts: while a call could not be saved, ask again with its retry message.
    while spent < config.reprompt && !answer.notes.unsaved.is_empty() {
        let Some(original) = answer.original.as_ref() else {
            break;
        };
        let Some(next) = serde_json::from_slice::<serde_json::Value>(&request)
            .ok()
            .and_then(|r| crate::reprompt::follow_up(api, &r, original, &answer.notes.unsaved))
            .and_then(|r| serde_json::to_vec(&r).ok())
        else {
            break;
        };
        spent += 1;
        let next = Bytes::from(next);
        let Some((next_status, next_headers, next_body)) =
            send_buffered(state, parts, next.clone()).await
        else {
            crate::metrics::count_reprompt(api.route_label(), "upstream_error");
            break;
        };
        let turn_id = crate::mend::request_tag(&next);
        let cx = crate::mend::BodyContext {
            turn_id: &turn_id,
            ..cx
        };
        let next_answer = repair_buffered(api, &cx, &next, next_body, true);
        if next_answer.original.is_none() {
            crate::metrics::count_reprompt(api.route_label(), "upstream_error");
            break;
        }
        let outcome = if next_answer.notes.unsaved.is_empty() {
            "fixed"
        } else {
            "unsaved"
        };
        crate::metrics::count_reprompt(api.route_label(), outcome);
        (answer, status, headers, request) = (next_answer, next_status, next_headers, next);
    }
    let mut out_headers = crate::upstream::strip_response_headers(headers, answer.changed);
    if let Some(value) = answer.notes.header() {
        out_headers.insert(REPAIRS_HEADER, value);
    }
    if spent > 0 {
        out_headers.insert(crate::reprompt::REPROMPTS_HEADER, u16::from(spent).into());
    }
    build(status, out_headers, Body::from(answer.body))
}

/// A response to a request with no tools (and no `--tools`): passed as received, its calls
/// counted (read from a non-streaming body within the buffering limit).
async fn untooled(api: Api, upstream: crate::upstream::Response, limit: usize) -> Response {
    let route = api.route_label();
    if is_streamed(upstream.headers()) {
        crate::metrics::count_untooled(route, None);
        return pass_response(upstream);
    }
    let status = upstream.status();
    let headers = response_headers(upstream.headers(), false);
    let mut body = BytesMut::new();
    let mut chunks = upstream.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(chunk) if body.len() + chunk.len() > limit => {
                crate::metrics::count_untooled(route, None);
                body.extend_from_slice(&chunk);
                let head = futures_util::stream::once(async move { Ok(body.freeze()) });
                let rest = chunks.take_while(|c| std::future::ready(c.is_ok()));
                return build(status, headers, Body::from_stream(head.chain(rest)));
            }
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(_) => break,
        }
    }
    let body = body.freeze();
    let calls = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .map(|value| native_calls(api, &value));
    crate::metrics::count_untooled(route, calls);
    build(status, headers, Body::from(body))
}

/// How many native calls a response body holds.
fn native_calls(api: Api, body: &serde_json::Value) -> usize {
    let count = |items: Option<&serde_json::Value>, kind: Option<&str>| {
        items
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter(|i| kind.is_none_or(|k| i.get("type").and_then(|t| t.as_str()) == Some(k)))
            .count()
    };
    match api {
        Api::OpenAi => body
            .get("choices")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| count(c.pointer("/message/tool_calls"), None))
            .sum(),
        Api::Anthropic => count(body.get("content"), Some("tool_use")),
        Api::Responses => count(body.get("output"), Some("function_call")),
        Api::Ollama => count(body.pointer("/message/tool_calls"), None),
    }
}

/// What became of one buffered response body.
struct Buffered {
    body: Bytes,
    notes: crate::mend::Annotations,
    changed: bool,
    /// The body as the upstream sent it, parsed (kept for a re-prompt; `None` when not JSON).
    original: Option<serde_json::Value>,
}

/// Repairs one buffered response body to the request `request`.
fn repair_buffered(
    api: Api,
    cx: &crate::mend::BodyContext<'_>,
    request: &Bytes,
    body: Bytes,
    keep_original: bool,
) -> Buffered {
    let work = Instant::now();
    if api == Api::OpenAi && !keep_original {
        // Read from the bytes: a valid body goes out as received, its tree never built.
        let history = history_of(api, request.clone());
        if let Ok(read) = crate::routes::openai_bytes::repair_completion(&body, cx, history) {
            let changed = read.repaired.is_some();
            let body = read
                .repaired
                .and_then(|tree| serde_json::to_vec(&tree).ok())
                .map_or(body, Bytes::from);
            crate::metrics::record_overhead(api.route_label(), work.elapsed().as_secs_f64());
            return Buffered {
                body,
                notes: read.notes,
                changed,
                original: None,
            };
        }
    }
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&body) else {
        crate::metrics::count_uninspected(api.route_label(), "not_json");
        return Buffered {
            body,
            notes: crate::mend::Annotations::default(),
            changed: false,
            original: None,
        };
    };
    let original = keep_original.then(|| value.clone());
    let history = history_of(api, request.clone());
    let (notes, changed) = match api {
        Api::OpenAi => openai::repair_completion(&mut value, cx, history),
        Api::Anthropic => anthropic::repair_message(&mut value, cx, history),
        Api::Responses => responses::repair_response(&mut value, cx, history),
        Api::Ollama => ollama::repair_chat(&mut value, cx, history),
    };
    let body = if changed {
        serde_json::to_vec(&value).map_or(body, Bytes::from)
    } else {
        body
    };
    crate::metrics::record_overhead(api.route_label(), work.elapsed().as_secs_f64());
    Buffered {
        body,
        notes,
        changed,
        original,
    }
}

/// Sends a re-prompt upstream and reads its whole answer; `None` when it fails, is not a
/// success, is streamed or is over the buffering limit.
async fn send_buffered(
    state: &Arc<AppState>,
    parts: &axum::http::request::Parts,
    body: Bytes,
) -> Option<(StatusCode, HeaderMap, Bytes)> {
    let upstream = state.upstream.send_follow_up(parts, body).await?;
    if is_streamed(upstream.headers()) {
        return None;
    }
    let status = upstream.status();
    let headers = upstream.headers().clone();
    let limit = state.config.limits.max_response_bytes;
    let mut out = BytesMut::new();
    let mut chunks = upstream.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.ok()?;
        if out.len() + chunk.len() > limit {
            return None;
        }
        out.extend_from_slice(&chunk);
    }
    Some((status, headers, out.freeze()))
}

/// The error that ends a client body whose upstream body was cut: hyper then closes the
/// connection instead of ending the body cleanly.
fn cut_error(error: crate::upstream::UpstreamError) -> std::io::Error {
    std::io::Error::other(crate::upstream::upstream_error(&error).to_string())
}

/// A response with this status, headers and body.
fn build(status: StatusCode, headers: HeaderMap, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// The upstream response as received, streamed; a cut body ends the stream cleanly.
pub(crate) fn pass_response(upstream: crate::upstream::Response) -> Response {
    let status = upstream.status();
    let headers = response_headers(upstream.headers(), false);
    let stream = upstream
        .bytes_stream()
        .take_while(|c| std::future::ready(c.is_ok()));
    build(status, headers, Body::from_stream(stream))
}

/// Every other path: forwarded verbatim, the answer streamed (the request body is read first,
/// within the same limits as on the repair routes).
async fn passthrough(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let api = Api::of_path(request.uri().path());
    let (mut parts, body) = request.into_parts();
    if let Err(e) = state
        .upstream
        .authorize(parts.uri.path(), &mut parts.headers)
    {
        return e.into_api_response(api);
    }
    let limits = &state.config.limits;
    if let Err(e) = crate::body::check_declared_length(&parts.headers, limits) {
        return e.into_api_response(api);
    }
    // Read whole before a slot is taken, so a client trickling its body holds none.
    let body = match crate::body::read_body(body, limits).await {
        Ok(bytes) => bytes,
        Err(e) => return e.into_api_response(api),
    };
    let permit = match admit(&state) {
        Ok(permit) => permit,
        Err(e) => return e.into_api_response(api),
    };
    let response = match state
        .upstream
        .send(parts.method, &parts.uri, &parts.headers, body, false)
        .await
    {
        Ok(upstream) => pass_response(upstream),
        Err(e) => e.into_api_response(api),
    };
    hold(permit, response)
}
