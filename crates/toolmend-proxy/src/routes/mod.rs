//! The two API dialects the proxy repairs.

pub(crate) mod anthropic;
pub(crate) mod openai;
