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

use super::scan::{Found, Scanner};
use super::whole::{self, THINK_CLOSE, Whole};
use super::{RecoverOptions, RecoveredCall, strip};
use crate::ToolSet;

/// What one [`StreamRecoverer::push`] (or `finish`) released.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StreamOutput {
    /// Text that is safe to emit now (markup of recovered calls removed).
    pub text: String,
    /// Calls completed by this chunk, in text order. Spans index the whole streamed text.
    pub calls: Vec<RecoveredCall>,
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
    /// Start of the whole-message region (after the last `</think>`).
    region: usize,
    /// The region start the whole-message check has ruled out, if any.
    rejected: Option<usize>,
    /// Region length at the last full whole-message check (checks are spaced geometrically so
    /// a long held region costs linear time overall).
    checked_len: usize,
    /// What the last scanner run decided: bytes before it are text or consumed.
    safe: usize,
    /// Whether the text ended with a byte that ends blocks at the last run.
    armed: bool,
}

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
            region: 0,
            rejected: None,
            checked_len: 0,
            safe: 0,
            armed: false,
        }
    }

    /// Feeds the next chunk; returns the text now safe to emit and the calls it completed.
    pub fn push(&mut self, tools: &ToolSet, chunk: &str) -> StreamOutput {
        let old_len = self.text.len();
        self.text.push_str(chunk);
        self.track_think(old_len);
        // An open block completes only when a byte that ends blocks arrives (or, when the text
        // already ends with one, on the next byte, which decides the optional parts after it):
        // skipping the other re-runs keeps a long streamed block linear instead of quadratic.
        // Skipping never changes the result, only when it is released.
        let ends_block = |b: u8| matches!(b, b'>' | b']' | b'}' | b')');
        // A line break also retries, so a stray sentinel in prose is ruled out within a line.
        let retry = |b: u8| ends_block(b) || b == b'\n';
        let idle = self.scanner.in_block() && !self.armed && !chunk.bytes().any(retry);
        let mut found = Vec::new();
        if !idle {
            self.safe = self.scanner.run(&self.text, false, tools, &mut found);
            self.armed = self
                .text
                .trim_end()
                .bytes()
                .next_back()
                .is_some_and(ends_block);
        }
        let safe = self.safe;
        let calls = self.take(found);
        let limit = match self.whole_hold(tools) {
            Some(hold) => safe.min(hold),
            None => safe,
        };
        StreamOutput {
            text: self.release(limit),
            calls,
        }
    }

    /// Ends the stream: decides every held byte and returns the rest of the text and any calls
    /// completed by the end (a whole-message payload, a block whose grammar ends at the end).
    pub fn finish(mut self, tools: &ToolSet) -> StreamOutput {
        let mut found = Vec::new();
        self.scanner.run(&self.text, true, tools, &mut found);
        let mut calls = self.take(found);
        if !self.any_found {
            if let Whole::Accept(block) =
                whole::check(&self.text, self.region, tools, true, &self.options)
            {
                calls = self.take(vec![block]);
            }
        }
        let end = self.text.len();
        StreamOutput {
            text: self.release(end),
            calls,
        }
    }

    fn take(&mut self, found: Vec<Found>) -> Vec<RecoveredCall> {
        self.any_found |= !found.is_empty();
        let mut calls = Vec::new();
        for block in found {
            self.ranges.push(block.range);
            calls.extend(block.calls);
        }
        calls
    }

    /// Releases `text[emitted..limit]` minus consumed ranges.
    fn release(&mut self, limit: usize) -> String {
        if limit <= self.emitted {
            return String::new();
        }
        let out = strip(&self.text, self.emitted..limit, self.ranges.iter());
        self.emitted = limit;
        self.ranges.retain(|r| r.end > limit);
        out
    }

    /// Moves the whole-message region past a `</think>` that arrived (possibly split).
    fn track_think(&mut self, old_len: usize) {
        let mut from = old_len.saturating_sub(THINK_CLOSE.len() - 1);
        while !self.text.is_char_boundary(from) {
            from -= 1;
        }
        if let Some(i) =
            memchr::memmem::rfind(&self.text.as_bytes()[from..], THINK_CLOSE.as_bytes())
        {
            self.region = from + i + THINK_CLOSE.len();
            self.checked_len = 0;
        }
    }

    /// Where emission must stop because the region may still be a whole-message payload.
    fn whole_hold(&mut self, tools: &ToolSet) -> Option<usize> {
        if self.any_found || self.rejected == Some(self.region) || self.options.max_calls == 0 {
            return None;
        }
        let len = self.text.len() - self.region;
        let first = self.text.as_bytes()[self.region..]
            .iter()
            .find(|b| !b.is_ascii_whitespace());
        let verdict = match first {
            None => Whole::Candidate,
            Some(b'{' | b'[') if len < self.checked_len + (self.checked_len / 2).max(64) => {
                Whole::Candidate
            }
            Some(b'{' | b'[') => {
                self.checked_len = len;
                whole::check(&self.text, self.region, tools, false, &self.options)
            }
            Some(_) => Whole::Reject,
        };
        match verdict {
            Whole::Reject => {
                self.rejected = Some(self.region);
                None
            }
            _ => Some(self.region),
        }
    }
}
