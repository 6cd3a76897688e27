//! Mistral, pre-v11 (`[TOOL_CALLS] [...]`) and v11+ (`[TOOL_CALLS]NAME[ARGS]{...}`):
//! GRAMMARS §2.9 and §2.10.
//!
//! ```text
//! [TOOL_CALLS]glob[ARGS]{"pattern": "src/**/*.kt"}[TOOL_CALLS]read_file[ARGS]{"path": "build.gradle.kts"}
//! ```
//!
//! **Detects** `[TOOL_CALLS]` followed by either a JSON array of `{name, arguments}` objects
//! (with or without a space; the optional `id` is ignored; an entry that is not a call is left
//! out and its neighbours kept; a few bytes of noise before the list on the token's line are
//! skipped), one bare `{name, arguments}` object (pre-v11 models write it too), or a name, an optional
//! `[CALL_ID]ID`, an optional `[ARGS]` (vLLM's decoded-away form `[TOOL_CALLS]add{...}`), and a
//! JSON object. There is no closing token: the call is complete when its JSON closes. Each v11
//! call repeats `[TOOL_CALLS]` and is its own block.
//!
//! **Never accepts** JSON that does not close or is not strict (vLLM returns malformed v11
//! arguments on purpose; this does not), or a bare array without `[TOOL_CALLS]` (that is the
//! whole-message xLAM form).

use super::{Block, Grammar, Input};
use crate::recover::call::RawCall;
use crate::recover::cursor::{
    MAX_NAME_BYTES, Step, Stop, expect, find_within, name_until, skip_ws,
};
use crate::recover::json::{call_object, object_span, value_span};
use serde_json::value::RawValue;

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "mistral",
    sentinels: &["[TOOL_CALLS]"],
    parse,
};

/// How far after `[TOOL_CALLS]` a pre-v11 list is looked for past noise, on the same line.
const NOISE_BYTES: usize = 64;

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let at = skip_ws(s, body);
    match s.as_bytes().get(at) {
        None => Err(Stop::Incomplete),
        Some(b'[') => list(s, at),
        // Pre-v11 models also write one bare object instead of a list.
        Some(b'{') => {
            let (from, to) = object_span(s, at)?;
            let call = call_object(&s[from..to], &["name"], &["arguments"]).ok_or(Stop::Invalid)?;
            Block::new(to, vec![call])
        }
        Some(_) => match v11(s, at) {
            Err(Stop::Invalid) => after_noise(s, at),
            other => other,
        },
    }
}

/// A pre-v11 list: its call objects, in order. An entry that is not a call is left out and
/// its neighbours kept; a list with no call at all is no block.
fn list(s: &str, at: usize) -> Step<Block> {
    let (from, to) = value_span(s, at)?;
    let items: Vec<&RawValue> = serde_json::from_str(&s[from..to]).map_err(|_| Stop::Invalid)?;
    let calls = items
        .iter()
        .filter_map(|item| call_object(item.get(), &["name"], &["arguments"]))
        .collect();
    Block::new(to, calls)
}

/// A pre-v11 list after a few bytes of noise on the token's line (`[TOOL_CALLS]  junk [{…}]`).
fn after_noise(s: &str, at: usize) -> Step<Block> {
    let b = s.as_bytes();
    let mut i = at;
    while i < b.len() && i - at <= NOISE_BYTES && b[i] != b'\n' {
        if b[i] == b'[' {
            return match s.as_bytes().get(skip_ws(s, i + 1)) {
                Some(b'{') => list(s, i),
                None => Err(Stop::Incomplete),
                Some(_) => Err(Stop::Invalid),
            };
        }
        i += 1;
    }
    if i == b.len() {
        Err(Stop::Incomplete)
    } else {
        Err(Stop::Invalid)
    }
}

