//! The `toolmend` binary, run as a user runs it.

#[path = "support/run.rs"]
mod run;

use std::process::Output;

use run::toolmend_with;

fn toolmend(args: &[&str], stdin: Option<&str>) -> Output {
    toolmend_with(args, stdin.map(str::as_bytes), &[])
}

fn schema_file(contents: &str) -> tempfile_path::TempPath {
    tempfile_path::TempPath::with_contents(contents)
}

/// A scratch file removed on drop (std only).
mod tempfile_path {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub(crate) struct TempPath(pub(crate) PathBuf);

    impl TempPath {
        pub(crate) fn with_contents(contents: &str) -> Self {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("toolmend-cli-{}-{n}.json", std::process::id()));
            std::fs::write(&path, contents).expect("write temp file");
            Self(path)
        }

        pub(crate) fn as_str(&self) -> &str {
            self.0.to_str().expect("utf-8 temp path")
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

const READ_MANY: &str = r#"{"type": "object", "required": ["paths"],
    "properties": {"paths": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}}}"#;

#[test]
fn repair_parses_a_stringified_array() {
    let schema = schema_file(READ_MANY);
    let out = toolmend(
        &[
            "repair",
            "--schema",
            schema.as_str(),
            r#"{"paths":"[\"a\",\"b\"]"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"paths\":[\"a\",\"b\"]}\n"
    );
}

#[test]
fn repair_returns_valid_input_byte_for_byte() {
    let schema = schema_file(READ_MANY);
    let valid = "{ \"limit\" : 3,\n  \"paths\": [ \"b\",\"a\" ] }";
    let out = toolmend(&["repair", "--schema", schema.as_str(), valid], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, valid.as_bytes());
    // The same from stdin, trailing newline included.
    let from_stdin = toolmend(
        &["repair", "--schema", schema.as_str()],
        Some(&format!("{valid}\n")),
    );
    assert_eq!(from_stdin.stdout, format!("{valid}\n").as_bytes());
}

#[test]
fn repair_rejects_a_malformed_array_naming_the_path() {
    let schema = schema_file(READ_MANY);
    let out = toolmend(
        &[
            "repair",
            "--schema",
            schema.as_str(),
            r#"{"paths":"[a, b]"}"#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`/paths`"), "{stderr}");
    assert!(stderr.contains("Try:"), "{stderr}");
}

#[test]
fn repair_reads_every_tool_form_and_picks_with_tool() {
    let openai = schema_file(&format!(
        r#"{{"type": "function", "function": {{"name": "rm", "parameters": {READ_MANY}}}}}"#
    ));
    let array = schema_file(&format!(
        r#"[{{"name": "a", "parameters": {{"type": "object"}}}}, {{"name": "rm", "input_schema": {READ_MANY}}}]"#
    ));
    let mcp_list = schema_file(&format!(
        r#"{{"tools": [{{"name": "a", "inputSchema": {{"type": "object"}}}},
            {{"name": "rm", "inputSchema": {READ_MANY}, "annotations": {{"readOnlyHint": true}}}}]}}"#
    ));
    let mcp_tool = schema_file(&format!(r#"{{"name": "rm", "inputSchema": {READ_MANY}}}"#));
    for (file, extra) in [
        (&openai, None),
        (&array, Some("rm")),
        (&mcp_list, Some("rm")),
        (&mcp_tool, None),
    ] {
        let mut args = vec!["repair", "--schema", file.as_str(), "--json"];
        if let Some(tool) = extra {
            args.extend(["--tool", tool]);
        }
        args.push(r#"{"paths": "x"}"#);
        let out = toolmend(&args, None);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["name"], "rm");
        assert_eq!(result["status"], "repaired");
        assert_eq!(result["repairs"][0]["kind"], "bare_value_to_array");
        assert_eq!(result["arguments_text"], r#"{"paths":["x"]}"#);
    }
    let ambiguous = toolmend(&["repair", "--schema", array.as_str(), "{}"], None);
    assert_eq!(ambiguous.status.code(), Some(2));
}

#[test]
fn repair_usage_and_io_errors_exit_2() {
    assert_eq!(
        toolmend(
            &["repair", "--schema", "/nonexistent/schema.json", "{}"],
            None
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(toolmend(&["repair"], None).status.code(), Some(2));
}

#[test]
fn turns_writes_one_line_per_turn_and_survives_bad_lines() {
    let tools = format!(
        r#"[{{"name": "rm", "parameters": {}}}]"#,
        READ_MANY.replace('\n', " ")
    );
    let good = format!(
        r#"{{"id": "t1", "tools": {tools}, "message": {{"content": "hi", "tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "rm", "arguments": "{{\"paths\": null, \"x\": 1}}"}}}}, {{"id": "c2", "type": "function", "function": {{"name": "rm", "arguments": {{"paths": "a"}}}}}}]}}}}"#
    );
    let input = format!("{good}\nnot json\n{{\"id\": \"t3\"}}\n");
    let out = toolmend(&["turns"], Some(&input));
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let first = &lines[0];
    assert_eq!(first["id"], "t1");
    assert_eq!(first["calls"][0]["status"], "invalid");
    assert!(
        first["calls"][0]["error"]
            .as_str()
            .unwrap()
            .contains("/paths")
    );
    assert_eq!(first["calls"][1]["status"], "repaired");
    // Invalid calls are kept as sent; repaired ones carry string arguments.
    assert_eq!(
        first["message"]["tool_calls"][0]["function"]["arguments"],
        "{\"paths\": null, \"x\": 1}"
    );
    assert_eq!(
        first["message"]["tool_calls"][1]["function"]["arguments"],
        "{\"paths\":[\"a\"]}"
    );
    assert_eq!(first["report"]["repaired"], 1);
    assert_eq!(first["report"]["invalid"], 1);
    assert!(lines[1]["error"].as_str().unwrap().contains("not JSON"));
    assert_eq!(lines[2]["id"], "t3");
    assert!(lines[2]["error"].is_string());
}

#[test]
fn eval_passes_the_bundled_corpus() {
    let out = toolmend(&["eval"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");
}

#[test]
fn eval_fails_on_a_wrong_expectation() {
    let case = r#"{"id": "x/wrong", "tools": [{"name": "t", "parameters": {"type": "object"}}], "message": {"tool_calls": [{"id": "c", "function": {"name": "t", "arguments": "{}"}}]}, "expect": {"calls": [{"name": "t", "status": "repaired"}]}}"#;
    let dir = std::env::temp_dir().join(format!("toolmend-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.jsonl"), format!("{case}\n")).unwrap();
    let out = toolmend(&["eval", dir.to_str().unwrap()], None);
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL x/wrong") && stdout.contains("expected \"repaired\", got \"valid\""),
        "{stdout}"
    );
}

#[test]
fn prepare_rewrites_tools_for_a_model() {
    let tools = r#"[{"type": "function", "function": {"name": "lookup", "description": "Find.", "parameters": {
        "type": "object", "required": ["id"], "x-toolmend": {"contract": "ids are lowercase"},
        "properties": {"id": {"type": "string", "pattern": "^[a-z]+$", "x-toolmend": {"semantic": "path"}},
                       "tags": {"type": "array", "items": {"type": "string"}}}}}}]"#;
    let run = |model: &str, extra: &[&str]| {
        let mut args = vec!["prepare", "--model", model];
        args.extend(extra);
        let out = toolmend(&args, Some(tools));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let kimi = run("kimi-k2-instruct", &[]);
    let function = &kimi[0]["function"];
    assert_eq!(
        function["parameters"]["properties"]["id"]["pattern"],
        "[a-z]+"
    );
    assert!(function["parameters"].get("x-toolmend").is_none());
    assert!(
        function["parameters"]["properties"]["id"]
            .get("x-toolmend")
            .is_none()
    );
    let description = function["description"].as_str().unwrap();
    assert!(
        description.starts_with("Find.") && description.contains("ids are lowercase"),
        "{description}"
    );
    assert!(
        description.contains("`tags` is a JSON array of strings"),
        "{description}"
    );
    // Another model keeps its anchors; switches turn features off.
    let other = run("qwen3-coder", &["--no-contract-hints"]);
    assert_eq!(
        other[0]["function"]["parameters"]["properties"]["id"]["pattern"],
        "^[a-z]+$"
    );
    assert_eq!(other[0]["function"]["description"], "Find.");
}

/// Runs `toolmend turns` on the given lines and returns the output lines.
fn turns(lines: &[String]) -> Vec<serde_json::Value> {
    let out = toolmend(&["turns"], Some(&(lines.join("\n") + "\n")));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const READ_TOOL: &str = r#"[{"name": "read", "parameters": {"type": "object", "required": ["path"],
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "additionalProperties": false}}]"#;

