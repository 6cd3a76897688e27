//! The incremental scanner for the proxy: text chunks in, safe text and completed calls out.
//!
//! It runs the same resumable scanner as [`super::recover_text`], so for any split of a text
//! into chunks the concatenated output text and the calls equal the whole-text result. Text is
//! held back only while a decision needs more bytes: a suffix that may begin a sentinel, an open
//! block (until its terminator, [`super::MAX_BLOCK_BYTES`] at most), an inline code span that
//! has not closed within its paragraph, or a message that may still be a whole-message payload
//! (it starts with `{` or `[` and has not been ruled out). At [`StreamRecoverer::finish`] an
//! unfinished block is flushed back as text.

use std::ops::Range;

use super::reasoning;
use super::scan::{Classes, Found, Scanner};
use super::whole::{self, Whole};
use super::{LostCall, RecoverOptions, RecoveredCall, strip_into};
use crate::ToolSet;

/// What one [`StreamRecoverer::push`] (or `finish`) released.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StreamOutput {
    /// Text that is safe to emit now (markup of recovered calls removed).
    pub text: String,
    /// Calls completed by this chunk, in text order. Spans index the whole streamed text.
    pub calls: Vec<RecoveredCall>,
    /// Unreadable calls of declared tools in the blocks these calls came from (see
    /// [`LostCall`]); positions count every call released by the stream so far.
    pub lost: Vec<LostCall>,
}

/// Recovers calls from a text that arrives in chunks.
///
/// The recoverer keeps the text of the message (it is needed to locate spans and to judge a
/// whole-message payload at the end); one recoverer serves one channel of one message.
#[derive(Debug, Clone)]
pub struct StreamRecoverer {
    text: String,
    scanner: Scanner,
    options: RecoverOptions,
    /// Bytes before this index have been released.
    emitted: usize,
    /// Consumed ranges not yet passed by `emitted`.
    ranges: Vec<Range<usize>>,
    /// Whether any block was consumed: then no whole-message payload is possible.
    any_found: bool,
    /// Calls released so far (where a lost call stands among them).
    released: usize,
    /// Start of the whole-message region after the last `</think>` (0 when there is none).
    region: usize,
    /// The whole-message check of the whole text (tried first: a `</think>` may lie inside the
    /// payload's strings).
    zero: RegionCheck,
    /// The whole-message check of the text after the last `</think>`.
    think: RegionCheck,
    /// Blocks found while the whole text may still be a whole-message payload: markup quoted
    /// in the payload's strings is not a call of its own, so they wait for that verdict.
    deferred: Vec<Found>,
    /// What the last scanner run decided: bytes before it are text or consumed.
    safe: usize,
    /// Whether the text ended with a byte that ends blocks at the last run.
    armed: bool,
    /// The last non-whitespace character of `text[..visible_to]`: brought up to date only when
    /// the scanner runs, reading each byte once, so deciding `armed` never re-reads a long run
    /// of trailing whitespace and a quiet chunk costs nothing here.
    last_visible: Option<char>,
    /// How much of the text `last_visible` has seen.
    visible_to: usize,
    /// Text length at the last scanner run.
    ran_at: usize,
    /// The growth an open block must see before the next re-parse (see [`Self::due`]).
    gap: Option<Gap>,
    /// Which chunks may be appended unread and where they stop, as the last full push left
    /// the state (see [`Shortcut`]).
    shortcut: Shortcut,
    /// The byte class table ([`Classes::table`]), kept so a short chunk is classified without
    /// the lazy table's check.
    classes: &'static [u8; 256],
}

/// What the quiet path needs to know, decided once per full push instead of once per chunk:
/// only a full push changes the state it is read from (the scanner's wait, an open block, the
/// whole-message checks, the found blocks), so every chunk appended quietly in between sees
/// the same answer.
#[derive(Debug, Clone, Copy)]
struct Shortcut {
    /// The byte classes a chunk must avoid to be appended unread ([`Classes::ANY`]: none is;
    /// [`Classes::VISIBLE`] among them: only a blank chunk is, a region may still be a payload).
    stops: u8,
    /// Whether appended bytes are decided text (`scan::Quiet::flows`).
    flows: bool,
    /// Where emission stops for a region that may still be a payload (`usize::MAX`: nowhere).
    hold: usize,
}

