//! [`MenderCache`]: compiled tool sets kept for reuse, bounded in entries and in bytes.
//!
//! Compiling a tool set (every schema into a validator) costs far more than mending a call,
//! and the callers see the same tools again and again: every request of an agent, every line
//! of a turns file, every row of a batch. The CLI's turn lines, the Python batch functions and
//! the proxy share this one cache type.
//!
//! - **Key**: the tools' JSON text and the whole [`MenderOptions`] (recover mode, model,
//!   limits, whether retry messages quote values): everything a [`Mender`] is built from. A
//!   hash picks the entry and the stored text and options are compared, so a hash collision
//!   can never hand out another tool set.
//! - **Bounds**: at most `capacity` entries and `capacity_bytes` of key text (the tools' text
//!   plus the model id: a compiled set's size follows its text, over 200 times it for
//!   pattern-heavy schemas). The least recently used entry goes first; a set heavier than the
//!   whole byte budget is compiled for its caller and not kept.
//! - **Schemas that do not compile are cached as that error.** [`ToolSet::from_json`] never
//!   fails as a whole: a refused tool (a schema that does not compile, or one over the
//!   evaluation budget) is kept in the set as its rejection ([`ToolSet::rejected`]) and its
//!   calls are `unvalidated`. The refusal depends only on the schema text and the limits (the
//!   budgets count evaluations, not time), so compiling again would give the same error;
//!   keeping it means a hostile schema costs its compile once, not on every call.
//! - **Thread-safe**: one mutex around the map, held for the lookup and the insert only. A miss
//!   compiles outside the lock, so a slow schema does not stall other callers; two threads
//!   that miss the same key at once both compile it and the later insert is the one kept.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::{Mender, MenderOptions, ToolSet};

/// Default for [`MenderCache::new`]'s `capacity`: compiled sets kept.
pub const DEFAULT_CAPACITY: usize = 64;
/// Default for [`MenderCache::new`]'s `capacity_bytes`: 4 MiB of tools text and model ids.
pub const DEFAULT_CAPACITY_BYTES: usize = 4 * 1024 * 1024;

/// A bounded LRU of compiled [`Mender`]s, keyed by the tools' JSON text and the options.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use toolmend::{MenderCache, MenderOptions, RecoverMode};
///
/// let cache = MenderCache::default();
/// let tools = r#"[{"name": "read", "parameters": {"type": "object"}}]"#;
/// let options = MenderOptions::default().with_recover(RecoverMode::Off);
/// let first = cache.get(tools, &options);
/// assert!(Arc::ptr_eq(&first, &cache.get(tools, &options)));
/// // Other options are another entry.
/// let other = cache.get(tools, &options.clone().with_model("m"));
/// assert!(!Arc::ptr_eq(&first, &other));
/// ```
#[derive(Debug)]
pub struct MenderCache {
    hasher: RandomState,
    capacity: usize,
    capacity_bytes: usize,
    inner: Mutex<Inner>,
}

/// One compiled set with what it was built from (compared on a hit) and its last use.
#[derive(Debug)]
struct Entry {
    tools: Box<str>,
    options: MenderOptions,
    mender: Arc<Mender>,
    used: u64,
}

/// The map, the use clock, and the total weight of the entries.
#[derive(Debug, Default)]
struct Inner {
    map: HashMap<u64, Entry>,
    clock: u64,
    bytes: usize,
}

/// The weight of an entry against the byte budget.
fn weight(tools: &str, options: &MenderOptions) -> usize {
    tools.len().saturating_add(options.model.len())
}

impl Default for MenderCache {
    /// A cache of [`DEFAULT_CAPACITY`] entries and [`DEFAULT_CAPACITY_BYTES`].
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY, DEFAULT_CAPACITY_BYTES)
    }
}

