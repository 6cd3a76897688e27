//! The entry points of call salvage: [`salvage`] and [`salvage_call_after`] (after a strict
//! prefix); the size guard, empty arguments and double encoding, then [`crate::salvage::extract`].
//!
//! The top of the stage: it calls down (`seed`, `extract`) and nothing below calls it.

use serde_json::Value;

use crate::RepairKind;
use crate::salvage::node::{Build, Roots};
use crate::salvage::repairs::RepairLog;
use crate::salvage::seed::{self, Seed};
use crate::salvage::strict::StrictPrefix;
use crate::salvage::{
    Found, SalvageError, SalvageErrorKind, SalvageOptions, Salvaged, SalvagedCall, SalvagedText,
    SyntaxRepair, extract, scan,
};

/// Salvages `text`, which did not parse as strict JSON or parsed as a bare JSON string or `null`.
///
/// Returns every value found (several for `{…}{…}` or NDJSON), each syntax repair with the byte
/// offset of its first occurrence, and whether the text ended inside a value that was closed.
/// Strict JSON comes back unchanged with no repairs, so calling it on valid text is harmless.
///
/// # Errors
///
/// A [`SalvageError`] when the text is too large ([`SalvageErrorKind::TooLarge`]), too deep
/// ([`SalvageErrorKind::TooDeep`]), holds `NaN`/`Infinity` ([`SalvageErrorKind::NonFinite`]),
/// holds no JSON ([`SalvageErrorKind::NoJson`]) or broken JSON that cannot be read
/// ([`SalvageErrorKind::Syntax`]). Never returns `{}` for garbage: only empty text, `""` and
/// `null` give `{}` (as `empty_arguments`).
///
/// # Examples
///
/// ```
/// use toolmend::salvage::{salvage, SalvageOptions};
/// use toolmend::RepairKind;
///
/// let s = salvage("Sure! {'path': 'a.txt', 'recursive': True,}", &SalvageOptions::default())?;
/// assert_eq!(s.values, vec![serde_json::json!({"path": "a.txt", "recursive": true})]);
/// assert!(s.has(RepairKind::ProseStripped) && s.has(RepairKind::PythonLiteral));
/// # Ok::<(), toolmend::salvage::SalvageError>(())
/// ```
pub fn salvage(text: &str, options: &SalvageOptions) -> Result<Salvaged, SalvageError> {
    salvage_seeded(text, options, &mut None).map(|found| found.into_salvaged(text))
}

/// [`salvage`], written as text: each value found as compact JSON, the bytes
/// `serde_json::to_string` writes for the value [`salvage`] returns, without building that
/// value (no `serde_json::Map`, no hashing of keys). For callers that want the repaired text
/// and not the values (issue #31).
///
/// # Errors
///
/// As [`salvage`].
///
/// # Examples
///
/// ```
/// use toolmend::salvage::{salvage_to_text, SalvageOptions};
///
/// let s = salvage_to_text("{'path': 'a.txt', 'recursive': True,}", &SalvageOptions::default())?;
/// assert_eq!(s.text, r#"{"path":"a.txt","recursive":true}"#);
/// # Ok::<(), toolmend::salvage::SalvageError>(())
/// ```
pub fn salvage_to_text(text: &str, options: &SalvageOptions) -> Result<SalvagedText, SalvageError> {
    let mut options = *options;
    options.readings.build = Build::Nodes;
    salvage_seeded(text, &options, &mut None).map(|found| found.into_text(text))
}

/// Salvages a call's arguments `text`, which the strict read ([`crate::salvage::read_strict`])
/// refused after reading `prefix`: the first run starts after the longest safe part of it
/// ([`crate::salvage::seed`]). The same result as [`salvage`] on `text`, without reading the
/// prefix twice, the one value read apart from the vector ([`SalvagedCall`]).
///
/// # Errors
///
/// As [`salvage`].
pub(crate) fn salvage_call_after(
    text: &str,
    options: &SalvageOptions,
    prefix: Option<StrictPrefix>,
) -> Result<SalvagedCall, SalvageError> {
    // Each arm hands the prefix on, moved, and its result, written where the caller wants it:
    // the prefix written to here (taken) was copied on its way in, and a result made here
    // beside the other arm's was copied on its way out, on every call (issue #31).
    match prefix {
        // Read whole on past its faults: nothing is left to read.
        Some(prefix) if prefix.whole.is_some() => read_whole(text, options, prefix),
        prefix => salvage_seeded_call(text, options, prefix),
    }
}

