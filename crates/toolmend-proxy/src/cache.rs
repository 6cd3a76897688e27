//! The proxy's compiled tool sets: the library's bounded [`toolmend::MenderCache`], keyed by the
//! request's raw `tools` text and its model, with the proxy's recover mode, behind a small
//! per-thread front of the sets last used.
//!
//! Bounded in entries and in bytes (`tool_cache_entries`, `tool_cache_bytes`): a compiled set's
//! size follows its raw text (over 200 times it for pattern-heavy schemas,
//! `tests/tool_cache_memory.rs`); a set heavier than the whole budget is compiled for its
//! request and not kept. Agents send the same tools with every request, so nearly every lookup
//! is a hit and no request recompiles schemas. The raw text is compared on a hit, so a hash
//! collision can never apply another request's tools.
//!
//! The front ([`Recent`], issue #29 §3): each worker thread keeps the last few `(tools text,
//! model)` pairs it looked up with a weak handle on their set. A hit there is a byte
//! comparison, not the library's SipHash of the text and options under its lock; the handle
//! is weak, so the front never keeps a set the library let go (nothing over its bounds), and
//! every [`REFRESH`]th hit goes through the library so a set in use stays recent there. The
//! front also knows which tools texts were read, checked, from a request body
//! ([`MenderCache::known_tools`]): the request reader takes such a text by comparison instead
//! of checking it again.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use toolmend::{Mender, MenderOptions, RecoverMode};

/// Compiled menders by `(tools text, model)`.
#[derive(Debug)]
pub(crate) struct MenderCache {
    menders: toolmend::MenderCache,
    recover: RecoverMode,
    /// This cache among the others of the process (the per-thread front is shared by all).
    id: u64,
}

/// Pairs a thread's front keeps.
const RECENT_ENTRIES: usize = 4;
/// The longest tools text the front keeps (longer ones go to the library every time).
const RECENT_TEXT_BYTES: usize = 64 * 1024;
/// Every this many hits of an entry, the lookup goes through the library (its LRU clock).
const REFRESH: u32 = 32;

/// One pair a thread looked up.
#[derive(Debug)]
struct Known {
    cache: u64,
    tools: Box<str>,
    model: Box<str>,
    mender: Weak<Mender>,
    /// The text came from a request's `tools` member, checked as JSON where it stood.
    checked: bool,
    hits: u32,
    used: u64,
}

impl Known {
    /// Whether this is the pair `(tools, model)` of the cache `cache`.
    fn is(&self, cache: u64, tools: &str, model: &str) -> bool {
        self.cache == cache && *self.model == *model && *self.tools == *tools
    }
}

/// A thread's front: at most [`RECENT_ENTRIES`] pairs.
#[derive(Debug, Default)]
struct Recent {
    entries: Vec<Known>,
    clock: u64,
}

