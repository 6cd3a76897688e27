//! Request headers on their way upstream (issue #25): headers named in `Connection:` are
//! hop-by-hop, `Expect` is not forwarded after the body was read, and a client's
//! `X-Forwarded-*`/`Forwarded` are dropped unless trusted.

mod support;

use support::{raw_http, start};

const REQUEST: &str = "POST /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close, x-secret-hop\r\n\
    x-secret-hop: 1\r\nx-kept: 2\r\nexpect: 100-continue\r\nx-forwarded-for: 10.9.9.9\r\n\
    forwarded: for=10.9.9.9\r\nx-real-ip: 10.9.9.9\r\ncontent-length: 2\r\n\r\n{}";

#[tokio::test]
async fn hop_by_hop_expect_and_forwarded_headers_stay_here() {
    let (mock, base) = start(|_| {}).await;
    let answer = raw_http(&base, REQUEST.as_bytes()).await;
    assert!(answer.contains(" 200 "), "{answer}");
    let received = mock.last();
    assert_eq!(received.headers["x-kept"], "2");
    for name in [
        "x-secret-hop",
        "expect",
        "x-forwarded-for",
        "forwarded",
        "x-real-ip",
    ] {
        assert!(received.headers.get(name).is_none(), "{name} forwarded");
    }
}

#[tokio::test]
async fn forwarded_headers_pass_when_trusted() {
    let (mock, base) = start(|c| c.trust_forwarded = true).await;
    raw_http(&base, REQUEST.as_bytes()).await;
    let received = mock.last();
    assert_eq!(received.headers["x-forwarded-for"], "10.9.9.9");
    assert_eq!(received.headers["forwarded"], "for=10.9.9.9");
}
