//! Finding the JSON in a text: at its start, inside a Markdown fence, or among prose.
//!
//! 1. Text that starts with `{` or `[` is read from there; if only arrays read and prose
//!    follows (`[1] According to …`), an object in that prose is preferred (step 3). Text that
//!    starts like JSON and is cut before keeping anything is an error at once.
//! 2. Otherwise (or when that fails without looking like JSON, as `{placeholder} …` does), the
//!    first fence opened at the start of a line is read from its body (`fence_unwrapped`).
//! 3. Otherwise each `{` in the prose is a candidate (`prose_stripped`): the first that reads
//!    with no repair wins; failing that, the first that reads at all. A candidate that fails
//!    after looking like JSON stops the search: a later `{` may be a piece of that broken object,
//!    and a piece is a wrong object.
//!
//! Text that starts with `{` or `[` and cannot be read is a [`SalvageErrorKind::Syntax`] error;
//! other text in which nothing reads is [`SalvageErrorKind::NoJson`].
//!
//! A failed candidate can be followed by one inside what it read, so runs may meet the same
//! long token; [`Memo`] remembers comment ends and cut keys for the whole call, and smart-quoted
//! keys stop at a `{` or line break, so the search stays linear.

use std::sync::LazyLock;

use memchr::memmem;

use super::memo::Memo;
use super::node::Build;
use super::parser::{Parser, Run, RunError};
use super::scan;
use super::seed::{self, Seed};
use super::{Found, SalvageError, SalvageErrorKind, SalvageOptions};
use crate::RepairKind;

/// How many times a run is retried with a quote reclassified as content.
const MAX_RETRIES: usize = 3;
/// How many ```` ``` ```` are examined when looking for one that opens a line (inline code
/// spans of single backticks do not count).
const MAX_FENCE_PROBES: usize = 64;

/// Salvages `text`, whose first non-blank byte is at `start`; the first run there starts after
/// `seed` (taken) when it is of the object at `start`.
pub(super) fn locate(
    text: &str,
    start: usize,
    options: &SalvageOptions,
    seed: &mut Option<Seed>,
) -> Result<Found, SalvageError> {
    let bytes = text.as_bytes();
    let fail = |e: RunError| SalvageError::at(e.kind, text, e.offset);
    let memo = Memo::default();
    let mut resume = start;
    // Text that starts like JSON and fails is a syntax error even if nothing else is found.
    let mut primary = None;
    // Arrays followed by prose (`[1] According to the docs: {…}`): a citation or a task box
    // more often than the call, so an object in the prose is preferred (arguments are objects).
    let mut leading_arrays = None;
    if matches!(bytes[start], b'{' | b'[') {
        let seed = seed.take().filter(|s| s.root == start);
        match attempt(text, start, false, options, &memo, seed) {
            Ok(run) if run.prose_after.is_some() && run.values.all_arrays() => {
                resume = run.end.max(start + 1);
                leading_arrays = Some(run);
            }
            Ok(run) => return Ok(finish(run, &[])),
            // Text that starts like JSON and is cut before anything was kept: every later `{`
            // is inside it, and a piece of it is a wrong object (`{"{A:` is not `{"A": ""}`).
            Err(e) if e.progressed || e.cut || e.kind != SalvageErrorKind::Syntax => {
                return Err(fail(e));
            }
            Err(e) => {
                resume = e.offset.max(start + 1);
                primary = Some(e);
            }
        }
    }
    if let Some(fence) = find_fence(bytes, start) {
        let body = scan::skip_ws(bytes, fence.body);
        if body > resume && matches!(bytes.get(body), Some(b'{' | b'[')) {
            match attempt(
                text,
                body,
                true,
                options,
                &memo,
                candidate(text, body, options),
            ) {
                Ok(run) => {
                    let extra = [
                        (RepairKind::FenceUnwrapped, fence.at),
                        (RepairKind::ProseStripped, start),
                    ];
                    let prose_before = usize::from(fence.at > start);
                    return Ok(finish(run, &extra[..1 + prose_before]));
                }
                Err(e) if e.progressed || e.kind != SalvageErrorKind::Syntax => {
                    return Err(fail(e));
                }
                Err(_) => {}
            }
        }
    }
    let mut chosen: Option<Run> = None;
    let mut from = resume;
    while let Some(i) = memchr::memchr(b'{', &bytes[from.min(bytes.len())..]) {
        let candidate = from + i;
        let seed = self::candidate(text, candidate, options);
        match attempt(text, candidate, false, options, &memo, seed) {
            Ok(run) => {
                let strict = run.log.is_empty() && !run.truncated;
                from = run.end.max(candidate + 1);
                if strict {
                    chosen = Some(run);
                    break;
                }
                chosen.get_or_insert(run);
            }
            Err(e) if e.progressed || e.kind != SalvageErrorKind::Syntax => {
                if chosen.is_some() || leading_arrays.is_some() {
                    break;
                }
                return Err(fail(e));
            }
            Err(e) => from = e.offset.max(candidate + 1),
        }
    }
    // Each arm moves the ~290-byte run once (a tuple of the two options moved both).
    match chosen {
        Some(run) if run.values.any_object() => {
            Ok(finish(run, &[(RepairKind::ProseStripped, start)]))
        }
        _ => match leading_arrays {
            Some(run) => Ok(finish(run, &[])),
            None => Err(primary.map_or_else(
                || SalvageError::at(SalvageErrorKind::NoJson, text, start),
                fail,
            )),
        },
    }
}

