//! What one salvage call has already learnt about the text, shared by every run of it.
//!
//! The prose search starts a run at every `{` that an earlier run did not get past, so two runs
//! can meet the same long token: an unterminated `/*`, a `//` comment without a line break, a key
//! the text ends inside. Scanning it again from every candidate would make the search quadratic
//! (`p {/*{/*{/*…`); remembering where the needle was found (or that it is absent) keeps the
//! whole call linear.

use std::cell::Cell;

use memchr::memmem;

use super::scan::Comment;

/// The first occurrence of a needle at or after a position, remembered over an interval.
#[derive(Debug)]
struct NextCache {
    needle: &'static [u8],
    /// `Some((lo, at))`: `at` is the first occurrence at or after `lo` (`None`: there is none).
    known: Cell<Option<(usize, Option<usize>)>>,
}

impl NextCache {
    const fn new(needle: &'static [u8]) -> Self {
        Self {
            needle,
            known: Cell::new(None),
        }
    }

    /// The first occurrence of the needle starting at or after `from`.
    fn find(&self, bytes: &[u8], from: usize) -> Option<usize> {
        let search = |end: usize| memmem::find(&bytes[from..end], self.needle).map(|i| from + i);
        let found = match self.known.get() {
            Some((lo, at)) if from >= lo && at.is_none_or(|a| from <= a) => return at,
            // Only the bytes before the remembered interval are new (an occurrence may straddle
            // its start).
            Some((lo, at)) if from < lo => {
                search((lo + self.needle.len() - 1).min(bytes.len())).or(at)
            }
            _ => search(bytes.len()),
        };
        self.known.set(Some((from, found)));
        found
    }
}

/// The shared memory of one salvage call.
#[derive(Debug)]
pub(super) struct Memo {
    block_end: NextCache,
    line_end: NextCache,
    /// Where a key starts that the text ends inside (read once, then known to be cut).
    cut_key: Cell<Option<usize>>,
}

impl Default for Memo {
    fn default() -> Self {
        Self {
            block_end: NextCache::new(b"*/"),
            line_end: NextCache::new(b"\n"),
            cut_key: Cell::new(None),
        }
    }
}

impl Memo {
    /// The comment starting at `pos`, if any: `//` to the end of the line, or `/* … */`.
    pub(super) fn comment_at(&self, bytes: &[u8], pos: usize) -> Comment {
        match bytes.get(pos..pos + 2) {
            Some(b"//") => Comment::Closed(self.line_end.find(bytes, pos).unwrap_or(bytes.len())),
            Some(b"/*") => match self.block_end.find(bytes, pos + 2) {
                Some(i) => Comment::Closed(i + 2),
                None => Comment::Unterminated,
            },
            _ => Comment::None,
        }
    }

    /// Whether a key starting at `pos` is already known to run to the end of the text.
    pub(super) fn key_is_cut(&self, pos: usize) -> bool {
        self.cut_key.get() == Some(pos)
    }

    /// Remembers that the key starting at `pos` runs to the end of the text.
    pub(super) fn note_cut_key(&self, pos: usize) {
        self.cut_key.set(Some(pos));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_match_a_plain_scan_from_any_order_of_positions() {
        let text = b"a/* b */ c // d\n e /* f // g\n";
        let memo = Memo::default();
        let order = [20, 1, 10, 0, 19, 26, 2, 9, 28, 1, 20];
        for &pos in &order {
            assert_eq!(
                memo.comment_at(text, pos),
                super::super::scan::comment_at(text, pos),
                "{pos}"
            );
        }
        for pos in (0..text.len()).rev() {
            assert_eq!(
                memo.comment_at(text, pos),
                super::super::scan::comment_at(text, pos),
                "{pos}"
            );
        }
    }

    #[test]
    fn cut_keys_are_remembered_by_position() {
        let memo = Memo::default();
        assert!(!memo.key_is_cut(3));
        memo.note_cut_key(3);
        assert!(memo.key_is_cut(3) && !memo.key_is_cut(4));
    }
}
