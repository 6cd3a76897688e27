//! Pythonic call lists (Llama 3.2 pythonic, Llama 4, ToolACE, LFM2): GRAMMARS §2.12.
//!
//! ```text
//! <|tool_call_start|>[web_search(query="helm chart hooks order", max_results=3)]<|tool_call_end|>Looking that up.
//! ```
//!
//! **Detects** a Python list of keyword-argument calls `[f(a=1), g(b='x')]` wrapped in
//! `<|python_start|>` … `<|python_end|>` (Llama 4) or `<|tool_call_start|>` …
//! `<|tool_call_end|>` (LFM2); bare, only as the whole message ([`parse_whole`], §1.6).
//! Literals convert with Python semantics: `'x'`/`"x"` strings, ints, floats, `True`/`False`/
//! `None` (and JSON's `true`/`false`/`null`), lists, tuples and dicts with string keys. What
//! models write and Python rejects is read as meant: a raw line break inside a quoted string
//! (heredocs in `bash(command='…')`), an unescaped inner quote (a quote not followed by `,`, `)`, `]`, `}` or `:`), a set literal (an
//! array), a leading zero (`07`). A call name may be dotted or hyphenated
//! (`grocery.orderIngredients`); only a declared name is kept. LFM2 also writes a JSON list of
//! `{name, arguments}` objects between its tokens:
//!
//! ```text
//! <|tool_call_start|>[{"name": "read_file", "arguments": {"path": "Cargo.toml"}}]<|tool_call_end|>
//! ```
//!
//! A missing closer is accepted at end of sequence only (GRAMMARS §1.3).
//!
//! A call whose arguments cannot be read (a positional argument, a non-literal value) is left
//! out, and its siblings kept, when its parentheses still close.
//!
//! **Never accepts** a call with a positional argument or a non-literal value, or a list that
//! does not close.
//! LFM2's echo of the call body after the block stays text.

use serde_json::{Map, Number, Value};

use super::{Block, Grammar, Input, close_or_eos};
use crate::limits::MAX_DEPTH;
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{MAX_NAME_BYTES, Step, Stop, expect, expect_ws, skip_ws};
use crate::recover::json::{ARGS_OR_PARAMETERS, call_array, value_span};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "pythonic",
    sentinels: &["<|python_start|>", "<|tool_call_start|>"],
    parse,
};

fn parse(input: &Input<'_>, start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let close = if s[start..body].starts_with("<|python") {
        "<|python_end|>"
    } else {
        "<|tool_call_end|>"
    };
    // LFM2 also writes a JSON list of `{name, arguments}` objects between its tokens.
    let list = skip_ws(s, body);
    if close == "<|tool_call_end|>"
        && s.as_bytes().get(list) == Some(&b'[')
        && matches!(s.as_bytes().get(skip_ws(s, list + 1)), Some(b'{') | None)
    {
        let (from, to) = value_span(s, list)?;
        let calls = call_array(&s[from..to], ARGS_OR_PARAMETERS).ok_or(Stop::Invalid)?;
        return Block::new(close_or_eos(input, to, close)?, calls);
    }
    let (calls, end) = call_list(s, body)?;
    Block::new(close_or_eos(input, end, close)?, calls)
}

/// The bare list as the whole message (see [`super::super::whole`]).
pub(crate) fn parse_whole(input: &Input<'_>, start: usize) -> Step<Block> {
    let (calls, end) = call_list(input.text, start)?;
    Block::new(end, calls)
}

/// `[call, call, ...]` after optional whitespace; returns the calls and the index after `]`.
pub(crate) fn call_list(s: &str, at: usize) -> Step<(Vec<RawCall>, usize)> {
    let mut i = expect_ws(s, at, "[")?;
    let mut calls = Vec::new();
    loop {
        // A call whose arguments cannot be read (`bad(x=b'z')`) is left out when its
        // parentheses still close: its siblings are kept (an unnamed call is never recovered).
        let (call, end) = match call(s, i) {
            Err(Stop::Invalid) => (RawCall::fields(String::new(), Vec::new()), skip_call(s, i)?),
            other => other?,
        };
        calls.push(call);
        i = skip_ws(s, end);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b',') => {
                // A trailing comma before `]` is legal Python.
                i = skip_ws(s, i + 1);
                match s.as_bytes().get(i) {
                    None => return Err(Stop::Incomplete),
                    Some(b']') => return Ok((calls, i + 1)),
                    Some(_) => {}
                }
            }
            Some(b']') => return Ok((calls, i + 1)),
            Some(_) => return Err(Stop::Invalid),
        }
    }
}

