//! The recovery policy of GRAMMARS §1 and the cross-engine divergences of §3, one test each,
//! through the public API.

use serde_json::{Value, json};
use toolmend::ToolSet;
use toolmend::recover::{StreamRecoverer, recover_text};

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "count", "parameters": {"type": "object", "properties": {"n": {"type": "string"}, "offset": {"type": "integer"}}}},
        {"name": "free"},
        {"name": "server.tool-x"},
    ]))
}

const HERMES: &str =
    "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";

fn names(text: &str) -> Vec<String> {
    recover_text(text, &tools(), 16)
        .calls
        .into_iter()
        .map(|c| c.name)
        .collect()
}

fn args(text: &str) -> Vec<Value> {
    recover_text(text, &tools(), 16)
        .calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap())
        .collect()
}

#[test]
fn nothing_inside_fences_is_recovered() {
    assert!(names(&format!("```\n{HERMES}\n```")).is_empty());
    assert!(names(&format!("~~~~ text\n{HERMES}\n~~~~\n")).is_empty());
    assert!(names(&format!("  ```json\n{HERMES}\n  ```")).is_empty());
    // An unclosed fence runs to the end of the text.
    assert!(names(&format!("```\ncode\n{HERMES}")).is_empty());
    // A shorter run does not close a longer fence.
    assert!(names(&format!("````\n```\n{HERMES}\n````")).is_empty());
    // After the fence closes, prose resumes.
    assert_eq!(names(&format!("```\nx\n```\n{HERMES}")), ["bash"]);
    // Four spaces of indent is not a fence opener.
    assert_eq!(names(&format!("    ```\n{HERMES}")), ["bash"]);
}

#[test]
fn nothing_inside_inline_code_is_recovered() {
    assert!(names(&format!("Write `{HERMES}` to call it.")).is_empty());
    assert!(names(&format!("Write ``a ` {HERMES}`` to call it.")).is_empty());
    // An unmatched backtick is literal.
    assert_eq!(names(&format!("it`s here: {HERMES}")), ["bash"]);
    // A span does not cross a blank line.
    assert_eq!(names(&format!("a ` b\n\n{HERMES} `")), ["bash"]);
}

#[test]
fn fence_and_backtick_rules_do_not_apply_inside_a_block() {
    let text = "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"echo '```' `date`\"}}</tool_call> after";
    assert_eq!(args(text), [json!({"command": "echo '```' `date`"})]);
}

#[test]
fn calls_inside_think_are_recovered() {
    let text = format!("<think>I will list.\n{HERMES}\n</think>Done.");
    let found = recover_text(&text, &tools(), 16);
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.text, "<think>I will list.\n\n</think>Done.");
}

/// The prompt prefilled `<think>`: the text before a lone leading `</think>` is reasoning,
/// scanned like the inside of `<think>…</think>` (#28).
#[test]
fn calls_before_a_lone_leading_think_closer_are_recovered() {
    let text = format!("I will list.\n{HERMES}\n</think>\n\n{HERMES}");
    let found = recover_text(&text, &tools(), 16);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.text, "I will list.\n\n</think>\n\n");
}

/// A code fence the model left open in its reasoning ends with the reasoning, so the call after
/// `</think>` is recovered (#28); inside `<think>…</think>` too.
#[test]
fn an_unclosed_fence_in_reasoning_ends_at_the_think_closer() {
    for lead in ["", "<think>"] {
        let text = format!("{lead}Plan:\n```python\nprint(1)\n</think>\n{HERMES}");
        assert_eq!(names(&text), ["bash"], "{text}");
        let same_line = format!("{lead}```\nx = 1</think>{HERMES}");
        assert_eq!(names(&same_line), ["bash"], "{same_line}");
    }
    // The call inside the open fence is still code.
    assert!(names(&format!("```\n{HERMES}\n</think>\ndone")).is_empty());
}

