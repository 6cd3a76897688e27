//! A byte-faithful SSE event splitter that tolerates arbitrary chunk boundaries.
//!
//! Events end at a blank line (`\n\n`, `\r\n\r\n`, `\r\r` or mixed). Each event keeps its raw
//! bytes, so events the proxy does not change are forwarded exactly as received. An
//! unterminated last event is flushed at the end.

use bytes::{Bytes, BytesMut};

/// One SSE event: its raw bytes (with the blank line that ended it) and its parsed fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The bytes as received.
    pub(crate) raw: Bytes,
    /// The `event:` field, if any.
    pub(crate) event: Option<Name>,
    /// The `data:` lines joined with `\n`; `None` when the event has no data line.
    pub(crate) data: Option<Data>,
}

/// An event's data: a slice of its raw bytes when it is one valid UTF-8 line (no copy), else
/// the lines joined (invalid UTF-8 replaced, as `String::from_utf8_lossy` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Data(Bytes);

/// An event's `event:` name: a slice of its raw bytes when it is valid UTF-8 (no copy), else
/// the name with invalid UTF-8 replaced (as `String::from_utf8_lossy` does). Read as a `str`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name(Bytes);

impl Name {
    /// `bytes` as a name: a slice of them when they are valid UTF-8.
    fn from_bytes(bytes: Bytes) -> Self {
        match std::str::from_utf8(&bytes) {
            Ok(_) => Self(bytes),
            Err(_) => Self(Bytes::from(String::from_utf8_lossy(&bytes).into_owned())),
        }
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        // Built only from valid UTF-8 (`from_bytes`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl Data {
    /// Data made of text.
    pub(crate) fn from_text(text: String) -> Self {
        Self(Bytes::from(text))
    }

    /// `bytes` as data: a slice of them when they are valid UTF-8.
    pub(crate) fn from_bytes(bytes: Bytes) -> Self {
        match std::str::from_utf8(&bytes) {
            Ok(_) => Self(bytes),
            Err(_) => Self::from_text(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// The data's text.
    pub(crate) fn as_str(&self) -> &str {
        // Built only from valid UTF-8 (`from_text`, `from_bytes`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl Event {
    /// The `data:` lines joined with `\n`; `None` when the event has no data line.
    pub(crate) fn data(&self) -> Option<&str> {
        self.data.as_ref().map(Data::as_str)
    }

    /// The event's JSON data and its type: the data's `type`, else the `event:` name, else
    /// empty. `None` when the event has no data or its data is not JSON.
    pub(crate) fn typed_json(&self) -> Option<(serde_json::Value, String)> {
        let value: serde_json::Value = serde_json::from_str(self.data()?).ok()?;
        let kind = value
            .get("type")
            .and_then(serde_json::Value::as_str)
            .or(self.event.as_deref())
            .unwrap_or("")
            .to_owned();
        Some((value, kind))
    }
}

/// Splits a byte stream into events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: BytesMut,
    /// Bytes of `buf` already scanned without finding the end of an event.
    scanned: usize,
    /// The previous scanned line was empty-terminated state: the last line break position.
    line_start: usize,
}

impl SseParser {
    /// Feeds bytes; returns every event they completed.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        self.buf.extend_from_slice(chunk);
        loop {
            match self.next_end() {
                Some(end) => {
                    let raw = self.buf.split_to(end).freeze();
                    self.scanned = 0;
                    self.line_start = 0;
                    out.push(parse(raw));
                }
                None => return,
            }
        }
    }

    /// [`SseParser::push`] for a chunk the caller holds as [`Bytes`]: when no partial event
    /// is buffered, the events the chunk completes are slices of it (no copy), and only its
    /// unfinished tail is buffered.
    pub(crate) fn push_bytes(&mut self, chunk: &Bytes, out: &mut Vec<Event>) {
        if !self.buf.is_empty() {
            return self.push(chunk, out);
        }
        let mut rest = chunk.clone();
        while let Some(end) = event_end(&rest, &mut self.scanned, &mut self.line_start) {
            self.scanned = 0;
            self.line_start = 0;
            out.push(parse(rest.split_to(end)));
        }
        // The scan state stays valid: the buffer starts where `rest` does.
        self.buf.extend_from_slice(&rest);
    }

    /// Ends a stream that ended cleanly: a last event without its blank line is completed with
    /// the stream's line ending, so nothing written after it is glued to it.
    pub(crate) fn finish(&mut self, out: &mut Vec<Event>) {
        if !self.buf.is_empty() {
            let mut raw = std::mem::take(&mut self.buf);
            let ending: &[u8] = if memchr::memmem::find(&raw, b"\r\n").is_some() {
                b"\r\n"
            } else if raw.contains(&b'\r') {
                b"\r"
            } else {
                b"\n"
            };
            while !ends_with_blank_line(&raw) {
                raw.extend_from_slice(ending);
            }
            self.scanned = 0;
            self.line_start = 0;
            out.push(parse(raw.freeze()));
        }
    }

    /// Ends a stream that was cut: a partial event is dropped (its data may be cut mid-JSON);
    /// returns how many bytes were dropped.
    pub(crate) fn discard(&mut self) -> usize {
        let dropped = self.buf.len();
        self.buf.clear();
        self.scanned = 0;
        self.line_start = 0;
        dropped
    }

    /// The end of the first complete event in the buffer (after its blank line).
    fn next_end(&mut self) -> Option<usize> {
        event_end(&self.buf, &mut self.scanned, &mut self.line_start)
    }
}

/// The end of the first complete event in `bytes` (after its blank line), resuming the scan at
/// `scanned` with the last line starting at `line_start` (both kept for the next call when the
/// event is not complete yet).
fn event_end(bytes: &[u8], scanned: &mut usize, line_start: &mut usize) -> Option<usize> {
    let mut i = *scanned;
    while let Some(off) = memchr::memchr2(b'\n', b'\r', &bytes[i..]) {
        let at = i + off;
        let len = match bytes[at] {
            b'\r' => match bytes.get(at + 1) {
                Some(b'\n') => 2,
                Some(_) => 1,
                // A `\r` at the end may be the first half of `\r\n`: wait.
                None => {
                    *scanned = at;
                    return None;
                }
            },
            _ => 1,
        };
        let line_empty = at == *line_start;
        i = at + len;
        *line_start = i;
        if line_empty {
            return Some(i);
        }
    }
    *scanned = bytes.len();
    None
}

/// Whether `raw` ends with an empty line (two line breaks of any kind).
fn ends_with_blank_line(raw: &[u8]) -> bool {
    let breaks = raw
        .iter()
        .rev()
        .take_while(|b| matches!(b, b'\n' | b'\r'))
        .collect::<Vec<_>>();
    let text: Vec<u8> = breaks.into_iter().rev().copied().collect();
    let lines = text.len() - memchr::memmem::find_iter(&text, b"\r\n").count();
    lines >= 2
}

/// Reads the fields of one raw event. One data line (the usual case) is a slice of `raw`.
fn parse(raw: Bytes) -> Event {
    let mut event = None;
    // The first data line's span in `raw`, and the joined text once there is a second one.
    let mut first: Option<std::ops::Range<usize>> = None;
    let mut joined: Option<String> = None;
    let mut at = 0;
    // The lines between line breaks (`\r` and `\n` each end one), the last one after the
    // last break (empty when the event ends with one), as `split` on either byte gives them.
    while at <= raw.len() {
        let start = at;
        let end = memchr::memchr2(b'\n', b'\r', &raw[at..]).map_or(raw.len(), |off| at + off);
        let line = &raw[start..end];
        at = end + 1;
        if line.is_empty() || line[0] == b':' {
            continue;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                let skip = usize::from(value.first() == Some(&b' '));
                (
                    &line[..colon],
                    (start + colon + 1 + skip)..(start + line.len()),
                )
            }
            None => (line, (start + line.len())..(start + line.len())),
        };
        match field {
            b"data" => match (&first, &mut joined) {
                (None, _) => first = Some(value),
                (Some(span), None) => {
                    let mut text = String::from_utf8_lossy(&raw[span.clone()]).into_owned();
                    text.push('\n');
                    text.push_str(&String::from_utf8_lossy(&raw[value]));
                    joined = Some(text);
                }
                (Some(_), Some(text)) => {
                    text.push('\n');
                    text.push_str(&String::from_utf8_lossy(&raw[value]));
                }
            },
            b"event" => event = Some(Name::from_bytes(raw.slice(value))),
            _ => {}
        }
    }
    let data = match (first, joined) {
        (_, Some(text)) => Some(Data::from_text(text)),
        (Some(span), None) => Some(Data::from_bytes(raw.slice(span))),
        (None, None) => None,
    };
    Event { raw, event, data }
}

/// A JSON event written as SSE named by its `type` member (`message` when it has none), the
/// framing of Anthropic's and OpenAI Responses' streams.
pub(crate) fn typed_event(value: &serde_json::Value) -> Bytes {
    let name = value
        .get("type")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("message");
    write(Some(name), &value.to_string())
}

/// An event written as SSE (`event:` line when named, one `data:` line).
pub(crate) fn write(event: Option<&str>, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(name) = event {
        out.push_str("event: ");
        out.push_str(name);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(input: &[u8], cut: usize) -> Vec<Event> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        p.push(&input[..cut], &mut out);
        p.push(&input[cut..], &mut out);
        p.finish(&mut out);
        out
    }

    /// [`split_all`] through [`SseParser::push_bytes`].
    fn split_bytes(input: &[u8], cuts: &[usize]) -> Vec<Event> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain([&input.len()]) {
            p.push_bytes(&Bytes::copy_from_slice(&input[at..cut]), &mut out);
            at = cut;
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn events_read_from_held_bytes_are_the_same_at_every_split() {
        let input = b"data: {\"a\":1}\r\n\r\n: c\n\ndata: x\ndata: y\r\rdata: \xff\n\nevent: e\ndata: [DONE]\n\n";
        let whole = split_all(input, 0);
        assert_eq!(whole.len(), 5);
        for cut in 0..=input.len() {
            assert_eq!(split_bytes(input, &[cut]), whole, "cut at {cut}");
            for second in cut..=input.len().min(cut + 9) {
                assert_eq!(
                    split_bytes(input, &[cut, second]),
                    whole,
                    "cuts {cut}, {second}"
                );
            }
        }
    }

    #[test]
    fn events_a_held_chunk_completes_are_slices_of_it() {
        let chunk = Bytes::from_static(b"data: a\n\ndata: b\n\ndata: c");
        let mut p = SseParser::default();
        let mut out = Vec::new();
        p.push_bytes(&chunk, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].raw.as_ptr(), chunk.as_ptr());
        assert_eq!(out[1].raw.as_ptr(), chunk[9..].as_ptr());
        // The unfinished tail was buffered (copied) and completes with the next chunk.
        p.push_bytes(&Bytes::from_static(b"\n\n"), &mut out);
        assert_eq!(out[2].data(), Some("c"));
        assert_eq!(out[2].raw, &b"data: c\n\n"[..]);
    }

    #[test]
    fn events_survive_every_split_point() {
        let input = b": keep-alive\n\nevent: ping\r\ndata: {\"a\":1}\r\n\r\ndata: x\ndata: y\r\rdata: [DONE]\n";
        let whole = split_all(input, 0);
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[0].data(), None);
        assert_eq!(whole[1].event.as_deref(), Some("ping"));
        assert_eq!(whole[1].data(), Some("{\"a\":1}"));
        assert_eq!(whole[2].data(), Some("x\ny"));
        assert_eq!(whole[3].data(), Some("[DONE]"));
        let joined: Vec<u8> = whole.iter().flat_map(|e| e.raw.to_vec()).collect();
        // The unterminated last event is completed with the stream's line ending.
        assert_eq!(joined, [&input[..], b"\n"].concat());
        for cut in 0..=input.len() {
            assert_eq!(split_all(input, cut), whole, "cut at {cut}");
        }
    }
}
