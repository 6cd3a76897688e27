//! Gemma 4 and FunctionGemma: GRAMMARS §2.26.
//!
//! ```text
//! <|tool_call>call:bash{command:<|"|>flutter analyze<|"|>}<tool_call|>
//! ```
//!
//! **Detects** `<|tool_call>call:NAME{ARGS}` closed by `<tool_call|>` (or `<turn|>`, which the
//! model sometimes writes instead); the opener with a stray colon (`<|tool_call>:call:NAME`) or
//! without `call:` (`<|tool_call>NAME{…}`); a bare call glued to the thought channel's end
//! (`<channel|>call:NAME{…}`); and FunctionGemma's
//! `<start_function_call>call:NAME{ARGS}<end_function_call>`. `ARGS` is a relaxed object: bare
//! keys; strings quoted by the escape token (`<|"|>`, or `<escape>` for FunctionGemma) or by
//! `"`; other values bare JSON literals, nested objects and lists. Values keep their types (the
//! server parser's behaviour; vLLM's offline utility turns everything into strings).
//!
//! A missing closer is accepted at end of sequence only (GRAMMARS §1.3).
//!
//! **Never accepts** the bare `call:NAME{…}` / `<call>NAME{…}` fallback in prose (false
//! positives), or a block without its closer followed by more text.

use serde_json::{Map, Value};

use super::{Block, Grammar, Input, close_or_eos};
use crate::limits::MAX_DEPTH;
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, expect, expect_ws, find, name_until, skip_ws,
};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "gemma",
    sentinels: &["<|tool_call>", "<start_function_call>", CHANNEL_CALL],
    parse,
};

/// A bare call glued to the end of Gemma 4's thought channel: its special token makes it safe.
const CHANNEL_CALL: &str = "<channel|>call:";

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let function_gemma = s[start..body].starts_with("<start_function_call>");
    let quote = if function_gemma { "<escape>" } else { "<|\"|>" };
    let i = if function_gemma {
        expect_ws(s, body, "call:")?
    } else if s[start..body] == *CHANNEL_CALL {
        body
    } else {
        // Gemma 4 also writes a stray colon (`<|tool_call>:call:NAME`) or drops `call:`.
        let mut i = skip_ws(s, body);
        for part in [":", "call:"] {
            match expect(s, i, part) {
                Ok(after) => i = after,
                Err(Stop::Incomplete) => return Err(Stop::Incomplete),
                Err(Stop::Invalid) => {}
            }
        }
        i
    };
    let (name, brace) = name_until(s, i, b"{")?;
    let (value, end) = object(s, brace + 1, quote, 0)?;
    let Value::Object(map) = value else {
        return Err(Stop::Invalid);
    };
    let fields = map.into_iter().map(|(k, v)| (k, Field::Typed(v))).collect();
    let closers: &[&str] = if function_gemma {
        &["<end_function_call>"]
    } else {
        &["<tool_call|>", "<turn|>"]
    };
    let mut last = Err(Stop::Invalid);
    for closer in closers {
        match close_or_eos(input, end, closer) {
            Ok(after) => {
                return Block::new(after, vec![RawCall::fields(name, fields)]);
            }
            Err(Stop::Incomplete) => last = Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
    }
    last
}

/// The members of a relaxed object whose `{` ends at `at`; returns it and the index after `}`.
fn object(s: &str, at: usize, quote: &str, depth: usize) -> Step<(Value, usize)> {
    if depth > MAX_DEPTH {
        return Err(Stop::Invalid);
    }
    let mut map = Map::new();
    let mut i = at;
    loop {
        i = skip_ws(s, i);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b'}') => return Ok((Value::Object(map), i + 1)),
            Some(_) => {}
        }
        let (key, colon) = if let Ok(open) = expect(s, i, quote) {
            let close = find(s, open, quote)?;
            (s[open..close].to_owned(), close + quote.len())
        } else {
            let (key, colon) = name_until(s, i, b":")?;
            (key.trim_matches('"').to_owned(), colon)
        };
        if key.is_empty() || key.len() > MAX_NAME_BYTES {
            return Err(Stop::Invalid);
        }
        let after_colon = expect_ws(s, colon, ":")?;
        let (value, end) = value(s, after_colon, quote, depth + 1)?;
        map.insert(key, value);
        i = skip_ws(s, end);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b',') => i += 1,
            Some(b'}') => {}
            Some(_) => return Err(Stop::Invalid),
        }
    }
}

