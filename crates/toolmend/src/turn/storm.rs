//! The storm breaker: the same call over and over is not dispatched again.
//!
//! Signature = tool name + canonical repaired arguments. Window 6, threshold 3: the 3rd
//! identical call within the last 6 is suppressed (both configurable). Calls of exempt tools
//! never count; a call of a mutating tool first removes the non-mutating entries (what was read
//! before a write may be read again), unless the tool is idempotent and the same call is already
//! in the window (repeating it changed nothing, so a read after it is still a repeat). The window
//! resets on each new user turn.

use std::collections::VecDeque;

/// Default window: the last 6 calls.
pub const DEFAULT_STORM_WINDOW: usize = 6;
/// Default threshold: the 3rd identical call is suppressed.
pub const DEFAULT_STORM_THRESHOLD: usize = 3;

/// What the storm breaker needs to know about a call's tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StormFlags {
    /// The tool changes the world: its call clears the read entries from the window.
    pub(crate) mutating: bool,
    /// Calling it again with the same arguments has no further effect.
    pub(crate) idempotent: bool,
    /// A cheap read that never counts.
    pub(crate) exempt: bool,
}

#[derive(Debug, Clone)]
struct Entry {
    signature: String,
    mutating: bool,
}

/// The storm window of one session.
#[derive(Debug, Clone)]
pub(crate) struct StormBreaker {
    window: usize,
    threshold: usize,
    recent: VecDeque<Entry>,
}

impl StormBreaker {
    pub(crate) fn new(window: usize, threshold: usize) -> Self {
        Self {
            window: window.max(1),
            threshold: threshold.max(2),
            recent: VecDeque::new(),
        }
    }

    /// Records a call; returns true when it must be suppressed.
    pub(crate) fn observe(&mut self, signature: String, flags: StormFlags) -> bool {
        if flags.exempt {
            return false;
        }
        let repeat_of_no_effect =
            flags.idempotent && self.recent.iter().any(|e| e.signature == signature);
        if flags.mutating && !repeat_of_no_effect {
            self.recent.retain(|e| e.mutating);
        }
        let mutating = flags.mutating;
        // The window holds the last `window` calls, this one included.
        self.recent.push_back(Entry {
            signature,
            mutating,
        });
        while self.recent.len() > self.window {
            self.recent.pop_front();
        }
        let current = &self.recent[self.recent.len() - 1].signature;
        let seen = self
            .recent
            .iter()
            .filter(|e| &e.signature == current)
            .count();
        seen >= self.threshold
    }

    /// Forgets everything: a new user turn.
    pub(crate) fn reset(&mut self) {
        self.recent.clear();
    }
}

/// The tool result to return for a suppressed call.
pub(crate) fn guard_message(tool: &str) -> String {
    format!(
        "Tool call `{tool}` was not run: you have made this exact call several times in a row and it \
         did not get you further. What are you trying to achieve? Try a different approach, different \
         arguments or a different tool instead of repeating this call."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(storm: &mut StormBreaker, sig: &str) -> bool {
        storm.observe(sig.to_owned(), StormFlags::default())
    }

    #[test]
    fn third_identical_call_in_window_is_suppressed() {
        let mut storm = StormBreaker::new(6, 3);
        assert!(!call(&mut storm, "a"));
        assert!(!call(&mut storm, "a"));
        assert!(call(&mut storm, "a"));
        assert!(!call(&mut storm, "b"));
    }

    #[test]
    fn the_window_forgets_old_calls() {
        let mut storm = StormBreaker::new(6, 3);
        call(&mut storm, "a");
        call(&mut storm, "a");
        for other in ["b", "c", "d", "e", "f"] {
            call(&mut storm, other);
        }
        // Only one "a" is left in the last 6.
        assert!(!call(&mut storm, "a"));
    }

    #[test]
    fn the_window_holds_the_current_call() {
        // a b c d e a a: the last 6 calls (b c d e a a) hold two `a`, not three.
        let mut storm = StormBreaker::new(6, 3);
        for sig in ["a", "b", "c", "d", "e", "a"] {
            assert!(!call(&mut storm, sig));
        }
        assert!(!call(&mut storm, "a"));
        // ... and a third `a` within the window is suppressed.
        assert!(call(&mut storm, "a"));
    }

    #[test]
    fn exempt_never_counts_and_mutating_clears_reads() {
        let mut storm = StormBreaker::new(6, 3);
        for _ in 0..5 {
            let exempt = StormFlags {
                exempt: true,
                ..StormFlags::default()
            };
            assert!(!storm.observe("ls".into(), exempt));
        }
        call(&mut storm, "read");
        call(&mut storm, "read");
        let write = StormFlags {
            mutating: true,
            ..StormFlags::default()
        };
        assert!(!storm.observe("write".into(), write));
        assert!(!call(&mut storm, "read"));
    }

    #[test]
    fn a_repeated_idempotent_write_does_not_clear_reads() {
        let write = StormFlags {
            mutating: true,
            idempotent: true,
            ..StormFlags::default()
        };
        let mut storm = StormBreaker::new(6, 3);
        // The first write is a real change: the read before it may be repeated.
        call(&mut storm, "read");
        assert!(!storm.observe("write".into(), write));
        call(&mut storm, "read");
        // The same idempotent write again changed nothing, so the reads stay in the window
        // and the loop read/write/read is caught.
        assert!(!storm.observe("write".into(), write));
        assert!(!call(&mut storm, "read"));
        assert!(call(&mut storm, "read"));
        // A write that is not idempotent clears the reads every time.
        let mut storm = StormBreaker::new(6, 3);
        let plain = StormFlags {
            mutating: true,
            ..StormFlags::default()
        };
        for _ in 0..2 {
            call(&mut storm, "read");
            call(&mut storm, "read");
            assert!(!storm.observe("write".into(), plain));
        }
        assert!(!call(&mut storm, "read"));
    }

    #[test]
    fn reset_forgets_everything() {
        let mut storm = StormBreaker::new(6, 3);
        call(&mut storm, "a");
        call(&mut storm, "a");
        storm.reset();
        assert!(!call(&mut storm, "a"));
    }
}