/// What the strict read makes of the object at `at`, a fence's body or a `{` among prose, for
/// the run there to start from ([`seed::from_candidate`]): nearly every such object is strict
/// JSON, which the strict read builds at a fraction of the lenient parser's cost (issue #31).
/// Only for call salvage building values: the seed is a `serde_json::Map`, and the document
/// readings read strict text otherwise. Out of line, so that `locate` stays small enough to
/// be inlined into its caller on the paths that never come here.
#[inline(never)]
fn candidate(text: &str, at: usize, options: &SalvageOptions) -> Option<Seed> {
    let readings = options.readings;
    if !readings.is_call() || readings.build != Build::Values || text.as_bytes()[at] != b'{' {
        return None;
    }
    seed::from_candidate(text, at, options)
}

/// Reads the values at `start`; when the last value closed right before prose that holds a
/// quote, retries with that closing quote taken as content (an unescaped quote in code content
/// followed by `}` can look like the end of the object). A retry is kept only if it reads to the
/// end without prose and without truncation, and either the object goes on after the longer
/// string, or the string opened a bracket and the prose holds no `{` of its own. The first run
/// starts after `seed`, what `serde_json` read of the object at `start` (see [`super::seed`]).
fn attempt(
    text: &str,
    start: usize,
    fence: bool,
    options: &SalvageOptions,
    memo: &Memo,
    seed: Option<Seed>,
) -> Result<Run, RunError> {
    let mut parser =
        Parser::new(text, options.max_depth, fence, &[], memo).with_readings(options.readings);
    parser.seed = seed;
    let read = parser.run(start);
    // Nearly every run needs no second reading: handed back as it came, the ~270-byte run is
    // not moved out of its `Result` and back into another.
    if let Ok(run) = &read
        && run.split_closer.is_none()
        && !run.quote_insertable
        && (run.top_close_quote.is_none() || run.prose_after.is_none())
    {
        return read;
    }
    let first = read?;
    if let Some(at) = first.split_closer {
        return unsplit(text, start, fence, options, memo, at);
    }
    if first.quote_insertable
        && let Some(run) = with_inserted_quotes(text, start, fence, options, memo, &first)
    {
        return Ok(run);
    }
    let mut content_quotes = Vec::new();
    let (mut quote, mut prose) = (first.top_close_quote, first.prose_after);
    let mut open_bracket = first.top_close_open_bracket;
    for _ in 0..MAX_RETRIES {
        let (Some(q), Some(p)) = (quote, prose) else {
            break;
        };
        if !may_continue(text.as_bytes(), q, p) {
            break;
        }
        content_quotes.push(q);
        // Without a member after the longer string, the retry is believed only if the closer
        // after the quote can be content (the string opened a bracket) and the prose holds no
        // brace of its own (`{"cmd": "ls"} then {cmd: "pwd"}` is prose, not content).
        let plausible = open_bracket && !text.as_bytes()[p..].contains(&b'{');
        match Parser::new(text, options.max_depth, fence, &content_quotes, memo)
            .with_readings(options.readings)
            .run(start)
        {
            Ok(run)
                if !run.truncated
                    && run.prose_after.is_none()
                    && (run.extended_member || plausible) =>
            {
                return Ok(run);
            }
            Ok(run) if !run.truncated => {
                (quote, prose) = (run.top_close_quote, run.prose_after);
                open_bracket = run.top_close_open_bracket;
            }
            _ => break,
        }
    }
    Ok(first)
}