/// `name(key=literal, ...)` after optional whitespace. JSON's `true`, `false` and `null` are
/// read as Python's `True`, `False` and `None`: OLMo 3 writes them, and so do other models
/// inside dict values (`f(config={"a": true})`); a bare name means nothing else in a literal.
pub(crate) fn call(s: &str, at: usize) -> Step<(RawCall, usize)> {
    let (name, mut i) = call_name(s, skip_ws(s, at))?;
    i = expect(s, i, "(")?;
    let mut fields = Vec::new();
    loop {
        i = skip_ws(s, i);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b')') => {
                let call = RawCall::fields(name.to_owned(), fields);
                return Ok((call, i + 1));
            }
            Some(_) => {}
        }
        let (key, after) = ident(s, i)?;
        let eq = expect_ws(s, after, "=")?;
        let (value, end) = literal(s, eq, 0)?;
        fields.push((key.to_owned(), Field::Typed(value)));
        i = skip_ws(s, end);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b',') => i += 1,
            Some(b')') => {}
            Some(_) => return Err(Stop::Invalid),
        }
    }
}

/// The index after the call at `at` (after optional whitespace), its arguments unread:
/// parentheses, brackets and braces balanced, quoted strings skipped.
fn skip_call(s: &str, at: usize) -> Step<usize> {
    let (_, open) = call_name(s, skip_ws(s, at))?;
    let b = s.as_bytes();
    let mut i = expect(s, open, "(")?;
    let mut depth = 1usize;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Stop::Invalid);
                }
            }
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Err(Stop::Incomplete)
}

/// A call's name at `at`: an identifier, or dotted and hyphenated identifiers
/// (`grocery.orderIngredients`), which harnesses declare; the name filter keeps only a declared
/// name, byte for byte.
fn call_name(s: &str, at: usize) -> Step<(&str, usize)> {
    let b = s.as_bytes();
    let mut i = at;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b'-')) {
        i += 1;
    }
    if i == b.len() {
        return Err(Stop::Incomplete);
    }
    let name = &s[at..i];
    if name.is_empty()
        || !(b[at].is_ascii_alphabetic() || b[at] == b'_')
        || name.ends_with(['.', '-'])
        || name.len() > MAX_NAME_BYTES
    {
        return Err(Stop::Invalid);
    }
    Ok((name, i))
}

/// A Python identifier at `at`.
fn ident(s: &str, at: usize) -> Step<(&str, usize)> {
    let b = s.as_bytes();
    let mut i = at;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    if i == b.len() {
        return Err(Stop::Incomplete);
    }
    if i == at || b[at].is_ascii_digit() || i - at > MAX_NAME_BYTES {
        return Err(Stop::Invalid);
    }
    Ok((&s[at..i], i))
}

/// A whole text that is one Python dict literal (`{'path': 'a', 'force': True}`), as a JSON
/// object; `None` for any other literal, text after it, or a text that is not Python.
pub(crate) fn dict_literal(text: &str) -> Option<Map<String, Value>> {
    let at = skip_ws(text, 0);
    if text.as_bytes().get(at) != Some(&b'{') {
        return None;
    }
    match literal(text, at, 0) {
        Ok((Value::Object(map), end)) if text[end..].trim().is_empty() => Some(map),
        _ => None,
    }
}