/// [`salvage_call_after`] of a prefix that is not a whole object.
#[inline(never)]
fn salvage_seeded_call(
    text: &str,
    options: &SalvageOptions,
    prefix: Option<StrictPrefix>,
) -> Result<SalvagedCall, SalvageError> {
    let mut seed = prefix.and_then(|prefix| seed::from_prefix(text, options, prefix));
    let mut options = *options;
    options.readings.member_text = true;
    salvage_seeded(text, &options, &mut seed).map(|found| found.into_call(text))
}

/// What salvage makes of `text`, whose root object the strict read read whole on past Python
/// literals, trailing commas and `'…'` strings (`prefix`, see `strict/tolerated.rs`): that
/// object, and a repair for each kind of fault at its first offset, in text order, with the
/// spans the read noted, as the lenient parser reads the same text (issue #31: ~3.9 k of a
/// ~9.3 k-instruction call went to the parser and its envelope). Where salvage refuses the text
/// before reading it (too large, or nested deeper than its limit), salvage reads it from its
/// start to say so.
#[inline(never)]
fn read_whole(
    text: &str,
    options: &SalvageOptions,
    prefix: StrictPrefix,
) -> Result<SalvagedCall, SalvageError> {
    let whole = match prefix.whole {
        Some(whole)
            if text.len() <= options.max_bytes
                && usize::from(prefix.deepest) < options.max_depth =>
        {
            whole
        }
        _ => return salvage_seeded_call(text, options, None),
    };
    let mut repairs = Vec::with_capacity(3);
    let faults = [
        (RepairKind::PythonLiteral, whole.python_literal()),
        (RepairKind::TrailingCommaRemoved, whole.trailing_comma()),
        (RepairKind::QuotesNormalized, whole.single_quotes()),
    ];
    for (kind, offset) in faults {
        if let Some(offset) = offset {
            repairs.push(SyntaxRepair { kind, offset });
        }
    }
    // Each kind at its first offset, in text order (as `RepairLog::into_sorted`).
    if repairs.len() > 1 {
        repairs.sort_unstable_by_key(|repair| repair.offset);
    }
    let noted = prefix.noted;
    Ok(SalvagedCall {
        one: Some(Value::Object(noted.members)),
        salvaged: Salvaged {
            values: Vec::new(),
            repairs,
            dropped_keys: Vec::new(),
            truncated: false,
            alternative: None,
            spans: noted.spans,
        },
    })
}

/// [`salvage_call_after`] as a [`Salvaged`], as [`salvage`] returns (the tests compare them).
#[cfg(test)]
pub(crate) fn salvage_after(
    text: &str,
    options: &SalvageOptions,
    prefix: Option<StrictPrefix>,
) -> Result<Salvaged, SalvageError> {
    salvage_call_after(text, options, prefix).map(SalvagedCall::into_salvaged)
}

/// [`salvage`], whose first run at the root object starts after `seed` (taken; see
/// [`crate::salvage::seed`]). The seed is handed down by reference and the result written
/// where the caller wants it: by value, the ~140-byte seed was copied through `memcpy` twice
/// on the way down and the ~160-byte result once on the way up (issue #31).
fn salvage_seeded(
    text: &str,
    options: &SalvageOptions,
    seed: &mut Option<Seed>,
) -> Result<Found, SalvageError> {
    if text.len() > options.max_bytes {
        return Err(SalvageError::at(
            SalvageErrorKind::TooLarge,
            text,
            options.max_bytes,
        ));
    }
    let bytes = text.as_bytes();
    let after_bom = scan::skip_bom(bytes, 0);
    // The result handed on as it came (not taken out of its `Result` and put back into
    // another: two moves of the ~180-byte `Found` a call), and, with no mark to note, from
    // the one call that makes it.
    if after_bom == 0 {
        return read(text, scan::skip_ws(bytes, 0), options, seed);
    }
    let mut salvaged = read(text, scan::skip_ws(bytes, after_bom), options, seed);
    if let Ok(found) = &mut salvaged {
        // Not JSON (RFC 8259 §8.1), and never part of the value: a syntax repair.
        found.repairs.insert(
            0,
            SyntaxRepair {
                kind: RepairKind::BomRemoved,
                offset: 0,
            },
        );
    }
    salvaged
}

