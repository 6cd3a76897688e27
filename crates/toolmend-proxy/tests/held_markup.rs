//! Markup held back from a stream and then refused by the library goes out where it was
//! (issue #29 §2): "before <markup> after" reaches the client in that order, in every streamed
//! API, and the text parts' final events carry that text.

mod leaks;
mod support;

use leaks::{ALL, Api, TWO_BLOCKS, payloads, recovered_ids, visible_text};
use serde_json::Value;
use support::{post_text, start};

/// A Hermes block the stream recoverer holds (a declared tool) that the library refuses: its
/// required `path` is missing, and no value is ever invented for it.
const REFUSED: &str =
    "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"max_lines\": 3}}\n</tool_call>";

/// The final text of the message as the stream's closing events state it, when the API has
/// such events (Responses: `output_text.done` and `response.completed`).
fn stated_text(api: Api, out: &str) -> Option<String> {
    if api != Api::Responses {
        return None;
    }
    let mut done = None;
    for payload in payloads(out) {
        if payload["type"] == "response.output_text.done" {
            done = payload["text"].as_str().map(str::to_owned);
        }
        if payload["type"] == "response.completed" {
            let output = payload["response"]["output"].as_array().cloned();
            let texts: Vec<&str> = output
                .iter()
                .flatten()
                .filter(|i| i["type"] == "message")
                .filter_map(|i| i["content"][0]["text"].as_str())
                .collect::<Vec<_>>()
                .into_iter()
                .collect();
            let joined: String = texts.concat();
            assert_eq!(done.as_deref(), Some(joined.as_str()), "{out}");
        }
    }
    done
}

#[tokio::test]
async fn refused_markup_goes_out_where_it_was() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        let text = format!("before {REFUSED} after");
        let model = format!("{api:?}-refused");
        mock.script(&model, api.script(true, &text));
        let out = post_text(&base, api.path(), &api.request(&model, true, 0)).await;
        assert!(recovered_ids(&out).is_empty(), "{model}: {out}");
        let (visible, parts) = visible_text(api, true, &out);
        assert_eq!(visible, text, "{model}: {out}");
        if api != Api::Chat && api != Api::Ollama {
            assert_eq!(parts, 1, "one text part: {model}: {out}");
        }
        if let Some(stated) = stated_text(api, &out) {
            assert_eq!(stated, text, "{model}: {out}");
        }
    }
}

#[tokio::test]
async fn taken_and_refused_blocks_keep_their_order() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        // The first two blocks become calls; the refused one stays between the texts.
        let text = format!("one {TWO_BLOCKS} two {REFUSED} three");
        let model = format!("{api:?}-mixed");
        mock.script(&model, api.script(true, &text));
        let out = post_text(&base, api.path(), &api.request(&model, true, 0)).await;
        assert_eq!(recovered_ids(&out).len(), 2, "{model}: {out}");
        let (visible, _) = visible_text(api, true, &out);
        assert_eq!(
            visible,
            format!("one \n two {REFUSED} three"),
            "{model}: {out}"
        );
        if let Some(stated) = stated_text(api, &out) {
            assert_eq!(stated, visible, "{model}: {out}");
        }
    }
}

#[tokio::test]
async fn a_message_of_refused_markup_only_is_sent_whole() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        let model = format!("{api:?}-only");
        mock.script(&model, api.script(true, REFUSED));
        let out = post_text(&base, api.path(), &api.request(&model, true, 0)).await;
        let (visible, parts) = visible_text(api, true, &out);
        assert_eq!(visible, REFUSED, "{model}: {out}");
        if api == Api::Messages || api == Api::Responses {
            assert_eq!(parts, 1, "{model}: {out}");
        }
        if let Some(stated) = stated_text(api, &out) {
            assert_eq!(stated, REFUSED, "{model}: {out}");
        }
    }
}

#[tokio::test]
async fn a_block_that_copies_no_native_call_stays_in_place() {
    // Chat: with native calls in the turn, `--recover content` takes only blocks that copy
    // one of them; this one does not, so it is text, where it was.
    let (mock, base) = start(|_| {}).await;
    let block =
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>";
    let chunk = |delta: Value, finish: Value| {
        serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let body = support::sse_body(&[
        chunk(
            serde_json::json!({"content": format!("before {block}")}),
            Value::Null,
        ),
        chunk(serde_json::json!({"content": " after"}), Value::Null),
        chunk(
            serde_json::json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "list_dir", "arguments": "{\"dir\": \"/\"}"}}]}),
            Value::Null,
        ),
        chunk(serde_json::json!({}), serde_json::json!("tool_calls")),
    ]);
    mock.script("copies", support::Script::Chunks(vec![body.into_bytes()]));
    let out = post_text(
        &base,
        Api::Chat.path(),
        &Api::Chat.request("copies", true, 0),
    )
    .await;
    let joined = support::join_openai(&out);
    assert_eq!(joined.content, format!("before {block} after"), "{out}");
    assert_eq!(joined.calls.len(), 1, "{out}");
}
