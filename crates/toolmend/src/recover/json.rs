//! JSON payloads inside markup: where a value ends, and the `{name, arguments}` call object.
//!
//! Payloads are passed through as the model wrote them (never re-serialized) so that the engine
//! salvages and repairs recovered arguments exactly like native ones.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::call::{Args, RawCall};
use super::cursor::{Step, Stop, skip_ws};
use crate::limits::MAX_DEPTH;

/// The end of the JSON object or array that starts at `at` (after optional whitespace).
///
/// Brackets are matched with string awareness, then the slice must parse as strict JSON. The
/// text ending before the value closes is incomplete; a value that closes but does not parse, or
/// that is nested deeper than [`MAX_DEPTH`], is invalid. Returns `(start, end)`.
pub(crate) fn value_span(s: &str, at: usize) -> Step<(usize, usize)> {
    let start = skip_ws(s, at);
    let b = s.as_bytes();
    match b.get(start) {
        None => return Err(Stop::Incomplete),
        Some(b'{' | b'[') => {}
        Some(_) => return Err(Stop::Invalid),
    }
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    let reached = |i: usize| super::cursor::reach(i);
    for (i, &c) in b.iter().enumerate().skip(start) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    reached(i);
                    return Err(Stop::Invalid);
                }
            }
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    let end = i + 1;
                    reached(end);
                    return match serde_json::from_str::<&RawValue>(&s[start..end]) {
                        Ok(_) => Ok((start, end)),
                        Err(_) => Err(Stop::Invalid),
                    };
                }
            }
            _ => {}
        }
    }
    reached(s.len());
    Err(Stop::Incomplete)
}

/// Like [`value_span`], but the value must be an object.
pub(crate) fn object_span(s: &str, at: usize) -> Step<(usize, usize)> {
    let (start, end) = value_span(s, at)?;
    if s.as_bytes()[start] == b'{' {
        Ok((start, end))
    } else {
        Err(Stop::Invalid)
    }
}

/// Arguments given as JSON text: an object passes through as written; a JSON string whose
/// content is an object is decoded (GRAMMARS §1.3, Hermes `arguments` as a string).
pub(crate) fn arguments(raw: &RawValue) -> Option<String> {
    let text = raw.get().trim();
    if text.starts_with('{') {
        return Some(text.to_owned());
    }
    let inner: String = serde_json::from_str(text).ok()?;
    let value: &RawValue = serde_json::from_str(inner.trim()).ok()?;
    value
        .get()
        .starts_with('{')
        .then(|| inner.trim().to_owned())
}

/// Keys a call object may carry besides its name and arguments.
const METADATA_KEYS: [&str; 3] = ["id", "tool_call_id", "type"];

/// Reads a call object: the name under one of `name_keys`, the arguments under the first of
/// `arg_keys` that is present. A missing arguments key means a call with no arguments only
/// when the object holds nothing else but metadata: arguments under a key this family does not
/// use (`args`, `input`, a misspelling) would otherwise be dropped silently, so such an object
/// is no call.
pub(crate) fn call_object(text: &str, name_keys: &[&str], arg_keys: &[&str]) -> Option<RawCall> {
    let fields: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    let name: String = name_keys
        .iter()
        .find_map(|k| fields.get(*k))
        .and_then(|v| serde_json::from_str(v.get()).ok())?;
    let args = match arg_keys.iter().find_map(|k| fields.get(*k)) {
        Some(raw) => arguments(raw)?,
        None => {
            let other = fields
                .keys()
                .any(|k| !name_keys.contains(&k.as_str()) && !METADATA_KEYS.contains(&k.as_str()));
            if other {
                return None;
            }
            "{}".to_owned()
        }
    };
    Some(RawCall {
        name,
        args: Args::Json(args),
    })
}

/// Reads a JSON array of call objects (Mistral, xLAM, Granite, Hunyuan, Phi-4-mini, Nemotron,
/// LFM2).
///
/// A bad entry loses only itself (issue #28): an object that names a call but whose arguments
/// cannot be read (`"arguments": 5`, a string that holds no object, an unknown arguments key)
/// becomes an unreadable call, never recovered but reported as lost, and its neighbours are
/// kept. Any
/// other element (not an object, or no string `name`) means the array is no call list; so does
/// an array in which no entry reads.
pub(crate) fn call_array(text: &str, arg_keys: &[&str]) -> Option<Vec<RawCall>> {
    let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    entries(items.iter().map(|item| item.get()), &["name"], arg_keys)
}

