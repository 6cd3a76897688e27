//! The storm breaker: the same call over and over is not dispatched again.
//!
//! Signature = tool name + canonical repaired arguments, computed only when compared. Window 6, threshold 3: the 3rd
//! identical call within the last 6 is suppressed (both configurable). Calls of exempt tools
//! never count; a call of a mutating tool first removes the non-mutating entries (what was read
//! before a write may be read again), unless the tool is idempotent and the same call is already
//! in the window (repeating it changed nothing, so a read after it is still a repeat). The window
//! resets on each new user turn.

use std::collections::VecDeque;
use std::sync::Arc;

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

/// A call's signature in the window: computed, or still to be computed from the call at this
/// index of the running turn.
///
/// Two calls can share a signature only when they call the same tool (the signature starts
/// with the tool's name, and the canonical arguments after it hold no NUL), so a call's
/// signature is computed only once a second call of its tool is in the window, or when the
/// window outlives the turn ([`StormBreaker::settle`]). Most turns make one call of a tool, and
/// a proxy's window lives for one response: their signatures are never compared with anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Signature {
    Known(String),
    /// The call at this index of the running turn's calls.
    Deferred(usize),
}

impl Signature {
    fn compute(&mut self, signature_of: &mut dyn FnMut(usize) -> String) {
        if let Signature::Deferred(index) = *self {
            *self = Signature::Known(signature_of(index));
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    tool: Arc<str>,
    signature: Signature,
    mutating: bool,
}

impl Entry {
    /// The same call: the same tool and signature. Within one tool every entry's signature is
    /// known once two are in the window, so a deferred one equals only itself.
    fn same_call(&self, other: &Entry) -> bool {
        self.tool == other.tool && self.signature == other.signature
    }
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

    /// Records a call whose signature is known; returns true when it must be suppressed.
    #[cfg(test)]
    pub(crate) fn observe(&mut self, signature: String, flags: StormFlags) -> bool {
        let tool: Arc<str> = Arc::from(signature.as_str());
        self.observe_call(&tool, Signature::Known(signature), flags, &mut |_| {
            unreachable!("every signature is known")
        })
    }

    /// Records a call of `tool`; returns true when it must be suppressed. `signature_of`
    /// computes the signature of a call of the running turn by its index, and is asked only
    /// for calls of a tool the window holds twice.
    pub(crate) fn observe_call(
        &mut self,
        tool: &Arc<str>,
        signature: Signature,
        flags: StormFlags,
        signature_of: &mut dyn FnMut(usize) -> String,
    ) -> bool {
        if flags.exempt {
            return false;
        }
        let mut current = Entry {
            tool: Arc::clone(tool),
            signature,
            mutating: flags.mutating,
        };
        if self.recent.iter().any(|e| e.tool == current.tool) {
            current.signature.compute(signature_of);
            for entry in self.recent.iter_mut().filter(|e| e.tool == current.tool) {
                entry.signature.compute(signature_of);
            }
        }
        let repeat_of_no_effect =
            flags.idempotent && self.recent.iter().any(|e| e.same_call(&current));
        if flags.mutating && !repeat_of_no_effect {
            self.recent.retain(|e| e.mutating);
        }
        // The window holds the last `window` calls, this one included.
        self.recent.push_back(current);
        while self.recent.len() > self.window {
            self.recent.pop_front();
        }
        let current = &self.recent[self.recent.len() - 1];
        let seen = self.recent.iter().filter(|e| e.same_call(current)).count();
        seen >= self.threshold
    }

    /// Computes the signatures still deferred, at the end of a turn whose window is kept: the
    /// next turn's calls no longer have this one's to compute them from.
    pub(crate) fn settle(&mut self, signature_of: &mut dyn FnMut(usize) -> String) {
        for entry in &mut self.recent {
            entry.signature.compute(signature_of);
        }
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