/// A fence after a closing reasoning tag, or one that quotes an opening tag first, is code to
/// its own close: a `</think>` in it is quoted text, and the call after it stays masked.
#[test]
fn a_think_closer_inside_an_answer_fence_is_code() {
    let after = format!("<think>plan</think>\n```\nx</think>\n{HERMES}");
    assert!(names(&after).is_empty());
    let quoted = format!("```\n<think>a</think>\n{HERMES}");
    assert!(names(&quoted).is_empty());
}

#[test]
fn unknown_names_are_dropped_per_call() {
    let text = "<function_calls><invoke name=\"rm_rf\"></invoke><invoke name=\"read_file\"><parameter name=\"path\">a</parameter></invoke></function_calls>";
    let found = recover_text(text, &tools(), 16);
    assert_eq!(
        found
            .calls
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["read_file"]
    );
    assert_eq!(found.text, "");
    // A block of only unknown calls stays text.
    let unknown = "<tool_call>{\"name\": \"Bash\", \"arguments\": {}}</tool_call>";
    assert_eq!(recover_text(unknown, &tools(), 16).text, unknown);
}

#[test]
fn order_is_kept_across_families() {
    let text = format!(
        "{}\n<｜DSML｜invoke name=\"read_file\"><｜DSML｜parameter name=\"path\" string=\"true\">x</｜DSML｜parameter></｜DSML｜invoke>\n[TOOL_CALLS]free[ARGS]{{}}",
        HERMES
    );
    assert_eq!(names(&text), ["bash", "read_file", "free"]);
}

#[test]
fn at_most_max_calls_and_a_block_over_the_cap_stays_text() {
    let text = format!("{HERMES}{HERMES}{HERMES}");
    let found = recover_text(&text, &tools(), 2);
    assert_eq!(found.calls.len(), 2);
    assert_eq!(found.text, HERMES);
    let two_in_one = "<function_calls><invoke name=\"free\"></invoke><invoke name=\"free\"></invoke></function_calls>";
    let found = recover_text(&format!("{HERMES}{two_in_one}"), &tools(), 2);
    assert_eq!(found.calls.len(), 1);
    assert_eq!(found.text, two_in_one);
    assert!(recover_text(HERMES, &tools(), 0).calls.is_empty());
}

#[test]
fn whole_message_forms_need_the_whole_message() {
    let bare = "{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}";
    assert_eq!(names(bare), ["bash"]);
    assert_eq!(names(&format!("<think>plan</think>\n{bare}\n")), ["bash"]);
    assert!(names(&format!("Sure: {bare}")).is_empty());
    assert!(names(&format!("{bare} and then")).is_empty());
    assert!(names("[bash(command='ls'), rm_rf(path='/')]").is_empty());
}

// GRAMMARS §3, one row each.

#[test]
fn divergence_block_with_no_closer_only_at_end_of_sequence() {
    // A complete, strict payload followed by nothing but whitespace or end tokens: the model
    // stopped at EOS (issue #10). Followed by other text, or cut inside the payload: text.
    let eos = "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}";
    assert_eq!(names(eos), ["bash"]);
    assert_eq!(names(&format!("{eos}\n<|im_end|>\n")), ["bash"]);
    assert!(names(&format!("{eos}\nNow the tests.")).is_empty());
    assert!(names(&eos[..eos.len() - 1]).is_empty());
    assert_eq!(
        names("<|tools_prefix|>[{\"bash\": {\"command\": \"ls\"}}]"),
        ["bash"]
    );
    assert_eq!(
        names("<|python_start|>[bash(command='ls')]<|eot_id|>"),
        ["bash"]
    );
    assert!(
        names(
            "<minimax:tool_call><invoke name=\"bash\"><parameter name=\"command\">ls</parameter>"
        )
        .is_empty()
    );
}

#[test]
fn divergence_kimi_dotted_and_hyphenated_names_are_kept() {
    let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.server.tool-x:3<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
    assert_eq!(names(text), ["server.tool-x"]);
}

