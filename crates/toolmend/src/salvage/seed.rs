//! Where salvage's first run starts when the strict read failed late (issue #11 §3): the
//! members of the root object it completed, handed over as a [`Seed`].
//!
//! Every call is first read strictly (the fast path; an object by [`super::strict`], with
//! `serde_json`'s answer). When that read fails late, as it does for a trailing comma or a
//! Python literal after a 2 KB `content` string, it has already decoded nearly the whole object,
//! and salvage used to read it all again. The strict reader hands over the members it
//! completed ([`StrictPrefix`], a plain value), and [`from_prefix`] picks the longest safe
//! prefix of them for salvage's first run ([`super::salvage_after`]), which starts after them
//! in the state it would have reached reading them itself.
//!
//! Which prefix is safe: salvage reads a strict member exactly as `serde_json` does (same value,
//! no repair) as long as what follows it is strict too, since its only heuristic on strict text
//! is the look-ahead at a string value's closing quote, and `, "key":` after that quote closes
//! the string (`parser/lookahead.rs`). So a member is handed over only when a comma, a quoted key
//! and its colon follow it; the last member before the failure is read again when they do not
//! (`"city": "New York, "gender": …` fails after the string that salvage must judge). A member
//! holding an object or array ends the prefix (its nesting is checked against salvage's own
//! depth limit, and its strings face the look-ahead inside it), and so does a key sent twice
//! (reported by salvage as `duplicate_key_dropped`). Anything unexpected: no prefix, salvage
//! reads the whole text as before.
//!
//! It owns only this choice: it takes a plain value from the strict reader below and gives
//! one to the run above, and calls neither.

use std::sync::LazyLock;

use memchr::memmem;
use serde_json::{Map, Value};

use super::strict::StrictPrefix;
use super::{MemberText, SalvageOptions, scan};

/// Spans the seed's vector has room for at least: salvage goes on pushing one per member it
/// reads (issue #31: growing it cost more than the member).
const SPANS_CAPACITY: usize = 8;

/// What salvage's first run starts from (see [`from_prefix`]).
#[derive(Debug)]
pub(super) struct Seed {
    /// Where the root object's `{` is.
    pub(super) root: usize,
    /// The members read, in order.
    pub(super) members: Map<String, Value>,
    /// The comma after the last of them: the run goes on right after it.
    pub(super) comma: usize,
    /// Per member: its key's and its value's canonical text, as the parser reports them.
    pub(super) spans: Vec<MemberText>,
    /// A string among them was not plain (a `\u` escape): the run reads later strings the long
    /// way, as it would have.
    pub(super) plain_gave_up: bool,
}

/// The seed for the members `serde_json` read from the root object of `text` before it
/// failed (`prefix`): its longest safe part (see the module doc); `None` when nothing can be
/// handed over.
pub(super) fn from_prefix(
    text: &str,
    options: &SalvageOptions,
    prefix: StrictPrefix,
) -> Option<Seed> {
    // Salvage refuses even the root object when its depth limit is 1. No member kept (a small
    // text the syntax-only check refused hands over none): nothing to start after.
    if prefix.read == 0
        || prefix.duplicate
        || prefix.read != prefix.members.len()
        || options.max_depth <= 1
    {
        return None;
    }
    seed(text, prefix.members, &prefix.keys)
}