impl Shortcut {
    /// Admits no chunk.
    const NONE: Self = Self {
        stops: Classes::ANY,
        flows: false,
        hold: usize::MAX,
    };
}

/// The state of the whole-message check of one region.
#[derive(Debug, Clone, Copy, Default)]
struct RegionCheck {
    /// The check ruled the region out.
    rejected: bool,
    /// Region length at the last full check (checks are spaced geometrically so a long held
    /// region costs linear time overall).
    checked_len: usize,
    /// The region's first non-whitespace byte, once it arrived.
    first: Option<u8>,
    /// Bytes before this index (from the region's start) are known to be whitespace, so a
    /// long blank prefix is read once, not once per chunk.
    blank_to: usize,
}

/// How soon an open block is parsed again, as a share of its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Gap {
    /// Only growth: the parse may turn invalid (a stray sentinel in prose) or hit the size cap.
    Growth,
    /// A closing bracket or `>` arrived: a bracket-closed payload (Mistral, Granite, pythonic)
    /// may be complete.
    Bracket,
    /// A closing tag or token arrived (`</`, `|>`, `｜>`), or the text ended with a byte that
    /// ends blocks: the block may be complete.
    Closer,
}

impl Gap {
    /// The bytes that must arrive since the last parse of a block of `len` bytes. Each gap is a
    /// fixed share of the block, so the parses of one block cost linear time in total (a
    /// geometric series), while a block is released at most `len / 16` bytes after its end.
    fn bytes(self, len: usize) -> usize {
        match self {
            Self::Growth => len,
            Self::Bracket => len / 4,
            Self::Closer => len / 16,
        }
    }
}

/// Tokens that close tags and special tokens in every family: their arrival may complete a
/// block.
const CLOSERS: [&[u8]; 4] = [b"</", b"|>", "｜>".as_bytes(), b"<end_function_call>"];

/// How far back a chunk is searched for a [`CLOSERS`] token cut by the previous chunk.
const CLOSER_OVERLAP: usize = 24;

/// Whether a [`CLOSERS`] token lies wholly in `text[from - CLOSER_OVERLAP..]`.
///
/// Every token ends with `/` or `>`, so only those bytes are tried (one memchr pass over a
/// small chunk; no substring searcher is built per chunk).
fn closer_in(text: &[u8], from: usize) -> bool {
    let window = from.saturating_sub(CLOSER_OVERLAP);
    memchr::memchr2_iter(b'/', b'>', &text[window..]).any(|i| {
        let end = window + i + 1;
        CLOSERS
            .iter()
            .any(|t| end - window >= t.len() && text[..end].ends_with(t))
    })
}

/// A chunk this short is classified for the quiet test by one table pass over its bytes (a
/// longer one by memchr passes, faster per byte but with a fixed cost per call).
const SHORT_CHUNK: usize = 32;

/// Appends `chunk` to `out`; a chunk of up to 8 bytes is copied with its length known in each
/// arm, so the copy compiles inline instead of calling `memcpy` (whose call costs as much as
/// the rest of a quiet chunk's work).
#[inline(always)]
fn push_short(out: &mut String, chunk: &str) {
    match chunk.len() {
        1 => out.push_str(chunk),
        2 => out.push_str(chunk),
        3 => out.push_str(chunk),
        4 => out.push_str(chunk),
        5 => out.push_str(chunk),
        6 => out.push_str(chunk),
        7 => out.push_str(chunk),
        8 => out.push_str(chunk),
        _ => out.push_str(chunk),
    }
}
/// A whole-message region that starts with a name is checked at every chunk up to this length
/// (a name, its line break and the start of its object), so prose is released within its first
/// word.
const NAME_CHECKED: usize = 512;