#[test]
fn divergence_dsml_string_false_is_json_decoded_and_function_calls_is_accepted() {
    let text = "<｜DSML｜function_calls><｜DSML｜invoke name=\"count\"><｜DSML｜parameter name=\"offset\" string=\"false\">7</｜DSML｜parameter><｜DSML｜parameter name=\"n\" string=\"true\">7</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>";
    assert_eq!(args(text), [json!({"offset": 7, "n": "7"})]);
}

#[test]
fn divergence_glm_zero_argument_one_line_call() {
    assert_eq!(args("<tool_call>free</tool_call>"), [json!({})]);
}

#[test]
fn divergence_minimax_schema_less_numbers_stay_strings() {
    let tools = ToolSet::from_json(&json!([{"name": "t"}]));
    let text = "<minimax:tool_call><invoke name=\"t\"><parameter name=\"n\">10</parameter></invoke></minimax:tool_call>";
    assert_eq!(
        recover_text(text, &tools, 16).calls[0].arguments,
        r#"{"n":"10"}"#
    );
    // With a schema: string stays a string, integer becomes a number (opencode#1328).
    let typed = "<tool_call>\n<function=count>\n<parameter=n>\n10\n</parameter>\n<parameter=offset>\n130\n</parameter>\n</function>\n</tool_call>";
    assert_eq!(args(typed), [json!({"n": "10", "offset": 130})]);
}

#[test]
fn divergence_llama_json_in_prose_is_not_a_call() {
    assert!(
        names("Example: {\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}.").is_empty()
    );
    assert_eq!(
        names("<|python_tag|>{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}"),
        ["bash"]
    );
}

#[test]
fn divergence_xlam_in_a_json_fence_is_a_call_only_as_xlams_own_format() {
    // #28: for xLAM the fence is the format (vLLM reads it); the fence must say so alone.
    let fenced = "```json\n[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]\n```";
    assert_eq!(names(fenced), ["bash"]);
    // Not as an example followed by prose, nor with any other key set.
    assert!(names(&format!("{fenced}\nRun that yourself.")).is_empty());
    assert!(
        names("```json\n[{\"name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}]\n```")
            .is_empty()
    );
}

