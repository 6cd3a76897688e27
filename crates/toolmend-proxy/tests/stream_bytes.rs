//! Chat Completions streams read from their bytes (issue #29 §3): a stream that needs no repair
//! reaches the client byte-identical however the upstream cut it, in every SSE spelling the
//! span reader meets (CRLF, `data:` without a space, comments, non-JSON data, unicode
//! escapes, several events in one chunk); a stream that is repaired gives the same bytes
//! whatever its cuts. (Every split point is in `stream::openai`'s unit tests, without sockets.)

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use support::{Script, join_openai, openai_tools, world};

/// The proxy's answer to a streamed request whose upstream body is `body` in these pieces.
fn fetch(pieces: Vec<Vec<u8>>) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let world = world();
    let model = format!("b{}", N.fetch_add(1, Ordering::Relaxed));
    world.mock.script(&model, Script::Chunks(pieces));
    let request = json!({"model": model, "stream": true, "tools": openai_tools(),
        "messages": [{"role": "user", "content": "go"}]});
    world.runtime.block_on(support::post_text(
        &world.base,
        "/v1/chat/completions",
        &request,
    ))
}

/// A valid text stream spelled every way SSE allows: CRLF and bare-LF events, `data:` with and
/// without its space, comment lines inside and between events, a named event, non-JSON data,
/// escaped unicode (a surrogate pair, an escaped quote and line break) and raw UTF-8 in the
/// content, a chunk with its `usage`, `[DONE]`.
fn spelled() -> String {
    let chunk = |delta: &str| {
        format!(
            r#"{{"id":"chatcmpl-b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":null}}]}}"#
        )
    };
    let mut body = String::from(": OPENROUTER PROCESSING\r\n\r\n");
    body.push_str(&format!(
        "data: {}\r\n\r\n",
        chunk(r#"{"role":"assistant","content":""}"#)
    ));
    body.push_str(&format!(
        "data:{}\n\n",
        chunk(r#"{"content":"Caf\u00e9 \ud83d\ude00 "}"#)
    ));
    body.push_str(&format!(
        ": a comment in the event\ndata: {}\n\n",
        chunk(r#"{"content":"\"quoted\"\nnext — ü "}"#)
    ));
    body.push_str("data: not json at all\n\n");
    body.push_str(&format!(
        "event: message\r\ndata:  {}\r\n\r\n",
        chunk(r#"{"content":"spaced","refusal":null}"#)
    ));
    body.push_str(&format!(
        "data: {}\n\n",
        r#"{ "id" : "chatcmpl-b", "choices" : [ { "index" : 0, "delta" : { "content" : " end." }, "finish_reason" : null } ] }"#
    ));
    body.push_str(&format!(
        "data: {}\n\n",
        chunk(r#"{}"#).replace(r#""finish_reason":null"#, r#""finish_reason":"stop""#)
    ));
    body.push_str(
        "data: {\"id\":\"chatcmpl-b\",\"choices\":[],\"usage\":{\"total_tokens\":7}}\n\ndata: [DONE]\n\n",
    );
    body
}

#[test]
fn a_valid_stream_is_byte_identical_split_at_every_byte() {
    let body = spelled();
    let bytes = body.as_bytes();
    assert_eq!(fetch(vec![bytes.to_vec()]), body, "all events in one chunk");
    // Every split point is `stream::openai`'s unit test; through the sockets, every 13th.
    for cut in (1..bytes.len()).step_by(13) {
        let pieces = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
        assert_eq!(fetch(pieces), body, "cut at {cut}");
    }
    // One chunk per byte.
    let pieces: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
    assert_eq!(fetch(pieces), body, "one byte per chunk");
}

/// A stream the proxy changes: text with held markup, a repaired call whose fragments carry
/// escapes, a valid one, the finish.
fn repaired() -> String {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "system_fingerprint": "fp", "choices": [{"index": 0, "delta": delta, "logprobs": null,
            "finish_reason": finish}]})
    };
    let events = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Reading <tool_"}), None),
        chunk(
            json!({"content": "call>{\"name\": \"list_dir\", \"arguments\": {\"dir\": \"/é\"}}</tool_call> now"}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": "{'path': 'caf\u{e9}',"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": " 'max_lines': '3'}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
            "function": {"name": "list_dir", "arguments": "{\"dir\": \"\\u00e9\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    let mut body = String::new();
    for (i, event) in events.iter().enumerate() {
        // CRLF on every other event, `data:` without a space on every third.
        let end = if i % 2 == 0 { "\r\n\r\n" } else { "\n\n" };
        let field = if i % 3 == 0 { "data:" } else { "data: " };
        body.push_str(&format!("{field}{event}{end}"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

#[test]
fn a_repaired_stream_gives_the_same_events_split_at_every_byte() {
    let body = repaired();
    let bytes = body.as_bytes();
    let whole = fetch(vec![bytes.to_vec()]);
    let joined = join_openai(&whole.replace("\r\n", "\n"));
    assert_eq!(
        joined.calls[&0].2, r#"{"path":"café","max_lines":3}"#,
        "{whole}"
    );
    assert_eq!(joined.calls[&1].2, r#"{"dir": "\u00e9"}"#, "{whole}");
    assert_eq!(joined.finish, ["tool_calls"], "{whole}");
    assert!(joined.done);
    for cut in (1..bytes.len()).step_by(13) {
        let pieces = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
        assert_eq!(fetch(pieces), whole, "cut at {cut}");
    }
}
