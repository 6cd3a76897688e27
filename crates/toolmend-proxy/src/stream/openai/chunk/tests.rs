//! The one-pass reader against the serde views it replaced (kept here as the oracle): the same
//! chunks read, the same chunks left to the tree, the same values; and a chunk read from its
//! `choices` on after a known envelope against the same chunk read whole.

use std::borrow::Cow;

use serde_json::Value;

use super::{ChunkRead, Envelope, read_chunk, read_chunk_after};
use crate::openai_views::{CallView, FunctionView, MessageView};
use crate::spans::{Member, Unread, elements, members, objects, u64_of};

/// What a reader took from a chunk, as plain values.
type Taken = (
    Option<String>,
    bool,
    Vec<(
        u64,
        Option<String>,
        Option<(Option<String>, Vec<(String, String)>, Option<Vec<Call>>)>,
    )>,
);
type Call = (Option<u64>, Option<String>, Option<String>, String);

fn taken(chunk: ChunkRead<'_>) -> Taken {
    let choices = chunk
        .choices
        .into_iter()
        .map(|choice| {
            let delta = choice.delta.map(|d| {
                let calls = d.tool_calls.map(|calls| {
                    calls
                        .into_iter()
                        .map(|f| {
                            (
                                f.index,
                                f.id.map(Cow::into_owned),
                                f.name.map(Cow::into_owned),
                                f.arguments.into_owned(),
                            )
                        })
                        .collect()
                });
                let reasoning = d
                    .reasoning
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.into_owned()))
                    .collect();
                (d.content.map(Cow::into_owned), reasoning, calls)
            });
            (choice.index, choice.finish.map(Cow::into_owned), delta)
        })
        .collect();
    (chunk.id.map(Cow::into_owned), chunk.usage, choices)
}

/// The serde views' reader, as it was before the one-pass reader.
mod oracle {
    use super::*;

    #[derive(serde::Deserialize)]
    struct ChunkView<'a> {
        #[serde(borrow, default)]
        id: Member<'a>,
        #[serde(borrow, default)]
        error: Member<'a>,
        #[serde(borrow, default)]
        usage: Member<'a>,
        #[serde(borrow, default)]
        choices: Member<'a>,
    }

    #[derive(serde::Deserialize)]
    struct ChoiceView<'a> {
        #[serde(borrow, default)]
        index: Member<'a>,
        #[serde(borrow, default)]
        finish_reason: Member<'a>,
        #[serde(borrow, default)]
        delta: Member<'a>,
    }

    fn fragment(text: &str) -> Result<Call, Unread> {
        let mut call = (None, None, None, String::new());
        if !text.starts_with('{') {
            return Ok(call);
        }
        let view: CallView<'_> = serde_json::from_str(text)?;
        call.0 = view.index.raw().and_then(u64_of);
        call.1 = view.id.text()?.filter(|s| !s.is_empty());
        if let Some(function) = view.function.object() {
            let function: FunctionView<'_> = serde_json::from_str(function)?;
            call.2 = function.name.text()?.filter(|s| !s.is_empty());
            call.3 = match function.arguments.raw() {
                None | Some("null") => String::new(),
                Some(text) if text.starts_with('"') => {
                    function.arguments.text()?.unwrap_or_default()
                }
                Some(text) => serde_json::from_str::<Value>(text)?.to_string(),
            };
        }
        Ok(call)
    }

    fn fragments(text: &str) -> Result<Vec<Call>, Unread> {
        match text {
            "null" => Ok(Vec::new()),
            _ if text.starts_with('[') => elements(text)?.into_iter().map(fragment).collect(),
            _ => Ok(vec![fragment(text)?]),
        }
    }

    pub(super) fn read(data: &str) -> Result<Taken, Unread> {
        if !data.trim_start().starts_with('{') {
            return Err(Unread);
        }
        let view: ChunkView<'_> = serde_json::from_str(data)?;
        if view.error.raw().is_some() {
            return Err(Unread);
        }
        let choices = view.choices.raw().filter(|t| t.starts_with('['));
        let choices = objects(choices.ok_or(Unread)?)?
            .into_iter()
            .map(|choice| {
                let choice: ChoiceView<'_> = serde_json::from_str(choice)?;
                // A string finish reason (`Value::as_str`); another value is left to the tree.
                let finish = match choice.finish_reason.raw() {
                    None | Some("null") => None,
                    Some(_) => Some(choice.finish_reason.text()?.ok_or(Unread)?),
                };
                let delta = match choice.delta.object() {
                    None => None,
                    Some(text) => {
                        let view: MessageView<'_> = serde_json::from_str(text)?;
                        let mut reasoning = Vec::new();
                        for (key, member) in [
                            ("reasoning_content", view.reasoning_content),
                            ("reasoning", view.reasoning),
                        ] {
                            if let Some(text) = member.text()? {
                                reasoning.push((key.to_owned(), text));
                            }
                        }
                        let calls = view.tool_calls.raw().map(fragments).transpose()?;
                        Some((view.content.text()?, reasoning, calls))
                    }
                };
                let index = choice.index.raw().and_then(u64_of).unwrap_or(0);
                Ok((index, finish, delta))
            })
            .collect::<Result<_, Unread>>()?;
        let usage = view.usage.raw().is_some_and(|t| t != "null");
        Ok((view.id.text()?, usage, choices))
    }
}