impl MenderCache {
    /// A cache of at most `capacity` entries (at least one) and `capacity_bytes` of key text.
    #[must_use]
    pub fn new(capacity: usize, capacity_bytes: usize) -> Self {
        Self {
            hasher: RandomState::new(),
            capacity: capacity.max(1),
            capacity_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The mender for the tools in `tools` (JSON text) with `options`, compiled on first use.
    ///
    /// Text that is not JSON is compiled as `null`: a set with no tools (every call is of an
    /// unknown tool) whose rejection says why, kept like any other.
    #[must_use]
    pub fn get(&self, tools: &str, options: &MenderOptions) -> Arc<Mender> {
        self.get_or_compile(tools, options, || {
            ToolSet::from_json(&serde_json::from_str(tools).unwrap_or(Value::Null))
        })
    }

    /// [`MenderCache::get`] for tools already parsed: keyed by their compact JSON text.
    #[must_use]
    pub fn get_value(&self, tools: &Value, options: &MenderOptions) -> Arc<Mender> {
        self.get_or_compile(&tools.to_string(), options, || ToolSet::from_json(tools))
    }

    /// Entries kept now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether nothing is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the map consistent (every update is
        // one insert or remove), so a poisoned lock is used as it is.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry for `(tools, options)`, or `compile()`'s set built into a mender and kept.
    fn get_or_compile(
        &self,
        tools: &str,
        options: &MenderOptions,
        compile: impl FnOnce() -> ToolSet,
    ) -> Arc<Mender> {
        let key = self.hasher.hash_one((tools, options));
        {
            let mut guard = self.lock();
            let inner = &mut *guard;
            inner.clock += 1;
            if let Some(entry) = inner.map.get_mut(&key)
                && &*entry.tools == tools
                && entry.options == *options
            {
                entry.used = inner.clock;
                return Arc::clone(&entry.mender);
            }
        }
        // Compiled outside the lock: a slow schema does not stall other callers.
        let mender = Arc::new(Mender::with_options(compile(), options.clone()));
        let added = weight(tools, options);
        if added > self.capacity_bytes {
            return mender;
        }
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let Some(old) = inner.map.remove(&key) {
            inner.bytes -= weight(&old.tools, &old.options);
        }
        while !inner.map.is_empty()
            && (inner.map.len() >= self.capacity || inner.bytes + added > self.capacity_bytes)
        {
            let oldest = inner
                .map
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| *k);
            if let Some(entry) = oldest.and_then(|k| inner.map.remove(&k)) {
                inner.bytes -= weight(&entry.tools, &entry.options);
            }
        }
        inner.bytes += added;
        inner.map.insert(
            key,
            Entry {
                tools: tools.into(),
                options: options.clone(),
                mender: Arc::clone(&mender),
                used: inner.clock,
            },
        );
        mender
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::RecoverMode;

    fn off() -> MenderOptions {
        MenderOptions::default().with_recover(RecoverMode::Off)
    }

    #[test]
    fn hits_share_and_capacity_evicts_the_least_recently_used() {
        let cache = MenderCache::new(2, usize::MAX);
        let a = cache.get(r#"[{"name":"a"}]"#, &off());
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, &off())));
        let _ = cache.get(r#"[{"name":"b"}]"#, &off());
        let _ = cache.get(r#"[{"name":"a"}]"#, &off());
        let _ = cache.get(r#"[{"name":"c"}]"#, &off());
        assert_eq!(cache.len(), 2);
        // `a` was used more recently than `b`, so `b` went.
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, &off())));
    }

    #[test]
    fn the_byte_budget_evicts_and_a_set_over_it_is_not_kept() {
        let cache = MenderCache::new(100, 40);
        let model = off().with_model("m");
        let _ = cache.get(r#"[{"name":"aaaa"}]"#, &model);
        let _ = cache.get(r#"[{"name":"bbbb"}]"#, &model);
        // 17 + 1 bytes each: the third evicts the first.
        let _ = cache.get(r#"[{"name":"cccc"}]"#, &model);
        assert_eq!(cache.len(), 2);
        let big = format!(r#"[{{"name":"{}"}}]"#, "x".repeat(64));
        let _ = cache.get(&big, &model);
        assert_eq!(cache.len(), 2, "a set over the whole budget is not kept");
        assert_eq!(cache.lock().bytes, 36);
    }

    #[test]
    fn every_option_is_part_of_the_key() {
        let cache = MenderCache::default();
        let tools = json!([{"name": "a", "parameters": {"type": "object"}}]);
        let base = cache.get_value(&tools, &off());
        for options in [
            off().with_recover(RecoverMode::All),
            off().with_model("m"),
            off().with_values(true),
            off().with_limits(crate::Limits {
                max_depth: 3,
                ..crate::Limits::default()
            }),
        ] {
            let other = cache.get_value(&tools, &options);
            assert!(!Arc::ptr_eq(&base, &other), "{options:?}");
            assert_eq!(other.options(), &options);
        }
        // Parsed tools and their compact text are one entry.
        assert!(Arc::ptr_eq(&base, &cache.get(&tools.to_string(), &off())));
    }

    #[test]
    fn a_refused_schema_is_kept_with_its_rejection() {
        let cache = MenderCache::default();
        let tools = r#"[{"name": "bad", "parameters": {"properties": {"x": {"pattern": "("}}}}]"#;
        let first = cache.get(tools, &off());
        assert_eq!(first.tools().rejected().len(), 1);
        assert!(Arc::ptr_eq(&first, &cache.get(tools, &off())));
        // Text that is not JSON is a set with no tools and that rejection, kept too.
        let none = cache.get("not json", &off());
        assert!(none.tools().is_empty() && none.tools().rejected().len() == 1);
        assert!(Arc::ptr_eq(&none, &cache.get("not json", &off())));
    }
}
