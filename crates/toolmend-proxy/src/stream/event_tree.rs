//! A stream event's JSON as a tree built only on demand (issue #29 §3): the Responses,
//! Anthropic and Ollama stream transformers read an event's members from its bytes through
//! their views (`responses_views.rs`, `anthropic_views.rs`, `ollama_views.rs`) and build the
//! tree only for an event they rewrite or whose other members they must keep (a held item, a
//! block's start): an event that needs no change goes out as the upstream's bytes, unparsed.

use serde_json::Value;

use super::sse::Data;

/// An event's JSON: its text as received, and the tree once something asked for it.
#[derive(Debug, Clone)]
pub(crate) struct EventTree {
    data: Option<Data>,
    tree: Option<Value>,
}

impl EventTree {
    /// The JSON text of an event, parsed on first use.
    pub(crate) fn unparsed(data: Data) -> Self {
        Self {
            data: Some(data),
            tree: None,
        }
    }

    /// A tree already built (the tree path, or an event the proxy writes).
    pub(crate) fn parsed(value: Value) -> Self {
        Self {
            data: None,
            tree: Some(value),
        }
    }

    /// The tree, parsed now if it was not; `Null` for a text that is not JSON (the views
    /// read only what parses, so that is never the case for an event they took).
    pub(crate) fn value(&mut self) -> &mut Value {
        if self.tree.is_none() {
            let text = self.data.as_ref().map_or("null", Data::as_str);
            self.tree = Some(serde_json::from_str(text).unwrap_or(Value::Null));
        }
        self.tree.get_or_insert(Value::Null)
    }

    /// The tree, taken.
    pub(crate) fn into_value(mut self) -> Value {
        let _ = self.value();
        self.tree.unwrap_or(Value::Null)
    }
}

/// Whether the views must leave every event to the tree path: set by the tests that compare
/// the two paths' output on the same streams; never in a build that is not a test.
pub(crate) fn tree_only() -> bool {
    #[cfg(test)]
    {
        TREE_ONLY.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        false
    }
}

#[cfg(test)]
thread_local! {
    static TREE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with every event left to the tree path (tests only).
#[cfg(test)]
pub(crate) fn with_tree_only<T>(f: impl FnOnce() -> T) -> T {
    TREE_ONLY.with(|flag| flag.set(true));
    let out = f();
    TREE_ONLY.with(|flag| flag.set(false));
    out
}

/// Runs streams through a transformer, with the views and with the tree path alone (tests).
#[cfg(test)]
pub(crate) mod check {
    use std::sync::Arc;

    use futures_util::StreamExt;
    use serde_json::json;
    use toolmend::{Mender, MenderOptions, RecoverMode, ToolSet};

    use crate::config::ProxyConfig;
    use crate::error::Api;

    fn mender(recover: RecoverMode) -> Arc<Mender> {
        static CONTENT: std::sync::OnceLock<Arc<Mender>> = std::sync::OnceLock::new();
        static ALL: std::sync::OnceLock<Arc<Mender>> = std::sync::OnceLock::new();
        let slot = match recover {
            RecoverMode::All => &ALL,
            _ => &CONTENT,
        };
        Arc::clone(slot.get_or_init(|| build_mender(recover)))
    }

    fn build_mender(recover: RecoverMode) -> Arc<Mender> {
        let tools = json!([{"type": "function", "function": {"name": "list_dir",
            "parameters": {"type": "object", "properties": {"dir": {"type": "string"}},
            "required": ["dir"]}}}]);
        let options = MenderOptions::default().with_recover(recover);
        Arc::new(Mender::with_options(ToolSet::from_json(&tools), options))
    }

    /// The client's bytes for an upstream body delivered in these pieces.
    pub(crate) fn run(api: Api, recover: RecoverMode, pieces: Vec<Vec<u8>>) -> Vec<u8> {
        let pieces = pieces.into_iter().map(bytes::Bytes::from).collect();
        run_chunks(api, recover, pieces)
            .into_iter()
            .flat_map(|c| c.to_vec())
            .collect()
    }

    /// The client's chunks, as sent, for an upstream body delivered in these chunks.
    pub(crate) fn run_chunks(
        api: Api,
        recover: RecoverMode,
        pieces: Vec<bytes::Bytes>,
    ) -> Vec<bytes::Bytes> {
        let upstream = futures_util::stream::iter(
            pieces
                .into_iter()
                .map(Ok::<_, crate::upstream::UpstreamError>),
        );
        let mut config = ProxyConfig::new("http://h");
        config.recover = recover;
        let out = super::super::transform(
            api,
            upstream,
            mender(recover),
            Arc::new(config),
            "m".into(),
            "req_1".into(),
            Box::new(Vec::new),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let chunks: Vec<_> = runtime.block_on(out.collect());
        chunks.into_iter().map(Result::unwrap).collect()
    }

    /// The client's bytes for `body`, after checking that the tree path alone gives the same
    /// bytes and that every split of the body (in two, and byte by byte) does too.
    pub(crate) fn agree(api: Api, recover: RecoverMode, body: &str) -> String {
        let bytes = body.as_bytes();
        let whole = run(api, recover, vec![bytes.to_vec()]);
        let tree = super::with_tree_only(|| run(api, recover, vec![bytes.to_vec()]));
        assert_eq!(
            String::from_utf8_lossy(&whole),
            String::from_utf8_lossy(&tree),
            "the views and the tree path differ"
        );
        for cut in 1..bytes.len() {
            let pieces = vec![bytes[..cut].to_vec(), bytes[cut..].to_vec()];
            assert_eq!(run(api, recover, pieces), whole, "cut at {cut}");
        }
        let one_each: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(run(api, recover, one_each), whole, "byte by byte");
        String::from_utf8(whole).unwrap()
    }
}
