//! A bounded LRU of compiled tool sets, keyed by a hash of the request's raw `tools` text.
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

/// Compiled menders by `(tools text, model)`.
#[derive(Debug)]
pub(crate) struct MenderCache {
    hasher: RandomState,
    capacity: usize,
    recover: RecoverMode,
    inner: Mutex<(HashMap<u64, Entry>, u64)>,
}

impl MenderCache {
    pub(crate) fn new(capacity: usize, recover: RecoverMode) -> Self {
        Self {
            hasher: RandomState::new(),
            capacity: capacity.max(1),
            recover,
            inner: Mutex::new((HashMap::new(), 0)),
        }
    }

    /// The mender for these raw tools (compiled once, then shared).
    pub(crate) fn get(&self, tools: &str, model: &str) -> Arc<Mender> {
        let key = self.hasher.hash_one((tools, model));
        {
            let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let (map, clock) = &mut *guard;
            *clock += 1;
            if let Some(entry) = map.get_mut(&key)
                && &*entry.tools == tools
                && &*entry.model == model
            {
                entry.used = *clock;
                return Arc::clone(&entry.mender);
            }
        }
        // Compiled outside the lock: a slow schema does not stall other requests.
        let value = serde_json::from_str(tools).unwrap_or(serde_json::Value::Null);
        let options = MenderOptions::default()
            .with_recover(self.recover)
            .with_model(model);
        let mender = Arc::new(Mender::with_options(ToolSet::from_json(&value), options));
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (map, clock) = &mut *guard;
        if map.len() >= self.capacity && !map.contains_key(&key) {
            let oldest = map.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        map.insert(
            key,
            Entry {
                tools: tools.into(),
                model: model.into(),
                mender: Arc::clone(&mender),
                used: *clock,
            },
        );
        mender
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().unwrap().0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_share_and_capacity_evicts_the_oldest() {
        let cache = MenderCache::new(2, RecoverMode::Off);
        let a = cache.get(r#"[{"name":"a"}]"#, "m");
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m")));
        cache.get(r#"[{"name":"b"}]"#, "m");
        cache.get(r#"[{"name":"a"}]"#, "m");
        cache.get(r#"[{"name":"c"}]"#, "m");
        assert_eq!(cache.len(), 2);
        // `a` was used more recently than `b`, so `b` went.
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m")));
    }
}