/// An open block this short is parsed again at every line break, so a stray sentinel in prose
/// is ruled out within its line (bounded work: the block is short).
const SHORT_BLOCK: usize = 1024;

impl StreamRecoverer {
    /// A recoverer that returns at most `max_calls` calls over the whole stream.
    #[must_use]
    pub fn new(max_calls: usize) -> Self {
        Self::with_options(RecoverOptions::new(max_calls))
    }

    /// A recoverer with the given options.
    #[must_use]
    pub fn with_options(options: RecoverOptions) -> Self {
        Self {
            text: String::new(),
            scanner: Scanner::new(options),
            options,
            emitted: 0,
            ranges: Vec::new(),
            any_found: false,
            released: 0,
            region: 0,
            zero: RegionCheck::default(),
            think: RegionCheck::default(),
            deferred: Vec::new(),
            safe: 0,
            armed: false,
            last_visible: None,
            visible_to: 0,
            ran_at: 0,
            gap: None,
            shortcut: Shortcut::NONE,
            classes: Classes::table(),
        }
    }

    /// Feeds the next chunk; returns the text now safe to emit and the calls it completed.
    pub fn push(&mut self, tools: &ToolSet, chunk: &str) -> StreamOutput {
        let mut out = StreamOutput::default();
        self.push_into(tools, chunk, &mut out);
        out
    }

    /// Like [`Self::push`], but appends what the chunk released to `out` (its text and its
    /// calls): a caller that forwards `out` and clears it between chunks allocates nothing per
    /// chunk once its buffers have grown.
    ///
    /// Inlined into the caller with the quiet path (a chunk that changes no pending decision),
    /// so a chunk of a few bytes costs one table lookup per byte, a bit test and the appends
    /// (issue #8 item 7, issue #31).
    #[inline]
    pub fn push_into(&mut self, tools: &ToolSet, chunk: &str, out: &mut StreamOutput) {
        let bytes = chunk.as_bytes();
        if bytes.len().wrapping_sub(1) < SHORT_CHUNK {
            if Classes::of_in(self.classes, bytes).avoid(self.shortcut.stops) {
                self.append_quiet(chunk, &mut out.text);
            } else {
                self.push_full(tools, chunk, out);
            }
        } else if !self.push_quiet_long(chunk, &mut out.text) {
            self.push_full(tools, chunk, out);
        }
    }

    /// [`Self::push_into`] for a chunk that may change a pending decision: the scanner and the
    /// whole-message checks run.
    #[inline(never)]
    fn push_full(&mut self, tools: &ToolSet, chunk: &str, out: &mut StreamOutput) {
        let old_len = self.text.len();
        self.text.push_str(chunk);
        self.track_think(old_len);
        let ends_block = |b: u8| matches!(b, b'>' | b']' | b'}' | b')');
        let mut found = Vec::new();
        if !self.scanner.in_block() || self.due(old_len, chunk) {
            self.safe = self.scanner.run(&self.text, false, tools, &mut found);
            self.ran_at = self.text.len();
            self.gap = None;
            self.armed = self
                .last_visible()
                .is_some_and(|c| u8::try_from(c).is_ok_and(ends_block));
        }
        let safe = self.safe;
        let zero_held = self.zero_hold(tools);
        if zero_held.is_some() {
            self.deferred.append(&mut found);
        } else {
            let mut all = std::mem::take(&mut self.deferred);
            all.append(&mut found);
            let calls = self.take(all, &mut out.lost);
            out.calls.extend(calls);
        }
        let limit = match zero_held.or_else(|| self.think_hold(tools)) {
            Some(hold) => safe.min(hold),
            None => safe,
        };
        self.release(limit, &mut out.text);
        self.shortcut = self.shortcut();
    }

