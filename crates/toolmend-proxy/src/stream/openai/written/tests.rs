//! The writer against the tree path it replaces (kept here as the oracle): the same bytes for
//! every text it takes, and the texts it must leave to the tree.

use serde_json::{Map, Value, json};

use super::{ChoiceKeys, chunk};

/// `Sent::read` of the tree path: the envelope (`choices` swap-removed) and the choice.
fn read(text: &str, position: usize) -> (Map<String, Value>, Map<String, Value>) {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(text) else {
        return (Map::new(), Map::new());
    };
    let choice = match object.remove("choices") {
        Some(Value::Array(mut items)) if position < items.len() => {
            match items.swap_remove(position) {
                Value::Object(choice) => choice,
                _ => Map::new(),
            }
        }
        _ => Map::new(),
    };
    if let Some(usage) = object.get_mut("usage") {
        *usage = Value::Null;
    }
    (object, choice)
}

/// `OpenAiStream::chunk` on the tree path.
fn oracle(
    envelope: Option<&str>,
    keys: &ChoiceKeys<'_>,
    index: u64,
    delta: &Value,
    finish: Option<&str>,
) -> String {
    let (mut object, sent) = match keys {
        ChoiceKeys::Whole(text, position) => read(text, *position),
        _ => {
            let object = match envelope {
                Some(text) => match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(mut object)) => {
                        object.remove("choices");
                        if let Some(usage) = object.get_mut("usage") {
                            *usage = Value::Null;
                        }
                        object
                    }
                    _ => Map::new(),
                },
                None => Map::new(),
            };
            let extras = match keys {
                ChoiceKeys::Extras(text, position) => {
                    let (_, mut choice) = read(text, *position);
                    choice
                        .retain(|k, _| !matches!(k.as_str(), "index" | "delta" | "finish_reason"));
                    choice
                }
                _ => Map::new(),
            };
            (object, extras)
        }
    };
    let mut out = sent;
    out.insert("index".into(), json!(index));
    out.insert("delta".into(), delta.clone());
    out.insert("finish_reason".into(), json!(finish));
    object.insert("choices".into(), json!([out]));
    Value::Object(object).to_string()
}

/// Received chunks in compact form, and in forms the writer leaves to the tree.
fn corpus() -> (Vec<&'static str>, Vec<&'static str>) {
    let compact = vec![
        r#"{"id":"chatcmpl-mock0000000000000000000002","object":"chat.completion.chunk","created":1700000000,"model":"mock-gpt","system_fingerprint":"fp_mock0001","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"San"}}]},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"x","choices":[{"index":1,"delta":{},"logprobs":{"content":[]}},{"delta":{"content":"a"},"index":0}],"usage":{"total_tokens":3}}"#,
        r#"{"choices":[{"index":0}],"id":"y","service_tier":"default","usage":null,"z":[1,-0,2.50,-0.0,0.000,123456789012345678901234567890,true,false,null,{},[]]}"#,
        "{\"id\":\"esc \\\" \\\\ \\b \\f \\n \\r \\t \\u0001 \\u001f é 😀 \u{7f}\",\"choices\":[{\"delta\":{\"content\":\"x\"}}]}",
        r#"{"id":"no choices"}"#,
        r#"{"id":"x","choices":"not an array"}"#,
        r#"{"id":"x","choices":[1,"two",{"index":3,"k":"v"}]}"#,
        r#"{"choices":[],"usage":{}}"#,
        r#"{}"#,
    ];
    let other = vec![
        r#"{"id": "space","choices":[{"index":0}]}"#,
        r#"{"id":"x","choices":[{"index":0}] }"#,
        r#"{"id":"\u00e9","choices":[{"index":0}]}"#,
        r#"{"id":"\/","choices":[{"index":0}]}"#,
        r#"{"id":"\u007f","choices":[{"index":0}]}"#,
        r#"{"id":"\u000A","choices":[{"index":0}]}"#,
        r#"{"id":"\u000a","choices":[{"index":0}]}"#,
        r#"{"id":"\ud83d\ude00","choices":[{"index":0}]}"#,
        r#"{"id":"a","id":"b","choices":[{"index":0}]}"#,
        r#"{"id":"x","choices":[{"index":0,"index":1}]}"#,
        r#"{"id":"x","choices":[{"index":0,"delta":{"a":1,"a":2}}]}"#,
        r#"{"id":"x","choices":[{"index":0}]}trailing"#,
        r#"[1]"#,
        r#"not json"#,
        r#"{"id":01,"choices":[]}"#,
        r#"{"id":1E+5,"choices":[]}"#,
        r#"{"id":1E5,"choices":[]}"#,
        r#"{"id":1e5,"choices":[]}"#,
        r#"{"id":1e+5,"choices":[]}"#,
        r#"{"id":1.,"choices":[]}"#,
        "{\"id\":\"raw\ttab\",\"choices\":[]}",
    ];
    (compact, other)
}

#[test]
fn the_writer_gives_the_tree_paths_bytes_for_every_text_it_takes() {
    let (compact, other) = corpus();
    let deltas = [
        json!({"content": "held \"text\"\n"}),
        json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\":1}"}}]}),
        json!({}),
    ];
    let all: Vec<&str> = compact.iter().chain(&other).copied().collect();
    for (n, text) in all.iter().enumerate() {
        let is_compact = n < compact.len();
        for position in 0..3 {
            for envelope in [Some(*text), None] {
                for keys in [
                    ChoiceKeys::Whole(text, position),
                    ChoiceKeys::Extras(text, position),
                    ChoiceKeys::None,
                ] {
                    if matches!(keys, ChoiceKeys::Whole(..)) && envelope.is_none() {
                        continue;
                    }
                    for delta in &deltas {
                        for finish in [None, Some("tool_calls"), Some("a \"b\"")] {
                            let want = oracle(envelope, &keys, 7, delta, finish);
                            let got = chunk(envelope, keys, 7, delta, finish);
                            let uses_text = envelope.is_some() || !matches!(keys, ChoiceKeys::None);
                            if is_compact || !uses_text {
                                assert_eq!(got.as_deref(), Some(want.as_str()), "{text}");
                            } else {
                                assert_eq!(got, None, "left to the tree: {text}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn serde_json_writes_the_compact_texts_as_they_are() {
    // The premise of the writer: a compact text is its own serialisation.
    let (compact, _) = corpus();
    for text in compact {
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value.to_string(), text);
    }
}

#[test]
fn deep_nesting_is_left_to_the_tree() {
    let deep = format!(
        r#"{{"id":"x","z":{}{},"choices":[]}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert_eq!(
        chunk(Some(&deep), ChoiceKeys::None, 0, &json!({}), None),
        None
    );
}