/// A Python literal after optional whitespace.
fn literal(s: &str, at: usize, depth: usize) -> Step<(Value, usize)> {
    if depth > MAX_DEPTH {
        return Err(Stop::Invalid);
    }
    let i = skip_ws(s, at);
    let b = s.as_bytes();
    match b.get(i) {
        None => Err(Stop::Incomplete),
        Some(b'\'' | b'"') => string(s, i).map(|(v, end)| (Value::String(v), end)),
        Some(b'[') => sequence(s, i + 1, b']', depth),
        Some(b'(') => sequence(s, i + 1, b')', depth),
        Some(b'{') => dict(s, i + 1, depth),
        Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'+' || *c == b'.' => number(s, i),
        Some(b'r' | b'R') if matches!(b.get(i + 1), Some(b'\'' | b'"')) => {
            quoted(s, i + 1, true).map(|(v, end)| (Value::String(v), end))
        }
        Some(b'r' | b'R') if i + 1 == b.len() => Err(Stop::Incomplete),
        Some(_) => {
            let (word, end) = ident(s, i)?;
            let value = match word {
                "True" => Value::Bool(true),
                "False" => Value::Bool(false),
                "None" => Value::Null,
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => return Err(Stop::Invalid),
            };
            Ok((value, end))
        }
    }
}

fn sequence(s: &str, mut i: usize, close: u8, depth: usize) -> Step<(Value, usize)> {
    let mut items = Vec::new();
    loop {
        i = skip_ws(s, i);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(&c) if c == close => return Ok((Value::Array(items), i + 1)),
            Some(_) => {}
        }
        let (value, end) = literal(s, i, depth + 1)?;
        items.push(value);
        i = skip_ws(s, end);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b',') => i += 1,
            Some(&c) if c == close => {}
            Some(_) => return Err(Stop::Invalid),
        }
    }
}