    /// Appends a chunk the [`Shortcut`] admits (it changes no pending decision) without
    /// running the scanner or the whole-message checks (the next full push reads it once),
    /// and releases what it frees.
    #[inline]
    fn append_quiet(&mut self, chunk: &str, out: &mut String) {
        let cut = self.shortcut;
        debug_assert!(cut.hold != usize::MAX || self.deferred.is_empty());
        let from = self.text.len();
        push_short(&mut self.text, chunk);
        if cut.flows {
            self.safe = self.text.len();
        }
        let limit = self.safe.min(cut.hold);
        if limit == self.text.len() && self.emitted == from && self.ranges.is_empty() {
            // The common case (prose or a fence's line flowing through): the chunk itself is
            // what is released.
            push_short(out, chunk);
            self.emitted = limit;
        } else {
            self.release(limit, out);
        }
    }

    /// The quiet test for a chunk longer than [`SHORT_CHUNK`]: memchr passes (faster per byte
    /// than a table lookup, with a fixed cost per pass), the blank test only when a region may
    /// still be a payload. Returns false, having done nothing, when the chunk needs a full
    /// push.
    fn push_quiet_long(&mut self, chunk: &str, out: &mut String) -> bool {
        let stops = self.shortcut.stops;
        let bytes = chunk.as_bytes();
        if stops & Classes::ANY != 0 || !self.scanner.quiet().passes(bytes) {
            return false;
        }
        // No early exit: the fold compiles to wide compares.
        let visible = || {
            bytes
                .iter()
                .fold(false, |acc, b| acc | !b.is_ascii_whitespace())
        };
        if stops & Classes::VISIBLE != 0 && visible() {
            return false;
        }
        self.append_quiet(chunk, out);
        true
    }

    /// The [`Shortcut`] of the current state: what the scanner's wait allows (`scan::Quiet`),
    /// nothing while a block is open, and for each whole-message region that may still be a
    /// payload (no visible byte yet) only blank chunks, held at the region's start.
    fn shortcut(&self) -> Shortcut {
        let quiet = self.scanner.quiet();
        if self.scanner.in_block() {
            return Shortcut::NONE;
        }
        let mut cut = Shortcut {
            stops: quiet.stops(),
            flows: quiet.flows(),
            hold: usize::MAX,
        };
        let off = self.any_found || self.options.max_calls == 0;
        // Whether a region stays as it is for any chunk (`Some(false)`), for a blank one
        // (`Some(true)`), or only a full check can tell (`None`).
        let still = |check: &RegionCheck| match check.first {
            _ if off || check.rejected => Some(false),
            None => Some(true),
            Some(_) => None,
        };
        let regions = [(0, &self.zero), (self.region, &self.think)];
        let used = if self.region == 0 { 1 } else { 2 };
        for (start, check) in regions.into_iter().take(used) {
            match still(check) {
                None => return Shortcut::NONE,
                Some(true) => {
                    cut.stops |= Classes::VISIBLE;
                    cut.hold = start;
                    break;
                }
                Some(false) => {}
            }
        }
        cut
    }

    /// The last non-whitespace character of the text, reading only the bytes that arrived
    /// since the last call (backwards, ASCII whitespace by a byte test; a non-ASCII character
    /// or a vertical tab at the end of the new bytes is judged as `str::trim_end` judges it).
    fn last_visible(&mut self) -> Option<char> {
        let new = &self.text[self.visible_to..];
        let bytes = new.as_bytes();
        match bytes.iter().rposition(|b| !b.is_ascii_whitespace()) {
            None => {}
            Some(i) if bytes[i].is_ascii() && bytes[i] != 0x0b => {
                self.last_visible = Some(char::from(bytes[i]));
            }
            // Only ASCII whitespace follows `i`, so `i + 1` is a character boundary.
            Some(i) => {
                if let Some(c) = new[..=i].trim_end().chars().next_back() {
                    self.last_visible = Some(c);
                }
            }
        }
        self.visible_to = self.text.len();
        self.last_visible
    }