/// The calls of a list's entries (see [`call_array`]): an entry naming a call whose arguments
/// cannot be read becomes an unreadable call; an entry naming no call refuses the list, and so does
/// a list in which no entry reads.
fn entries<'a>(
    items: impl Iterator<Item = &'a str>,
    name_keys: &[&str],
    arg_keys: &[&str],
) -> Option<Vec<RawCall>> {
    let mut calls = Vec::new();
    for item in items {
        match call_object(item, name_keys, arg_keys) {
            Some(call) => calls.push(call),
            None => calls.push(RawCall::unreadable(
                call_name(item, name_keys)?,
                item.to_owned(),
            )),
        }
    }
    calls.iter().any(|c| !c.is_unreadable()).then_some(calls)
}

/// The JSON call list that starts at `at` (after optional whitespace), read entry by entry
/// (issue #28): each entry as in [`call_array`], and two objects with no comma between them
/// (`[{…} {…}]`, a slip models make) are two entries. Returns the calls and the index after
/// the `]`. The text ending inside the list is incomplete; anything else that is not a list of
/// objects is invalid.
pub(crate) fn call_list(
    s: &str,
    at: usize,
    name_keys: &[&str],
    arg_keys: &[&str],
) -> Step<(Vec<RawCall>, usize)> {
    let open = skip_ws(s, at);
    let mut i = super::cursor::expect(s, open, "[")?;
    let mut items = Vec::new();
    let end = loop {
        let (from, to) = object_span(s, i)?;
        items.push(&s[from..to]);
        let next = skip_ws(s, to);
        match s.as_bytes().get(next) {
            None => return Err(Stop::Incomplete),
            Some(b',') => i = next + 1,
            Some(b'{') => i = next,
            Some(b']') => break next + 1,
            Some(_) => return Err(Stop::Invalid),
        }
    };
    let calls = entries(items.into_iter(), name_keys, arg_keys).ok_or(Stop::Invalid)?;
    Ok((calls, end))
}

/// The string name under the first of `name_keys` of the object `text`: a call, however
/// broken its arguments; `None` when `text` names no call.
pub(crate) fn call_name(text: &str, name_keys: &[&str]) -> Option<String> {
    let fields: BTreeMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    let name = name_keys.iter().find_map(|k| fields.get(*k))?;
    serde_json::from_str(name.get()).ok()
}

