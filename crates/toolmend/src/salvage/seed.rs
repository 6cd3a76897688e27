//! Where salvage's first run starts when the strict read failed late (issue #11 §3): the
//! members of the root object it completed, handed over as a [`Seed`].
//!
//! Every call is first read strictly (the fast path; an object by [`super::strict`], with
//! `serde_json`'s answer). When that read fails late, as it does for a `'…'` value or a raw
//! newline after a 2 KB `content` string, it has already decoded nearly the whole object, and
//! salvage used to read it all again. (A Python literal, a trailing comma, and in a text up to
//! 1 KiB a plain `'…'` string, it reads on past: an object whose only faults they are is read
//! whole, and no seed is made of it: see `strict/tolerated.rs`.) The strict reader hands over
//! the members it completed ([`StrictPrefix`], a plain value) with where each stands in the
//! text, noted while it read (issue #31: this module walked their text again), and
//! [`from_prefix`] picks the longest safe prefix of them for salvage's first run
//! ([`super::salvage_call_after`]), which starts after them in the state it would have reached
//! reading them itself.
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

use serde_json::{Map, Value};

use super::strict::{Noted, StrictPrefix, read_candidate};
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
    let candidate = read_candidate(text, root)?;
    if candidate.noted.duplicate {
        return None;
    }
    // A member holding an object ends the prefix, and so does an array of scalars beyond
    // salvage's depth limit (its strings face the look-ahead with a comma and an element, or
    // its `]`, after them, which close them as they do in an object).
    let array = candidate.first_array.filter(|_| options.max_depth <= 2);
    let stop = match (candidate.first_container, array) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(usize::MAX),
    };
    let closed = candidate.end.is_some();
    let handed = handed(&candidate.noted, stop, closed);
    if let Some(comma) = candidate.end
        && handed == candidate.noted.spans.len()
    {
        return Some(Seed {
            root,
            plain_gave_up: candidate.noted.unicode_before(handed),
            members: candidate.noted.members,
            comma,
            closed: true,
            last_quote: candidate.last_quote,
            last_in_array: candidate.last_in_array,
            spans: candidate.noted.spans,
        });
    }
    open_seed(text, root, candidate.noted, handed)
}

/// The seed for the members `serde_json` read from the root object of `text` before it
/// failed (`prefix`): its longest safe part (see the module doc); `None` when nothing can be
/// handed over. The strict read noted where each member stands, up to the first holding an
/// object or array, so no member's text is walked again here (issue #31).
pub(super) fn from_prefix(
    text: &str,
    options: &SalvageOptions,
    prefix: StrictPrefix,
) -> Option<Seed> {
    // A root object read whole on past its faults is no prefix: its members hold them.
    if prefix.whole.is_some() {
        return None;
    }
    let noted = prefix.noted;
    // Salvage refuses even the root object when its depth limit is 1. No member kept (a small
    // text the syntax-only check refused hands over none): nothing to start after.
    if noted.members.is_empty() || noted.duplicate || options.max_depth <= 1 {
        return None;
    }
    let handed = handed(&noted, usize::MAX, false);
    open_seed(text, scan::skip_ws(text.as_bytes(), 0), noted, handed)
}

/// How many of `noted`'s first members (none from `stop` on) a seed hands over, by the rules of
/// the module doc: members a comma, a key with no escape and its colon follow, and, when the
/// object `closed` after them, its last member. Their spans are what the run notes already
/// (see [`Noted::note`]).
fn handed(noted: &Noted, stop: usize, closed: bool) -> usize {
    let spans = &noted.spans;
    let count = spans.len().min(stop);
    let mut handed = 0;
    while handed < count {
        // A key with an escape (its offset is not known), its own or the next one's, ends it.
        let next_key = match spans.get(handed + 1) {
            Some(next) => next.key,
            None if closed => Some(0),
            None => noted.next_key(),
        };
        if spans[handed].key.is_none() || next_key.is_none() {
            break;
        }
        handed += 1;
    }
    handed
}

/// The seed of the first `handed` of `noted`'s members, the run going on right after the comma
/// before the key that follows them; `None` when none is handed over. The members past them
/// are dropped in place: the map keeps its keys' hashes, where collecting would hash each
/// again.
fn open_seed(text: &str, root: usize, noted: Noted, handed: usize) -> Option<Seed> {
    // The comma before the key after the last member handed over.
    let next_key = match noted.spans.get(handed) {
        Some(next) => next.key,
        None => noted.next_key(),
    };
    let bytes = text.as_bytes();
    let comma = scan::back_over_ws(bytes, root, next_key.filter(|_| handed > 0)?).checked_sub(1)?;
    if bytes[comma] != b',' {
        return None;
    }
    let plain_gave_up = noted.unicode_before(handed);
    let Noted {
        mut members,
        mut spans,
        ..
    } = noted;
    spans.truncate(handed);
    if handed < members.len() {
        let mut kept = 0;
        members.retain(|_, _| {
            kept += 1;
            kept <= handed
        });
    }
    Some(Seed {
        root,
        members,
        comma,
        closed: false,
        last_quote: None,
        last_in_array: false,
        spans,
        plain_gave_up,
    })
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
        // (A `'…'` value holding a `"` is not read on, `strict/tolerated.rs`.)
        let text = r#"{"path": "a.rs", "content": "x\"y\\n", "n": 1, "ok": 'say "yes"'}"#;
        let members = prefix(text).expect("a prefix");
        let found = from_prefix(text, &SalvageOptions::default(), members).expect("a seed");
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
        let found = from_prefix(text, &SalvageOptions::default(), members).expect("a seed");
        assert_eq!(found.members.len(), 1);
        assert_eq!(found.comma, text.find(r#", "city""#).unwrap());
        // A trailing comma: the last member is read again; nothing before it, no seed.
        let text = r#"{"a": 1,} x"#;
        let members = prefix(text).expect("a prefix");
        assert!(from_prefix(text, &SalvageOptions::default(), members).is_none());
    }

    #[test]
    fn containers_escapes_and_duplicates_end_the_prefix_or_lose_the_span() {
        let text = r#"{"a": "x\/", "b": "\u00e9", "c": "z", "d": [1], "e": x}"#;
        let members = prefix(text).expect("a prefix");
        let found = from_prefix(text, &SalvageOptions::default(), members).expect("a seed");
        assert_eq!(found.members.len(), 3, "the array ends the prefix");
        assert!(found.spans.iter().all(|s| s.value.is_none()));
        assert!(
            found.plain_gave_up,
            "a \\u escape sends later strings to strings.rs"
        );
        let duplicate = prefix(r#"{"a": 1, "a": 2, "b": True}"#).expect("a prefix");
        assert!(duplicate.noted.duplicate);
        // An escaped key has no known offset: nothing is handed over from it on.
        let text = r#"{"a": 1, "\u0062": 2, "c": True}"#;
        let members = prefix(text).expect("a prefix");
        assert_eq!(members.parts(), (2, vec![Some(2), None, Some(23)]));
        assert!(from_prefix(text, &SalvageOptions::default(), members).is_none());
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
}
