//! The single left-to-right scanner: prose, fenced code, inline code, sentinel blocks
//! (GRAMMARS §1.2).
//!
//! One aho-corasick automaton holds every start sentinel plus the two code markers (a backtick
//! and `~~~`), so prose without markup is skipped at memchr speed. The scanner is resumable: it
//! keeps its position and fence state between runs, and a run over a text that may still grow
//! (`eof == false`) stops where a decision needs bytes that have not arrived. A whole-text scan
//! is the same machine run once with `eof == true`, which is why streamed and whole-text scans
//! agree.
//!
//! A fence that may lie in reasoning (no closing reasoning tag before it, no opening one inside
//! it) also ends at a closing reasoning tag: a model that stops reasoning mid-code leaves its
//! fence open, which would otherwise mask every call after `</think>` (#28).

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, Anchored, MatchKind, StartKind};

use super::MAX_BLOCK_BYTES;
use super::call::sort_calls;
use super::cursor::{Stop, take_reach};
use super::grammars::{GRAMMARS, Input};
use super::reasoning;
use super::{LostCall, NameResolver, RecoverOptions, RecoveredCall};
use crate::ToolSet;

/// A block of markup the scanner consumed, with the declared calls it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The consumed bytes.
    pub range: Range<usize>,
    /// The calls of declared tools, in block order; never empty.
    pub calls: Vec<RecoveredCall>,
    /// The block's unreadable calls of declared tools; positions count `calls` before them.
    pub lost: Vec<LostCall>,
}

/// What a pattern of the automaton stands for.
#[derive(Debug)]
enum Pattern {
    /// A backtick: an inline code span or a fence.
    Backtick,
    /// `~~~`: a tilde fence when it opens a line.
    Tilde,
    /// A start sentinel, with the grammars that start with it, in table order.
    Sentinel(Vec<usize>),
}

/// The automaton and what each of its patterns means.
#[derive(Debug)]
struct Dispatch {
    automaton: AhoCorasick,
    patterns: Vec<(&'static str, Pattern)>,
    /// Every pattern, and every sentinel with its lead: what a held-back suffix may begin.
    holds: Vec<String>,
    /// Every sentinel with a lead, with its lead: held back even when whole, since the match
    /// the automaton reports for it starts after the lead.
    leads: Vec<String>,
    /// The longest of `holds`.
    longest: usize,
    /// The first bytes of `holds`: a suffix starting with any other byte is never held, so
    /// [`holdback`] costs a few byte tests per chunk in plain prose.
    starts: [bool; 256],
    /// The [`Classes`] bits of every byte.
    classes: [u8; 256],
    /// The bytes set in `starts`, and `>` and `]`: what stops a long quiet chunk in prose.
    quiet_stops: Vec<u8>,
    /// The first two bytes of every pattern, a 256-bit set of second bytes per first byte (a
    /// one-byte pattern sets them all): a candidate whose two bytes start no pattern skips the
    /// automaton. Code and HTML put a `<`, `>`, `[` or `]` every few bytes, and the anchored
    /// search was most of their scan.
    pairs: Box<[[u64; 4]; 256]>,
}

impl Dispatch {
    /// Whether some pattern may start at `at`: false only when the two bytes there start none.
    #[inline]
    fn may_start(&self, hay: &[u8], at: usize) -> bool {
        match hay.get(at..at + 2) {
            Some(&[a, b]) => self.pairs[usize::from(a)][usize::from(b >> 6)] >> (b & 63) & 1 == 1,
            // At the end of the text the automaton decides (it reports no partial match).
            _ => true,
        }
    }
}

/// The [`Dispatch::pairs`] set of `patterns`.
fn pair_table<'a>(patterns: impl Iterator<Item = &'a str>) -> Box<[[u64; 4]; 256]> {
    let mut pairs = Box::new([[0u64; 4]; 256]);
    for pattern in patterns {
        let bytes = pattern.as_bytes();
        let row = &mut pairs[usize::from(bytes[0])];
        match bytes.get(1) {
            Some(&b) => row[usize::from(b >> 6)] |= 1 << (b & 63),
            None => *row = [u64::MAX; 4],
        }
    }
    pairs
}

