//! Two proxy replicas in front of one upstream answer every request alike, whatever each has
//! served before: the proxy keeps no state between requests that changes an answer (storms are
//! judged from the request's own history), so a load balancer may send any request anywhere.

mod support;

use serde_json::{Value, json};
use support::{Script, openai_tools, post_json, sse_body, start_mock, start_proxy};
use toolmend_proxy::{ProxyConfig, REPAIRS_HEADER, StormPolicy};

fn completion(call: Value) -> String {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message":
            {"role": "assistant", "content": null, "tool_calls": [call]},
            "finish_reason": "tool_calls"}]})
    .to_string()
}

fn call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A conversation whose last `repeats` assistant turns all made the same call.
fn history(repeats: usize) -> Vec<Value> {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for i in 0..repeats {
        messages.push(json!({"role": "assistant", "content": null,
            "tool_calls": [call(&format!("c{i}"), "list_dir", "{\"dir\": \"/\"}")]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": "x"}));
    }
    messages
}

/// Status, repairs header and body text of one request.
async fn answer(
    base: &str,
    model: &str,
    stream: bool,
    messages: &[Value],
) -> (u16, String, String) {
    let request = json!({"model": model, "stream": stream, "tools": openai_tools(),
        "messages": messages});
    let response = post_json(base, "/v1/chat/completions", &[], &request).await;
    let status = response.status().as_u16();
    let header = response
        .headers()
        .get(REPAIRS_HEADER)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, header, response.text().await.unwrap())
}

#[tokio::test]
async fn two_replicas_give_the_same_answer_whatever_each_served_before() {
    let (mock, upstream) = start_mock().await;
    let replica = || {
        let mut config = ProxyConfig::new(format!("http://{upstream}"));
        config.storm = StormPolicy::Suppress;
        start_proxy(config)
    };
    let (a, b) = (replica().await, replica().await);

    // The same call every turn (a storm once the history holds enough of them), and a broken
    // call that needs repair, non-streamed and streamed.
    mock.script(
        "storm",
        Script::json(completion(call("s", "list_dir", "{\"dir\": \"/\"}"))),
    );
    mock.script(
        "broken",
        Script::json(completion(call(
            "b",
            "Read_File",
            "{\"file_path\": \"a.txt\",}",
        ))),
    );
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let stream = sse_body(&[
        chunk(
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "b", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"file_path\": "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]);
    mock.script("streamed", Script::Chunks(vec![stream.into_bytes()]));

    // Replica `a` serves a whole growing conversation first; `b` sees only its last request.
    let mut seen_on_a = Vec::new();
    for repeats in 0..=6 {
        seen_on_a.push(answer(&a, "storm", false, &history(repeats)).await);
    }
    let last_on_b = answer(&b, "storm", false, &history(6)).await;
    assert_eq!(seen_on_a.last(), Some(&last_on_b));
    assert!(last_on_b.1.contains("storm_suppressed=1"), "{last_on_b:?}");
    // And the first request, answered by `b` after all that, is what `a` answered when fresh.
    assert_eq!(answer(&b, "storm", false, &history(0)).await, seen_on_a[0]);
    assert!(!seen_on_a[0].1.contains("storm"), "{:?}", seen_on_a[0]);

    for (model, stream) in [("broken", false), ("streamed", true)] {
        let messages = history(1);
        let first = answer(&a, model, stream, &messages).await;
        for base in [&b, &a, &b] {
            assert_eq!(
                answer(base, model, stream, &messages).await,
                first,
                "{model}"
            );
        }
        assert!(first.2.contains("\\\"path\\\""), "not repaired: {first:?}");
    }
}
