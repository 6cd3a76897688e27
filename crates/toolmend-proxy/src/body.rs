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
use crate::spans::{Cursor, Unread, string_of};

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

/// The members of a request body the proxy reads, borrowed from it; the body itself is
/// forwarded as received.
///
/// Read in one pass over the top-level object ([`Cursor`]): the four members' spans are
/// kept, every other member is skipped (checked as JSON), nothing is decoded but a `model`
/// string holding an escape. Whatever that pass does not take (not an object, a key with an
/// escape, a repeated member of the four, a `model` that is neither a string nor `null`, bytes
/// that are not UTF-8, …) is read by serde as before ([`SerdeView`]), so both readings accept
/// the same bodies and give the same members (`tests` holds them side by side).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RequestView<'a> {
    /// `tools`'s JSON text (`None` when absent or `null`).
    pub(crate) tools: Option<&'a str>,
    /// The `model` string (`None` when absent or `null`).
    pub(crate) model: Option<Cow<'a, str>>,
    /// `messages`'s JSON text (`None` when absent or `null`).
    pub(crate) messages: Option<&'a str>,
    /// The Responses API's history (a string or a list of items), as JSON text.
    pub(crate) input: Option<&'a str>,
}

impl<'a> RequestView<'a> {
    /// The members of `body`; `None` when it is not a JSON document serde reads as a request
    /// (the proxy then forwards it and its answer unread). `known` gives the length of a
    /// `tools` text read and checked before that the text at the member's value starts with
    /// (`MenderCache::known_tools`): those bytes are taken by comparison, not checked again.
    pub(crate) fn read(body: &'a [u8], known: impl Fn(&str) -> Option<usize>) -> Option<Self> {
        match std::str::from_utf8(body)
            .ok()
            .map(|text| Self::one_pass(text, known))
        {
            Some(Ok(view)) => Some(view),
            _ => SerdeView::read(body),
        }
    }

    /// The one pass over an object whose four members' keys hold no escape and do not repeat.
    fn one_pass(text: &'a str, known: impl Fn(&str) -> Option<usize>) -> Result<Self, Unread> {
        let mut view = Self::default();
        // Which of the four were seen (serde refuses a repeated field; so does this, by
        // handing the body to serde).
        let mut seen = [false; 4];
        let mut cursor = Cursor::new(text);
        if cursor.peek() != Some(b'{') {
            return Err(Unread);
        }
        cursor.object(|cursor, key| {
            let slot = match key.ok_or(Unread)? {
                "tools" => 0,
                "model" => 1,
                "messages" => 2,
                "input" => 3,
                _ => return cursor.value().map(drop),
            };
            if std::mem::replace(&mut seen[slot], true) {
                return Err(Unread);
            }
            let known = if slot == 0 {
                known(cursor.rest())
            } else {
                None
            };
            let value = match known {
                Some(len) => cursor.take_checked(len).ok_or(Unread)?,
                None => cursor.value()?,
            };
            let value = (value != "null").then_some(value);
            match slot {
                0 => view.tools = value,
                1 => view.model = value.map(model_of).transpose()?,
                2 => view.messages = value,
                _ => view.input = value,
            }
            Ok(())
        })?;
        cursor.end()?;
        Ok(view)
    }
}

/// A `model` value's string: serde refuses anything but a string (or `null`, taken before).
fn model_of(text: &str) -> Result<Cow<'_, str>, Unread> {
    string_of(text)?.ok_or(Unread)
}

/// [`RequestView`] as serde reads it: the reading for every body the one pass does not take.
#[derive(Debug, Deserialize)]
pub(crate) struct SerdeView<'a> {
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