#[inline]
fn dispatch() -> &'static Dispatch {
    static DISPATCH: OnceLock<Dispatch> = OnceLock::new();
    DISPATCH.get_or_init(|| {
        let mut patterns: Vec<(&'static str, Pattern)> =
            vec![("`", Pattern::Backtick), ("~~~", Pattern::Tilde)];
        let mut holds: Vec<String> = Vec::new();
        let mut leads: Vec<String> = Vec::new();
        for (index, grammar) in GRAMMARS.iter().enumerate() {
            for &sentinel in grammar.sentinels {
                if !grammar.lead.is_empty() {
                    leads.push(format!("{}{sentinel}", grammar.lead));
                }
                match patterns.iter_mut().find(|(p, _)| *p == sentinel) {
                    Some((_, Pattern::Sentinel(list))) => list.push(index),
                    _ => patterns.push((sentinel, Pattern::Sentinel(vec![index]))),
                }
            }
        }
        holds.extend(patterns.iter().map(|(p, _)| (*p).to_owned()));
        holds.extend(leads.iter().cloned());
        // Leftmost-longest: at one position the longest sentinel wins (`<tool_calls>` over
        // `<tool_call`-anything, `<|tool_call|>` over `<|tool_call>`), GRAMMARS §1.7.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Anchored)
            .build(patterns.iter().map(|(p, _)| p))
            .expect("the sentinel table is a small fixed set of literals");
        let longest = holds.iter().map(String::len).max().unwrap_or(0);
        let mut starts = [false; 256];
        for hold in &holds {
            starts[usize::from(hold.as_bytes()[0])] = true;
        }
        assert!(
            patterns
                .iter()
                .all(|(p, _)| matches!(p.as_bytes()[0], b'<' | b'[' | b']' | b'`' | b'~' | b'>')),
            "every pattern starts with a byte `Scanner::find` looks for"
        );
        Dispatch {
            automaton,
            pairs: pair_table(patterns.iter().map(|(p, _)| *p)),
            patterns,
            holds,
            leads,
            longest,
            classes: class_table(&starts),
            quiet_stops: (0..=255u8)
                .filter(|&b| starts[usize::from(b)] || matches!(b, b'>' | b']'))
                .collect(),
            starts,
        }
    })
}

/// The length of the longest suffix of `text` that is a proper prefix of a pattern (with its
/// lead): bytes that must be held back because the next chunk may complete a sentinel
/// (GRAMMARS §1.9).
pub(crate) fn holdback(text: &str) -> usize {
    let bytes = text.as_bytes();
    let d = dispatch();
    let holds = &d.holds;
    for k in (1..d.longest.min(bytes.len() + 1)).rev() {
        let suffix = &bytes[bytes.len() - k..];
        if !d.starts[usize::from(suffix[0])] {
            continue;
        }
        let proper = holds
            .iter()
            .any(|p| p.len() > k && p.as_bytes().starts_with(suffix));
        if proper || dispatch().leads.iter().any(|p| p.as_bytes() == suffix) {
            return k;
        }
    }
    0
}

/// Which bytes may be appended to the text without changing what the last run decided: the
/// streaming recoverer appends such a chunk without running the scanner (the next run reads it
/// once), so a chunk of a few bytes costs a few byte tests, not a scan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quiet {
    /// Any byte may change the decision.
    No,
    /// In prose with nothing held: bytes that start no pattern and no held suffix. The new
    /// bytes are decided text.
    Prose,
    /// On a line inside a fence: bytes other than a line break. The new bytes are text.
    FenceLine,
    /// Waiting at a run of this byte that touches the end: more of the byte. Nothing new is
    /// decided.
    Run(u8),
    /// Searching for an inline span's close: bytes other than a backtick or a line break.
    /// Nothing new is decided.
    Span,
}

impl Quiet {
    /// Whether appending `chunk` leaves the decision as it is and the chunk holds no `>` or
    /// `]` (the streaming recoverer's own condition: a reasoning closer may end there), by
    /// memchr passes that test both at once (for a long chunk: faster per byte than
    /// [`Classes::of_in`], with a fixed cost per pass).
    pub(crate) fn passes(self, chunk: &[u8]) -> bool {
        let none = |set: &[u8]| match *set {
            [a, b, c] => memchr::memchr3(a, b, c, chunk).is_none(),
            [a, b] => memchr::memchr2(a, b, chunk).is_none(),
            _ => set.iter().all(|&a| memchr::memchr(a, chunk).is_none()),
        };
        match self {
            Self::No => false,
            Self::Prose => dispatch().quiet_stops.chunks(3).all(none),
            Self::FenceLine => none(b"\n>]"),
            // No early exit: the fold compiles to wide compares (`ch` is never `>` or `]`).
            Self::Run(ch) => chunk.iter().fold(0, |acc, &b| acc | (b ^ ch)) == 0,
            Self::Span => none(b"`\n>") && none(b"]"),
        }
    }