/// Chunks in the shapes streams send and the shapes the reader must leave to the tree.
fn corpus() -> Vec<String> {
    let choice = |delta: &str, finish: &str| {
        format!(
            r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}]}}"#
        )
    };
    let mut all: Vec<String> = [
        r#"{"role":"assistant","content":""}"#,
        r#"{"content":"Hello"}"#,
        r#"{"content":"Caf\u00e9 \ud83d\ude00 \"q\"\n\t\/\\"}"#,
        r#"{"content":"lone \ud800 surrogate"}"#,
        r#"{"content":null,"reasoning_content":"hm","reasoning":"r"}"#,
        r#"{"content":5}"#,
        r#"{"content":"a","content":"b"}"#,
        r#"{"reasoning":"a","reasoning":"b"}"#,
        r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":""}}]}"#,
        r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\": \"\u00e9\"}"}}]}"#,
        r#"{"tool_calls":[{"index":0,"function":{"arguments":{"a":[1,2.5e3,-0,true,null]}}}]}"#,
        r#"{"tool_calls":[{"index":0,"function":{"arguments":1e400}}]}"#,
        r#"{"tool_calls":[{"index":1.0,"id":"","function":{"name":"","arguments":null}}]}"#,
        r#"{"tool_calls":[{"index":-1,"id":5,"function":"x"}]}"#,
        r#"{"tool_calls":["junk",3,null,[],{}]}"#,
        r#"{"tool_calls":{"index":2,"function":{"name":"f","arguments":"{}"}}}"#,
        r#"{"tool_calls":null}"#,
        r#"{"tool_calls":"text"}"#,
        r#"{"tool_calls":[],"tool_calls":[]}"#,
        r#"{"tool_calls":[{"index":0,"index":1}]}"#,
        r#"{"tool_calls":[{"function":{"name":"a","name":"b"}}]}"#,
        r#"{"tool_calls":[{"function":{},"function":{}}]}"#,
        r#"{"tool_calls":[{"function":{"arguments":"\ud800"}}]}"#,
        r#"{"tool_calls":[{"id":"\udc00x","function":{}}]}"#,
        r#"{"extra":{"deep":[1,{"x":"\ud800"}]},"content":"x"}"#,
        r#"{"extra":null,"other":null}"#,
        r#"{}"#,
        r#" { "content" : "spaced" , "tool_calls" : [ { "index" : 0 } ] } "#,
        r#""not an object""#,
        r#"[1]"#,
    ]
    .into_iter()
    .map(|delta| choice(delta, "null"))
    .collect();
    all.extend([
        choice("{}", r#""stop""#),
        choice("{}", r#""st\u006fp""#),
        choice("{}", r#""\ud800""#),
        choice("{}", "5"),
        choice("{}", "{}"),
        choice("null", r#""tool_calls""#),
        choice(r#"{"content":"x"}"#, r#""length""#),
        r#"{"choices":[]}"#.to_owned(),
        r#"{"choices":[],"usage":{"total_tokens":3}}"#.to_owned(),
        r#"{"choices":[],"usage":null,"id":7}"#.to_owned(),
        r#"{"id":"\u0041b","choices":[{"delta":{"content":"a"}}]}"#.to_owned(),
        r#"{"id":"\ud800","choices":[]}"#.to_owned(),
        r#"{"choices":[{"index":3},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}"#
            .to_owned(),
        r#"{"choices":[{"index":0,"index":1}]}"#.to_owned(),
        r#"{"choices":[{"delta":{},"delta":{}}]}"#.to_owned(),
        r#"{"choices":[{"delta":5}]}"#.to_owned(),
        r#"{"choices":[{"finish_reason":null,"finish_reason":null}]}"#.to_owned(),
        r#"{"choices":[{"finish_reason":"stop","finish_reason":null}]}"#.to_owned(),
        r#"{"choices":[{"index":1,"finish_reason":"stop"},{"index":0,"delta":{},"finish_reason":"length"}]}"#.to_owned(),
        r#"{"choices":[1]}"#.to_owned(),
        r#"{"choices":{}}"#.to_owned(),
        r#"{"choices":null}"#.to_owned(),
        r#"{"choices":[],"choices":[]}"#.to_owned(),
        r#"{"id":"a","id":"b","choices":[]}"#.to_owned(),
        r#"{"usage":null,"usage":null,"choices":[]}"#.to_owned(),
        r#"{"error":{"message":"x"}}"#.to_owned(),
        r#"{"error":null,"choices":[]}"#.to_owned(),
        r#"{"usage":{}}"#.to_owned(),
        r#"{"choices":[]} trailing"#.to_owned(),
        r#"{"choices":[],}"#.to_owned(),
        r#"{"choices":[{"delta":{"content":"a"}},]}"#.to_owned(),
        r#"{"choices":[{"delta":{"content":"a\u00"}}]}"#.to_owned(),
        r#"{"choices":[{"delta":{"content":"raw	tab"}}]}"#.to_owned(),
        r#"{"choices":[{"x":01}]}"#.to_owned(),
        r#"{"choices":[{"x":1.}]}"#.to_owned(),
        r#"{"choices":[{"x":-}]}"#.to_owned(),
        r#"{"choices":[{"x":tru}]}"#.to_owned(),
        r#"{"choices":[{"x":"a\q"}]}"#.to_owned(),
        r#"{"choices":[{"x":"é 😀"}]}"#.to_owned(),
        r#"{"choices":[{"x":"\ud800"}]}"#.to_owned(),
        r#"{"choices":[{"x":1e400}]}"#.to_owned(),
        r#"{"choices":[]"#.to_owned(),
        "{".to_owned(),
        String::new(),
        "not json".to_owned(),
        "[DONE]".to_owned(),
        format!(
            r#"{{"x":{}{},"choices":[]}}"#,
            "[".repeat(100),
            "]".repeat(100)
        ),
    ]);
    all
}

/// Escaped keys: the one-pass reader leaves them to the tree (where the serde views decoded
/// them), so the two may differ only by the new reader refusing.
fn escaped_keys() -> Vec<&'static str> {
    vec![
        r#"{"choices":[{"delta":{"cont\u0065nt":"x"}}]}"#,
        r#"{"choic\u0065s":[]}"#,
        r#"{"choices":[{"\u0064elta":{"content":"x"}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"\u0069d":"c"}]}}]}"#,
        r#"{"choices":[{"delta":{"x\u0020y":null}}]}"#,
    ]
}

#[test]
fn the_one_pass_reader_reads_what_the_serde_views_read() {
    for data in corpus() {
        let new = read_chunk(&data).map(taken);
        let old = oracle::read(&data);
        match (&new, &old) {
            (Ok(new), Ok(old)) => assert_eq!(new, old, "{data}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{data}: one-pass {new:?}, serde views {old:?}"),
        }
    }
    for data in escaped_keys() {
        assert!(read_chunk(data).is_err(), "{data}");
    }
}

#[test]
fn a_delta_without_other_members_lists_exactly_its_members() {
    let mut with_known = 0;
    for data in corpus() {
        let Ok(chunk) = read_chunk(&data) else {
            continue;
        };
        for delta in chunk.choices.into_iter().filter_map(|c| c.delta) {
            let all = members(delta.text).expect("a read delta is an object");
            match delta.known {
                Some(known) => {
                    with_known += 1;
                    let mut listed: Vec<(&str, &str)> = super::KNOWN
                        .iter()
                        .zip(known)
                        .filter_map(|(k, v)| v.map(|v| (*k, v)))
                        .collect();
                    let mut all: Vec<(&str, &str)> =
                        all.iter().map(|(k, v)| (k.as_ref(), *v)).collect();
                    listed.sort_unstable();
                    all.sort_unstable();
                    assert_eq!(listed, all, "{data}");
                }
                None => assert!(
                    all.iter().any(|(k, _)| !matches!(
                        k.as_ref(),
                        "content" | "reasoning_content" | "reasoning" | "tool_calls"
                    )),
                    "{data}"
                ),
            }
        }
    }
    assert!(with_known > 10);
}

#[test]
fn strings_borrow_unless_escaped() {
    let data = r#"{"choices":[{"delta":{"content":"plain","reasoning":"a\nb","tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}"#;
    let chunk = read_chunk(data).unwrap();
    let delta = chunk.choices[0].delta.as_ref().unwrap();
    assert!(matches!(delta.content, Some(Cow::Borrowed("plain"))));
    assert!(matches!(delta.reasoning[0].1, Cow::Owned(_)));
    let call = &delta.tool_calls.as_ref().unwrap()[0];
    assert!(matches!(call.id, Some(Cow::Borrowed("c1"))));
    assert_eq!(call.arguments, r#"{"a":1}"#);
}

/// Chunks whose envelopes are the same bytes as others' (or start like them) and differ after:
/// repeated members after `choices`, `usage` on either side, another `choices`, spaces.
fn envelopes() -> Vec<String> {
    let head =
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":"#;
    let used = r#"{"id":"c\n2","usage":{"total_tokens":3},"choices":"#;
    let spaced = r#" { "id" : "x" , "choices" :  "#;
    let mut all = Vec::new();
    for envelope in [head, used, spaced, "{\"choices\":"] {
        for tail in [
            r#"[{"index":0,"delta":{"content":"a"}}]}"#,
            r#"[{"index":1,"delta":{},"finish_reason":"stop"}]}"#,
            r#"[],"id":"again"}"#,
            r#"[],"usage":null}"#,
            r#"[],"usage":{"total_tokens":1}}"#,
            r#"[],"choices":[]}"#,
            r#"[],"error":{}}"#,
            r#"{}}"#,
            r#"null}"#,
            r#"[]} trailing"#,
            r#"[]"#,
            r#"[{"delta":{"content":"\ud800"}}]}"#,
            r#"  [ ] , "model" : "m" } "#,
        ] {
            all.push(format!("{envelope}{tail}"));
        }
        all.push(envelope.to_owned());
        all.push(envelope[..envelope.len() - 3].to_owned());
    }
    all
}

#[test]
fn a_chunk_read_after_a_known_envelope_reads_as_the_chunk_read_whole() {
    let all: Vec<String> = corpus().into_iter().chain(envelopes()).collect();
    let mut resumed = 0;
    for before in &all {
        let mut seen = Envelope::default();
        let _ = read_chunk_after(before, &mut seen);
        for data in &all {
            let known = !seen.prefix.is_empty() && data.as_bytes().starts_with(&seen.prefix);
            resumed += usize::from(known);
            let mut after = Envelope {
                prefix: seen.prefix.clone(),
                id: seen.id.clone(),
                usage: seen.usage.clone(),
            };
            let new = read_chunk_after(data, &mut after).map(taken);
            let whole = read_chunk(data).map(taken);
            match (&new, &whole) {
                (Ok(new), Ok(whole)) => assert_eq!(new, whole, "{before} then {data}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{before} then {data}: {new:?}, whole {whole:?}"),
            }
            if known {
                // A chunk read from its `choices` on leaves the envelope as it was.
                assert_eq!(after.prefix, seen.prefix);
            } else if new.is_ok() {
                let mut fresh = Envelope::default();
                let _ = read_chunk_after(data, &mut fresh);
                assert_eq!(after.prefix, fresh.prefix, "{data}");
            }
        }
    }
    assert!(resumed > 1000, "{resumed}");
}

#[test]
fn the_envelope_spans_the_members_before_choices() {
    let data = r#"{"id":"c1","usage":null,"x":[1],"choices":[],"model":"m"}"#;
    let mut seen = Envelope::default();
    let read = read_chunk_after(data, &mut seen).unwrap();
    assert_eq!(read.id.as_deref(), Some("c1"));
    assert_eq!(
        seen.prefix,
        br#"{"id":"c1","usage":null,"x":[1],"choices":"#
    );
    assert_eq!(seen.id.clone().map(|s| &data[s]), Some(r#""c1""#));
    assert_eq!(seen.usage.clone().map(|s| &data[s]), Some("null"));
    // A chunk the reader refuses leaves the envelope it knew.
    let _ = read_chunk_after(r#"{"id":"c2","choices":[1]}"#, &mut seen);
    assert_eq!(
        seen.prefix,
        br#"{"id":"c1","usage":null,"x":[1],"choices":"#
    );
}

#[test]
#[ignore]
#[allow(clippy::print_stderr)] // a timing probe prints its measurement
fn timing_old_and_new() {
    let mut datas = vec![r#"{"id":"chatcmpl-mock0000000000000000000002","object":"chat.completion.chunk","created":1700000000,"model":"mock-gpt","system_fingerprint":"fp_mock0001","choices":[{"index":0,"delta":{"content":" weather"},"logprobs":null,"finish_reason":null}]}"#.to_owned(); 29];
    datas.extend(vec![r#"{"id":"chatcmpl-mock0000000000000000000002","object":"chat.completion.chunk","created":1700000000,"model":"mock-gpt","system_fingerprint":"fp_mock0001","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"San Francisco,"}}]},"logprobs":null,"finish_reason":null}]}"#.to_owned(); 20]);
    for _ in 0..2 {
        let n = 5000;
        let start = std::time::Instant::now();
        for _ in 0..n {
            for d in &datas {
                std::hint::black_box(read_chunk(d).is_ok());
            }
        }
        let new = start.elapsed().as_secs_f64() / n as f64 * 1e6;
        let start = std::time::Instant::now();
        for _ in 0..n {
            for d in &datas {
                std::hint::black_box(oracle::read(d).is_ok());
            }
        }
        let old = start.elapsed().as_secs_f64() / n as f64 * 1e6;
        eprintln!("49 chunks: one-pass {new:.1} µs, serde views {old:.1} µs");
    }
}
