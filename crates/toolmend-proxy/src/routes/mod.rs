//! The API dialects the proxy repairs.

pub(crate) mod anthropic;
pub(crate) mod ollama;
pub(crate) mod openai;
pub(crate) mod openai_bytes;
pub(crate) mod parts;
pub(crate) mod responses;
