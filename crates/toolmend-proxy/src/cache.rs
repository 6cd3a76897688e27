//! A bounded LRU of compiled tool sets, keyed by a hash of the request's raw `tools` text.
//!
//! Bounded in entries and in bytes: a compiled set's size follows its raw text (over 200 times
//! it for pattern-heavy schemas, `tests/tool_cache_memory.rs`), so the raw text is the weight;
//! a set heavier than the whole budget is compiled for its request and not kept.
//!
//! Agents send the same tools with every request, so nearly every lookup is a hit and no
//! request recompiles schemas. The raw text is kept beside the hash and compared, so a hash
//! collision can never apply another request's tools.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex};

use toolmend::{Mender, MenderOptions, RecoverMode, ToolSet};

#[derive(Debug)]
struct Entry {
    tools: Box<str>,
    model: Box<str>,
    mender: Arc<Mender>,
    used: u64,
}

impl Entry {
    /// The weight counted against the byte budget.
    fn weight(&self) -> usize {
        weight(&self.tools, &self.model)
    }
}

fn weight(tools: &str, model: &str) -> usize {
    tools.len() + model.len()
}

/// The map, the use clock, and the total weight of the entries.
#[derive(Debug, Default)]
struct Inner {
    map: HashMap<u64, Entry>,
    clock: u64,
    bytes: usize,
}

/// Compiled menders by `(tools text, model)`.
#[derive(Debug)]
pub(crate) struct MenderCache {
    hasher: RandomState,
    capacity: usize,
    capacity_bytes: usize,
    recover: RecoverMode,
    inner: Mutex<Inner>,
}

impl MenderCache {
    pub(crate) fn new(capacity: usize, capacity_bytes: usize, recover: RecoverMode) -> Self {
        Self {
            hasher: RandomState::new(),
            capacity: capacity.max(1),
            capacity_bytes,
            recover,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The mender for these raw tools (compiled once, then shared).
    pub(crate) fn get(&self, tools: &str, model: &str) -> Arc<Mender> {
        let key = self.hasher.hash_one((tools, model));
        {
            let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let inner = &mut *guard;
            inner.clock += 1;
            if let Some(entry) = inner.map.get_mut(&key)
                && &*entry.tools == tools
                && &*entry.model == model
            {
                entry.used = inner.clock;
                return Arc::clone(&entry.mender);
            }
        }
        // Compiled outside the lock: a slow schema does not stall other requests.
        let value = serde_json::from_str(tools).unwrap_or(serde_json::Value::Null);
        let options = MenderOptions::default()
            .with_recover(self.recover)
            .with_model(model);
        let mender = Arc::new(Mender::with_options(ToolSet::from_json(&value), options));
        let added = weight(tools, model);
        if added > self.capacity_bytes {
            return mender;
        }
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let inner = &mut *guard;
        if let Some(old) = inner.map.remove(&key) {
            inner.bytes -= old.weight();
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
                inner.bytes -= entry.weight();
            }
        }
        inner.bytes += added;
        inner.map.insert(
            key,
            Entry {
                tools: tools.into(),
                model: model.into(),
                mender: Arc::clone(&mender),
                used: inner.clock,
            },
        );
        mender
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap().map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_share_and_capacity_evicts_the_oldest() {
        let cache = MenderCache::new(2, usize::MAX, RecoverMode::Off);
        let a = cache.get(r#"[{"name":"a"}]"#, "m");
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m")));
        cache.get(r#"[{"name":"b"}]"#, "m");
        cache.get(r#"[{"name":"a"}]"#, "m");
        cache.get(r#"[{"name":"c"}]"#, "m");
        assert_eq!(cache.len(), 2);
        // `a` was used more recently than `b`, so `b` went.
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m")));
    }

    #[test]
    fn the_byte_budget_evicts_and_a_set_over_it_is_not_kept() {
        let cache = MenderCache::new(100, 40, RecoverMode::Off);
        cache.get(r#"[{"name":"aaaa"}]"#, "m");
        cache.get(r#"[{"name":"bbbb"}]"#, "m");
        // 17 + 1 bytes each: the third evicts the first.
        cache.get(r#"[{"name":"cccc"}]"#, "m");
        assert_eq!(cache.len(), 2);
        let big = format!(r#"[{{"name":"{}"}}]"#, "x".repeat(64));
        cache.get(&big, "m");
        assert_eq!(cache.len(), 2, "a set over the whole budget is not kept");
        assert_eq!(cache.inner.lock().unwrap().bytes, 36);
    }
}