    /// The byte classes (see [`Classes`]) a short chunk must avoid to leave the decision as it
    /// is and hold no `>` or `]` (as [`Self::passes`] asks of a long one): one bit test after
    /// the classes are read.
    #[inline]
    pub(crate) fn stops(self) -> u8 {
        match self {
            Self::No => Classes::ANY,
            Self::Run(b'`') => Classes::NOT_BACKTICK,
            Self::Run(b'~') => Classes::NOT_TILDE,
            // No other run is waited at; were one added, it would only lose the shortcut.
            Self::Run(_) => Classes::ANY,
            Self::Prose => Classes::PATTERN | Classes::CLOSE,
            Self::FenceLine => Classes::BREAK | Classes::CLOSE,
            Self::Span => Classes::BREAK | Classes::BACKTICK | Classes::CLOSE,
        }
    }

    /// Whether bytes that pass are decided text (else they stay held with what precedes them).
    #[inline]
    pub(crate) fn flows(self) -> bool {
        matches!(self, Self::Prose | Self::FenceLine)
    }
}

/// The classes of bytes a short chunk holds, for the streaming recoverer's quiet test: one
/// table lookup per byte answers every question that test asks (instead of a memchr call per
/// question, whose fixed cost dominates a chunk of a few bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Classes(u8);

impl Classes {
    /// A byte that may start a pattern or a held-back suffix ([`Dispatch::starts`]).
    const PATTERN: u8 = 1;
    /// A line break.
    const BREAK: u8 = 2;
    /// A backtick.
    const BACKTICK: u8 = 4;
    /// `>` or `]`: the last byte of every closing reasoning tag.
    const CLOSE: u8 = 8;
    /// A byte that is not ASCII whitespace.
    pub(crate) const VISIBLE: u8 = 16;
    /// A byte other than a backtick (a chunk without it is a run of backticks).
    const NOT_BACKTICK: u8 = 32;
    /// A byte other than `~` (a chunk without it is a run of tildes).
    const NOT_TILDE: u8 = 64;
    /// Every byte: a mask holding it admits no chunk.
    pub(crate) const ANY: u8 = 128;

    /// The classes of the bytes of `chunk`, by `table` (from [`Self::table`]: a caller that
    /// keeps it skips the lazy table's check per chunk).
    #[inline]
    pub(crate) fn of_in(table: &[u8; 256], chunk: &[u8]) -> Self {
        Self(chunk.iter().fold(0, |acc, &b| acc | table[usize::from(b)]))
    }

    /// The table of every byte's classes.
    pub(crate) fn table() -> &'static [u8; 256] {
        &dispatch().classes
    }

    /// Whether no byte falls in a class of `mask`.
    #[inline]
    pub(crate) fn avoid(self, mask: u8) -> bool {
        self.0 & mask == 0
    }
}

/// The [`Classes`] bits of every byte.
fn class_table(starts: &[bool; 256]) -> [u8; 256] {
    let mut table = [0; 256];
    for (b, bits) in (0..=255u8).zip(table.iter_mut()) {
        let set = |yes: bool, bit: u8| if yes { bit } else { 0 };
        *bits = set(starts[usize::from(b)], Classes::PATTERN)
            | set(b == b'\n', Classes::BREAK)
            | set(b == b'`', Classes::BACKTICK)
            | set(matches!(b, b'>' | b']'), Classes::CLOSE)
            | set(!b.is_ascii_whitespace(), Classes::VISIBLE)
            | set(b != b'`', Classes::NOT_BACKTICK)
            | set(b != b'~', Classes::NOT_TILDE)
            | Classes::ANY;
    }
    table
}

