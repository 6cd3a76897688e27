//! Whether a request's history is clean, decided from its bytes: every assistant tool call
//! [`toolmend::Mender::mend_history`] would look at holds well-formed arguments, so the body
//! goes out as received without a tree being built (issue #29 §3).
//!
//! It walks exactly the members `mend_history` reads (the same API shapes, the same
//! skips: a message or call that is not an object, a `function` that is not one, a `role` or
//! `type` that is not the string it looks for) with the one-pass [`Cursor`], and answers
//! [`Unread`] whenever the tree must decide: a call whose arguments an upstream would reject,
//! and anything it does not read the way the tree does (a key with an escape in an object it
//! reads, a member it reads given twice, a string that cannot be decoded, a body that is not
//! JSON). It must never call a history clean that `mend_history` would change: the tree path
//! then runs as before, so a wrong "unsure" costs time, never bytes.

use crate::error::Api;
use crate::spans::{Cursor, Unread, string_of};

/// `Ok` when `body` is JSON whose history `mend_history` would leave as it is; `Err` when the
/// tree must decide.
pub(super) fn check(api: Api, body: &str) -> Result<(), Unread> {
    // The whole body is checked as JSON by this pass; the history's members are read again
    // from their spans.
    let key = match api {
        Api::Responses => "input",
        Api::OpenAi | Api::Anthropic | Api::Ollama => "messages",
    };
    let [history] = members(body, [key])?;
    let Some(history) = history.filter(|h| h.starts_with('[')) else {
        return Ok(());
    };
    Cursor::new(history).array(|cursor| {
        let item = cursor.value()?;
        if item.starts_with('{') {
            item_is_clean(api, item)?;
        }
        Ok(())
    })
}

/// One object of the history array.
fn item_is_clean(api: Api, item: &str) -> Result<(), Unread> {
    match api {
        Api::OpenAi | Api::Ollama => {
            let [role, calls] = members(item, ["role", "tool_calls"])?;
            if !is_string(role, "assistant")? {
                return Ok(());
            }
            let Some(calls) = calls.filter(|c| c.starts_with('[')) else {
                return Ok(());
            };
            each_object(calls, |call| {
                let [function] = members(call, ["function"])?;
                let Some(function) = function.filter(|f| f.starts_with('{')) else {
                    return Ok(());
                };
                let [arguments] = members(function, ["arguments"])?;
                match api {
                    Api::Ollama => object(arguments),
                    _ => object_text(arguments),
                }
            })
        }
        Api::Responses => {
            let [kind, arguments] = members(item, ["type", "arguments"])?;
            if !is_string(kind, "function_call")? {
                return Ok(());
            }
            object_text(arguments)
        }
        Api::Anthropic => {
            let [role, content] = members(item, ["role", "content"])?;
            if !is_string(role, "assistant")? {
                return Ok(());
            }
            let Some(content) = content.filter(|c| c.starts_with('[')) else {
                return Ok(());
            };
            each_object(content, |block| {
                let [kind, input] = members(block, ["type", "input"])?;
                if !is_string(kind, "tool_use")? {
                    return Ok(());
                }
                object(input)
            })
        }
    }
}

/// Runs `check` on each object element of an array's text (other elements are skipped, as
/// the tree skips them).
fn each_object(
    array: &str,
    mut check: impl FnMut(&str) -> Result<(), Unread>,
) -> Result<(), Unread> {
    Cursor::new(array).array(|cursor| {
        let element = cursor.value()?;
        if element.starts_with('{') {
            check(element)?;
        }
        Ok(())
    })
}

/// The spans of `keys` in the object `text` (`None` when absent), the rest skipped; `Err`
/// when `text` is not one JSON object, a key holds an escape (it could spell one of `keys`)
/// or one of `keys` repeats (the tree keeps the last: left to it).
fn members<'a, const N: usize>(
    text: &'a str,
    keys: [&str; N],
) -> Result<[Option<&'a str>; N], Unread> {
    let mut found = [None; N];
    let mut cursor = Cursor::new(text);
    cursor.object(|cursor, key| {
        let key = key.ok_or(Unread)?;
        let value = cursor.value()?;
        if let Some(slot) = keys.iter().position(|k| *k == key) {
            if found[slot].replace(value).is_some() {
                return Err(Unread);
            }
        }
        Ok(())
    })?;
    cursor.end()?;
    Ok(found)
}

/// Whether the value is the string `want` (`Value::as_str`); `Err` when it cannot be decoded.
fn is_string(value: Option<&str>, want: &str) -> Result<bool, Unread> {
    Ok(match value {
        Some(text) => string_of(text)?.is_some_and(|s| s == want),
        None => false,
    })
}

/// Arguments held as a value (Anthropic `input`, Ollama `arguments`): clean when an object.
fn object(value: Option<&str>) -> Result<(), Unread> {
    match value {
        Some(text) if text.starts_with('{') => Ok(()),
        _ => Err(Unread),
    }
}

