//! The upstream HTTP client: hyper-util's pooled client over rustls, the decoding of compressed
//! answers, the read timeouts, and the answer's body as a stream of byte chunks.
//!
//! This is the bare client the ideal hop uses (`../shared/bench/proxy/passthrough`), with what
//! reqwest gave the proxy before kept: https (webpki roots, ring), HTTP/2 when a TLS upstream
//! offers it, no redirects followed (a redirect goes back to the client), a connect timeout,
//! a read timeout on the head and on every gap in the body, and gzip/deflate/br/zstd decoding
//! for the answers the proxy reads. No URL is parsed per request and no layer is boxed per
//! request beyond what hyper-util itself does.
//!
//! Per core (`--runtime per-core`), each thread that sends gets its own pool of upstream
//! connections: hyper-util runs a connection in a task on the runtime that opened it, so a
//! pool shared by the cores' runtimes ([`crate::serve`]) would hand a request to a connection
//! driven by another thread, one cross-thread wake-up (an event-fd write and a context switch)
//! per request. On the shared runtime one pool serves every worker (pools per worker held
//! twice the idle connections, and 1–2 MB more at 64 connections, for no measured gain).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::http::{HeaderMap, Request, StatusCode, header};
use bytes::Bytes;
use futures_util::Stream;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::time::{Instant, Sleep};
use tower_http::decompression::{Decompression, DecompressionBody};
use tower_service::Service;

/// Any error below the client (connect, TLS, protocol, decoder).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why an upstream request or its body failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum UpstreamError {
    /// No head within the read timeout, or a gap in the body longer than it, or a connect
    /// that timed out.
    #[error("upstream did not answer in time")]
    Timeout,
    /// The request could not be sent or its answer not read (the text names no URL).
    #[error("{0}")]
    Failed(String),
}

impl UpstreamError {
    /// The error of a failed request or body read, with the text of its whole source chain.
    fn of(error: &(dyn std::error::Error + 'static)) -> Self {
        let mut text = error.to_string();
        let mut source = error.source();
        let mut timed_out = is_timeout(error);
        while let Some(s) = source {
            timed_out |= is_timeout(s);
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        if timed_out {
            Self::Timeout
        } else {
            Self::Failed(text)
        }
    }
}

/// Whether one error of a chain is a timeout (a connect timeout is an `io::Error`).
fn is_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut)
        || error
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_timeout)
}

/// One item of an upstream body: a chunk of bytes, or why the body ended early.
pub(crate) type BodyChunk = Result<Bytes, UpstreamError>;

/// An upstream client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ClientError(String);

impl ClientError {
    pub(crate) fn new(text: String) -> Self {
        Self(text)
    }
}

/// hyper-util's pooled client as this proxy builds it.
type Pooled = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The pooled keep-alive client (HTTP/1.1, or HTTP/2 over TLS when offered), one per router,
/// with one pool per sending thread (see the module).
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    connector: HttpsConnector<HttpConnector>,
    read_timeout: Duration,
    /// The one pool, or `None` for one per thread.
    shared: Option<Pooled>,
    /// Names this client in the threads' pool lists; they drop a pool once it is gone.
    alive: Arc<()>,
}

thread_local! {
    /// This thread's pools, one per live [`HttpClient`] that sent from it.
    static POOLS: RefCell<Vec<(Weak<()>, Pooled)>> = const { RefCell::new(Vec::new()) };
}

impl HttpClient {
    /// A client with these timeouts, TCP_NODELAY, 90 s idle connections kept; one pool per
    /// sending thread when `per_thread`, else one for all.
    pub(crate) fn new(
        connect_timeout: Duration,
        read_timeout: Duration,
        per_thread: bool,
    ) -> Result<Self, ClientError> {
        let mut tcp = HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(connect_timeout));
        // The scheme is checked by the TLS connector: `https` gets TLS, `http` none.
        tcp.enforce_http(false);
        let tls = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| ClientError::new(format!("TLS: {e}")))?
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(tcp);
        Ok(Self {
            shared: (!per_thread).then(|| pool(tls.clone())),
            connector: tls,
            read_timeout,
            alive: Arc::new(()),
        })
    }

    /// `send` on this thread's pool for this client, the pool made on the thread's first
    /// request (the pools of clients dropped since are dropped then). A dropped client's
    /// address is never reused while a thread's list still holds it (its `Weak` keeps the
    /// allocation).
    fn with_pool<T>(&self, send: impl FnOnce(&Pooled) -> T) -> T {
        if let Some(pool) = &self.shared {
            return send(pool);
        }
        POOLS.with_borrow_mut(|pools| {
            let mine = Arc::as_ptr(&self.alive);
            if let Some((_, pool)) = pools
                .iter()
                .find(|(owner, _)| std::ptr::eq(owner.as_ptr(), mine))
            {
                return send(pool);
            }
            pools.retain(|(owner, _)| owner.strong_count() > 0);
            let pool = pool(self.connector.clone());
            let sent = send(&pool);
            pools.push((Arc::downgrade(&self.alive), pool));
            sent
        })
    }

    /// Sends `request` and waits for the head within the read timeout. `decoding` decodes a
    /// gzip, deflate, br or zstd body (the answer then has no `Content-Encoding` and no
    /// `Content-Length`); otherwise the body is passed as it comes.
    pub(crate) async fn send(
        &self,
        request: Request<Full<Bytes>>,
        decoding: bool,
    ) -> Result<Response, UpstreamError> {
        let sent = self.with_pool(|pool| pool.request(request));
        let head = match tokio::time::timeout(self.read_timeout, sent).await {
            Err(_) => return Err(UpstreamError::Timeout),
            Ok(Err(e)) => return Err(UpstreamError::of(&e)),
            Ok(Ok(head)) => head,
        };
        let encoded = decoding
            && head
                .headers()
                .get(header::CONTENT_ENCODING)
                .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
        let (parts, frames) = if encoded {
            let decoded = Decompression::new(Received(Some(head)))
                .call(Request::new(()))
                .await
                .map_err(|()| UpstreamError::Failed("no answer".into()))?;
            let (parts, body) = decoded.into_parts();
            (parts, Frames::Decoded(Box::pin(body)))
        } else {
            let (parts, body) = head.into_parts();
            (parts, Frames::Plain(body))
        };
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body: BodyStream {
                frames,
                read_timeout: self.read_timeout,
                gap: None,
                armed: false,
                done: false,
            },
        })
    }
}