/// An open fenced code block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
    /// False while the scanner is still on the opening line (the info string).
    in_body: bool,
    /// The fence may lie in reasoning: no closing reasoning tag came before it, and no opening
    /// one inside it yet. Such a fence ends at a closing tag (the model stopped reasoning
    /// mid-code), so the calls after it are not masked.
    in_reasoning: bool,
}

/// The first reasoning tag ending in `bytes[from..]` (the whole tag within `bytes[floor..]`):
/// its end, and whether it closes. Every tag ends with `>` or `]` (`reasoning`).
fn think_tag(bytes: &[u8], floor: usize, from: usize) -> Option<(usize, bool)> {
    let tail = bytes.get(from..)?;
    memchr::memchr2_iter(b'>', b']', tail).find_map(|i| {
        let end = from + i + 1;
        if reasoning::closes_at(bytes, floor, end) {
            Some((end, true))
        } else if reasoning::opens_at(bytes, floor, end) {
            Some((end, false))
        } else {
            None
        }
    })
}

/// The resumable scanner.
#[derive(Debug, Clone)]
pub(crate) struct Scanner {
    pos: usize,
    fence: Option<Fence>,
    calls_left: usize,
    resolve: Option<NameResolver>,
    /// Next `<`, `[` or `]` (the first bytes of the sentinels).
    next_mark: NextByte,
    /// Next backtick, `~` (code markers) or `>` (functionary's `>>>`).
    next_code: NextByte,
    /// Whether the last run stopped at an open sentinel block.
    in_block: bool,
    /// Bytes scanned by parses that ran out of text (see `sentinel`).
    spent: usize,
    /// An inline code span whose close was not decided when the text ran out: its opening run's
    /// index and where the search for its close resumes, so a streamed paragraph after an
    /// unmatched backtick is searched once, not once per chunk.
    span_memo: Option<(usize, usize, usize)>,
    /// The opening run of backticks or tildes measured last (a run that touches the end of a
    /// growing text is counted once in total, not once per chunk).
    open_run: Option<Run>,
    /// The run measured last by the search for an inline span's close.
    close_run: Option<Run>,
    /// Inside a fence: no line break lies between `pos` and this index, so a long line is
    /// searched once, not once per chunk.
    line_from: usize,
    /// What the last run's wait allows to be appended unread.
    quiet: Quiet,
    /// A closing reasoning tag lies before `closer_searched` (searched only when a fence opens).
    closer_before: bool,
    closer_searched: usize,
}

/// A run of one byte class measured so far: `start..end`. The text only grows between runs,
/// so a later measure of the same run resumes at `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: usize,
    end: usize,
    class: u8,
}

/// The class of blank bytes after a line break (spaces, tabs, `\r`) for [`run_len`].
const BLANK: u8 = 0;

fn in_class(b: u8, class: u8) -> bool {
    match class {
        BLANK => matches!(b, b' ' | b'\t' | b'\r'),
        ch => b == ch,
    }
}

/// A cached forward search for a byte class: every pattern starts with one of six bytes that
/// are rare in prose, so two memchr passes find candidates at memchr speed and the automaton
/// only runs, anchored, at those candidates. The cache keeps the whole scan linear when one
/// class is dense and the other absent.
#[derive(Debug, Clone, Copy, Default)]
struct NextByte {
    /// The last occurrence found.
    at: Option<usize>,
    /// No occurrence lies between `from` and this index except `at`.
    scanned: usize,
    /// The `from` of the last query; a query further back (the scanner stepped back to a
    /// held-back suffix) drops the cache.
    from: usize,
}

impl NextByte {
    /// The first occurrence at or after `from`.
    fn find(
        &mut self,
        hay: &[u8],
        from: usize,
        search: impl Fn(&[u8]) -> Option<usize>,
    ) -> Option<usize> {
        if from < self.from {
            *self = Self::default();
        }
        self.from = from;
        if let Some(p) = self.at.filter(|&p| p >= from) {
            return Some(p);
        }
        let start = if self.at.is_some() {
            from
        } else {
            from.max(self.scanned)
        };
        let found = hay.get(start..).and_then(search).map(|i| start + i);
        self.at = found;
        self.scanned = found.map_or(hay.len(), |p| p + 1);
        found
    }
}

/// How a step ended.
enum Next {
    /// Keep scanning from the new position.
    Continue,
    /// A decision needs more text; everything before the index is decided.
    Wait(usize),
}

