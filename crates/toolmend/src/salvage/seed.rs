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

use super::strict::{StrictPrefix, read_candidate};
use super::{MemberText, SalvageOptions, scan};

/// Spans a call's root object has room for at least, in a seed's vector or an unseeded run's:
/// salvage goes on pushing one per member it reads (issue #31: growing it cost more than the
/// member).
pub(super) const SPANS_CAPACITY: usize = 8;

/// What salvage's first run starts from (see [`from_prefix`]).
#[derive(Debug)]
pub(super) struct Seed {
    /// Where the root object's `{` is.
    pub(super) root: usize,
    /// The members read, in order.
    pub(super) members: Map<String, Value>,
    /// The comma after the last of them: the run goes on right after it (unless
    /// [`Self::closed`]: then where the object ends).
    pub(super) comma: usize,
    /// The object closed and these are all its members (a candidate, [`from_candidate`]): the
    /// run goes on after its `}`, at [`Self::comma`].
    pub(super) closed: bool,
    /// When [`Self::closed`], the closing quote of its last member's value, if a string: the one
    /// judgement of the look-ahead left to make (that quote closes every open container).
    pub(super) last_quote: Option<usize>,
    /// [`Self::last_quote`] closes the last element of the last member's array (of scalars).
    pub(super) last_in_array: bool,
    /// Per member: its key's and its value's canonical text, as the parser reports them.
    pub(super) spans: Vec<MemberText>,
    /// A string among them was not plain (a `\u` escape): the run reads later strings the long
    /// way, as it would have.
    pub(super) plain_gave_up: bool,
}

/// The seed for the object whose `{` is at `root` of `text`, a fence's body or a `{` among
/// prose (issue #31), read by [`read_candidate`]: the whole object when it closes and every
/// member can be handed over ([`Seed::closed`]), else its longest safe prefix by the rules of
/// the module doc, as [`from_prefix`] picks for a text that starts with the object, but for
/// one: an array of scalars (`"tags": ["a", "b"]`) is handed over like a scalar. The strict
/// read noted where each member stands, so no member's text is walked again here.
pub(super) fn from_candidate(text: &str, root: usize, options: &SalvageOptions) -> Option<Seed> {
    if options.max_depth <= 1 {
        return None;
    }
    let mut candidate = read_candidate(text, root)?;
    if candidate.duplicate {
        return None;
    }
    let bytes = text.as_bytes();
    let count = candidate.spans.len();
    let mut plain_gave_up = false;
    let mut handed = 0;
    while handed < count {
        let i = handed;
        let bit = 1u64 << i;
        // A member holding an object ends the prefix, and so does a key with an escape
        // (its offset is not known), its own or the next one's: handed over are members a
        // comma, a key with no escape and its colon follow, and the last of a closed object.
        let next_key = match candidate.spans.get(i + 1) {
            Some(next) => next.key,
            None if candidate.end.is_some() => Some(0),
            None => candidate.failed_key,
        };
        // An array of scalars is handed over too (its strings face the look-ahead with a comma
        // and an element, or its `]`, after them, which close them as they do in an object),
        // within salvage's depth limit.
        let array = candidate.arrays & bit != 0;
        if candidate.spans[i].key.is_none()
            || candidate.containers & bit != 0
            || (array && options.max_depth <= 2)
            || next_key.is_none()
        {
            break;
        }
        let span = &mut candidate.spans[i];
        if array {
            // Its text, noted for this: a string in it with a `\u` escape sends later strings
            // to strings.rs, as for a member's string (strict text: every backslash in it starts
            // an escape inside a string).
            if let Some(value) = span.value.take() {
                plain_gave_up |= escapes_in(&bytes[value.start + 1..value.end - 1]).1;
            }
        } else if let Some(value) = span.value.clone() {
            let (slash, unicode) = if candidate.escaped & bit != 0 {
                escapes_in(&bytes[value.start + 1..value.end - 1])
            } else {
                (false, false)
            };
            if slash || unicode || plain_gave_up {
                span.value = None;
            }
            plain_gave_up |= unicode;
        }
        handed += 1;
    }
    let members = candidate.members;
    let mut spans = candidate.spans;
    if candidate.end.is_some() && handed == count {
        return Some(Seed {
            root,
            members,
            comma: candidate.end?,
            closed: true,
            last_quote: candidate.last_quote,
            last_in_array: candidate.last_in_array,
            spans,
            plain_gave_up,
        });
    }
    // The comma before the key after the last member handed over.
    let next_key = match spans.get(handed) {
        Some(next) => next.key,
        None => candidate.failed_key,
    };
    let comma = back_over_ws(bytes, root, next_key.filter(|_| handed > 0)?).checked_sub(1)?;
    if bytes[comma] != b',' {
        return None;
    }
    spans.truncate(handed);
    Some(open_seed(root, members, comma, spans, plain_gave_up))
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
    Some(open_seed(root, members, comma?, spans, plain_gave_up))
}

