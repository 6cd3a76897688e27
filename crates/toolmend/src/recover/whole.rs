//! Whole-message forms: payloads with no sentinel (GRAMMARS §1.6).
//!
//! An xLAM array, a bare Llama `{"name", "parameters"}` object (or several joined by `;`), a
//! bare pythonic list `[f(a=1)]` and functionary's `NAME\n{json}` (its `>>>` in the prompt) are
//! recovered only when they are the whole trimmed text, or the whole trimmed text after the
//! last closing reasoning tag (`</think>`, `[/THINK]`, `</seed:think>`, Hy3's
//! `</think:opensource>`, Solar Open's `<|end|>` after `<|think|>`: `reasoning`), and every
//! call names a declared tool; one end-of-turn token (`<|eot_id|>`, `<|eom_id|>`, `</s>`) may
//! follow. JSON quoted in prose never becomes a call (unlike vLLM's `llama3_json`).

use super::call::sort_calls;
use super::cursor::{Step, Stop, skip_ws};
use super::grammars::{Block, Input, functionary, llama, pythonic, xlam};
use super::reasoning;
use super::scan::Found;
use super::{MAX_BLOCK_BYTES, RecoverOptions};
use crate::ToolSet;

/// Where the whole-message region starts: after the last closing reasoning tag
/// (`reasoning`), or at 0.
///
/// Every tag ends with `>` or `]`, so one backward memchr pass tries only those bytes (reverse
/// substring searches for each tag cost more than the whole scan of a long prose text).
pub(crate) fn region_start(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memrchr2_iter(b'>', b']', bytes)
        .map(|i| i + 1)
        .find(|&end| reasoning::closes_at(bytes, 0, end))
        .unwrap_or(0)
}

/// End-of-turn tokens that may follow a whole-message payload (Llama's `<|eom_id|>` and
/// `<|eot_id|>`, GRAMMARS §2.11, and `</s>`); they belong to the payload's span.
const END_TOKENS: [&str; 3] = ["<|eom_id|>", "<|eot_id|>", "</s>"];

/// Whether `text[at..]` is only whitespace and at most one end-of-turn token: `Ok(Some(end))`
/// with the end of the consumed token (or `at`), `Ok(None)` when it can never be, and
/// `Err(Incomplete)` when more text may still make it so.
fn trailer(text: &str, at: usize) -> Step<Option<usize>> {
    let i = skip_ws(text, at);
    if i == text.len() {
        return Ok(Some(at));
    }
    let rest = &text[i..];
    for token in END_TOKENS {
        if let Some(after) = rest.strip_prefix(token) {
            return Ok((after.trim().is_empty()).then_some(i + token.len()));
        }
        if token.starts_with(rest) {
            return Err(Stop::Incomplete);
        }
    }
    Ok(None)
}

/// The whole-message payload of a final text starting at `region` (0, or after the last
/// `</think>`), if any.
pub(crate) fn check_region(
    text: &str,
    region: usize,
    tools: &ToolSet,
    options: &RecoverOptions,
) -> Option<Found> {
    match check(text, region, tools, true, options) {
        Whole::Accept(block) => Some(block),
        _ => None,
    }
}

/// A whole-message parser: the payload starting at the given index.
type WholeParse = fn(&Input<'_>, usize) -> Step<Block>;

/// The whole-message forms, tried in this order (their first bytes overlap: `[` opens both an
/// xLAM array and a pythonic list).
const WHOLE: [(&str, WholeParse); 3] = [
    ("xlam", xlam::parse_whole),
    ("llama", llama::parse_whole),
    ("pythonic", pythonic::parse_whole),
];

/// The whole-message forms that start with a tool's name: functionary v3.2's first call,
/// whose `>>>` the prompt wrote (its grammar file says why that is safe to hold for).
const NAMED: [(&str, WholeParse); 1] = [("functionary", functionary::parse_whole)];

/// Whether a region starting with `b` may be a [`NAMED`] form.
pub(crate) fn starts_name(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// The verdict on a region.
#[derive(Debug)]
pub(crate) enum Whole {
    /// The region is a payload of declared calls (only with `eof`).
    Accept(Found),
    /// More text may still make the region a payload (only without `eof`).
    Candidate,
    /// The region is not a payload, whatever follows.
    Reject,
}

/// Judges `text[region..]`. Without `eof`, a region that may still become a payload is a
/// candidate; a rejection is final (no continuation can make it a payload).
pub(crate) fn check(
    text: &str,
    region: usize,
    tools: &ToolSet,
    eof: bool,
    options: &RecoverOptions,
) -> Whole {
    let first = skip_ws(text, region);
    let forms: &[(&str, WholeParse)] = match text.as_bytes().get(first) {
        None => return if eof { Whole::Reject } else { Whole::Candidate },
        _ if text.len() - first > MAX_BLOCK_BYTES => return Whole::Reject,
        Some(b'{' | b'[') => &WHOLE,
        Some(&b) if starts_name(b) => &NAMED,
        Some(_) => return Whole::Reject,
    };
    let input = Input {
        text,
        eof,
        message_end: eof,
        tools,
    };
    for &(family, parse) in forms {
        match parse(&input, first) {
            Ok(mut block) => match trailer(text, block.end) {
                Ok(Some(_)) | Err(_) if !eof => return Whole::Candidate,
                Ok(Some(end)) => {
                    block.end = end;
                    return accept(family, block, first, tools, options)
                        .map_or(Whole::Reject, Whole::Accept);
                }
                _ => {}
            },
            Err(Stop::Incomplete) if !eof => return Whole::Candidate,
            _ => {}
        }
    }
    Whole::Reject
}

/// The found block when every readable call names a declared tool and the cap allows them all.
fn accept(
    family: &'static str,
    block: Block,
    first: usize,
    tools: &ToolSet,
    options: &RecoverOptions,
) -> Option<Found> {
    if block.calls.len() > options.max_calls {
        return None;
    }
    let range = first..block.end;
    // Every readable call must name a declared tool; an unreadable entry of a list loses only
    // itself and is reported (issue #28).
    let sorted = sort_calls(&block.calls, tools, options.resolve_name, family, &range);
    if sorted.undeclared > 0 || sorted.calls.is_empty() {
        return None;
    }
    Some(Found {
        range,
        calls: sorted.calls,
        lost: sorted.lost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_starts_after_the_last_reasoning_closer() {
        assert_eq!(region_start("no closer > here ]"), 0);
        assert_eq!(region_start("a</think>b"), 9);
        assert_eq!(region_start("a[/THINK]b</think>c>d"), 18);
        assert_eq!(region_start("</think>x</seed:think>"), 22);
    }
}