thread_local! {
    static RECENT: RefCell<Recent> = RefCell::default();
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl MenderCache {
    pub(crate) fn new(capacity: usize, capacity_bytes: usize, recover: RecoverMode) -> Self {
        Self {
            menders: toolmend::MenderCache::new(capacity, capacity_bytes),
            recover,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The mender for these raw tools (compiled once, then shared); text that is not JSON is
    /// a set with no tools. `checked`: `tools` is a request's `tools` member as the request
    /// reader took it (one checked JSON array or object).
    pub(crate) fn get(&self, tools: &str, model: &str, checked: bool) -> Arc<Mender> {
        let hit = RECENT.with_borrow_mut(|recent| {
            let entry = recent
                .entries
                .iter_mut()
                .find(|e| e.is(self.id, tools, model))?;
            entry.hits = entry.hits.wrapping_add(1);
            if entry.hits % REFRESH == 0 {
                return None;
            }
            let mender = entry.mender.upgrade()?;
            recent.clock += 1;
            entry.used = recent.clock;
            Some(mender)
        });
        if let Some(mender) = hit {
            return mender;
        }
        let options = MenderOptions::default()
            .with_recover(self.recover)
            .with_model(model);
        let mender = self.menders.get(tools, &options);
        if tools.len() <= RECENT_TEXT_BYTES {
            self.remember(tools, model, &mender, checked);
        }
        mender
    }

    /// Keeps `(tools, model)` in this thread's front, in place of the same pair or of the
    /// least recently used one.
    fn remember(&self, tools: &str, model: &str, mender: &Arc<Mender>, checked: bool) {
        // Only a text that is one array or object delimits itself where it stands.
        let checked = checked && matches!(tools.as_bytes().first(), Some(b'[' | b'{'));
        RECENT.with_borrow_mut(|recent| {
            recent.clock += 1;
            let known = Known {
                cache: self.id,
                tools: tools.into(),
                model: model.into(),
                mender: Arc::downgrade(mender),
                checked,
                hits: 0,
                used: recent.clock,
            };
            let same = recent
                .entries
                .iter()
                .position(|e| e.is(self.id, tools, model));
            match same {
                Some(at) => {
                    let old = &recent.entries[at];
                    let checked = known.checked || old.checked;
                    recent.entries[at] = Known { checked, ..known };
                }
                None if recent.entries.len() < RECENT_ENTRIES => recent.entries.push(known),
                None => {
                    if let Some(oldest) = recent.entries.iter_mut().min_by_key(|e| e.used) {
                        *oldest = known;
                    }
                }
            }
        });
    }

    /// The length of a tools text of this cache's front, read and checked from a request
    /// before, that `text` starts with: the request reader takes those bytes as that member's
    /// value without checking them again (a JSON array or object ends where its text ends,
    /// and this one was checked at the same place of a body: a top-level member's value).
    pub(crate) fn known_tools(&self, text: &str) -> Option<usize> {
        RECENT.with_borrow(|recent| {
            recent
                .entries
                .iter()
                .find(|e| e.cache == self.id && e.checked && text.starts_with(&*e.tools))
                .map(|e| e.tools.len())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The bounds themselves are the library's (`toolmend::mender_cache`); here: the proxy's key.
    #[test]
    fn the_model_and_tools_are_the_key_and_the_recover_mode_is_the_proxys() {
        let cache = MenderCache::new(8, usize::MAX, RecoverMode::All);
        let a = cache.get(r#"[{"name":"a"}]"#, "m", true);
        for _ in 0..3 * REFRESH {
            assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m", true)));
        }
        assert!(!Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "n", true)));
        assert!(!Arc::ptr_eq(&a, &cache.get(r#"[{"name":"b"}]"#, "m", true)));
        assert_eq!(a.options().recover, RecoverMode::All);
        assert_eq!(a.options().model, "m");
        // Another cache (another configuration) never gets this one's sets.
        let other = MenderCache::new(8, usize::MAX, RecoverMode::Off);
        let b = other.get(r#"[{"name":"a"}]"#, "m", true);
        assert!(!Arc::ptr_eq(&a, &b));
        assert_eq!(b.options().recover, RecoverMode::Off);
    }

    #[test]
    fn the_front_keeps_no_set_the_library_let_go() {
        // One entry in the library: `b` evicts `a`; the front's weak handle then fails and
        // `a` is compiled again, as without the front.
        let cache = MenderCache::new(1, usize::MAX, RecoverMode::Off);
        let a = Arc::downgrade(&cache.get(r#"[{"name":"a"}]"#, "m", true));
        let _b = cache.get(r#"[{"name":"b"}]"#, "m", true);
        assert!(
            a.upgrade().is_none(),
            "the front held a set the library let go"
        );
        let again = cache.get(r#"[{"name":"a"}]"#, "m", true);
        assert_eq!(again.tools().len(), 1);
    }

    #[test]
    fn only_checked_array_or_object_texts_are_known() {
        let cache = MenderCache::new(8, usize::MAX, RecoverMode::Off);
        let _a = cache.get(r#"[{"name":"a"}]"#, "m", true);
        let _b = cache.get(r#"[{"name":"b"}]"#, "m", false);
        let _c = cache.get("5", "m", true);
        assert_eq!(cache.known_tools(r#"[{"name":"a"}], "x": 1}"#), Some(14));
        assert_eq!(cache.known_tools(r#"[{"name":"b"}]}"#), None);
        assert_eq!(cache.known_tools("55}"), None);
        let other = MenderCache::new(8, usize::MAX, RecoverMode::Off);
        assert_eq!(other.known_tools(r#"[{"name":"a"}]}"#), None);
    }
}