/// A pool of keep-alive connections over `connector`, idle ones kept 90 s.
fn pool(connector: HttpsConnector<HttpConnector>) -> Pooled {
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .build(connector)
}

/// A response already received, served once: the decoder service is put in front of it only
/// when it came compressed (tower-http builds its decoding body only through its service).
struct Received(Option<axum::http::Response<Incoming>>);

impl Service<Request<()>> for Received {
    type Response = axum::http::Response<Incoming>;
    type Error = ();
    type Future = std::future::Ready<Result<Self::Response, ()>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Request<()>) -> Self::Future {
        std::future::ready(self.0.take().ok_or(()))
    }
}

/// An upstream answer: its status and headers, and its body as it arrives.
#[derive(Debug)]
pub(crate) struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: BodyStream,
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body as a stream of chunks; a gap longer than the read timeout ends it with
    /// [`UpstreamError::Timeout`].
    pub(crate) fn bytes_stream(self) -> BodyStream {
        self.body
    }

    /// The status, the headers (moved, not copied) and the body stream.
    pub(crate) fn into_parts(self) -> (StatusCode, HeaderMap, BodyStream) {
        (self.status, self.headers, self.body)
    }
}

/// The frames of an upstream body, decoded or not.
enum Frames {
    Plain(Incoming),
    /// Boxed: a decoded body is rare, and its decoder state is large.
    Decoded(Pin<Box<DecompressionBody<Incoming>>>),
}

impl std::fmt::Debug for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plain(_) => "Plain",
            Self::Decoded(_) => "Decoded",
        })
    }
}

/// An upstream body's data chunks (trailers skipped), each gap bounded by the read timeout.
#[derive(Debug)]
pub(crate) struct BodyStream {
    frames: Frames,
    read_timeout: Duration,
    /// The gap timer, made the first time a read has to wait and reset after.
    gap: Option<Pin<Box<Sleep>>>,
    /// The gap timer runs for the current wait.
    armed: bool,
    done: bool,
}

impl BodyStream {
    /// The next frame, as the inner body gives it.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BoxError>>> {
        loop {
            let frame = match &mut self.frames {
                Frames::Plain(body) => {
                    ready!(Pin::new(body).poll_frame(cx)).map(|f| f.map_err(BoxError::from))
                }
                Frames::Decoded(body) => ready!(body.as_mut().poll_frame(cx)),
            };
            match frame {
                None => return Poll::Ready(None),
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Poll::Ready(Some(Ok(data)));
                    }
                    // Trailers: nothing the client body carries.
                }
            }
        }
    }
}

impl Stream for BodyStream {
    type Item = BodyChunk;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<BodyChunk>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        // A chunk already there arms no timer: a body that came with its head never does.
        if let Poll::Ready(item) = this.poll_frame(cx) {
            this.armed = false;
            this.done = !matches!(item, Some(Ok(_)));
            return Poll::Ready(item.map(|r| r.map_err(|e| UpstreamError::of(&*e))));
        }
        let deadline = Instant::now() + this.read_timeout;
        let gap = match &mut this.gap {
            Some(gap) => {
                if !this.armed {
                    gap.as_mut().reset(deadline);
                }
                gap
            }
            None => this
                .gap
                .insert(Box::pin(tokio::time::sleep_until(deadline))),
        };
        this.armed = true;
        if gap.as_mut().poll(cx).is_ready() {
            this.done = true;
            return Poll::Ready(Some(Err(UpstreamError::Timeout)));
        }
        Poll::Pending
    }
}
