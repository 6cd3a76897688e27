//! Compressed upstream answers (issue #25): the proxy asks for `identity`, decodes what comes
//! compressed anyway (streams chunk by chunk), repairs, and answers the client uncompressed; an
//! encoding it cannot decode passes as received and is counted.

mod support;

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Script, metrics_text, openai_tools, sse_body, start};
use toolmend_proxy::REPAIRS_HEADER;

/// A client that decodes nothing, so the test sees the proxy's bytes as sent.
fn raw_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_gzip()
        .no_brotli()
        .no_zstd()
        .no_deflate()
        .build()
        .unwrap()
}

fn broken_completion() -> String {
    json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
        "type": "function", "function": {"name": "read_file",
        "arguments": "{\"file_path\": \"a.txt\"}"}}]}, "finish_reason": "tool_calls"}]})
    .to_string()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn encode(encoding: &str, data: &[u8]) -> Vec<u8> {
    match encoding {
        "gzip" => gzip(data),
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
            e.write_all(data).unwrap();
            drop(e);
            out
        }
        "zstd" => zstd::encode_all(data, 3).unwrap(),
        other => panic!("no encoder for {other}"),
    }
}

async fn chat(base: &str, model: &str, stream: bool) -> reqwest::Response {
    let body = json!({"model": model, "stream": stream, "tools": openai_tools(), "messages": []});
    raw_client()
        .post(format!("{base}/v1/chat/completions"))
        .header("accept-encoding", "gzip, br")
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn compressed_answers_are_decoded_and_repaired() {
    let (mock, base) = start(|_| {}).await;
    for encoding in ["gzip", "deflate", "br", "zstd"] {
        let model = format!("enc-{encoding}");
        mock.script(
            &model,
            Script::Raw {
                headers: vec![
                    ("content-type", "application/json".into()),
                    ("content-encoding", encoding.into()),
                ],
                chunks: vec![encode(encoding, broken_completion().as_bytes())],
                gate: None,
            },
        );
        let response = chat(&base, &model, false).await;
        assert_eq!(response.status(), 200, "{encoding}");
        assert_eq!(
            mock.last().headers["accept-encoding"],
            "identity",
            "{encoding}: the proxy asks for an uncompressed answer"
        );
        assert!(
            response.headers().get("content-encoding").is_none(),
            "{encoding}: the client gets identity"
        );
        let repairs = response.headers().get(REPAIRS_HEADER).cloned();
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert!(repairs.is_some(), "{encoding}: the call was repaired");
        let arguments = body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap();
        assert_eq!(arguments, "{\"path\":\"a.txt\"}", "{encoding}");
    }
}

#[tokio::test]
async fn a_gzipped_stream_is_decoded_as_it_arrives() {
    let (mock, base) = start(|_| {}).await;
    let first = json!({"id": "c", "choices": [{"index": 0, "delta": {"content": "hello"},
        "finish_reason": null}]});
    let last = json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let text = sse_body(&[first, last]);
    let split = text.find("\n\n").unwrap() + 2;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&text.as_bytes()[..split]).unwrap();
    encoder.flush().unwrap();
    let head = encoder.get_ref().clone();
    encoder.write_all(&text.as_bytes()[split..]).unwrap();
    let whole = encoder.finish().unwrap();
    mock.script(
        "gz-stream",
        Script::Raw {
            headers: vec![
                ("content-type", "text/event-stream".into()),
                ("content-encoding", "gzip".into()),
            ],
            chunks: vec![head.clone(), whole[head.len()..].to_vec()],
            gate: Some(1),
        },
    );
    let mut response = chat(&base, "gz-stream", true).await;
    // The second half waits for the gate: the first event must arrive without it.
    let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
        .await
        .expect("the first event arrives before the upstream finishes")
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&chunk).contains("hello"),
        "{chunk:?}"
    );
    mock.open_gate();
    let mut rest = chunk.to_vec();
    while let Some(chunk) = response.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(String::from_utf8(rest).unwrap(), text);
}

#[tokio::test]
async fn an_encoding_it_cannot_decode_passes_as_received_and_is_counted() {
    let (mock, base) = start(|_| {}).await;
    let body = gzip(&gzip(broken_completion().as_bytes()));
    mock.script(
        "twice",
        Script::Raw {
            headers: vec![
                ("content-type", "application/json".into()),
                ("content-encoding", "gzip, gzip".into()),
            ],
            chunks: vec![body.clone()],
            gate: None,
        },
    );
    let response = chat(&base, "twice", false).await;
    assert_eq!(response.headers()["content-encoding"], "gzip, gzip");
    assert_eq!(response.bytes().await.unwrap(), body);
    let metrics = metrics_text(&base).await;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("toolmend_uninspected_total")
                && l.contains("reason=\"content_encoding\"")),
        "{metrics}"
    );
}
