//! Regressions from the review of the recover stage: each test holds a finding's input, checked
//! through the whole-text scan and through the stream cut at every char boundary, and that the
//! returned text is the input minus the recovered spans.

use serde_json::{Value, json};
use toolmend::ToolSet;
use toolmend::recover::{StreamRecoverer, recover_text};

#[path = "support/recover_stream.rs"]
mod recover_stream;
use recover_stream::stream;

fn tools() -> ToolSet {
    let s = |props: Value| json!({"type": "object", "properties": props});
    let string = json!({"type": "string"});
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": s(json!({"path": string}))},
        {"name": "write_file", "parameters": s(json!({"path": string, "content": string}))},
        {"name": "bash", "parameters": s(json!({"command": string}))},
        {"name": "list_dir", "parameters": s(json!({"path": string}))},
    ]))
}

/// The calls (name, arguments) and text of `text`, after checking the stream at every cut and
/// that the text is the input minus the spans.
#[track_caller]
fn scan(text: &str) -> (Vec<(String, Value)>, String) {
    let tools = tools();
    let whole = recover_text(text, &tools, 16);
    let mut rest = String::new();
    let mut at = 0;
    for call in &whole.calls {
        if call.span.start >= at {
            rest.push_str(&text[at..call.span.start]);
            at = call.span.end;
        }
    }
    rest.push_str(&text[at..]);
    assert_eq!(whole.text, rest, "text minus spans: {text:?}");
    let cuts = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    for cut in cuts {
        let got = stream(&tools, &[&text[..cut], &text[cut..]]);
        assert_eq!(got, whole, "stream cut at {cut} of {text:?}");
    }
    let calls = whole
        .calls
        .iter()
        .map(|c| (c.name.clone(), serde_json::from_str(&c.arguments).unwrap()))
        .collect();
    (calls, whole.text)
}

fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_owned(), args)
}

// Finding 1: a truncated call must not be completed with the next block's closer.

#[test]
fn a_truncated_call_does_not_swallow_the_next_block() {
    let cases = [
        (
            "<tool_call>\n<function=bash>\n<parameter=command>\nrm -rf build\n\nSorry, let me read first.\n",
            "<tool_call>\n<function=read_file>\n<parameter=path>\na.rs\n</parameter>\n</function>\n</tool_call>",
            "read_file",
            "a.rs",
        ),
        (
            "<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>rm -rf build\nOops.\n",
            "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.rs</arg_value>\n</tool_call>",
            "read_file",
            "a.rs",
        ),
        (
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">rm -rf build\nOops.\n",
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"read_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">a.rs</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            "read_file",
            "a.rs",
        ),
        (
            "<function_calls>\n<invoke name=\"bash\">\n<parameter name=\"command\">rm -rf build\nOops.\n",
            "<function_calls>\n<invoke name=\"read_file\">\n<parameter name=\"path\">a.rs</parameter>\n</invoke>\n</function_calls>",
            "read_file",
            "a.rs",
        ),
        (
            "<seed:tool_call>\n<function=bash>\n<parameter=command>rm -rf build\nOops.\n",
            "<seed:tool_call>\n<function=read_file>\n<parameter=path>a.rs</parameter>\n</function>\n</seed:tool_call>",
            "read_file",
            "a.rs",
        ),
        (
            "<|open|>tools<|sep|><|open|>call tool=\"bash\" index=\"1\"<|sep|><|open|>argument key=\"command\" type=\"string\"<|sep|>rm -rf build\nOops.\n",
            "<|open|>tools<|sep|><|open|>call tool=\"list_dir\" index=\"2\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            "list_dir",
            "proto",
        ),
        (
            "<tool_calls><tool_call>bash<tool_sep><arg_key>command</arg_key><arg_value>rm -rf build\nOops",
            "<tool_calls><tool_call>list_dir<tool_sep><arg_key>path</arg_key><arg_value>deploy</arg_value></tool_call></tool_calls>",
            "list_dir",
            "deploy",
        ),
    ];
    for (truncated, complete, name, path) in cases {
        let text = format!("{truncated}{complete}");
        let (calls, rest) = scan(&text);
        assert_eq!(calls, [call(name, json!({"path": path}))], "{text:?}");
        assert_eq!(rest, truncated, "{text:?}");
    }
}

// Finding 2a: an undeclared call's arguments are not rescanned as prose.