/// A dict, or a set literal (`{'a', 'b'}`, which models write for a list): a set becomes an
/// array in written order.
fn dict(s: &str, mut i: usize, depth: usize) -> Step<(Value, usize)> {
    let mut map = Map::new();
    loop {
        i = skip_ws(s, i);
        match s.as_bytes().get(i) {
            None => return Err(Stop::Incomplete),
            Some(b'}') => return Ok((Value::Object(map), i + 1)),
            _ if map.is_empty() => {
                // The first item decides: `key:` is a dict, anything else a set.
                let (first, end) = literal(s, i, depth + 1)?;
                match s.as_bytes().get(skip_ws(s, end)) {
                    None => return Err(Stop::Incomplete),
                    Some(b':') if first.is_string() => {}
                    Some(b',' | b'}') => return sequence(s, i, b'}', depth),
                    Some(_) => return Err(Stop::Invalid),
                }
            }
            Some(b'\'' | b'"') => {}
            Some(_) => return Err(Stop::Invalid),
        }
        let (key, after) = string(s, i)?;
        let colon = expect_ws(s, after, ":")?;
        let (value, end) = literal(s, colon, depth + 1)?;
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

/// A quoted string starting at the quote, with Python's escapes (GRAMMARS §2.12 "python str").
fn string(s: &str, at: usize) -> Step<(String, usize)> {
    quoted(s, at, false)
}

/// A Python string literal starting at the quote: single-line `'…'`/`"…"` or triple-quoted
/// (line breaks allowed); `raw` (an `r` prefix) keeps backslashes as written.
fn quoted(s: &str, at: usize, raw: bool) -> Step<(String, usize)> {
    let b = s.as_bytes();
    let q = b[at];
    let triple = b.get(at + 1) == Some(&q) && b.get(at + 2) == Some(&q);
    if !triple && b.get(at + 1) == Some(&q) && at + 2 == b.len() {
        // Two quotes so far: an empty string or the start of a triple-quoted one.
        return Err(Stop::Incomplete);
    }
    let mut out = String::new();
    let mut i = if triple { at + 3 } else { at + 1 };
    loop {
        let Some(c) = s[i..].chars().next() else {
            return Err(Stop::Incomplete);
        };
        if c == q as char {
            if !triple {
                // A quote followed by what cannot follow a string is the model's unescaped
                // inner quote (`'echo 'hi''`): kept as text.
                match b[i + 1..].iter().find(|x| !x.is_ascii_whitespace()) {
                    None => return Err(Stop::Incomplete),
                    Some(b',' | b')' | b']' | b'}' | b':') => return Ok((out, i + 1)),
                    Some(_) => {
                        out.push(c);
                        i += 1;
                        continue;
                    }
                }
            }
            match b.get(i..i + 3) {
                Some(end) if end.iter().all(|&x| x == q) => return Ok((out, i + 3)),
                None if b[i..].iter().all(|&x| x == q) => return Err(Stop::Incomplete),
                _ => {}
            }
            out.push(c);
            i += 1;
            continue;
        }
        if c != '\\' {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let Some(e) = s[i + 1..].chars().next() else {
            return Err(Stop::Incomplete);
        };
        i += 1 + e.len_utf8();
        if raw {
            // A raw string keeps the backslash; an escaped quote does not end it.
            out.push('\\');
            out.push(e);
            continue;
        }
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' => out.push(e),
            // A line continuation.
            '\n' => {}
            '0'..='7' => {
                let mut code = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match b.get(i) {
                        None => return Err(Stop::Incomplete),
                        Some(&d @ b'0'..=b'7') => {
                            code = code * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        Some(_) => break,
                    }
                }
                out.push(char::from_u32(code).ok_or(Stop::Invalid)?);
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (mut code, after) = hex(s, i, len)?;
                i = after;
                if e == 'u' && (0xD800..0xDC00).contains(&code) {
                    // A UTF-16 surrogate pair written as two escapes.
                    let j = crate::recover::cursor::expect(s, i, "\\u")?;
                    let (low, after) = hex(s, j, 4)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(Stop::Invalid);
                    }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    i = after;
                }
                out.push(char::from_u32(code).ok_or(Stop::Invalid)?);
            }
            // `\N{NAME}` needs Unicode's name table: not guessed.
            'N' => return Err(Stop::Invalid),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

/// `len` hex digits at `at`: the code and the index after them.
fn hex(s: &str, at: usize, len: usize) -> Step<(u32, usize)> {
    let b = s.as_bytes();
    let end = at + len;
    let digits = &b[at.min(b.len())..end.min(b.len())];
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(Stop::Invalid);
    }
    if end > b.len() {
        return Err(Stop::Incomplete);
    }
    let code = u32::from_str_radix(&s[at..end], 16).map_err(|_| Stop::Invalid)?;
    Ok((code, end))
}

/// A number; Python's leading `+` is dropped, the rest must be a JSON number.
fn number(s: &str, at: usize) -> Step<(Value, usize)> {
    let b = s.as_bytes();
    let mut i = at;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'.' | b'-' | b'+' | b'_'))
    {
        i += 1;
    }
    if i == b.len() {
        return Err(Stop::Incomplete);
    }
    let text = s[at..i].trim_start_matches('+');
    // Python allows `_` between digits (`1_000`).
    let tb = text.as_bytes();
    let digit = |k: usize| tb.get(k).is_some_and(u8::is_ascii_digit);
    if (0..tb.len()).any(|k| tb[k] == b'_' && !(k > 0 && digit(k - 1) && digit(k + 1))) {
        return Err(Stop::Invalid);
    }
    let text = text.replace('_', "");
    let text = text.as_str();
    let text = if text.starts_with('.') {
        format!("0{text}")
    } else {
        text.to_owned()
    };
    let text = if text.ends_with('.') {
        format!("{text}0")
    } else {
        text
    };
    // `07`: a leading zero Python rejects but models write for 7.
    let digits = text.strip_prefix('-').unwrap_or(&text);
    let text = if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|d| d.is_ascii_digit())
    {
        let value = digits.trim_start_matches('0');
        let value = if value.is_empty() { "0" } else { value };
        if text.starts_with('-') {
            format!("-{value}")
        } else {
            value.to_owned()
        }
    } else {
        text
    };
    match serde_json::from_str::<Number>(&text) {
        Ok(n) => Ok((Value::Number(n), i)),
        Err(_) => Err(Stop::Invalid),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const LFM2: &str = "<|tool_call_start|>[web_search(query=\"helm chart hooks order\", max_results=3)]<|tool_call_end|>Looking that up.";

    #[test]
    fn recovers_the_samples() {
        let rest = recovers(
            LFM2,
            &[(
                "web_search",
                json!({"query": "helm chart hooks order", "max_results": 3}),
            )],
        );
        assert_eq!(rest, "Looking that up.");
        let bare = "[list_dir(path='k8s/overlays/prod'), read_file(path='k8s/overlays/prod/kustomization.yaml')]";
        recovers(
            bare,
            &[
                ("list_dir", json!({"path": "k8s/overlays/prod"})),
                (
                    "read_file",
                    json!({"path": "k8s/overlays/prod/kustomization.yaml"}),
                ),
            ],
        );
    }

    #[test]
    fn converts_python_literals() {
        let text = "<|python_start|>[run_tests(filter='it\\'s', jobs=-2, fail_fast=True, markers=['slow', \"db\"], update=None)]<|python_end|>";
        recovers(
            text,
            &[(
                "run_tests",
                json!({"filter": "it's", "jobs": -2, "fail_fast": true, "markers": ["slow", "db"], "update": null}),
            )],
        );
    }

    #[test]
    fn ignores_non_literals_positional_args_and_prose() {
        ignores("[read_file('a.txt')]");
        ignores("[os.remove(path='a')]");
        ignores("[read_file(path=open('a'))]");
        ignores("See [read_file(path='a')] for details.");
        ignores("[1] Introduction");
        ignores("[read_file(path='a')] and more");
    }

    #[test]
    fn reads_what_models_write_and_python_rejects() {
        let heredoc = "<|tool_call_start|>[bash(command='cat > a.txt << EOF\nline one\nEOF')]<|tool_call_end|>";
        recovers(
            heredoc,
            &[(
                "bash",
                json!({"command": "cat > a.txt << EOF\nline one\nEOF"}),
            )],
        );
        let sed = "<|tool_call_start|>[bash(command='sed -n '360,450p' src/matrices/common.py')]<|tool_call_end|>";
        recovers(
            sed,
            &[(
                "bash",
                json!({"command": "sed -n '360,450p' src/matrices/common.py"}),
            )],
        );
        let sibling = "<|tool_call_start|>[bash(command='ls'), bad(x=b'z')]<|tool_call_end|>";
        recovers(sibling, &[("bash", json!({"command": "ls"}))]);
        let nul = "<|tool_call_start|>[bash(command='printf a\u{0}b')]<|tool_call_end|>";
        recovers(nul, &[("bash", json!({"command": "printf a\u{0}b"}))]);
        let inner = "[bash(command='echo 'hi' > out.txt')]";
        recovers(
            inner,
            &[("bash", json!({"command": "echo 'hi' > out.txt"}))],
        );
        let json_literals = "[write_file(path='a.json', content=\"{}\", overwrite=true), run_tests(fail_fast=false, filter=null)]";
        recovers(
            json_literals,
            &[
                (
                    "write_file",
                    json!({"path": "a.json", "content": "{}", "overwrite": true}),
                ),
                ("run_tests", json!({"fail_fast": false, "filter": null})),
            ],
        );
        let set = "<|python_start|>[run_tests(markers={'slow', 'db'}, jobs=07)]<|python_end|>";
        recovers(
            set,
            &[("run_tests", json!({"markers": ["slow", "db"], "jobs": 7}))],
        );
    }

    #[test]
    fn a_dotted_declared_name_is_kept_byte_for_byte() {
        let text = "<|tool_call_start|>[grocery.orderIngredients(ingredientList=[{'name': 'Lasagna noodles', 'amount': 250, 'unit': 'g'}], deliveryAddress='845 Willow Lane, Springfield, IL 62704')]<|tool_call_end|>";
        recovers(
            text,
            &[(
                "grocery.orderIngredients",
                json!({"ingredientList": [{"name": "Lasagna noodles", "amount": 250, "unit": "g"}],
                       "deliveryAddress": "845 Willow Lane, Springfield, IL 62704"}),
            )],
        );
        ignores("<|tool_call_start|>[grocery.order(items=['a'])]<|tool_call_end|>");
    }

    #[test]
    fn recovers_the_lfm2_json_list() {
        let text = "<|tool_call_start|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"Cargo.toml\"}}]<|tool_call_end|>";
        recovers(
            text,
            &[
                ("get_weather", json!({"city": "Paris"})),
                ("read_file", json!({"path": "Cargo.toml"})),
            ],
        );
        rejects_truncation(
            "<|tool_call_start|>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]<|tool_call_end|>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation("<|python_start|>[read_file(path='a')]<|python_end|>");
        rejects_truncation("[read_file(path='a', limit=10)]");
    }
}
