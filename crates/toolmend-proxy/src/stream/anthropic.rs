//! Anthropic Messages streaming (filled in below).

use std::collections::VecDeque;

use bytes::Bytes;

use super::sse::Event;
use super::{Context, Transform};

/// The Anthropic stream transformer.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {}

impl Transform for AnthropicStream {
    fn event(&mut self, _cx: &mut Context, event: Event, out: &mut VecDeque<Bytes>) {
        out.push_back(event.raw);
    }

    fn finish(&mut self, _cx: &mut Context, _out: &mut VecDeque<Bytes>) {}
}
