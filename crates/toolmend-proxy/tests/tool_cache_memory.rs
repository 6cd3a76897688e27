//! The tool-set cache is bounded in bytes (issue #25): distinct large `tools` arrays do not
//! grow the process without end, and a `tools` array over the limit is refused in the API's
//! error shape without reaching the upstream.
//!
//! One test per file: the resident set size is the process's.

mod support;

use serde_json::{Value, json};
use support::{Script, post_json, start};

/// A `tools` array of `count` tools with patterned, enumerated properties (`seed` makes it
/// distinct).
fn tools(seed: usize, count: usize) -> Value {
    let tools: Vec<Value> = (0..count)
        .map(|i| {
            json!({"type": "function", "function": {"name": format!("tool_{seed}_{i}"),
                "description": "a tool with a few typed fields, as agents send them",
                "parameters": {"type": "object", "required": ["path"], "properties": {
                    "path": {"type": "string", "pattern": "^[a-z0-9_/.-]{1,200}$"},
                    "mode": {"enum": ["read", "write", "append", "truncate"]},
                    "lines": {"type": "integer", "minimum": 0, "maximum": 100000},
                    "flags": {"type": "array", "items": {"type": "string"}, "maxItems": 8}}}}})
        })
        .collect();
    Value::Array(tools)
}

/// The resident set size of this process, in bytes (Linux).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg(target_os = "linux")]
async fn distinct_tool_sets_stay_within_the_byte_budget() {
    const SETS: usize = 12;
    const TOOLS: usize = 1200;
    let (mock, base) = start(|c| c.limits.tool_cache_bytes = 1024 * 1024).await;
    let answer = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {
        "name": "tool_0_0", "arguments": "{\"path\": \"a\"}"}}]}}]});
    mock.script("m", Script::json(answer.to_string()));
    let baseline = rss();
    let mut after_two = 0;
    for seed in 0..SETS {
        let body = json!({"model": "m", "tools": tools(seed, TOOLS), "messages": []});
        let response = post_json(&base, "/v1/chat/completions", &[], &body).await;
        assert_eq!(response.status(), 200);
        if seed == 1 {
            after_two = rss();
        }
    }
    let end = rss();
    // What one compiled set costs, measured in this run: the budget keeps two.
    let per_set = after_two.saturating_sub(baseline) / 2;
    let grown = end.saturating_sub(baseline);
    // The numbers, for `--nocapture` runs (the assertion below is the test).
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "{SETS} sets: baseline {} MB, after two {} MB ({} MB a set), after all {} MB",
            baseline >> 20,
            after_two >> 20,
            per_set >> 20,
            end >> 20
        );
    }
    // Kept by entries alone, all twelve stay compiled (12 sets' worth). Bounded by bytes: the
    // two kept, one compiling beside them, and what the allocator holds on to of the freed
    // ones (glibc's per-thread arenas; see the README).
    assert!(
        grown < per_set * 6,
        "grew {} MB, {} MB a set",
        grown >> 20,
        per_set >> 20
    );
}

#[tokio::test]
async fn tools_over_the_limit_are_refused_in_the_api_shape() {
    let (mock, base) = start(|c| c.limits.max_tools_bytes = 10_000).await;
    let body = json!({"model": "m", "tools": tools(0, 100), "messages": []});
    let response = post_json(&base, "/v1/chat/completions", &[], &body).await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["type"], "invalid_request_error", "{error}");
    let body = json!({"model": "m", "tools": [], "messages": []});
    let response = post_json(&base, "/v1/messages", &[], &body).await;
    assert_eq!(response.status(), 200);
    let body = json!({"model": "m", "tools": tools(0, 100), "messages": []});
    let response = post_json(&base, "/v1/messages", &[], &body).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(mock.received.lock().unwrap().len(), 1);
}