// Review finding 1: the unsplit original never comes back beside its parts.
#[test]
fn turns_emits_each_part_of_a_split_call_once() {
    let tools = READ_TOOL.replace('\n', " ");
    let line = format!(
        r#"{{"id": "t", "tools": {tools}, "message": {{"tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "read", "arguments": "{{\"path\":\"/a\"}}{{\"limit\":5}}"}}}}]}}}}"#
    );
    let out = &turns(&[line])[0];
    let calls = out["message"]["tool_calls"].as_array().unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["c1", "c1_2"], "{out}");
    assert_eq!(calls[0]["function"]["arguments"], r#"{"path":"/a"}"#);
    assert_eq!(calls[1]["function"]["arguments"], r#"{"limit":5}"#);
    assert_eq!(out["calls"][1]["status"], "invalid");
}

// Review finding 4: flat calls are written back where they were read.
#[test]
fn turns_writes_flat_calls_in_their_own_shape() {
    let tools = READ_TOOL.replace('\n', " ");
    let line = format!(
        r#"{{"id": "t", "tools": {tools}, "message": {{"tool_calls": [{{"id": "c1", "name": "read", "arguments": "{{\"file_path\": \"/a\"}}"}}]}}}}"#
    );
    let out = &turns(&[line])[0];
    let call = &out["message"]["tool_calls"][0];
    assert_eq!(call["arguments"], r#"{"path":"/a"}"#, "{out}");
    assert!(call.get("function").is_none(), "{out}");
}

// Review finding 12: an invalid leaked call stays in the text and is not dispatched.
#[test]
fn turns_keeps_an_invalid_recovered_call_in_the_text() {
    let tools = READ_TOOL.replace('\n', " ");
    let content = r#"Let me read.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"limit\": 5}}\n</tool_call>"#;
    let line = format!(
        r#"{{"id": "t", "tools": {tools}, "options": {{"recover": "content"}}, "message": {{"content": "{content}"}}}}"#
    );
    let out = &turns(&[line])[0];
    assert_eq!(out["calls"][0]["status"], "invalid", "{out}");
    assert!(
        out["message"]["content"]
            .as_str()
            .unwrap()
            .contains("<tool_call>"),
        "{out}"
    );
    assert_eq!(out["message"].get("tool_calls"), None, "{out}");
}

// Review finding 13: a line's max_reprompts applies even when its session already exists.
#[test]
fn turns_applies_each_lines_retry_budget() {
    let tools = READ_TOOL.replace('\n', " ");
    let line = |id: &str, args: &str, budget: u8| {
        format!(
            r#"{{"id": "{id}", "session": "s", "options": {{"max_reprompts": {budget}}}, "tools": {tools}, "message": {{"tool_calls": [{{"id": "c", "type": "function", "function": {{"name": "read", "arguments": "{args}"}}}}]}}}}"#
        )
    };
    let out = turns(&[line("t1", "{}", 5), line("t2", r#"{\"limit\": 1}"#, 0)]);
    assert_eq!(out[0]["calls"][0]["outcome"], "re-prompt");
    assert_eq!(out[1]["calls"][0]["outcome"], "gave-up", "{}", out[1]);
}

// Review finding 16: a tool whose schema does not compile is reported on the line.
#[test]
fn turns_warns_about_tools_that_did_not_compile() {
    let line = r#"{"id": "t", "tools": [{"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "strin"}}}}], "message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]}}"#;
    let out = &turns(&[line.to_owned()])[0];
    let warning = out["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.contains("`t`") && warning.contains("schema is refused"),
        "{out}"
    );
}

// Issue #8 item 2: one tool's refused schema never stops another tool of the same file, and
// the refused tool's calls are `unvalidated` (exit 1, never `valid`) in `repair` and `turns`.
#[test]
fn a_refused_schema_fails_closed_and_spares_the_other_tools() {
    let tools = r#"[{"name": "bad", "parameters": {"type": "object", "properties": {"x": {"pattern": "("}}}},
        {"name": "rm", "parameters": {"type": "object", "required": ["paths"]}}]"#;
    let file = schema_file(tools);
    let good = toolmend(
        &[
            "repair",
            "--schema",
            file.as_str(),
            "--tool",
            "rm",
            r#"{"paths": []}"#,
        ],
        None,
    );
    assert_eq!(
        good.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    let bad = toolmend(
        &[
            "repair",
            "--schema",
            file.as_str(),
            "--tool",
            "bad",
            "--json",
            r#"{"path": 5}"#,
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert_eq!(result["status"], "unvalidated");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("schema of tool `bad` was refused"),
        "{stderr}"
    );

    let line = format!(
        r#"{{"id": "t", "tools": {}, "message": {{"tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "bad", "arguments": "{{\"path\": 5}}"}}}}]}}}}"#,
        tools.replace('\n', " ")
    );
    let out = &turns(&[line])[0];
    assert_eq!(out["calls"][0]["status"], result["status"], "{out}");
    assert_eq!(out["calls"][0]["error"], result["error"], "{out}");
}

const FLAT_READ: &str = r#"{"id": "ok", "tools": [{"name": "read", "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}], "message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"/a\", \"limit\": null}"}}]}}"#;

// Issue #8 item 10: one line that is not UTF-8 costs one error line, not the rest of the input.
#[test]
fn turns_answers_a_line_that_is_not_utf8_and_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(FLAT_READ.as_bytes());
    input.extend_from_slice(b"\n{\"id\": \"bad\xff\xfe\"}\r\n");
    input.extend_from_slice(FLAT_READ.replace("\"ok\"", "\"after\"").as_bytes());
    input.push(b'\n');
    let out = toolmend_with(&["turns"], Some(&input), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["calls"][0]["status"], "repaired");
    assert_eq!(lines[1]["id"], serde_json::Value::Null);
    let error = lines[1]["error"].as_str().unwrap();
    assert!(error.contains("line 2 is not UTF-8"), "{error}");
    assert_eq!(lines[2]["id"], "after");
    assert_eq!(lines[2]["calls"][0]["status"], "repaired");
}

// Issue #8 item 12: an empty folder is an error that says why, not an empty table.
#[test]
fn eval_on_an_empty_folder_says_why() {
    let dir = std::env::temp_dir().join(format!("toolmend-eval-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = toolmend(&["eval", dir.to_str().unwrap()], None);
    std::fs::write(dir.join("blank.jsonl"), "\n\n").unwrap();
    let blank = toolmend(&["eval", dir.to_str().unwrap()], None);
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no `*.jsonl` file"), "{stderr}");
    let stderr = String::from_utf8_lossy(&blank.stderr);
    assert_eq!(blank.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds no case"), "{stderr}");
}

// Issue #8 item 12: `RUST_LOG` turns on the library's events, on stderr; stdout stays JSONL.
#[test]
fn turns_logs_events_to_stderr_under_rust_log() {
    let input = format!("{FLAT_READ}\n");
    let quiet = toolmend_with(&["turns"], Some(input.as_bytes()), &[]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let out = toolmend_with(
        &["turns"],
        Some(input.as_bytes()),
        &[("RUST_LOG", "tool_repair=info")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("tool_input_repaired") && stderr.contains("null_stripped"),
        "{stderr}"
    );
    assert_eq!(out.stdout, quiet.stdout);
}