/// The seed of the first `spans.len()` of `members` (one span each), the run going on right
/// after `comma`; the members past them are dropped in place: the map keeps its keys' hashes,
/// where collecting would hash each again.
fn open_seed(
    root: usize,
    mut members: Map<String, Value>,
    comma: usize,
    spans: Vec<MemberText>,
    plain_gave_up: bool,
) -> Seed {
    let count = spans.len();
    if count < members.len() {
        let mut kept = 0;
        members.retain(|_, _| {
            kept += 1;
            kept <= count
        });
    }
    Seed {
        root,
        members,
        comma,
        closed: false,
        last_quote: None,
        last_in_array: false,
        spans,
        plain_gave_up,
    }
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

    /// Asserts that `text` reads alike with the candidates seeded (`salvage`, `salvage_after`)
    /// and without (`salvage_to_text`, which builds nodes and so never seeds a candidate), and
    /// that the spans of the engine's reading are what serde_json writes.
    fn reads_alike(text: &str) {
        let options = SalvageOptions::default();
        let reference = crate::salvage::salvage_to_text(text, &options);
        for seeded in [
            crate::salvage::salvage(text, &options),
            salvage_after(text, &options, None),
        ] {
            match (&seeded, &reference) {
                (Ok(seeded), Ok(reference)) => {
                    let written: Vec<String> = (seeded.values.iter())
                        .map(|v| serde_json::to_string(v).expect("written"))
                        .collect();
                    assert_eq!(written.join("\n"), reference.text, "{text}");
                    assert_eq!(seeded.repairs, reference.repairs, "{text}");
                    assert_eq!(seeded.dropped_keys, reference.dropped_keys, "{text}");
                    assert_eq!(seeded.truncated, reference.truncated, "{text}");
                    let alternative = (seeded.alternative.as_ref())
                        .map(|v| serde_json::to_string(v).expect("written"));
                    assert_eq!(alternative, reference.alternative, "{text}");
                    let Some(Value::Object(map)) = seeded.values.first() else {
                        continue;
                    };
                    if seeded.spans.is_empty() {
                        continue;
                    }
                    assert_eq!(seeded.spans.len(), map.len(), "{text}");
                    for ((key, value), span) in map.iter().zip(&seeded.spans) {
                        // What the call's text copies (`'…'` between `"`) is serde_json's.
                        let copied = |noted: crate::salvage::Noted<'_>| {
                            let mut out = String::new();
                            noted.push_to(&mut out);
                            out
                        };
                        if let Some(noted) = span.key_text(text, key.len()) {
                            let quoted = serde_json::to_string(key).expect("written");
                            assert_eq!(copied(noted), quoted, "{text}");
                        }
                        assert_eq!(span.key.is_some(), span.key_text(text, key.len()).is_some());
                        if let Some(noted) = span.value_text(text) {
                            let written = serde_json::to_string(value).expect("written");
                            assert_eq!(copied(noted), written, "{text}");
                        }
                        assert_eq!(span.value.is_some(), span.value_text(text).is_some());
                    }
                }
                (Err(seeded), Err(reference)) => assert_eq!(seeded, reference, "{text}"),
                _ => panic!("{text}: {seeded:?} against {reference:?}"),
            }
        }
    }

    /// Around an object, the places a candidate is read from: fences, prose, what may follow.
    const WRAPPERS: [&str; 14] = [
        "```json\n{}\n```",
        "Here:\n```json\n{}\n```\nDone.",
        "```\n{}\n``` and then \"q\"} more",
        "```json\n{}\n```\n```json\n{\"n\": 1}\n```",
        "Sure! {} Let me know.",
        "Sure!\n\n{}\n\nLet me know if \"this\" works}",
        "I'll call: {} {\"b\": 2}",
        "Call {}, {\"b\": 2}",
        "Call {}, \"extra\": 3}",
        "Call {}] trailing",
        "Call {} + \"x\"",
        "Call {}/* c */ then",
        "x {placeholder} then {}",
        "[1] See {} here",
    ];

    #[test]
    fn a_candidate_read_strictly_reads_as_the_lenient_parser_reads_it() {
        let mut objects: Vec<String> = crate::salvage::corpus_objects()
            .iter()
            .map(|text| text.trim().to_owned())
            .collect();
        assert!(objects.len() > 300, "{} corpus objects", objects.len());
        objects.extend(
            [
                r#"{"a": "x"}"#,
                r#"{"a": "x\/y", "b": "\u00e9", "c": "z"}"#,
                r#"{"a": "say \"hi\"", "b": "{[", "c": "]}"}"#,
                r#"{"a": 1, "a": 2}"#,
                r#"{"a": {"b": "c"}, "d": "e"}"#,
                r#"{"a": ["x", "y"], "b": 1E2, "c": -0.50}"#,
                r#"{"k\u0031": 1, "n": "v"}"#,
                r#"{"$serde_json::private::Number": "1"}"#,
                r#"{}"#,
                r#"{ "path" : "a.rs" , "n" : 2 , "ok" : true }"#,
                r#"{"a": "x", "b": None, "c": 1,}"#,
                r#"{"a": "x", "b": 'y'}"#,
                r#"{"a": "x", "b": "cut"#,
                r#"{"a": "x", "b": "New York, "c": "d"}"#,
                r#"{"code": "print("x")", "n": 1}"#,
                r#"{"a": "ends with a quote \"", "b": "x"}"#,
                r#"{"a": "C:\\Users\\", "b": "x"}"#,
                r#"{"path": "a", "tags": ["x", "y"]}"#,
                r#"{"tags": [ "a\u00e9" , "b\/" ], "c": "d", "e": ["f"]}"#,
                r#"{"t": [1, "x", true, null, -2.5E3], "u": [], "v": "w"}"#,
                r#"{"t": ["{[", "say \"hi\""]}"#,
                r#"{"t": [["x"]], "u": "v"}"#,
                r#"{"t": ["x", None], "u": "v"}"#,
            ]
            .map(str::to_owned),
        );
        for object in &objects {
            for wrapper in WRAPPERS {
                reads_alike(&wrapper.replacen("{}", object, 1));
            }
        }
        // Every cut of a few wrapped objects.
        for object in &objects[objects.len() - 23..] {
            for wrapper in &WRAPPERS[..6] {
                let text = wrapper.replacen("{}", object, 1);
                for end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
                    reads_alike(&text[..end]);
                }
            }
        }
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