/// Arguments held as text (Chat and Responses `arguments`): clean when a string whose text is
/// one JSON object (the library's reading: serde_json's, leading whitespace allowed).
fn object_text(value: Option<&str>) -> Result<(), Unread> {
    let text = value.map(string_of).transpose()?.flatten().ok_or(Unread)?;
    match serde_json::from_str::<&serde_json::value::RawValue>(&text) {
        Ok(raw) if raw.get().trim_start().starts_with('{') => Ok(()),
        _ => Err(Unread),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolmend::{Mender, ToolSet};

    use super::*;

    fn mender() -> Mender {
        Mender::new(ToolSet::from_json(&json!([{"name": "read", "parameters": {
            "type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}}}}])))
    }

    /// Whether the library would change this body's history (`None`: not JSON to it).
    fn tree_changes(api: Api, body: &str) -> Option<bool> {
        let mut value: serde_json::Value = serde_json::from_str(body).ok()?;
        Some(
            !mender()
                .mend_history(super::super::wire(api), &mut value)
                .is_empty(),
        )
    }

    /// Bodies of each API: `true` when the one pass must take them as clean.
    fn corpus() -> Vec<(Api, String, bool)> {
        let chat = |calls: &str| {
            format!(
                r#"{{"model":"m","messages":[{{"role":"user","content":"tool_calls"}},{{"role":"assistant","content":null,"tool_calls":{calls}}},{{"role":"tool","content":"{{x"}}]}}"#
            )
        };
        let call = |args: &str| {
            format!(
                r#"{{"id":"a","type":"function","function":{{"name":"read","arguments":{args}}}}}"#
            )
        };
        let mut out = vec![];
        for (args, clean) in [
            (r#""{\"path\":\"a\"}""#, true),
            (r#"" \n{\"path\": \"a\", \"x\": [1]}""#, true),
            (r#""{\"path\":5}""#, true),
            (r#""{}""#, true),
            (r#""""#, false),
            (r#""{'path': 'a'}""#, false),
            (r#""[1]""#, false),
            (r#""{\"path\":\"a\"} x""#, false),
            ("null", false),
            (r#"{"path":"a"}"#, false),
            ("5", false),
            (r#""\ud800""#, false),
        ] {
            out.push((Api::OpenAi, chat(&format!("[{}]", call(args))), clean));
            out.push((
                Api::OpenAi,
                chat(&format!("[{},{}]", call(r#""{}""#), call(args))),
                clean,
            ));
        }
        for (body, clean) in [
            (chat("[]"), true),
            (chat("null"), true),
            (chat(r#"[1, "x", {"id":"b"}, {"function":"f"}, {"function":{"name":"read"}}]"#), false),
            (chat(r#"[1, "x", {"id":"b"}, {"function":"f"}]"#), true),
            (r#"{"messages":[{"role":"user","tool_calls":[{"function":{"arguments":""}}]}]}"#.into(), true),
            (r#"{"messages":[{"role":"assist\u0061nt","tool_calls":[{"function":{"arguments":""}}]}]}"#.into(), false),
            (r#"{"messages":[{"role":"assistant","role":"user","tool_calls":[{"function":{"arguments":""}}]}]}"#.into(), false),
            (r#"{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","arguments":""}}]}]}"#.into(), false),
            (r#"{"messages":[{"role":"assistant","tool\u005fcalls":[{"function":{"arguments":""}}]}]}"#.into(), false),
            (r#"{"messages":"tool_calls","x":1}"#.into(), true),
            (r#"{"messages":[],"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":""}}]}]}"#.into(), false),
            (r#"{"messages":[{"role":"assistant","tool_calls":[]}]} x"#.into(), false),
            (r#"[{"role":"assistant","tool_calls":[]}]"#.into(), false),
            (r#"{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}"}}]}],"n":1e400}"#.into(), true),
        ] {
            out.push((Api::OpenAi, body, clean));
        }
        for (args, clean) in [
            (r#"{"path":"a"}"#, true),
            ("{}", true),
            (r#""{\"path\":\"a\"}""#, false),
            ("null", false),
            ("[]", false),
        ] {
            out.push((Api::Ollama, format!(r#"{{"messages":[{{"role":"assistant","tool_calls":[{{"function":{{"name":"read","arguments":{args}}}}}]}}]}}"#), clean));
        }
        for (input, clean) in [
            (r#"{"path":"a"}"#, true),
            (r#""{\"path\":\"a\"}""#, false),
            ("null", false),
        ] {
            out.push((Api::Anthropic, format!(r#"{{"messages":[{{"role":"assistant","content":[{{"type":"text","text":"tool_use"}},{{"type":"tool_use","id":"t","name":"read","input":{input}}}]}}]}}"#), clean));
        }
        out.push((
            Api::Anthropic,
            r#"{"messages":[{"role":"assistant","content":"tool_use"}]}"#.into(),
            true,
        ));
        out.push((
            Api::Anthropic,
            r#"{"messages":[{"role":"user","content":[{"type":"tool_use","input":""}]}]}"#.into(),
            true,
        ));
        for (args, clean) in [
            (r#""{\"path\":\"a\"}""#, true),
            (r#""""#, false),
            (r#"{"path":"a"}"#, false),
        ] {
            out.push((Api::Responses, format!(r#"{{"input":[{{"role":"user","content":"hi"}},{{"type":"function_call","call_id":"c","name":"read","arguments":{args}}},{{"type":"function_call_output","output":"x"}}]}}"#), clean));
        }
        out.push((Api::Responses, r#"{"input":"function_call"}"#.into(), true));
        out
    }

    #[test]
    fn a_history_taken_as_clean_is_one_the_library_leaves_as_it_is() {
        for (api, body, want_clean) in corpus() {
            let clean = check(api, &body).is_ok();
            assert_eq!(clean, want_clean, "{api:?} {body}");
            if clean {
                assert_ne!(tree_changes(api, &body), Some(true), "{api:?} {body}");
            }
        }
    }

    #[test]
    fn every_dirty_history_of_the_corpus_is_one_the_library_changes() {
        // The corpus's "not clean" bodies that are JSON with a call to mend: the library does
        // change them (so the walk reads what the library reads, not only more cautiously).
        let changed = corpus()
            .into_iter()
            .filter(|(api, body, clean)| !clean && tree_changes(*api, body) == Some(true))
            .count();
        assert!(changed >= 20, "{changed}");
    }
}
