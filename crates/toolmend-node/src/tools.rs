//! `ToolSet` (tools compiled once) and `prepareTools` (tool definitions rewritten for a model).

use std::sync::Arc;

use napi::{Error, Result, Status};
use napi_derive::napi;
use serde_json::Value;

/// The tools of a request, compiled once: OpenAI, flat, Anthropic or MCP tool objects (or an
/// MCP `tools/list` result), given as JSON text.
#[napi]
#[derive(Debug)]
pub struct ToolSet {
    pub(crate) inner: Arc<toolmend::ToolSet>,
    /// The tool objects as given, so each `Mender` can compile its own copy.
    pub(crate) source: Arc<Value>,
}

#[napi]
impl ToolSet {
    /// Compiles the tools in `toolsJson`; a list (or MCP result) of tool objects.
    ///
    /// Tool objects toolmend cannot read are listed in `rejected`, never thrown; only text
    /// that is not JSON, or JSON that is not a list of objects, throws.
    #[napi(constructor)]
    pub fn new(tools_json: String) -> Result<Self> {
        let source: Value = serde_json::from_str(&tools_json)
            .map_err(|e| Error::new(Status::InvalidArg, format!("tools are not JSON text: {e}")))?;
        if !(source.is_array() || source.get("tools").is_some_and(Value::is_array)) {
            return Err(Error::new(
                Status::InvalidArg,
                "tools must be a list of tool objects",
            ));
        }
        Ok(Self {
            inner: Arc::new(toolmend::ToolSet::from_json(&source)),
            source: Arc::new(source),
        })
    }

    /// The declared tool names, in order.
    #[napi(getter)]
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.inner.iter().map(|t| t.name().to_owned()).collect()
    }

    /// Why tool objects or schemas were refused (the rest of the set is built regardless).
    #[napi(getter)]
    #[must_use]
    pub fn rejected(&self) -> Vec<String> {
        self.inner
            .rejected()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// How many tools the set holds.
    #[napi(getter)]
    #[must_use]
    pub fn size(&self) -> u32 {
        u32::try_from(self.inner.len()).unwrap_or(u32::MAX)
    }

    /// Whether a tool of exactly this name is declared.
    #[napi]
    #[must_use]
    pub fn has(&self, name: String) -> bool {
        self.inner.get(&name).is_some()
    }

    /// Whether the named tool changes things (its cut-off calls are never closed); `null` for
    /// an unknown name.
    #[napi]
    #[must_use]
    pub fn is_mutating(&self, name: String) -> Option<bool> {
        self.inner.get(&name).map(toolmend::Tool::is_mutating)
    }
}

/// Options of `prepareTools` (each defaults to the library's `PrepareOptions`).
#[napi(object)]
#[derive(Debug, Default)]
pub struct PrepareOptions {
    /// Remove toolmend's own contract hints from descriptions.
    pub strip_hints: Option<bool>,
    /// Remove `^…$` anchors the model family mis-reads.
    pub strip_anchors: Option<bool>,
    /// Flatten deep or wide schemas.
    pub flatten: Option<bool>,
    /// Flatten a schema with more leaves than this.
    pub flatten_leaves_over: Option<u32>,
    /// Flatten a schema deeper than this.
    pub flatten_depth_over: Option<u32>,
    /// Add contract hints to descriptions.
    pub contract_hints: Option<bool>,
    /// Longest hint added to one description, in bytes.
    pub max_hint_bytes: Option<u32>,
}

/// Rewrites tool definitions (JSON text) for `model` and returns them, as JSON text, in the
/// form given.
#[napi]
pub fn prepare_tools(
    tools_json: String,
    model: String,
    options: Option<PrepareOptions>,
) -> Result<String> {
    let value: Value = serde_json::from_str(&tools_json)
        .map_err(|e| Error::new(Status::InvalidArg, format!("tools are not JSON text: {e}")))?;
    let given = options.unwrap_or_default();
    let mut opts = toolmend::PrepareOptions::default();
    let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(v) = given.strip_hints {
        opts.strip_hints = v;
    }
    if let Some(v) = given.strip_anchors {
        opts.strip_anchors = v;
    }
    if let Some(v) = given.flatten {
        opts.flatten = v;
    }
    if let Some(v) = given.flatten_leaves_over {
        opts.flatten_leaves_over = size(v);
    }
    if let Some(v) = given.flatten_depth_over {
        opts.flatten_depth_over = size(v);
    }
    if let Some(v) = given.contract_hints {
        opts.contract_hints = v;
    }
    if let Some(v) = given.max_hint_bytes {
        opts.max_hint_bytes = size(v);
    }
    let prepared = toolmend::prepare_tools(&value, &model, &opts)
        .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
    Ok(prepared.to_string())
}
