//! The proxy's compiled tool sets: the library's bounded [`toolmend::MenderCache`], keyed by the
//! request's raw `tools` text and its model, with the proxy's recover mode.
//!
//! Bounded in entries and in bytes (`tool_cache_entries`, `tool_cache_bytes`): a compiled set's
//! size follows its raw text (over 200 times it for pattern-heavy schemas,
//! `tests/tool_cache_memory.rs`); a set heavier than the whole budget is compiled for its
//! request and not kept. Agents send the same tools with every request, so nearly every lookup
//! is a hit and no request recompiles schemas. The raw text is compared on a hit, so a hash
//! collision can never apply another request's tools.

use std::sync::Arc;

use toolmend::{Mender, MenderOptions, RecoverMode};

/// Compiled menders by `(tools text, model)`.
#[derive(Debug)]
pub(crate) struct MenderCache {
    menders: toolmend::MenderCache,
    recover: RecoverMode,
}

impl MenderCache {
    pub(crate) fn new(capacity: usize, capacity_bytes: usize, recover: RecoverMode) -> Self {
        Self {
            menders: toolmend::MenderCache::new(capacity, capacity_bytes),
            recover,
        }
    }

    /// The mender for these raw tools (compiled once, then shared); text that is not JSON is
    /// a set with no tools.
    pub(crate) fn get(&self, tools: &str, model: &str) -> Arc<Mender> {
        let options = MenderOptions::default()
            .with_recover(self.recover)
            .with_model(model);
        self.menders.get(tools, &options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The bounds themselves are the library's (`toolmend::mender_cache`); here: the proxy's key.
    #[test]
    fn the_model_and_tools_are_the_key_and_the_recover_mode_is_the_proxys() {
        let cache = MenderCache::new(8, usize::MAX, RecoverMode::All);
        let a = cache.get(r#"[{"name":"a"}]"#, "m");
        assert!(Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "m")));
        assert!(!Arc::ptr_eq(&a, &cache.get(r#"[{"name":"a"}]"#, "n")));
        assert!(!Arc::ptr_eq(&a, &cache.get(r#"[{"name":"b"}]"#, "m")));
        assert_eq!(a.options().recover, RecoverMode::All);
        assert_eq!(a.options().model, "m");
    }
}