    /// Ends the stream: decides every held byte and returns the rest of the text and any calls
    /// completed by the end (a whole-message payload, a block whose grammar ends at the end).
    pub fn finish(mut self, tools: &ToolSet) -> StreamOutput {
        let mut found = Vec::new();
        self.scanner.run(&self.text, true, tools, &mut found);
        let whole_text = match self.zero.rejected {
            true => None,
            false => whole::check_region(&self.text, 0, tools, &self.options),
        };
        let mut lost = Vec::new();
        let calls = if let Some(block) = whole_text {
            self.take(vec![block], &mut lost)
        } else {
            let mut all = std::mem::take(&mut self.deferred);
            all.append(&mut found);
            let mut calls = self.take(all, &mut lost);
            if !self.any_found && self.region != 0 {
                if let Some(block) =
                    whole::check_region(&self.text, self.region, tools, &self.options)
                {
                    calls = self.take(vec![block], &mut lost);
                }
            }
            calls
        };
        let end = self.text.len();
        let mut text = String::new();
        self.release(end, &mut text);
        StreamOutput { text, calls, lost }
    }

    /// Whether an open block should be parsed again after `chunk` arrived (the text was
    /// `old_len` bytes long before it).
    ///
    /// Each parse of an open block reads it from its start, so parsing at every chunk would
    /// make a long streamed block quadratic. A block can only complete when a closer arrives
    /// (or, when the text already ended with one, on the next byte, which decides the optional
    /// parts after it); even then the parse waits until the block grew by a share of its length
    /// since the last parse. Skipping never changes the result, only when it is released.
    fn due(&mut self, old_len: usize, chunk: &str) -> bool {
        let len = self.text.len() - self.safe;
        if len <= SHORT_BLOCK && chunk.contains('\n') {
            return true;
        }
        let closer = self.armed || closer_in(self.text.as_bytes(), old_len);
        let arrived = if closer {
            Gap::Closer
        } else if chunk
            .bytes()
            .any(|b| matches!(b, b'>' | b']' | b'}' | b')'))
        {
            Gap::Bracket
        } else {
            Gap::Growth
        };
        let gap = self.gap.map_or(arrived, |g| g.max(arrived));
        self.gap = Some(gap);
        self.text.len() - self.ran_at >= gap.bytes(len)
    }

    /// Takes found blocks: their ranges are consumed, their calls returned, their lost calls
    /// appended to `lost` (placed among every call released so far).
    fn take(&mut self, found: Vec<Found>, lost: &mut Vec<LostCall>) -> Vec<RecoveredCall> {
        self.any_found |= !found.is_empty();
        let mut calls = Vec::new();
        for block in found {
            self.ranges.push(block.range);
            let before = self.released;
            lost.extend(block.lost.into_iter().map(|mut l| {
                l.position += before;
                l
            }));
            self.released += block.calls.len();
            calls.extend(block.calls);
        }
        calls
    }

    /// Appends `text[emitted..limit]` minus consumed ranges to `out`.
    #[inline]
    fn release(&mut self, limit: usize, out: &mut String) {
        if limit <= self.emitted {
            return;
        }
        if self.ranges.is_empty() {
            out.push_str(&self.text[self.emitted..limit]);
        } else {
            strip_into(&self.text, self.emitted..limit, self.ranges.iter(), out);
            self.ranges.retain(|r| r.end > limit);
        }
        self.emitted = limit;
    }

    /// Moves the whole-message region past a closing reasoning tag that arrived (possibly
    /// split).
    ///
    /// A tag that arrived ends in the new bytes, and every tag ends with `>` or `]`: only those
    /// bytes are tried, from the last, so a chunk without them costs one memchr (no searcher is
    /// built per chunk).
    fn track_think(&mut self, old_len: usize) {
        let bytes = self.text.as_bytes();
        for i in memchr::memrchr2_iter(b'>', b']', &bytes[old_len..]) {
            let end = old_len + i + 1;
            if reasoning::closes_at(bytes, 0, end) {
                if end > self.region {
                    self.region = end;
                    self.think = RegionCheck::default();
                }
                return;
            }
        }
    }