/// The second reading of a run that split at a closer of the wrong kind (issue #28): read as a
/// stray, that closer leaves one value.
///
/// - Detects: a first value closed by a `}` for `]` (or `]` for `}`) that closed two
///   containers, followed by values that close containers they never opened
///   (`{"edits": [{…}}, {…}]}`): the remainder was part of the first value.
/// - Does: reads the text again with that closer taken as a stray (`extra_closer_removed`), and
///   keeps the reading when it is one value with no prose after it; the caller then validates
///   it like any other call.
/// - Never: splits such a text. A second reading that is not one value refuses the whole call
///   as a syntax error at that closer, since either half alone would run part of what was asked
///   (the first call with half the edits).
fn unsplit(
    text: &str,
    start: usize,
    fence: bool,
    options: &SalvageOptions,
    memo: &Memo,
    at: usize,
) -> Result<Run, RunError> {
    let mut parser =
        Parser::new(text, options.max_depth, fence, &[], memo).with_readings(options.readings);
    parser.stray_at = Some(at);
    match parser.run(start) {
        Ok(run) if run.values.len() == 1 && run.prose_after.is_none() => Ok(run),
        _ => Err(RunError {
            kind: SalvageErrorKind::Syntax,
            offset: at,
            progressed: true,
            cut: false,
        }),
    }
}

/// The second reading of a text whose first reading had a string value swallow `, "key": …`:
/// each such string ends before that comma (`quote_inserted`). Kept only when it reads as
/// cleanly as the first (the same number of values, no prose or truncation the first did not
/// have); the first reading of a single value then travels along as the alternative, for the
/// caller to take when only it validates against the schema.
fn with_inserted_quotes(
    text: &str,
    start: usize,
    fence: bool,
    options: &SalvageOptions,
    memo: &Memo,
    first: &Run,
) -> Option<Run> {
    let mut parser =
        Parser::new(text, options.max_depth, fence, &[], memo).with_readings(options.readings);
    parser.insert_quotes = true;
    let mut run = parser.run(start).ok()?;
    let clean = run.values.len() == first.values.len()
        && (run.prose_after.is_none() || first.prose_after.is_some())
        && (!run.truncated || first.truncated);
    if !clean {
        return None;
    }
    run.alternative = first.values.lone().map(Box::new);
    Some(run)
}

/// Whether the prose at `prose` may be the rest of the string closed by the quote at `quote`:
/// it holds the same quote character and, after it, a closer. Prose with only an apostrophe
/// (`I'll check it.`) does not make a retry worth its cost.
fn may_continue(bytes: &[u8], quote: usize, prose: usize) -> bool {
    let rest = &bytes[prose..];
    let at = if bytes[quote] == 0xE2 {
        memmem::find(rest, scan::RIGHT_DOUBLE)
    } else {
        memchr::memchr(bytes[quote], rest)
    };
    at.is_some_and(|i| memchr::memchr2(b'}', b']', &rest[i..]).is_some())
}

/// The result of `run`, with the repairs of where it was found (`extra`: a fence, prose) logged
/// after its own. A slice, not a log of its own: one allocation less per call.
fn finish(run: Run, extra: &[(RepairKind, usize)]) -> Found {
    let mut log = run.log;
    for &(kind, at) in extra {
        log.note(kind, at);
    }
    if let Some(at) = run.prose_after {
        log.note(RepairKind::ProseStripped, at);
    }
    if let Some(at) = run.after_fence {
        log.note(RepairKind::ProseStripped, at);
    }
    let (repairs, dropped_keys) = log.into_sorted();
    Found {
        values: run.values,
        repairs,
        dropped_keys,
        truncated: run.truncated,
        alternative: run.alternative,
        spans: run.spans,
    }
}

/// A Markdown fence opener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    /// Where the ```` ``` ```` is.
    at: usize,
    /// Where its body starts (after the language tag and the line break).
    body: usize,
}