#[test]
fn markup_inside_an_undeclared_call_is_not_a_call() {
    for text in [
        "<tool_call>\n<function=deploy>\n<parameter=notes>\nrun <tool_call>bash<arg_key>command</arg_key><arg_value>make clean</arg_value></tool_call> first\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>{\"name\": \"deploy\", \"arguments\": {\"notes\": \"run <tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value></tool_call>\"}}</tool_call>",
    ] {
        let (calls, rest) = scan(text);
        assert_eq!(calls, [], "{text:?}");
        assert_eq!(rest, text);
    }
}

#[test]
fn a_backtick_inside_an_undeclared_call_does_not_mask_later_calls() {
    let text = "<tool_call>\n<function=deploy>\n<parameter=notes>\n```\n</parameter>\n</function>\n</tool_call>\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";
    assert_eq!(scan(text).0, [call("bash", json!({"command": "ls"}))]);
    let text = "<tool_call>{\"name\": \"deploy\", \"arguments\": {\"notes\": \"use `x\"}}</tool_call>\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call> then `y`";
    assert_eq!(scan(text).0, [call("bash", json!({"command": "ls"}))]);
}

// Finding 3: arguments under a key the family does not use are not dropped as `{}`.

#[test]
fn a_call_object_with_a_foreign_arguments_key_is_no_call() {
    for text in [
        "[TOOL_CALLS][{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}]",
        "<tool_calls>[{\"name\": \"list_dir\", \"parameters\": {\"path\": \"deploy\"}}]</tool_calls>",
        "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"list_dir\", \"arguments\": {\"path\": \"x\"}}]<|END_ACTION|>",
        "<tool_call>{\"name\": \"bash\", \"args\": {\"command\": \"rm -rf /tmp/x\"}}</tool_call>",
        "<tool_call>{\"name\": \"write_file\", \"input\": {\"path\": \"a\", \"content\": \"b\"}}</tool_call>",
        "{\"name\": \"list_dir\", \"paramters\": {\"path\": \"x\"}}",
    ] {
        let (calls, rest) = scan(text);
        assert_eq!(calls, [], "{text:?}");
        assert_eq!(rest, text);
    }
    // A call with no arguments key and nothing else is still a call with no arguments.
    let text = "<tool_call>{\"name\": \"list_dir\", \"id\": \"c1\"}</tool_call>";
    assert_eq!(scan(text).0, [call("list_dir", json!({}))]);
}

// Finding 4: an inline code span that closes at the very end of the text masks its content.

#[test]
fn inline_code_closing_at_the_end_of_the_text_masks_the_call() {
    let hermes =
        "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";
    for text in [
        format!("Use `{hermes}`"),
        format!("`{hermes}`"),
        format!("``{hermes}``"),
        format!("see ```{hermes}```"),
        format!("`a\n{hermes}\nb`"),
        format!("    ```\n{hermes}\n    ```"),
    ] {
        let (calls, rest) = scan(&text);
        assert_eq!(calls, [], "{text:?}");
        assert_eq!(rest, text);
    }
}

// Finding 6: MiniMax M2's section closer is optional at the end of the text.

#[test]
fn minimax_m2_without_its_closer_is_recovered_at_the_end() {
    for text in [
        "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>",
        "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>\n",
    ] {
        assert_eq!(
            scan(text).0,
            [call("bash", json!({"command": "ls"}))],
            "{text:?}"
        );
    }
}

// Finding 7: consecutive bare Qwen3-Coder functions are all recovered.

#[test]
fn consecutive_bare_functions_are_all_recovered() {
    let text = "<function=read_file>\n<parameter=path>\na.rs\n</parameter>\n</function>\n<function=read_file>\n<parameter=path>\nb.rs\n</parameter>\n</function>";
    let (calls, rest) = scan(text);
    assert_eq!(
        calls,
        [
            call("read_file", json!({"path": "a.rs"})),
            call("read_file", json!({"path": "b.rs"}))
        ]
    );
    assert_eq!(rest, "");
    let text = "<function=deploy>\n</function>\n<function=read_file>\n<parameter=path>\nb.rs\n</parameter>\n</function>";
    assert_eq!(scan(text).0, [call("read_file", json!({"path": "b.rs"}))]);
    // A truncated bare function after a complete one ends the block before it.
    let text = "<function=read_file>\n<parameter=path>\na.rs\n</parameter>\n</function>\n<function=bash>\n<parameter=command>\nls";
    let (calls, rest) = scan(text);
    assert_eq!(calls, [call("read_file", json!({"path": "a.rs"}))]);
    assert_eq!(rest, "\n<function=bash>\n<parameter=command>\nls");
}

