//! The entry points, the top of the stage: guards and the public functions. Everything below
//! (`extract`, the parser, the document layer, `seed`, `strict`, `scan`) is called from here
//! and calls nothing here.
//!
//! - `call`: [`salvage`] and [`salvage_call_after`] (after a strict prefix), for tool-call
//!   arguments;
//! - `document`: [`salvage_document`] and [`salvage_broken_document`], any root, with the
//!   document readings of `super::document`.

mod call;
mod document;

#[cfg(test)]
pub(crate) use call::salvage_after;
pub(crate) use call::salvage_call_after;
pub use call::{salvage, salvage_to_text};
pub use document::{salvage_broken_document, salvage_document};