/// The arguments keys most JSON families accept.
pub(crate) const ARGS_OR_PARAMETERS: &[&str] = &["arguments", "parameters"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_entry_loses_only_itself() {
        let calls = call_array(
            r#"[{"name": "a", "arguments": 5}, {"name": "b", "arguments": {"x": 1}}, {"name": "c", "args": {}}]"#,
            ARGS_OR_PARAMETERS,
        )
        .unwrap();
        let names: Vec<(&str, bool)> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.is_unreadable()))
            .collect();
        assert_eq!(names, [("a", true), ("b", false), ("c", true)]);
        // The unreadable entry keeps its text as written, for the report.
        assert_eq!(
            calls[0].args,
            Args::Unreadable(r#"{"name": "a", "arguments": 5}"#.into())
        );
        // Not a call list: an element that names no call, or no entry that reads.
        assert!(
            call_array(
                r#"[{"name": "b", "arguments": {}}, "text"]"#,
                ARGS_OR_PARAMETERS
            )
            .is_none()
        );
        assert!(call_array(r#"[{"name": "a", "arguments": 5}]"#, ARGS_OR_PARAMETERS).is_none());
        assert!(call_array("[]", ARGS_OR_PARAMETERS).is_none());
    }

    #[test]
    fn a_list_read_entry_by_entry_splits_objects_missing_their_comma() {
        let names = |s: &str| -> Step<Vec<String>> {
            call_list(s, 0, &["tool_name"], &["parameters"])
                .map(|(calls, _)| calls.into_iter().map(|c| c.name).collect())
        };
        let two = r#"[{"tool_name": "a", "parameters": {}} {"tool_name": "b", "parameters": {"x": [1]}}]"#;
        assert_eq!(names(two), Ok(vec!["a".into(), "b".into()]));
        assert_eq!(
            call_list(two, 0, &["tool_name"], &["parameters"]).map(|c| c.1),
            Ok(two.len())
        );
        let bad = r#"[{"tool_name": "a", "parameters": 7}, {"tool_name": "b", "parameters": {}}]"#;
        let (calls, _) = call_list(bad, 0, &["tool_name"], &["parameters"]).unwrap();
        assert!(calls[0].is_unreadable() && calls[0].name == "a");
        assert!(!calls[1].is_unreadable() && calls[1].name == "b");
        assert_eq!(
            names(r#"[{"tool_name": "a", "parameters": {}}"#),
            Err(Stop::Incomplete)
        );
        assert_eq!(
            names(r#"[{"tool_name": "a", "parameters": {}},]"#),
            Err(Stop::Invalid)
        );
        assert_eq!(
            names(r#"[{"tool_name": "a", "parameters": {}} "x"]"#),
            Err(Stop::Invalid)
        );
        assert_eq!(names(r#"[{"other": 1}]"#), Err(Stop::Invalid));
        assert_eq!(names("[]"), Err(Stop::Invalid));
    }

    #[test]
    fn spans_are_string_aware() {
        let s = r#"x {"a": "}{", "b": [1, {"c": 2}]} tail"#;
        assert_eq!(value_span(s, 1), Ok((2, 33)));
        assert_eq!(value_span(r#"{"a": "}"#, 0), Err(Stop::Incomplete));
        assert_eq!(value_span("{a: 1}", 0), Err(Stop::Invalid));
        assert_eq!(value_span("prose", 0), Err(Stop::Invalid));
    }

    #[test]
    fn arguments_pass_through_or_decode_a_string() {
        let call = call_object(
            r#"{"name": "f", "arguments": {"b": 1,  "a": 2}}"#,
            &["name"],
            ARGS_OR_PARAMETERS,
        );
        assert_eq!(
            call,
            Some(RawCall {
                name: "f".into(),
                args: Args::Json(r#"{"b": 1,  "a": 2}"#.into())
            })
        );
        let call = call_object(
            r#"{"name": "f", "arguments": "{\"a\": 1}"}"#,
            &["name"],
            ARGS_OR_PARAMETERS,
        );
        assert_eq!(
            call,
            Some(RawCall {
                name: "f".into(),
                args: Args::Json(r#"{"a": 1}"#.into())
            })
        );
        assert_eq!(
            call_object(
                r#"{"name": "f", "arguments": "nope"}"#,
                &["name"],
                ARGS_OR_PARAMETERS
            ),
            None
        );
        assert_eq!(
            call_object(
                r#"{"name": "f", "arguments": null}"#,
                &["name"],
                ARGS_OR_PARAMETERS
            ),
            None
        );
        assert_eq!(
            call_object(r#"{"arguments": {}}"#, &["name"], ARGS_OR_PARAMETERS),
            None
        );
    }

    #[test]
    fn a_missing_arguments_key_is_no_arguments_only_without_other_keys() {
        let none = call_object(
            r#"{"name": "f", "id": "1", "type": "function"}"#,
            &["name"],
            ARGS_OR_PARAMETERS,
        );
        assert_eq!(none.map(|c| c.args), Some(Args::Json("{}".into())));
        for text in [
            r#"{"name": "f", "args": {"a": 1}}"#,
            r#"{"name": "f", "input": {"a": 1}}"#,
            r#"{"name": "f", "paramters": {"a": 1}}"#,
        ] {
            assert_eq!(
                call_object(text, &["name"], ARGS_OR_PARAMETERS),
                None,
                "{text}"
            );
        }
        assert_eq!(
            call_object(
                r#"{"name": "f", "parameters": {"a": 1}}"#,
                &["name"],
                &["arguments"]
            ),
            None
        );
    }
}