impl Scanner {
    /// A scanner at the start of a text.
    pub(crate) fn new(options: RecoverOptions) -> Self {
        Self {
            pos: 0,
            fence: None,
            calls_left: options.max_calls,
            resolve: options.resolve_name,
            next_mark: NextByte::default(),
            next_code: NextByte::default(),
            in_block: false,
            spent: 0,
            span_memo: None,
            open_run: None,
            close_run: None,
            line_from: 0,
            quiet: Quiet::No,
            closer_before: false,
            closer_searched: 0,
        }
    }

    /// Scans `text` from the saved position, appending consumed blocks to `out`.
    ///
    /// Returns the index before which every byte is decided (text or consumed). With `eof`, that
    /// is `text.len()`.
    pub(crate) fn run(
        &mut self,
        text: &str,
        eof: bool,
        tools: &ToolSet,
        out: &mut Vec<Found>,
    ) -> usize {
        self.in_block = false;
        self.quiet = Quiet::No;
        loop {
            let step = match self.fence {
                Some(fence) => self.fence_step(text, eof, fence),
                None => self.prose_step(text, eof, tools, out),
            };
            match step {
                Next::Continue if self.pos >= text.len() && self.fence.is_none() => {
                    return text.len();
                }
                Next::Continue => {}
                Next::Wait(safe) => return if eof { text.len() } else { safe },
            }
        }
    }

    /// Inside a fence: look for the closing line, one line at a time.
    fn fence_step(&mut self, text: &str, eof: bool, mut fence: Fence) -> Next {
        let bytes = text.as_bytes();
        let from = self.pos.max(self.line_from);
        let line_end = memchr::memchr(b'\n', &bytes[from..]).map(|i| from + i);
        if fence.in_reasoning {
            // Reasoning tags are never consumed, so the bytes before one may already have been
            // emitted as fence text; a chunk holding a `>` or `]` always makes a run.
            let limit = line_end.unwrap_or(text.len());
            match think_tag(&bytes[..limit], self.pos, from) {
                Some((end, true)) => {
                    self.fence = None;
                    self.closer_before = true;
                    self.pos = end;
                    return Next::Continue;
                }
                Some((_, false)) => fence.in_reasoning = false,
                None => {}
            }
            self.fence = Some(fence);
        }
        let Some(line_end) = line_end.or(eof.then_some(text.len())) else {
            // Everything in a fence is text, so it may all be emitted; only the state waits.
            self.line_from = text.len();
            self.quiet = Quiet::FenceLine;
            return Next::Wait(text.len());
        };
        if fence.in_body && closes(&bytes[self.pos..line_end], fence) {
            self.fence = None;
        } else {
            fence.in_body = true;
            self.fence = Some(fence);
        }
        self.pos = (line_end + 1).min(text.len());
        if eof && line_end == text.len() {
            self.fence = None;
            self.pos = text.len();
        }
        Next::Continue
    }

    /// Whether no closing reasoning tag ends before `at` (each byte searched once in a scan).
    fn no_closer_before(&mut self, bytes: &[u8], at: usize) -> bool {
        if !self.closer_before && at > self.closer_searched {
            let from = self.closer_searched;
            let hay = &bytes[..at];
            self.closer_before = memchr::memchr2_iter(b'>', b']', &hay[from..])
                .any(|i| reasoning::closes_at(hay, 0, from + i + 1));
            self.closer_searched = at;
        }
        !self.closer_before
    }

    /// In prose: find the next pattern and act on it.
    fn prose_step(&mut self, text: &str, eof: bool, tools: &ToolSet, out: &mut Vec<Found>) -> Next {
        let d = dispatch();
        let Some(m) = self.find(text.as_bytes()) else {
            if eof {
                self.pos = text.len();
                return Next::Continue;
            }
            // The held-back suffix is scanned again once the next chunk arrives.
            self.pos = text.len() - holdback(&text[self.pos..]);
            if self.pos == text.len() {
                self.quiet = Quiet::Prose;
            }
            return Next::Wait(self.pos);
        };
        let at = m.start();
        // A longer sentinel may begin at or before this match and run past the end of the text
        // so far (`[` of `[TOOL_CALLS`, or `]<]minimax[` before its `[`): wait for it, as the
        // whole-text scan would have matched it.
        if !eof && at + d.longest > text.len() {
            let held = text.len() - holdback(&text[self.pos..]);
            if held <= at {
                return self.wait(held);
            }
        }
        match &d.patterns[m.pattern().as_usize()].1 {
            Pattern::Backtick => self.backticks(text, eof, at),
            Pattern::Tilde => self.tildes(text, eof, at),
            Pattern::Sentinel(grammars) => {
                self.sentinel(text, eof, tools, at, m.end(), grammars, out)
            }
        }
    }