// Finding 5: streaming a long block re-parses it only when it may have ended; the result is
// the whole-text one, and a completed block is still released before the stream ends. (The
// speed is measured in benches/recover.rs, never here.)

fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

fn long_blocks() -> Vec<String> {
    let code = "fn f(x: Vec<u8>) -> Option<()> { if a > b { g(x) } }\n".repeat(400);
    vec![
        format!(
            "<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"a.rs\", \"content\": {}}}}}\n</tool_call>",
            serde_json::to_string(&code).unwrap()
        ),
        format!(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">a.rs</｜DSML｜parameter>\n<｜DSML｜parameter name=\"content\" string=\"true\">{code}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
        ),
        format!(
            "<tool_call>\n<function=write_file>\n<parameter=path>\na.rs\n</parameter>\n<parameter=content>\n{code}</parameter>\n</function>\n</tool_call>"
        ),
        format!(
            "<minimax:tool_call>{}",
            "<invoke name=\"bash\"><parameter name=\"command\">x</parameter></invoke>".repeat(300)
        ),
        format!(
            "<tool_call>bash\n{}</tool_call>",
            "<arg_key>command</arg_key><arg_value>v</arg_value>".repeat(300)
        ),
        format!("Don`t worry: {}", "the quick brown fox jumps. ".repeat(800)),
    ]
}

#[test]
fn long_blocks_stream_like_the_whole_text() {
    let tools = tools();
    for block in long_blocks() {
        for size in [1, 4, 16] {
            let whole = recover_text(&block, &tools, 16);
            assert_eq!(
                stream(&tools, &chunks(&block, size)),
                whole,
                "{size}-byte chunks of {}",
                &block[..40]
            );
        }
    }
}

#[test]
fn a_long_block_is_released_before_the_stream_ends() {
    let tools = tools();
    for block in &long_blocks()[..3] {
        let text = format!("{block}\n{}", "Done. ".repeat(block.len() / 48));
        let mut recoverer = StreamRecoverer::new(16);
        let mut calls = 0;
        for chunk in chunks(&text, 4) {
            calls += recoverer.push(&tools, chunk).calls.len();
        }
        assert_eq!(calls, 1, "{}", &block[..40]);
        assert!(recoverer.finish(&tools).calls.is_empty());
    }
}

// Finding 2b: markup quoted in a whole-message payload's strings is part of the payload.

#[test]
fn a_whole_message_payload_wins_over_markup_in_its_strings() {
    let text = "[{\"name\": \"write_file\", \"arguments\": {\"path\": \"docs.md\", \"content\": \"Qwen emits <tool_call><function=bash><parameter=command>ls</parameter></function></tool_call> blocks\"}}]";
    let (calls, rest) = scan(text);
    assert_eq!(
        calls,
        [call(
            "write_file",
            json!({"path": "docs.md", "content": "Qwen emits <tool_call><function=bash><parameter=command>ls</parameter></function></tool_call> blocks"})
        )]
    );
    assert_eq!(rest, "");
    // A payload that is not a whole message leaves the block inside to the scanner.
    let text = "[{\"name\": \"write_file\", \"arguments\": {\"path\": \"docs.md\", \"content\": \"<tool_call><function=bash><parameter=command>ls</parameter></function></tool_call>\"}}] and more";
    assert_eq!(scan(text).0, [call("bash", json!({"command": "ls"}))]);
}

// Finding 9: a `</think>` inside a whole-message payload's string does not move the region.

#[test]
fn a_think_closer_inside_a_payload_string_does_not_hide_the_payload() {
    let text = "{\"name\": \"bash\", \"parameters\": {\"command\": \"grep -r </think> logs\"}}";
    let (calls, rest) = scan(text);
    assert_eq!(
        calls,
        [call("bash", json!({"command": "grep -r </think> logs"}))]
    );
    assert_eq!(rest, "");
    // The text after a real `</think>` is still tried.
    let text = "<think>plan</think>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]";
    let (calls, rest) = scan(text);
    assert_eq!(calls, [call("bash", json!({"command": "ls"}))]);
    assert_eq!(rest, "<think>plan</think>");
}

// Finding 8: pythonic literals follow Python's string and number syntax.