/// The first ```` ``` ```` at or after `from` that opens a line (only spaces or tabs before it).
fn find_fence(bytes: &[u8], from: usize) -> Option<Fence> {
    // Built once: building a searcher costs more than searching a short call.
    static FENCE: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"```"));
    // A fenced call starts with its fence: no search (the searcher's set-up is most of it).
    if bytes[from.min(bytes.len())..].starts_with(b"```") {
        return Some(Fence {
            at: from,
            body: scan::fence_body(bytes, from),
        });
    }
    let finder = &*FENCE;
    // A text with no backtick (prose around a call, nearly always) is one `memchr`, not a
    // substring search: setting one up costs more than searching a short call.
    let mut search = from + memchr::memchr(b'`', &bytes[from..])?;
    for _ in 0..MAX_FENCE_PROBES {
        let at = search + finder.find(&bytes[search..])?;
        let line_start = memchr::memrchr(b'\n', &bytes[from..at]).map_or(from, |j| from + j + 1);
        if bytes[line_start..at]
            .iter()
            .all(|&b| b == b' ' || b == b'\t')
        {
            return Some(Fence {
                at,
                body: scan::fence_body(bytes, at),
            });
        }
        search = at + 3;
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(text: &str) -> crate::salvage::Salvaged {
        crate::salvage::salvage(text, &SalvageOptions::default()).unwrap()
    }

    #[test]
    fn a_missing_closing_quote_before_a_key_is_inserted_with_the_other_reading_kept() {
        let s = read(r#"{"city": "New York, "gender": "male"}"#);
        assert_eq!(s.values, [json!({"city": "New York", "gender": "male"})]);
        assert!(s.has(RepairKind::QuoteInserted));
        assert_eq!(
            s.alternative,
            Some(json!({"city": "New York, \"gender\": \"male"}))
        );
        let s = read(r#"["hello, "world"]"#);
        assert_eq!(s.values, [json!(["hello", "world"])]);
    }

    #[test]
    fn no_quote_is_inserted_where_the_rest_would_not_read() {
        // Unescaped JSON in content: ending the string at `, "b":` leaves `"}` after the object.
        let s = read(r#"{"code": "{"a": 1, "b": 2}"}"#);
        assert_eq!(s.values, [json!({"code": "{\"a\": 1, \"b\": 2}"})]);
        assert!(!s.has(RepairKind::QuoteInserted) && s.alternative.is_none());
        // A quoted word after a comma is not a key: no colon follows it.
        let s = read(r#"{"t": "a, "b" c", "n": 1}"#);
        assert_eq!(s.values, [json!({"t": "a, \"b\" c", "n": 1})]);
    }

    #[test]
    fn concatenated_strings_are_joined() {
        let s = read("{\"greeting\": 'hello' +\n 'world', \"n\": 1}");
        assert_eq!(s.values, [json!({"greeting": "helloworld", "n": 1})]);
        let s = read(r#"["a" + "b" + "c"]"#);
        assert_eq!(s.values, [json!(["abc"])]);
    }

    #[test]
    fn nothing_after_a_root_closer_and_a_comma_is_dropped_silently() {
        // The root object goes on after a stray `}`.
        let s = read(r#"{"key1": "value1"}, "key2": "value2", "key3": "value3"}"#);
        assert_eq!(
            s.values,
            [json!({"key1": "value1", "key2": "value2", "key3": "value3"})]
        );
        assert!(s.has(RepairKind::ExtraCloserRemoved));
        // A quote that looked like the end of the root is content when prose follows its comma.
        let s = read(r#"{"x": "answer is {"b": "m"}, not a plain string"}"#);
        assert_eq!(
            s.values,
            [json!({"x": "answer is {\"b\": \"m\"}, not a plain string"})]
        );
    }

    #[test]
    fn a_brace_for_a_bracket_before_the_next_member_closes_the_array() {
        let s = read(r#"{"key1": ["value1", "value2"}, "key2": ["value3"]}"#);
        assert_eq!(
            s.values,
            [json!({"key1": ["value1", "value2"], "key2": ["value3"]})]
        );
        // Before an element, not a member: the `]` is missing, and the `}` closes the array and
        // the object both (the `{"p": …}` after it is the next element of the outer array).
        let s = read(r#"{"n": [{"p": ["a"}, {"p": ["b"]}]}"#);
        assert_eq!(s.values, [json!({"n": [{"p": ["a"]}, {"p": ["b"]}]})]);
        assert!(!s.truncated && s.has(RepairKind::ExtraCloserRemoved));
        // `]` for `}` inside an array: the object's `}` is missing, and the `]` closes both.
        let s = read(r#"{"array": [{"key": "value"], "key2": 1}"#);
        assert_eq!(s.values, [json!({"array": [{"key": "value"}], "key2": 1})]);
    }

    #[test]
    fn a_key_missing_its_opening_quote_is_a_key() {
        let s = read(r#"{"a":"foo",b":"bar"}"#);
        assert_eq!(s.values, [json!({"a": "foo", "b": "bar"})]);
        assert!(s.has(RepairKind::KeyQuoted));
    }

    #[test]
    fn string_elements_with_missing_commas_stay_apart() {
        let s = read(r#"{"key": ["value" "value1" "value2"]}"#);
        assert_eq!(s.values, [json!({"key": ["value", "value1", "value2"]})]);
    }

    #[test]
    fn fences_open_lines() {
        assert_eq!(
            find_fence(b"```json\n{}", 0),
            Some(Fence { at: 0, body: 8 })
        );
        assert_eq!(
            find_fence(b"Here:\n  ```\n{}", 0),
            Some(Fence { at: 8, body: 12 })
        );
        assert_eq!(
            find_fence(b"```json {\"a\": 1}```", 0),
            Some(Fence { at: 0, body: 8 })
        );
        assert_eq!(find_fence(b"say ```x``` here", 0), None);
    }
}
