//! `toolmend-node`: the native half of the `toolmend` npm package (napi-rs).
//!
//! A thin binding: it maps JavaScript arguments to the `toolmend` crate's public API and its
//! results to small JavaScript objects, and holds no repair logic. Values cross as JSON text
//! (the JS side parses them lazily, only when read), so no JSON tree is walked across the
//! boundary. The typed API users import is the hand-written TypeScript in `js/`; this crate's
//! generated loader and types are `binding.js` / `binding.d.ts`.
//!
//! Byte offsets shown to JavaScript (spans, error positions) are UTF-16 code-unit indices, the
//! unit of JavaScript strings.

pub mod document;
pub mod mender;
pub mod recover;
pub mod tools;
mod utf16;

use napi_derive::napi;

/// The repair kinds toolmend reports (DESIGN §5 names), in catalogue order.
#[napi]
#[must_use]
pub fn repair_kinds() -> Vec<&'static str> {
    toolmend::RepairKind::ALL.iter().map(|k| k.name()).collect()
}

/// The version of the Rust engine inside this addon.
#[napi]
#[must_use]
pub fn engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