    /// Where emission must stop because the whole text may still be a whole-message payload
    /// (then blocks found so far are deferred).
    fn zero_hold(&mut self, tools: &ToolSet) -> Option<usize> {
        if self.any_found || self.options.max_calls == 0 {
            return None;
        }
        let mut zero = self.zero;
        let held = self.region_hold(tools, 0, &mut zero);
        self.zero = zero;
        held
    }

    /// Where emission must stop because the text after the last `</think>` may still be a
    /// whole-message payload (only when no block was found).
    fn think_hold(&mut self, tools: &ToolSet) -> Option<usize> {
        if self.any_found || self.options.max_calls == 0 || self.region == 0 {
            return None;
        }
        let mut think = self.think;
        let held = self.region_hold(tools, self.region, &mut think);
        self.think = think;
        held
    }

    /// Whether `text[region..]` may still be a whole-message payload: then emission stops at
    /// `region`.
    fn region_hold(
        &self,
        tools: &ToolSet,
        region: usize,
        check: &mut RegionCheck,
    ) -> Option<usize> {
        if check.rejected {
            return None;
        }
        let len = self.text.len() - region;
        if check.first.is_none() {
            let from = check.blank_to.max(region);
            let bytes = &self.text.as_bytes()[from..];
            match bytes.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => check.first = Some(bytes[i]),
                None => check.blank_to = self.text.len(),
            }
        }
        let verdict = match check.first {
            None => Whole::Candidate,
            Some(b'{' | b'[') if len < check.checked_len + (check.checked_len / 2).max(64) => {
                Whole::Candidate
            }
            Some(b'{' | b'[') => {
                check.checked_len = len;
                whole::check(&self.text, region, tools, false, &self.options)
            }
            // A name first (functionary): ruled out within its first word, so it is checked at
            // every chunk while short, then as spaced as a payload.
            Some(b)
                if whole::starts_name(b)
                    && (len <= NAME_CHECKED
                        || len >= check.checked_len + (check.checked_len / 2).max(64)) =>
            {
                check.checked_len = len;
                whole::check(&self.text, region, tools, false, &self.options)
            }
            Some(b) if whole::starts_name(b) => Whole::Candidate,
            Some(_) => Whole::Reject,
        };
        match verdict {
            Whole::Reject => {
                check.rejected = true;
                None
            }
            _ => Some(region),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closers_are_found_whole_in_the_window_only() {
        assert!(closer_in(b"abc</", 3) && closer_in(b"x|>", 2));
        assert!(closer_in("a｜>".as_bytes(), 3));
        assert!(closer_in(b"..<end_function_call>", 20));
        assert!(!closer_in(b"a > b / c", 0) && !closer_in(b"a<", 0));
        // A token wholly before the window is not seen again.
        let far = format!("</{}", "x".repeat(40));
        assert!(!closer_in(far.as_bytes(), far.len()));
    }

    /// The quiet shortcut holds a blank start only while it is blank: the first visible
    /// chunk of prose releases it with the blanks (it is no payload), whatever its size.
    #[test]
    fn prose_after_blank_chunks_is_released_at_once() {
        let tools = ToolSet::default();
        for word in ["hi", "hello there, a longer chunk of plain words"] {
            let mut stream = StreamRecoverer::new(16);
            for chunk in ["  ", "\n", " "] {
                assert_eq!(stream.push(&tools, chunk).text, "");
            }
            assert_eq!(stream.push(&tools, word).text, format!("  \n {word}"));
            assert_eq!(stream.push(&tools, " ok").text, " ok");
        }
    }

    #[test]
    fn a_think_closer_split_across_chunks_moves_the_region() {
        let tools = ToolSet::default();
        let mut stream = StreamRecoverer::new(16);
        for chunk in ["a</th", "ink>", " b", " c>"] {
            let _ = stream.push(&tools, chunk);
        }
        assert_eq!(stream.region, "a</think>".len());
        let _ = stream.push(&tools, "[/THINK]");
        assert_eq!(stream.region, "a</think> b c>[/THINK]".len());
    }
}
