//! The parser's working buffers, reused from one run to the next on the same thread: the stack
//! of open containers and the closers the look-ahead reads.
//!
//! A ~100 B call is a handful of members, so allocating these two buffers anew for every run
//! was two of its ~16 allocations (issue #31). A [`Reused`] buffer is taken from its thread's
//! spare (empty, with the capacity an earlier run left) and handed back empty when dropped;
//! nothing read from one text can reach another. When the spare is already out (a run inside
//! a run), a fresh buffer is used, so reuse only ever saves allocations and never changes a
//! result. A buffer that grew past [`MAX_KEPT`] entries is freed rather than kept, so a thread
//! keeps at most ~14 KB for the two.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

use super::Frame;

/// The most entries a spare buffer keeps room for between runs (the default depth limit).
const MAX_KEPT: usize = crate::limits::MAX_DEPTH;

thread_local! {
    static STACK: Cell<Vec<Frame>> = const { Cell::new(Vec::new()) };
    static CLOSERS: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A buffer borrowed from its thread's spare, handed back empty when dropped.
#[derive(Debug)]
pub(super) struct Reused<T: 'static> {
    items: Vec<T>,
    spare: &'static LocalKey<Cell<Vec<T>>>,
}

impl<T> Reused<T> {
    fn take(spare: &'static LocalKey<Cell<Vec<T>>>) -> Self {
        // During the thread's teardown the spare is gone: start empty.
        let items = spare.try_with(Cell::take).unwrap_or_default();
        debug_assert!(items.is_empty());
        Self { items, spare }
    }
}

/// The stack of open containers, empty.
pub(super) fn stack() -> Reused<Frame> {
    Reused::take(&STACK)
}

/// The closers of the open containers, empty.
pub(super) fn closers() -> Reused<u8> {
    Reused::take(&CLOSERS)
}

impl<T> Drop for Reused<T> {
    fn drop(&mut self) {
        if self.items.capacity() == 0 || self.items.capacity() > MAX_KEPT {
            return;
        }
        self.items.clear();
        let items = std::mem::take(&mut self.items);
        // Fails only during the thread's teardown: the buffer is then freed here.
        let _ = self.spare.try_with(|spare| spare.set(items));
    }
}

impl<T> Deref for Reused<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T> DerefMut for Reused<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_comes_back_empty_with_its_room() {
        let mut closers = closers();
        closers.extend_from_slice(b"}]}");
        let room = closers.capacity();
        drop(closers);
        let again = super::closers();
        assert!(again.is_empty());
        assert_eq!(again.capacity(), room);
    }

    #[test]
    fn a_buffer_taken_while_the_spare_is_out_starts_fresh() {
        let mut outer = closers();
        outer.push(b'}');
        let inner = closers();
        assert!(inner.is_empty() && inner.capacity() == 0);
        assert_eq!(outer.as_slice(), b"}");
    }

    #[test]
    fn a_buffer_that_grew_past_the_limit_is_not_kept() {
        let mut closers = closers();
        closers.resize(MAX_KEPT + 1, b']');
        drop(closers);
        assert_eq!(super::closers().capacity(), 0);
    }
}
