//! `--reprompt N` (issue #24, item 5): a response holding a call that cannot be saved is asked
//! again, with the retry message as that call's result in the API's own shape, and the first
//! answer whose calls are valid or repaired is returned. The mock model answers a hopeless call
//! until it sees the retry message.

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{Value, json};
use toolmend_proxy::{ProxyConfig, REPAIRS_HEADER, REPROMPTS_HEADER};

/// Arguments no repair can save: `path` is required and missing.
const HOPELESS: &str = r#"{"max_lines": "many"}"#;
const GOOD: &str = r#"{"path": "a.txt"}"#;

#[derive(Default)]
struct Model {
    /// Fix the call once the retry message comes back.
    learns: bool,
    seen: Mutex<Vec<Value>>,
}

fn answer(path: &str, arguments: &str) -> Value {
    let object: Value = serde_json::from_str(arguments).unwrap();
    match path {
        "/v1/chat/completions" => json!({"id": "chatcmpl-r", "object": "chat.completion",
            "created": 1, "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call_r",
                "type": "function", "function": {"name": "read_file", "arguments": arguments}}]}}]}),
        "/v1/messages" => json!({"id": "msg_r", "type": "message", "role": "assistant",
            "model": "m", "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": "toolu_r", "name": "read_file", "input": object}]}),
        "/v1/responses" => json!({"id": "resp_r", "object": "response", "status": "completed",
            "output": [{"type": "function_call", "id": "fc_r", "call_id": "call_r",
                "name": "read_file", "arguments": arguments, "status": "completed"}]}),
        _ => json!({"model": "m", "created_at": "t", "done": true, "done_reason": "stop",
            "message": {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "read_file", "arguments": object}}]}}),
    }
}

async fn serve(State(model): State<Arc<Model>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let body = axum::body::to_bytes(request.into_body(), usize::MAX)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    let told = body.to_string().contains("was rejected");
    model.seen.lock().unwrap().push(body);
    let arguments = if told && model.learns { GOOD } else { HOPELESS };
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(answer(&path, arguments).to_string()))
        .unwrap()
}

async fn start(learns: bool, reprompt: u8) -> (Arc<Model>, String) {
    let model = Arc::new(Model {
        learns,
        ..Model::default()
    });
    let router = Router::new().fallback(serve).with_state(Arc::clone(&model));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let mut config = ProxyConfig::new(format!("http://{addr}"));
    config.reprompt = reprompt;
    (model, support::start_proxy(config).await)
}

/// The arguments of the response's one call.
fn arguments(path: &str, out: &Value) -> Value {
    let text = match path {
        "/v1/chat/completions" => {
            out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].clone()
        }
        "/v1/messages" => return out["content"][0]["input"].clone(),
        "/v1/responses" => out["output"][0]["arguments"].clone(),
        _ => return out["message"]["tool_calls"][0]["function"]["arguments"].clone(),
    };
    serde_json::from_str(text.as_str().unwrap()).unwrap()
}

/// The retry message as the API's own tool result, in the re-prompt's request.
fn tool_result(path: &str, sent: &Value) -> Value {
    match path {
        "/v1/chat/completions" => {
            let messages = sent["messages"].as_array().unwrap();
            assert_eq!(messages[1]["role"], "assistant", "{sent}");
            assert_eq!(messages[2]["role"], "tool");
            assert_eq!(messages[2]["tool_call_id"], "call_r");
            messages[2]["content"].clone()
        }
        "/v1/messages" => {
            let messages = sent["messages"].as_array().unwrap();
            assert_eq!(messages[1]["role"], "assistant", "{sent}");
            let result = &messages[2]["content"][0];
            assert_eq!(result["type"], "tool_result");
            assert_eq!(result["tool_use_id"], "toolu_r");
            result["content"].clone()
        }
        "/v1/responses" => {
            let input = sent["input"].as_array().unwrap();
            assert_eq!(input[0]["role"], "user", "{sent}");
            assert_eq!(input[1]["type"], "function_call");
            assert_eq!(input[2]["type"], "function_call_output");
            assert_eq!(input[2]["call_id"], "call_r");
            input[2]["output"].clone()
        }
        _ => {
            let messages = sent["messages"].as_array().unwrap();
            assert_eq!(messages[2]["role"], "tool", "{sent}");
            assert_eq!(messages[2]["tool_name"], "read_file");
            messages[2]["content"].clone()
        }
    }
}

#[tokio::test]
async fn a_hopeless_call_is_asked_again_and_the_fixed_answer_returned() {
    let (model, base) = start(true, 2).await;
    for path in support::REPAIRED_PATHS {
        model.seen.lock().unwrap().clear();
        let response =
            support::post_json(&base, path, &[], &support::user_request(path, false)).await;
        assert_eq!(response.headers()[REPROMPTS_HEADER], "1", "{path}");
        assert!(response.headers().get(REPAIRS_HEADER).is_none(), "{path}");
        let out: Value = response.json().await.unwrap();
        assert_eq!(
            arguments(path, &out),
            json!({"path": "a.txt"}),
            "{path}: {out}"
        );
        let seen = model.seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "{path}");
        let message = tool_result(path, &seen[1]);
        assert!(message.as_str().unwrap().contains("read_file"), "{message}");
    }
    let metrics = support::metrics_text(&base).await;
    let fixed = metrics.lines().find(|l| {
        l.starts_with("toolmend_reprompts_total")
            && l.contains("route=\"chat\"")
            && l.contains("outcome=\"fixed\"")
    });
    assert!(fixed.is_some_and(|l| l.ends_with(" 1")), "{metrics}");
}

#[tokio::test]
async fn a_call_still_unsaved_after_n_reprompts_comes_back_annotated() {
    let (model, base) = start(false, 2).await;
    let path = "/v1/chat/completions";
    let response = support::post_json(&base, path, &[], &support::user_request(path, false)).await;
    assert_eq!(response.headers()[REPROMPTS_HEADER], "2");
    assert!(support::repairs(&response).contains("invalid=1"));
    let out: Value = response.json().await.unwrap();
    assert_eq!(arguments(path, &out), json!({"max_lines": "many"}));
    assert_eq!(model.seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn off_by_default() {
    let (model, base) = start(true, 0).await;
    let path = "/v1/chat/completions";
    let response = support::post_json(&base, path, &[], &support::user_request(path, false)).await;
    assert!(response.headers().get(REPROMPTS_HEADER).is_none());
    assert!(support::repairs(&response).contains("invalid=1"));
    assert_eq!(model.seen.lock().unwrap().len(), 1);
}