fn value(s: &str, at: usize, quote: &str, depth: usize) -> Step<(Value, usize)> {
    let i = skip_ws(s, at);
    if let Ok(open) = expect(s, i, quote) {
        let close = find(s, open, quote)?;
        return Ok((
            Value::String(s[open..close].to_owned()),
            close + quote.len(),
        ));
    }
    match s.as_bytes().get(i) {
        None => Err(Stop::Incomplete),
        Some(b'{') => object(s, i + 1, quote, depth),
        Some(b'[') => list(s, i + 1, quote, depth),
        Some(b'"') => {
            let mut de = serde_json::Deserializer::from_str(&s[i..]).into_iter::<String>();
            match de.next() {
                Some(Ok(text)) => Ok((Value::String(text), i + de.byte_offset())),
                Some(Err(e)) if e.is_eof() => Err(Stop::Incomplete),
                _ => Err(Stop::Invalid),
            }
        }
        Some(_) => {
            let b = s.as_bytes();
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') {
                j += 1;
            }
            if j == b.len() {
                return Err(Stop::Incomplete);
            }
            let token = s[i..j].trim();
            let value = serde_json::from_str::<Value>(token)
                .ok()
                .filter(|v| !v.is_object() && !v.is_array())
                .unwrap_or_else(|| Value::String(token.to_owned()));
            Ok((value, j))
        }
    }
}

fn list(s: &str, at: usize, quote: &str, depth: usize) -> Step<(Value, usize)> {
    if depth > MAX_DEPTH {
        return Err(Stop::Invalid);
    }
    let mut items = Vec::new();
    let mut i = at;
    loop {
        i = skip_ws(s, i);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b']') => return Ok((Value::Array(items), i + 1)),
            Some(_) => {}
        }
        let (item, end) = value(s, i, quote, depth + 1)?;
        items.push(item);
        i = skip_ws(s, end);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b',') => i += 1,
            Some(b']') => {}
            Some(_) => return Err(Stop::Invalid),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const BASH: &str = "<|tool_call>call:bash{command:<|\"|>flutter analyze<|\"|>}<tool_call|>";

    #[test]
    fn recovers_the_samples() {
        recovers(BASH, &[("bash", json!({"command": "flutter analyze"}))]);
        let fg = "<start_function_call>call:read_file{path:<escape>lib/main.dart<escape>}<end_function_call>";
        recovers(fg, &[("read_file", json!({"path": "lib/main.dart"}))]);
    }

    #[test]
    fn types_bare_values_and_nested_structures() {
        let text = "<|tool_call>call:run_tests{filter:<|\"|>a, b}<|\"|>,jobs:4,fail_fast:true,markers:[<|\"|>slow<|\"|>,<|\"|>db<|\"|>]}<turn|>";
        recovers(
            text,
            &[(
                "run_tests",
                json!({"filter": "a, b}", "jobs": 4, "fail_fast": true, "markers": ["slow", "db"]}),
            )],
        );
        let two = format!("{BASH}\n{BASH}");
        let call = ("bash", json!({"command": "flutter analyze"}));
        assert_eq!(recovers(&two, &[call.clone(), call]), "\n");
    }

    #[test]
    fn ignores_the_bare_fallback_and_look_alikes() {
        ignores("call:bash{command:<|\"|>ls<|\"|>}");
        ignores("Gemma opens with <|tool_call> then call:.");
    }

    #[test]
    fn recovers_the_gemma_4_opener_variants() {
        let colon = "<|tool_call>:call:bash{command:<|\"|>pytest<|\"|>}";
        assert_eq!(
            recovers(colon, &[("bash", json!({"command": "pytest"}))]),
            ""
        );
        let no_call = "<|tool_call>get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>";
        recovers(no_call, &[("get_weather", json!({"city": "Paris"}))]);
        let channel = "<|channel>thought\nRead the entry file first.\n<channel|>call:bash{command:<|\"|>cat /work/src/entry.c<|\"|>}";
        assert_eq!(
            recovers(
                channel,
                &[("bash", json!({"command": "cat /work/src/entry.c"}))]
            ),
            "<|channel>thought\nRead the entry file first.\n"
        );
        let dotted = "<|tool_call>call:grocery.orderIngredients{deliveryAddress:<|\"|>845 Willow Lane<|\"|>}<tool_call|>";
        recovers(
            dotted,
            &[(
                "grocery.orderIngredients",
                json!({"deliveryAddress": "845 Willow Lane"}),
            )],
        );
        ignores("<|tool_call>:call:bash{command:<|\"|>pytest<|\"|>} and then more prose");
        rejects_truncation(no_call);
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(BASH);
    }
}