/// The v11 form: `NAME[CALL_ID]ID[ARGS]{…}` (the id and `[ARGS]` optional).
fn v11(s: &str, at: usize) -> Step<Block> {
    let (name, mut i) = name_until(s, at, b"[{")?;
    if let Ok(after) = expect(s, i, "[CALL_ID]") {
        i = find_within(s, after, "[", MAX_NAME_BYTES)?;
    }
    match expect(s, i, "[ARGS]") {
        Ok(after) => i = after,
        Err(Stop::Incomplete) => return Err(Stop::Incomplete),
        Err(Stop::Invalid) => {}
    }
    let (from, to) = object_span(s, i)?;
    Block::new(to, vec![RawCall::json(name, s[from..to].to_owned())])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    #[test]
    fn recovers_the_pre_v11_samples() {
        let one = "[TOOL_CALLS] [{\"name\": \"bash\", \"arguments\": {\"command\": \"tox -e py312\"}, \"id\": \"Ab3dE9gH1\"}]";
        recovers(one, &[("bash", json!({"command": "tox -e py312"}))]);
        let two = "[TOOL_CALLS][{\"name\": \"grep\", \"arguments\": {\"pattern\": \"import torch\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"requirements.txt\"}}]";
        recovers(
            two,
            &[
                ("grep", json!({"pattern": "import torch"})),
                ("read_file", json!({"path": "requirements.txt"})),
            ],
        );
    }

    #[test]
    fn recovers_the_v11_samples() {
        let two = "[TOOL_CALLS]glob[ARGS]{\"pattern\": \"src/**/*.kt\"}[TOOL_CALLS]read_file[ARGS]{\"path\": \"build.gradle.kts\"}";
        recovers(
            two,
            &[
                ("glob", json!({"pattern": "src/**/*.kt"})),
                ("read_file", json!({"path": "build.gradle.kts"})),
            ],
        );
        let think = "[THINK]The user wants the failing assertion; run only that test.[/THINK][TOOL_CALLS]run_tests[CALL_ID]Zq81LmN0p[ARGS]{\"filter\": \"test_refund_rounding\"}";
        let rest = recovers(
            think,
            &[("run_tests", json!({"filter": "test_refund_rounding"}))],
        );
        assert_eq!(
            rest,
            "[THINK]The user wants the failing assertion; run only that test.[/THINK]"
        );
        recovers(
            "[TOOL_CALLS]bash{\"command\": \"ls\"}",
            &[("bash", json!({"command": "ls"}))],
        );
    }

    #[test]
    fn recovers_the_pre_v11_variants() {
        let bare = "[TOOL_CALLS] {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Dallas\", \"state\": \"TX\"}}";
        recovers(
            bare,
            &[("get_weather", json!({"city": "Dallas", "state": "TX"}))],
        );
        let noise =
            "[TOOL_CALLS]  junk [{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}] trail";
        assert_eq!(
            recovers(noise, &[("bash", json!({"command": "ls"}))]),
            " trail"
        );
        let one_bad = "[TOOL_CALLS] [{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}, {\"oops\": 1}, {\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.rs\"}}]";
        recovers(
            one_bad,
            &[
                ("bash", json!({"command": "ls"})),
                ("glob", json!({"pattern": "*.rs"})),
            ],
        );
        ignores("[TOOL_CALLS] [{\"oops\": 1}]");
        ignores("[TOOL_CALLS] not json at all");
        rejects_truncation(
            "[TOOL_CALLS] {\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
        );
    }

    #[test]
    fn ignores_look_alikes() {
        ignores("Mistral prefixes calls with [TOOL_CALLS] then the name.");
        ignores("[TOOL_CALLS]bash[ARGS]{'command': 'ls'}");
        ignores("[TOOL_CALLS] [{\"name\": \"deploy\", \"arguments\": {}}]");
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(
            "[TOOL_CALLS]run_tests[CALL_ID]Zq81LmN0p[ARGS]{\"filter\": \"test_refund_rounding\"}",
        );
        rejects_truncation(
            "[TOOL_CALLS] [{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}]",
        );
    }
}