#[test]
fn pythonic_literals_follow_python() {
    let cases = [
        (
            r"[bash(command=r'\bfoo\b')]",
            json!({"command": "\\bfoo\\b"}),
        ),
        ("[bash(command='a\\101b')]", json!({"command": "aAb"})),
        ("[bash(command='a\\012b')]", json!({"command": "a\nb"})),
        ("[bash(command='\\U0001F600')]", json!({"command": "😀"})),
        ("[bash(command='a\\ab')]", json!({"command": "a\u{7}b"})),
        ("[bash(command='\\ud83d\\ude00')]", json!({"command": "😀"})),
        (
            "[bash(command='echo a\\\nb')]",
            json!({"command": "echo ab"}),
        ),
        ("[bash(command='ls'),]", json!({"command": "ls"})),
        (
            "[read_file(path='a', limit=1_000)]",
            json!({"path": "a", "limit": 1000}),
        ),
        (
            "[write_file(path=\"a.py\", content=\"\"\"line1\nline2\"\"\")]",
            json!({"path": "a.py", "content": "line1\nline2"}),
        ),
        (
            "<|python_start|>[bash(command='a\\101b')]<|python_end|>",
            json!({"command": "aAb"}),
        ),
    ];
    for (text, args) in cases {
        let name = text
            .trim_start_matches("<|python_start|>")
            .trim_start_matches('[');
        let name = &name[..name.find('(').unwrap()];
        assert_eq!(scan(text).0, [call(name, args)], "{text:?}");
    }
    for text in [
        "[bash(command='\\N{BULLET}')]",
        "[read_file(path='a', limit=1__0)]",
    ] {
        assert_eq!(scan(text).0, [], "{text:?}");
    }
}

// Nits: whole-message forms after any reasoning closer, and before an end-of-turn token.

#[test]
fn whole_message_forms_follow_every_reasoning_closer() {
    let text = "[THINK]plan[/THINK][bash(command='ls')]";
    let (calls, rest) = scan(text);
    assert_eq!(calls, [call("bash", json!({"command": "ls"}))]);
    assert_eq!(rest, "[THINK]plan[/THINK]");
    let text =
        "<seed:think>plan</seed:think>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]";
    let (calls, rest) = scan(text);
    assert_eq!(calls, [call("bash", json!({"command": "ls"}))]);
    assert_eq!(rest, "<seed:think>plan</seed:think>");
}

#[test]
fn a_whole_message_payload_may_end_with_an_end_of_turn_token() {
    let text = "{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}<|eot_id|>";
    let (calls, rest) = scan(text);
    assert_eq!(calls, [call("bash", json!({"command": "ls"}))]);
    assert_eq!(rest, "");
    let text = "{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}<|eot_id|> more";
    assert_eq!(scan(text).0, []);
}

// Finding 2c: a Qwen3-Coder block quoted in an Anthropic-style value shares its closer.

#[test]
fn a_quoted_block_sharing_the_closer_stays_inside_the_value() {
    let text = "<function_calls>\n<invoke name=\"write_file\">\n<parameter name=\"content\">Use <tool_call><function=bash><parameter=command>rm -rf build</parameter></function></tool_call> to clean.</parameter>\n</invoke>\n</function_calls>";
    let (calls, rest) = scan(text);
    assert_eq!(
        calls,
        [call(
            "write_file",
            json!({"content": "Use <tool_call><function=bash><parameter=command>rm -rf build</parameter></function></tool_call> to clean."})
        )]
    );
    assert_eq!(rest, "");
    // The same with an undeclared outer tool: no call at all (finding 2a).
    let text = text.replace("write_file", "deploy");
    let (calls, rest) = scan(&text);
    assert_eq!(calls, []);
    assert_eq!(rest, text);
}

// Nit: coercion follows local `$ref`s.

#[test]
fn coercion_follows_local_refs() {
    let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": {
        "type": "object",
        "$defs": {"Mode": {"type": "integer"}},
        "properties": {"m": {"$ref": "#/$defs/Mode"}}
    }}]));
    let text =
        "<tool_call>\n<function=t>\n<parameter=m>\n3\n</parameter>\n</function>\n</tool_call>";
    let found = recover_text(text, &tools, 16);
    assert_eq!(found.calls.len(), 1);
    let args: Value = serde_json::from_str(&found.calls[0].arguments).unwrap();
    assert_eq!(args, json!({"m": 3}));
}
