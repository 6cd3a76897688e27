//! Reading a client's request body within the proxy's size, time and rate limits.
//!
//! A body that trickles in holds a connection, and with it whatever the proxy has committed to
//! the request; every body must keep coming (no gap longer than the body timeout) and keep an
//! average rate once its first body timeout has passed, or it gets a 408.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, header};
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::config::ProxyLimits;
use crate::error::ProxyError;

/// Refuses a declared `Content-Length` over the limit before anything is read (so no
/// `100 Continue` is sent for a body that would be refused).
pub(crate) fn check_declared_length(
    headers: &HeaderMap,
    limits: &ProxyLimits,
) -> Result<(), ProxyError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = limits.max_request_bytes;
    match declared {
        Some(n) if n > u64::try_from(limit).unwrap_or(u64::MAX) => {
            Err(ProxyError::RequestTooLarge(limit))
        }
        _ => Ok(()),
    }
}

/// Reads a request body whole within [`ProxyLimits::max_request_bytes`] (413 past it), no
/// gap longer than [`ProxyLimits::body_read_timeout`] and an average of at least
/// [`ProxyLimits::min_body_rate`] bytes per second after the first body timeout (408).
pub(crate) async fn read_body(body: Body, limits: &ProxyLimits) -> Result<Bytes, ProxyError> {
    let started = Instant::now();
    let limit = limits.max_request_bytes;
    let mut chunks = body.into_data_stream();
    let mut out = Gathered::default();
    loop {
        // A chunk already there (a body that came with its head) arms no timer.
        let next = match chunks.next().now_or_never() {
            Some(next) => next,
            None => {
                // Each byte received buys 1/rate seconds beyond the first body timeout.
                let earned = match limits.min_body_rate {
                    0 => Duration::MAX,
                    rate => Duration::from_secs_f64(out.len() as f64 / rate as f64),
                };
                let deadline = limits.body_read_timeout.saturating_add(earned);
                let wait = deadline
                    .saturating_sub(started.elapsed())
                    .min(limits.body_read_timeout);
                match tokio::time::timeout(wait, chunks.next()).await {
                    Err(_) => return Err(ProxyError::BodyTimeout),
                    Ok(next) => next,
                }
            }
        };
        let chunk = match next {
            None => return Ok(out.freeze()),
            Some(Err(e)) => return Err(ProxyError::BadRequestBody(e.to_string())),
            Some(Ok(chunk)) => chunk,
        };
        if out.len() + chunk.len() > limit {
            return Err(ProxyError::RequestTooLarge(limit));
        }
        out.push(chunk);
    }
}

/// Chunks gathered into one body; a body that came as one chunk is that chunk, not a copy.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    first: Option<Bytes>,
    rest: BytesMut,
}

impl Gathered {
    /// The bytes gathered so far.
    pub(crate) fn len(&self) -> usize {
        self.first.as_ref().map_or(0, Bytes::len) + self.rest.len()
    }

    /// Whether nothing was gathered.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a chunk: the first is held as it is, a second copies both into one buffer.
    pub(crate) fn push(&mut self, chunk: Bytes) {
        if self.is_empty() {
            self.first = Some(chunk);
            return;
        }
        if let Some(first) = self.first.take() {
            self.rest.extend_from_slice(&first);
        }
        self.rest.extend_from_slice(&chunk);
    }

    /// The whole body.
    pub(crate) fn freeze(self) -> Bytes {
        match self.first {
            Some(first) => first,
            None => self.rest.freeze(),
        }
    }
}

/// The fields of a request body the proxy reads; the body itself is forwarded as received.
#[derive(Debug, Deserialize)]
pub(crate) struct RequestView<'a> {
    #[serde(borrow, default)]
    pub(crate) tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) messages: Option<&'a RawValue>,
    /// The Responses API's history (a string or a list of items).
    #[serde(borrow, default)]
    pub(crate) input: Option<&'a RawValue>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_is_kept_and_more_are_joined() {
        let mut one = Gathered::default();
        assert!(one.is_empty());
        let chunk = Bytes::from_static(b"abc");
        one.push(chunk.clone());
        let kept = one.freeze();
        assert_eq!(kept.as_ptr(), chunk.as_ptr(), "one chunk is not copied");
        let mut three = Gathered::default();
        for part in [&b"ab"[..], b"", b"cd"] {
            three.push(Bytes::copy_from_slice(part));
        }
        assert_eq!(three.len(), 4);
        assert_eq!(&three.freeze()[..], b"abcd");
    }
}