    /// The leftmost pattern match at or after `pos`: candidates by memchr, then an anchored
    /// automaton run at each (leftmost-longest at that position).
    fn find(&mut self, hay: &[u8]) -> Option<aho_corasick::Match> {
        let mut from = self.pos;
        loop {
            let mark = self
                .next_mark
                .find(hay, from, |h| memchr::memchr3(b'<', b'[', b']', h));
            // `>` starts functionary's `>>>`; it shares the pass with the code markers.
            let code = self
                .next_code
                .find(hay, from, |h| memchr::memchr3(b'`', b'~', b'>', h));
            let at = match (mark, code) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return None,
            };
            let d = dispatch();
            if d.may_start(hay, at) {
                let input = aho_corasick::Input::new(hay)
                    .span(at..hay.len())
                    .anchored(Anchored::Yes);
                if let Some(m) = d.automaton.find(input) {
                    return Some(m);
                }
            }
            from = at + 1;
        }
    }

    fn backticks(&mut self, text: &str, eof: bool, at: usize) -> Next {
        let bytes = text.as_bytes();
        let memo = self.span_memo.filter(|&(opener, _, _)| opener == at);
        let n = match memo {
            // The opening run was measured whole when the span's close was last searched.
            Some((_, n, _)) => n,
            None => run_len(bytes, at, b'`', &mut self.open_run),
        };
        if at + n == bytes.len() && !eof {
            self.quiet = Quiet::Run(b'`');
            return self.wait(at);
        }
        if n >= 3 && opens_line(bytes, at) {
            self.fence = Some(Fence {
                ch: b'`',
                len: n,
                in_body: false,
                in_reasoning: self.no_closer_before(bytes, at),
            });
            self.pos = at + n;
            return Next::Continue;
        }
        let from = memo.map_or(at + n, |(_, _, resume)| resume);
        match span_close(bytes, from, n, eof, &mut self.close_run) {
            Ok(Some(end)) => self.pos = end,
            Ok(None) => self.pos = at + n,
            Err(_) if eof => self.pos = at + n,
            Err(resume) => {
                self.span_memo = Some((at, n, resume));
                if bytes.last() != Some(&b'`') {
                    self.quiet = Quiet::Span;
                }
                return self.wait(at);
            }
        }
        Next::Continue
    }

    fn tildes(&mut self, text: &str, eof: bool, at: usize) -> Next {
        let bytes = text.as_bytes();
        let n = run_len(bytes, at, b'~', &mut self.open_run);
        if at + n == bytes.len() && !eof {
            self.quiet = Quiet::Run(b'~');
            return self.wait(at);
        }
        if opens_line(bytes, at) {
            self.fence = Some(Fence {
                ch: b'~',
                len: n,
                in_body: false,
                in_reasoning: self.no_closer_before(bytes, at),
            });
        }
        self.pos = at + n;
        Next::Continue
    }

    #[allow(clippy::too_many_arguments)] // one call site; the pieces are the scan state
    fn sentinel(
        &mut self,
        text: &str,
        eof: bool,
        tools: &ToolSet,
        at: usize,
        body: usize,
        grammars: &[usize],
        out: &mut Vec<Found>,
    ) -> Next {
        // Work bound: a failed parse costs what it read (a block that never ends, its whole
        // view). Failed parses may read up to four times the text before them (plus a block),
        // never more, so a text full of near-miss blocks is still scanned in linear time.
        let budget = at.saturating_add(MAX_BLOCK_BYTES).saturating_mul(4);
        if self.calls_left == 0 || self.spent > budget {
            return self.pass(text, eof, at);
        }
        let mut result = Err(Stop::Invalid);
        let mut view_len = 0;
        take_reach();
        let (mut family, mut start, mut final_view) = ("", at, eof);
        for &g in grammars {
            let grammar = &GRAMMARS[g];
            // A lead must directly precede the sentinel, in text this step has not passed.
            start = at - grammar.lead.len().min(at);
            if start < self.pos || !text.as_bytes()[start..at].eq(grammar.lead.as_bytes()) {
                continue;
            }
            // A block may not run past MAX_BLOCK_BYTES; the view ends there, for whole-text
            // and streamed scans alike, so a cut-off block is judged the same way by both.
            let mut view_end = text.len().min(start + MAX_BLOCK_BYTES);
            while !text.is_char_boundary(view_end) {
                view_end -= 1;
            }
            let view = Input {
                text: &text[..view_end],
                eof: eof || view_end < text.len(),
                message_end: eof && view_end == text.len(),
                tools,
            };
            final_view = view.eof;
            view_len = view_end - start;
            result = (grammar.parse)(&view, start, body);
            if result != Err(Stop::Invalid) {
                family = grammar.family;
                break;
            }
        }
        match result {
            Ok(block) => {
                let range = start..block.end;
                let sorted = sort_calls(&block.calls, tools, self.resolve, family, &range);
                let calls = sorted.calls;
                if calls.is_empty() {
                    // The block stays text, whole: markup quoted in its arguments is part of
                    // a call (of an undeclared tool), never a call of its own, and a backtick
                    // in them must not open a span that masks later blocks (§1.4).
                    self.pos = block.end;
                } else if calls.len() > self.calls_left {
                    // Over the cap: the block stays text, whole, and recovery stops.
                    self.calls_left = 0;
                    return self.pass(text, eof, at);
                } else {
                    self.calls_left -= calls.len();
                    self.pos = block.end;
                    out.push(Found {
                        range,
                        calls,
                        lost: sorted.lost,
                    });
                }
                Next::Continue
            }
            Err(Stop::Incomplete) if !final_view => {
                self.in_block = true;
                self.wait(start)
            }
            Err(stop) => {
                // A parse that ran out of text read its whole view; one that failed read as far
                // as it reached.
                let reached = take_reach();
                self.spent += match stop {
                    Stop::Incomplete => view_len,
                    Stop::Invalid => reached.saturating_sub(start),
                };
                self.pass(text, eof, at)
            }
        }
    }

    /// Moves past a sentinel at `at` that started no block: one byte on, or, for a fence
    /// sentinel (```` ```json ````, whose families read a fence as their format), on as the
    /// backticks would have been read without it (a fence or an inline span opens there).
    fn pass(&mut self, text: &str, eof: bool, at: usize) -> Next {
        if text.as_bytes()[at] == b'`' {
            return self.backticks(text, eof, at);
        }
        self.pos = at + 1;
        Next::Continue
    }

    /// What may be appended without changing the last run's decision.
    #[inline]
    pub(crate) fn quiet(&self) -> Quiet {
        self.quiet
    }

    /// Whether the last run stopped at an open sentinel block: only the block's terminator can
    /// complete it, and every block ends with `>`, `]`, `}` or `)`.
    #[inline]
    pub(crate) fn in_block(&self) -> bool {
        self.in_block
    }

    fn wait(&mut self, at: usize) -> Next {
        self.pos = at;
        Next::Wait(at)
    }
}

