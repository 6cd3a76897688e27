//! Later turns without tools (issue #24, item 6): a request that carries no `tools` gets its
//! calls passed through unrepaired and counted; `--tools FILE` (or `tools` in the TOML) gives
//! the tool set for such requests.

mod support;

use serde_json::{Value, json};
use support::{Script, metrics_text, openai_tools, post_json, start};
use toolmend_proxy::{ProxyConfig, REPAIRS_HEADER};

fn completion() -> String {
    json!({"id": "chatcmpl-u", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "call_u", "type": "function", "function":
                {"name": "read_file", "arguments": "{\"file_path\": \"a\"}"}}]}}]})
    .to_string()
}

/// A later turn: the tool result only, no `tools`.
fn later_turn() -> Value {
    json!({"model": "later", "messages": [{"role": "user", "content": "read a"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_0", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}}]},
        {"role": "tool", "tool_call_id": "call_0", "content": "text of b"}]})
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(name) && l.contains("route=\"chat\""))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn calls_without_a_schema_pass_counted_and_tools_file_supplies_one() {
    let (mock, base) = start(|_| {}).await;
    mock.script("later", Script::json(completion()));
    let response = post_json(&base, "/v1/chat/completions", &[], &later_turn()).await;
    assert!(response.headers().get(REPAIRS_HEADER).is_none());
    assert_eq!(response.text().await.unwrap(), completion());
    let metrics = metrics_text(&base).await;
    assert_eq!(
        metric(&metrics, "toolmend_untooled_responses_total"),
        1,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "toolmend_untooled_calls_total"),
        1,
        "{metrics}"
    );

    let file = std::env::temp_dir().join(format!("toolmend-tools-{}.json", std::process::id()));
    std::fs::write(&file, openai_tools().to_string()).unwrap();
    let mut config = ProxyConfig::new("http://unused");
    config
        .merge_toml(&format!(
            "tools = {:?}\nreprompt = 1\n",
            file.display().to_string()
        ))
        .unwrap();
    assert_eq!(config.reprompt, 1);
    let tools = config.default_tools.clone();
    assert!(tools.is_some());
    let (mock, base) = start(move |c| c.default_tools = tools).await;
    mock.script("later", Script::json(completion()));
    let response = post_json(&base, "/v1/chat/completions", &[], &later_turn()).await;
    assert!(support::repairs(&response).contains("field_renamed=1"));
    let out: Value = response.json().await.unwrap();
    let arguments = &out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(arguments, "{\"path\":\"a\"}");

    // A file that is not a tools array is refused when the proxy starts.
    std::fs::write(&file, "{}").unwrap();
    assert!(
        ProxyConfig::new("x")
            .set("tools", file.to_str().unwrap())
            .is_err()
    );
    assert!(
        ProxyConfig::new("x")
            .set("tools", "/nonexistent/tools.json")
            .is_err()
    );
    std::fs::remove_file(&file).unwrap();
}

/// LiteLLM's `dummy_tool`: a request whose own tools lack the tool a call names gets the
/// `--tools` set for that call; the request's own tool still decides a call of its name.
#[tokio::test]
async fn tools_file_covers_calls_of_tools_the_request_lacks() {
    let file = std::env::temp_dir().join(format!("toolmend-fallback-{}.json", std::process::id()));
    std::fs::write(&file, openai_tools().to_string()).unwrap();
    let mut config = ProxyConfig::new("http://unused");
    config.set("tools", file.to_str().unwrap()).unwrap();
    let tools = config.default_tools.clone();
    let (mock, base) = start(move |c| c.default_tools = tools).await;
    let dummy = json!([{"type": "function", "function": {"name": "dummy_tool",
        "description": "unused", "parameters": {"type": "object",
            "properties": {"path": {"type": "integer"}}, "required": ["path"]}}}]);
    let mut request = later_turn();
    request["tools"] = dummy;
    mock.script("later", Script::json(completion()));
    let response = post_json(&base, "/v1/chat/completions", &[], &request).await;
    assert!(support::repairs(&response).contains("field_renamed=1"));
    let out: Value = response.json().await.unwrap();
    let arguments = &out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"];
    assert_eq!(arguments, "{\"path\":\"a\"}");

    // A name in both: the request's schema (`path` an integer) decides, not the file's.
    request["tools"][0]["function"]["name"] = json!("read_file");
    let response = post_json(&base, "/v1/chat/completions", &[], &request).await;
    assert!(
        support::repairs(&response).contains("invalid=1"),
        "the request's own tool wins"
    );
    std::fs::remove_file(&file).ok();
}