#[test]
fn divergence_multi_line_json_in_deepseek_and_kimi() {
    let ds = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bash<｜tool▁sep｜>{\n  \"command\": \"ls\"\n}<｜tool▁call▁end｜>";
    let kimi = "<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0<|tool_call_argument_begin|>{\n \"command\": \"ls\"\n}<|tool_call_end|>";
    assert_eq!(names(ds), ["bash"]);
    assert_eq!(names(kimi), ["bash"]);
}

#[test]
fn stream_holds_back_only_a_cut_sentinel() {
    let tools = tools();
    let mut stream = StreamRecoverer::new(16);
    assert_eq!(stream.push(&tools, "hello<｜DS").text, "hello");
    let out = stream.push(&tools, "ML｜invoke name=\"free\"></｜DSML｜invoke>world");
    assert_eq!((out.text.as_str(), out.calls.len()), ("world", 1));
    assert_eq!(stream.push(&tools, " and more").text, " and more");
    assert_eq!(stream.finish(&tools).text, "");
}

#[test]
fn stream_flushes_an_unfinished_block_as_text_at_the_end() {
    let tools = tools();
    let mut stream = StreamRecoverer::new(16);
    let first = stream.push(&tools, "ok <tool_call>{\"name\": \"bash\", ");
    assert_eq!(first.text, "ok ");
    let end = stream.finish(&tools);
    assert!(end.calls.is_empty());
    assert_eq!(end.text, "<tool_call>{\"name\": \"bash\", ");
}

#[test]
fn stream_passes_plain_prose_through_at_once() {
    let tools = tools();
    let mut stream = StreamRecoverer::new(16);
    assert_eq!(
        stream.push(&tools, "Just an answer, no calls. ").text,
        "Just an answer, no calls. "
    );
    assert_eq!(
        stream.push(&tools, "[1] is a footnote").text,
        "[1] is a footnote"
    );
}

#[test]
fn a_name_resolver_may_map_undeclared_names_and_is_reported() {
    use toolmend::recover::{RecoverOptions, recover_text_with};
    fn lowercase(tools: &ToolSet, name: &str) -> Option<String> {
        let lower = name.to_lowercase();
        tools.get(&lower).map(|_| lower)
    }
    let text = "<tool_call>{\"name\": \"BASH\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";
    let options = RecoverOptions::new(16).resolve_names(lowercase);
    let found = recover_text_with(text, &tools(), &options);
    assert_eq!(found.calls.len(), 1);
    assert_eq!(
        (
            found.calls[0].name.as_str(),
            found.calls[0].written_name.as_deref()
        ),
        ("bash", Some("BASH"))
    );
    assert_eq!(found.text, "");
    // Without the resolver the call is dropped and the block stays text.
    assert!(recover_text(text, &tools(), 16).calls.is_empty());
    // A declared name is never passed to the resolver.
    assert_eq!(
        recover_text_with(HERMES, &tools(), &options).calls[0].written_name,
        None
    );
}

#[test]
fn declared_names_match_byte_for_byte_whatever_their_characters() {
    let tools = ToolSet::from_json(&json!([
        {"name": "grocery.orderIngredients", "parameters": {"type": "object"}},
        {"name": "web-search", "parameters": {"type": "object"}},
    ]));
    let found = |text: &str| -> Vec<String> {
        recover_text(text, &tools, 16)
            .calls
            .into_iter()
            .map(|c| c.name)
            .collect()
    };
    let dotted = "<|tool_call_start|>[grocery.orderIngredients(items=['eggs'])]<|tool_call_end|>";
    assert_eq!(found(dotted), ["grocery.orderIngredients"]);
    let hyphen =
        "<tool_call>\n{\"name\": \"web-search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>";
    assert_eq!(found(hyphen), ["web-search"]);
    // Another case or a prefix is another name: dropped.
    assert!(found("[grocery.orderingredients(items=['eggs'])]").is_empty());
    assert!(found("<|python_start|>[grocery.order(items=['eggs'])]<|python_end|>").is_empty());
}

#[test]
fn a_lost_list_entry_is_listed_in_its_place_never_dropped_silently() {
    let tools = tools();
    // A Hermes call, then a Cohere list whose second action cannot be read (a string), then
    // another readable action of the same list.
    let text = format!(
        "{HERMES} then <|START_ACTION|>[{{\"tool_name\": \"read_file\", \"parameters\": {{\"path\": \"a\"}}}}, {{\"tool_name\": \"bash\", \"parameters\": \"rm -rf /\"}}, {{\"tool_name\": \"read_file\", \"parameters\": {{\"path\": \"b\"}}}}]<|END_ACTION|>"
    );
    let found = recover_text(&text, &tools, 16);
    assert_eq!(found.calls.len(), 3);
    assert_eq!(found.lost.len(), 1);
    let lost = &found.lost[0];
    assert_eq!(
        (lost.name.as_str(), lost.family, lost.position),
        ("bash", "cohere", 2)
    );
    assert_eq!(
        lost.text,
        "{\"tool_name\": \"bash\", \"parameters\": \"rm -rf /\"}"
    );
    assert_eq!(lost.span, found.calls[1].span);
    // The stream lists it too, at the same place, for any chunking.
    for size in [1, 7, 64, text.len()] {
        let mut stream = StreamRecoverer::new(16);
        let mut lost_streamed = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            lost_streamed.extend(stream.push(&tools, &text[at..end]).lost);
            at = end;
        }
        lost_streamed.extend(stream.finish(&tools).lost);
        assert_eq!(lost_streamed, found.lost, "chunks of {size}");
    }
    // An entry of an undeclared tool is dropped like any undeclared call, not listed.
    let undeclared = "<|START_ACTION|>[{\"tool_name\": \"deploy\", \"parameters\": 5}, {\"tool_name\": \"bash\", \"parameters\": {\"command\": \"ls\"}}]<|END_ACTION|>";
    assert!(recover_text(undeclared, &tools, 16).lost.is_empty());
}