/// The length of the run of `class` bytes (a byte, or [`BLANK`]) starting at `at`, resuming
/// where `memo` stopped when it measured the same run of a shorter text.
fn run_len(bytes: &[u8], at: usize, class: u8, memo: &mut Option<Run>) -> usize {
    let from = match *memo {
        Some(run) if run.start == at && run.class == class && run.end <= bytes.len() => run.end,
        _ => at,
    };
    let end = from
        + bytes[from..]
            .iter()
            .take_while(|&&b| in_class(b, class))
            .count();
    *memo = Some(Run {
        start: at,
        end,
        class,
    });
    end - at
}

/// Whether `at` is preceded on its line by at most three spaces (a fence may open there).
fn opens_line(bytes: &[u8], at: usize) -> bool {
    // Four spaces already rule it out: a long run of spaces is not read back.
    let indent = bytes[..at]
        .iter()
        .rev()
        .take(4)
        .take_while(|&&b| b == b' ')
        .count();
    indent <= 3 && (at == indent || bytes[at - indent - 1] == b'\n')
}

/// Whether `line` closes `fence`: up to three spaces, a run of the fence character at least as
/// long, then only whitespace.
fn closes(line: &[u8], fence: Fence) -> bool {
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let n = line[indent..]
        .iter()
        .take_while(|&&b| b == fence.ch)
        .count();
    n >= fence.len && line[indent + n..].iter().all(u8::is_ascii_whitespace)
}