/// Salvages `text` from `start`, its first byte past a byte-order mark and whitespace.
fn read(
    text: &str,
    start: usize,
    options: &SalvageOptions,
    seed: &mut Option<Seed>,
) -> Result<Found, SalvageError> {
    let bytes = text.as_bytes();
    if start == bytes.len() || text[start..].trim_end() == "null" {
        return Ok(empty(start.min(text.len())));
    }
    if bytes[start] == b'"' {
        if let Ok(Value::String(inner)) = serde_json::from_str::<Value>(text[start..].trim_end()) {
            return double_encoded(text, start, &inner, options, false);
        }
        // A double-encoded object cut by the token limit: the outer string never closes.
        if let Some(inner) = cut_outer_string(&text[start + 1..]) {
            return double_encoded(text, start, &inner, options, true);
        }
    }
    extract::locate(text, start, options, seed)
}

/// `{}` for empty arguments.
fn empty(offset: usize) -> Found {
    let repairs = vec![SyntaxRepair {
        kind: RepairKind::EmptyArguments,
        offset,
    }];
    Found {
        values: Roots::Values(vec![Value::Object(serde_json::Map::new())]),
        repairs,
        dropped_keys: Vec::new(),
        truncated: false,
        alternative: None,
        spans: Vec::new(),
    }
}

/// The text is one JSON string: its content must salvage to objects. Repairs made inside the
/// string are reported at the string's offset, since inner offsets do not map to the outer text.
fn double_encoded(
    text: &str,
    start: usize,
    inner: &str,
    options: &SalvageOptions,
    cut: bool,
) -> Result<Found, SalvageError> {
    let no_json = || SalvageError::at(SalvageErrorKind::NoJson, text, start);
    match salvage_seeded(inner, options, &mut None) {
        Ok(s) if s.has(RepairKind::EmptyArguments) => Ok(empty(start)),
        Ok(s) if s.values.all_objects() => {
            let mut log = RepairLog::default();
            log.note(RepairKind::DoubleEncoded, start);
            log.absorb_at(&s, start);
            if cut {
                log.note(RepairKind::TruncationClosed, text.len());
            }
            let (repairs, dropped_keys) = log.into_sorted();
            Ok(Found {
                // Read from `inner`, which ends here.
                values: s.values.detach(inner),
                repairs,
                dropped_keys,
                truncated: s.truncated || cut,
                alternative: s.alternative.map(|node| Box::new(node.detach(inner))),
                // Offsets into the decoded string, not into the text.
                spans: Vec::new(),
            })
        }
        Ok(_) => Err(no_json()),
        Err(e) if e.kind == SalvageErrorKind::NoJson => Err(no_json()),
        Err(e) => Err(SalvageError::at(e.kind, text, start)),
    }
}

/// The content of a JSON string (after its opening quote) that the text ends inside, decoded;
/// `None` when the string closes, an escape is malformed, or the content does not start like
/// an object (a quoted sentence cut short is not a double-encoded call).
fn cut_outer_string(rest: &str) -> Option<String> {
    let mut out = String::with_capacity(rest.len());
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => {
                let Some(e) = chars.next() else { break };
                match e {
                    '"' | '\\' | '/' => out.push(e),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            break; // cut inside the escape: dropped
                        }
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                }
            }
            _ => out.push(c),
        }
    }
    out.trim_start().starts_with('{').then_some(out)
}
