//! Whole-message forms: payloads with no sentinel (GRAMMARS §1.6).
//!
//! An xLAM array, a bare Llama `{"name", "parameters"}` object (or several joined by `;`) and a
//! bare pythonic list `[f(a=1)]` are recovered only when they are the whole trimmed text, or
//! the whole trimmed text after the last `</think>`, and every call names a declared tool.
//! JSON quoted in prose never becomes a call (unlike vLLM's `llama3_json`).

use super::cursor::{Step, Stop, skip_ws};
use super::grammars::{Block, Input, llama, pythonic, xlam};
use super::scan::Found;
use super::{MAX_BLOCK_BYTES, RecoverOptions};
use crate::ToolSet;

/// The closing think tag after which a whole-message payload may start.
pub(crate) const THINK_CLOSE: &str = "</think>";

/// Where the whole-message region starts: after the last `</think>`, or at 0.
pub(crate) fn region_start(text: &str) -> usize {
    memchr::memmem::rfind(text.as_bytes(), THINK_CLOSE.as_bytes())
        .map_or(0, |i| i + THINK_CLOSE.len())
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
    match text.as_bytes().get(first) {
        None => return if eof { Whole::Reject } else { Whole::Candidate },
        Some(b'{' | b'[') if text.len() - first <= MAX_BLOCK_BYTES => {}
        Some(_) => return Whole::Reject,
    }
    let input = Input { text, eof, tools };
    for (family, parse) in WHOLE {
        match parse(&input, first) {
            Ok(block) if skip_ws(text, block.end) == text.len() => {
                if !eof {
                    return Whole::Candidate;
                }
                return accept(family, block, first, tools, options)
                    .map_or(Whole::Reject, Whole::Accept);
            }
            Err(Stop::Incomplete) if !eof => return Whole::Candidate,
            _ => {}
        }
    }
    Whole::Reject
}

/// The found block when every call names a declared tool and the cap allows them all.
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
    let calls = block
        .calls
        .iter()
        .map(|call| call.recovered(tools, options.resolve_name, family, range.clone()))
        .collect::<Option<Vec<_>>>()?;
    Some(Found { range, calls })
}