/// Where the inline code span opened by `n` backticks before `from` closes.
///
/// `Ok(Some(end))`: a run of exactly `n` backticks closes it before the paragraph ends.
/// `Ok(None)`: a blank line comes first, so the opening backticks are literal.
/// `Err(resume)`: the text ends first; more text decides, and the search may resume at
/// `resume` (nothing before it can close the span or end the paragraph). With `eof` the text is
/// final, so a run that touches its end is judged as it is. `memo` keeps the last run measured
/// (the one a resumed search starts in) so a long run at the end is not measured again.
fn span_close(
    bytes: &[u8],
    from: usize,
    n: usize,
    eof: bool,
    memo: &mut Option<Run>,
) -> Result<Option<usize>, usize> {
    let mut i = from;
    while let Some(off) = memchr::memchr2(b'`', b'\n', &bytes[i..]) {
        let at = i + off;
        if bytes[at] == b'`' {
            let k = run_len(bytes, at, b'`', memo);
            if at + k == bytes.len() && !eof {
                // A later chunk may lengthen the run.
                return Err(at);
            }
            if k == n {
                return Ok(Some(at + k));
            }
            i = at + k;
        } else {
            let rest = &bytes[at + 1..];
            let blank = run_len(bytes, at + 1, BLANK, memo);
            match rest.get(blank) {
                Some(b'\n') => return Ok(None),
                None => return Err(at),
                Some(_) => i = at + 1,
            }
        }
    }
    Err(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_passes_the_two_byte_filter() {
        let d = dispatch();
        for (pattern, _) in &d.patterns {
            let text = format!("a{pattern}b");
            assert!(d.may_start(text.as_bytes(), 1), "{pattern}");
        }
        // `<u8>`, `</b>`, `> b`, `]x` start no pattern; a text's last byte is left to the
        // automaton.
        assert!(!d.may_start(b"Vec<u8>", 3));
        assert!(!d.may_start(b"</b>", 0));
        assert!(!d.may_start(b"a > b", 2));
        assert!(!d.may_start(b"a]x", 1));
        assert!(d.may_start(b"a <", 2));
    }

    #[test]
    fn holds_back_a_cut_sentinel_only() {
        assert_eq!(holdback("hello <tool_ca"), "<tool_ca".len());
        assert_eq!(holdback("hello [TOOL_CALL"), "[TOOL_CALL".len());
        assert_eq!(holdback("hello world"), 0);
        assert_eq!(holdback("a <"), 1);
    }

    fn span_close_once(
        bytes: &[u8],
        from: usize,
        n: usize,
        eof: bool,
    ) -> Result<Option<usize>, usize> {
        span_close(bytes, from, n, eof, &mut None)
    }

    #[test]
    fn inline_spans_close_on_an_equal_run_before_a_blank_line() {
        assert_eq!(span_close_once(b"`a` b", 1, 1, false), Ok(Some(3)));
        assert_eq!(span_close_once(b"``a`b``c", 2, 2, false), Ok(Some(7)));
        assert_eq!(span_close_once(b"`a\n\nb`c", 1, 1, false), Ok(None));
        assert_eq!(span_close_once(b"`a\nb", 1, 1, false), Err(4));
        assert_eq!(span_close_once(b"`a`", 1, 1, false), Err(2));
        assert_eq!(span_close_once(b"`a`", 1, 1, true), Ok(Some(3)));
    }

    #[test]
    fn fences_open_at_line_start_only() {
        assert!(opens_line(b"```", 0) && opens_line(b"x\n   ```", 5));
        assert!(!opens_line(b"x ```", 2) && !opens_line(b"\n    ```", 5));
        let fence = Fence {
            ch: b'`',
            len: 3,
            in_body: true,
            in_reasoning: false,
        };
        assert!(closes(b"````  ", fence) && !closes(b"``", fence) && !closes(b"``` x", fence));
    }
}