impl<'a> SerdeView<'a> {
    pub(crate) fn read(body: &'a [u8]) -> Option<RequestView<'a>> {
        let view = serde_json::from_slice::<Self>(body).ok()?;
        Some(RequestView {
            tools: view.tools.map(RawValue::get),
            model: view.model,
            messages: view.messages.map(RawValue::get),
            input: view.input.map(RawValue::get),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Request bodies of every shape the two readings must agree on.
    fn bodies() -> Vec<Vec<u8>> {
        let bench = br#"{"model":"mock-gpt","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What's the weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}],"tool_choice":"auto","stream":false}"#;
        let mut out: Vec<Vec<u8>> = [
            &bench[..],
            b"{}",
            b" { } \n",
            br#"{"tools":null,"model":null,"messages":null,"input":null}"#,
            br#"{"tools":[],"model":"m","input":"hi"}"#,
            br#"{"tools" : [ 1 , 2 ] , "model" : "m" }"#,
            br#"{"model":"caf\u00e9 \"q\""}"#,
            br#"{"model":"\ud800"}"#,
            br#"{"model":5}"#,
            br#"{"model":["m"]}"#,
            br#"{"model":"a","model":"b"}"#,
            br#"{"tools":[],"tools":[]}"#,
            br#"{"messages":[],"messages":null}"#,
            br#"{"other":1,"other":2,"model":"m"}"#,
            br#"{"tool\u0073":[{"name":"a"}],"model":"m"}"#,
            br#"{"x\n":1,"model":"m"}"#,
            br#"{"stream":true,"n":-1.5e3,"f":false,"o":{"a":[null,{}]},"model":"m"}"#,
            br#"["tools","m",null,null]"#,
            b"[]",
            b"null",
            b"\"text\"",
            b"",
            b"{",
            br#"{"model":"m"} x"#,
            br#"{"model":"m",}"#,
            br#"{"model":"m" "tools":[]}"#,
            br#"{"tools":[01]}"#,
            br#"{"tools":"\x"}"#,
            b"{\"model\":\"a\tb\"}",
            b"{\"model\":\"m\",\"other\":\"\xff\"}",
            b"{\"model\":\"\xff\"}",
            b"\xef\xbb\xbf{}",
        ]
        .iter()
        .map(|b| b.to_vec())
        .collect();
        let deep = |n: usize| format!(r#"{{"model":"m","x":{}{}}}"#, "[".repeat(n), "]".repeat(n));
        out.extend([deep(126), deep(127), deep(128)].map(String::into_bytes));
        out
    }

    #[test]
    fn the_one_pass_reads_what_serde_reads() {
        let mut taken = 0;
        for body in bodies() {
            let serde = SerdeView::read(&body);
            assert_eq!(
                RequestView::read(&body, |_| None),
                serde,
                "{}",
                String::from_utf8_lossy(&body)
            );
            let one_pass = std::str::from_utf8(&body)
                .ok()
                .map(|text| RequestView::one_pass(text, |_| None));
            if let Some(Ok(view)) = one_pass {
                assert_eq!(Some(view), serde, "{}", String::from_utf8_lossy(&body));
                taken += 1;
            }
        }
        // The one pass takes the common shapes, not only the serde fallback.
        assert!(taken >= 10, "{taken}");
        let bodies = bodies();
        let bench = RequestView::read(&bodies[0], |_| None).unwrap();
        assert!(matches!(bench.model, Some(Cow::Borrowed("mock-gpt"))));
        assert!(bench.tools.unwrap().starts_with(r#"[{"type""#));
    }

    #[test]
    fn a_known_tools_text_is_taken_as_it_stands_and_the_rest_still_checked() {
        let tools = r#"[{"name":"a"}]"#;
        let known = |text: &str| text.starts_with(tools).then_some(tools.len());
        for body in [
            format!(r#"{{"tools":{tools},"model":"m"}}"#),
            format!(r#"{{"model":"m", "tools" : {tools} }}"#),
            format!(r#"{{"tools":{tools}]}}"#),
            format!(r#"{{"tools":{tools},"model":5}}"#),
            format!(r#"{{"tools":{tools},"x":[}}"#),
            format!(r#"{{"tools":{tools},"tools":{tools}}}"#),
            format!(r#"{{"tools":[{tools}]}}"#),
            format!(r#"{{"x":{tools}}}"#),
        ] {
            let serde = SerdeView::read(body.as_bytes());
            assert_eq!(RequestView::read(body.as_bytes(), known), serde, "{body}");
        }
        let body = format!(r#"{{"tools":{tools},"model":"m"}}"#);
        assert_eq!(
            RequestView::read(body.as_bytes(), known).unwrap().tools,
            Some(tools)
        );
    }

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