/// The seed for `members`, read by `serde_json` from the root object of `text`, whose keys
/// (and the next key, if it was read) start at `keys`.
fn seed(text: &str, members: Map<String, Value>, keys: &[Option<usize>]) -> Option<Seed> {
    let bytes = text.as_bytes();
    let root = scan::skip_ws(bytes, 0);
    // Salvage pushes a span for each member it reads after these: room for a call's few.
    let mut spans = Vec::with_capacity((members.len() + 1).max(SPANS_CAPACITY));
    let mut comma = None;
    let mut plain_gave_up = false;
    // The key after each member's, stepped beside it (`nth` from the start was quadratic).
    let mut next_keys = members.keys().skip(1);
    for (i, (key, value)) in members.iter().enumerate() {
        let next_key = next_keys.next();
        // The member counts only when a comma, a quoted key and its colon follow it.
        let (Some(Some(at)), Some(Some(next))) = (keys.get(i), keys.get(i + 1)) else {
            break;
        };
        let colon = scan::skip_ws(bytes, at + key.len() + 1);
        let next_colon = next_key_colon(text, next_key, *next);
        if bytes.get(colon) != Some(&b':') || !next_colon {
            break;
        }
        let start = scan::skip_ws(bytes, colon + 1);
        // Back from the next key's quote: blanks, the comma, blanks, the value's last byte.
        let after = back_over_ws(bytes, start, next - 1);
        let end = back_over_ws(bytes, start, after.checked_sub(1)?);
        if bytes.get(after - 1) != Some(&b',') || end <= start {
            break;
        }
        let span = match value {
            Value::String(_) if bytes[start] == b'"' && bytes[end - 1] == b'"' => {
                let (slash, unicode) = escapes_in(&bytes[start + 1..end - 1]);
                let canonical = !slash && !unicode && !plain_gave_up;
                plain_gave_up |= unicode;
                canonical.then_some(start..end)
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => None,
            _ => break,
        };
        // A key the strict read knows the offset of has no escape: its quotes and it are
        // what serde_json writes.
        spans.push(MemberText {
            key: Some(at - 1),
            value: span,
        });
        comma = Some(after - 1);
    }
    let count = spans.len();
    let mut members = members;
    if count < members.len() {
        // Kept in place: the map keeps its keys' hashes, where collecting would hash each again.
        let mut kept = 0;
        members.retain(|_, _| {
            kept += 1;
            kept <= count
        });
    }
    Some(Seed {
        root,
        members,
        comma: comma?,
        spans,
        plain_gave_up,
    })
}

/// Whether the key at `at` (of text `key`, `None` when it was not a member: the key whose
/// value failed) closes and a colon follows it.
fn next_key_colon(text: &str, key: Option<&String>, at: usize) -> bool {
    let bytes = text.as_bytes();
    let close = match key {
        Some(key) => at + key.len(),
        // The key whose value failed: its text is not kept, find its closing quote.
        None => match memchr::memchr(b'"', &bytes[at..]) {
            Some(i) => at + i,
            None => return false,
        },
    };
    bytes.get(close) == Some(&b'"')
        && at > 0
        && bytes[at - 1] == b'"'
        && bytes.get(scan::skip_ws(bytes, close + 1)) == Some(&b':')
}

/// The position after the last non-blank byte at or before `at` (not before `floor`).
fn back_over_ws(bytes: &[u8], floor: usize, mut at: usize) -> usize {
    while at > floor && scan::is_ws(bytes[at - 1]) {
        at -= 1;
    }
    at
}

/// Whether the content of a strict string holds a `\/` and a `\u` escape.
fn escapes_in(content: &[u8]) -> (bool, bool) {
    // Strict content: every backslash starts an escape, so each one found is an escape's first
    // byte and the byte after it names the escape. One `memchr` per escape is the cheapest on
    // the few escapes of a short string; past `ESCAPES_STEPPED` the rest is searched for the
    // two pairs alone (a 200 KB call's strings hold ~18 k `\n` and `\"`, none of them wanted).
    const ESCAPES_STEPPED: usize = 16;
    let (mut slash, mut unicode) = (false, false);
    let mut from = 0;
    let mut stepped = 0;
    while let Some(i) = memchr::memchr(b'\\', &content[from..]) {
        match content.get(from + i + 1) {
            Some(b'/') => slash = true,
            Some(b'u') => unicode = true,
            _ => {}
        }
        from += i + 2;
        if from >= content.len() || (slash && unicode) {
            return (slash, unicode);
        }
        stepped += 1;
        if stepped == ESCAPES_STEPPED {
            // `from` is just past a whole escape, so the rest starts outside one.
            let (rest_slash, rest_unicode) = pairs_in(&content[from..]);
            return (slash || rest_slash, unicode || rest_unicode);
        }
    }
    (slash, unicode)
}

/// [`escapes_in`] past its stepped escapes: the two pairs searched for alone in `rest`, which
/// starts outside an escape. Out of line and cold, so that the seed's common path keeps its
/// size (salvage's wall time moves with its code's layout).
#[cold]
#[inline(never)]
fn pairs_in(rest: &[u8]) -> (bool, bool) {
    let [slash_pair, unicode_pair] = &*PAIRS;
    let has = |pair: &memmem::Finder<'_>| pair.find_iter(rest).any(|j| !escaped(rest, j));
    (has(slash_pair), has(unicode_pair))
}

/// The two escapes [`escapes_in`] looks for, each searcher built once.
static PAIRS: LazyLock<[memmem::Finder<'static>; 2]> =
    LazyLock::new(|| [memmem::Finder::new(b"\\/"), memmem::Finder::new(b"\\u")]);

/// Whether the byte at `at` follows an odd run of backslashes.
fn escaped(bytes: &[u8], at: usize) -> bool {
    let run = bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    run % 2 == 1
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::salvage::salvage_after;
    use crate::salvage::strict::{Precheck, read_strict as read};

    /// The strict read, handing over the members a small text completed.
    fn read_strict(text: &str) -> Result<Value, Option<StrictPrefix>> {
        read(text, Precheck::Never)
    }

    /// The prefix `serde_json` left of a text it refuses.
    fn prefix(text: &str) -> Option<StrictPrefix> {
        read_strict(text).err().flatten()
    }

    #[test]
    fn the_strict_read_gives_serde_jsons_answer() {
        for text in [
            r#"{"a": "x\u00e9\/", "b": [1, {"c": null}], "a": 2.50}"#,
            r#"  {"$serde_json::private::Number": "12"}"#,
            r#"{"k\"ey": 1e5}"#,
            "[1, 2]",
            "\"s\"",
            "{}",
        ] {
            let ours = read_strict(text).ok();
            let theirs = serde_json::from_str::<Value>(text).ok();
            assert_eq!(ours, theirs, "{text}");
            assert!(ours.is_some(), "{text}");
        }
        for text in [r#"{"a": 1,}"#, r#"{"a": True}"#, "{'a': 1}", "[1,]", "x"] {
            assert!(read_strict(text).is_err(), "{text}");
        }
    }

    #[test]
    fn the_members_before_a_late_failure_are_handed_over() {
        let text = r#"{"path": "a.rs", "content": "x\"y\\n", "n": 1, "ok": True}"#;
        let members = prefix(text).expect("a prefix");
        let found = seed(text, members.members, &members.keys).expect("a seed");
        // Every member before `ok`, whose key and colon follow the comma after `n`.
        assert_eq!(found.members.len(), 3);
        assert_eq!(found.comma, text.find(r#", "ok""#).unwrap());
        assert_eq!(found.spans.len(), 3);
        let content = found.spans[1].value.clone().expect("canonical");
        assert_eq!(found.spans[1].key, text.find(r#""content""#));
        assert_eq!(&text[content], r#""x\"y\\n""#);
        assert!(found.spans[2].value.is_none(), "a number has no span");
        assert!(!found.plain_gave_up);
    }

    #[test]
    fn a_member_not_followed_by_a_key_and_colon_is_read_again() {
        // The string before the failure is salvage's to judge (`quote_inserted`).
        let text = r#"{"name": "John", "city": "New York, "gender": "male"}"#;
        let members = prefix(text).expect("a prefix");
        let found = seed(text, members.members, &members.keys).expect("a seed");
        assert_eq!(found.members.len(), 1);
        assert_eq!(found.comma, text.find(r#", "city""#).unwrap());
        // A trailing comma: the last member is read again; nothing before it, no seed.
        let text = r#"{"a": 1,}"#;
        let members = prefix(text).expect("a prefix");
        assert!(seed(text, members.members, &members.keys).is_none());
    }

    #[test]
    fn containers_escapes_and_duplicates_end_the_prefix_or_lose_the_span() {
        let text = r#"{"a": "x\/", "b": "\u00e9", "c": "z", "d": [1], "e": None}"#;
        let members = prefix(text).expect("a prefix");
        let found = seed(text, members.members, &members.keys).expect("a seed");
        assert_eq!(found.members.len(), 3, "the array ends the prefix");
        assert!(found.spans.iter().all(|s| s.value.is_none()));
        assert!(
            found.plain_gave_up,
            "a \\u escape sends later strings to strings.rs"
        );
        let duplicate = prefix(r#"{"a": 1, "a": 2, "b": True}"#).expect("a prefix");
        assert!(duplicate.duplicate);
        // An escaped key has no known offset: nothing is handed over from it on.
        let text = r#"{"a": 1, "\u0062": 2, "c": True}"#;
        let members = prefix(text).expect("a prefix");
        assert_eq!(members.keys, vec![Some(2), None, Some(23)]);
        assert!(seed(text, members.members, &members.keys).is_none());
    }

    #[test]
    fn salvage_after_the_prefix_reads_as_salvage_alone() {
        let options = SalvageOptions::default();
        for text in [
            r#"{"path": "a.rs", "content": "x\"y\\n", "n": 1, "ok": True,}"#,
            r#"{"name": "John", "age": 30, "city": "New York, "gender": "male"}"#,
            r#"{"a": "x", "b": "say "hi" now", "c": 1,}"#,
            r#"{"a": "x\/", "b": "\u00e9", "c": "z", "d": [1], "e": None}"#,
            r#"{"a": 1, "a": 2, "b": True}"#,
            r#"{"a": "x", "b": "y" , "c": 'z'} and then {"d": 1}"#,
            r#"{"a": "x", "b": "cut"#,
        ] {
            assert_eq!(
                salvage_after(text, &options, prefix(text)),
                salvage_after(text, &options, None),
                "{text}"
            );
        }
        let tight = SalvageOptions::default().with_max_depth(1);
        let text = r#"{"a": "x", "b": True}"#;
        assert_eq!(
            salvage_after(text, &tight, prefix(text)),
            salvage_after(text, &tight, None)
        );
        let read = salvage_after(text, &options, prefix(text)).expect("salvaged");
        assert_eq!(read.values, vec![json!({"a": "x", "b": true})]);
    }

    /// Past the stepped escapes the pair search finds the same escapes, and takes no escaped
    /// backslash followed by `/` or `u` for one.
    #[test]
    fn escapes_found_alike_before_and_after_the_step() {
        let many = r"\n".repeat(40);
        for (tail, expect) in [
            (r"", (false, false)),
            (r"\/", (true, false)),
            (r"\u00e9", (false, true)),
            (r"\\/ \\u", (false, false)),
            (r"\\\/ \\\u0041", (true, true)),
        ] {
            for content in [
                tail.to_owned(),
                format!("{many}{tail}"),
                format!("{many}x{tail}{many}"),
            ] {
                assert_eq!(escapes_in(content.as_bytes()), expect, "{content}");
            }
        }
    }
}
