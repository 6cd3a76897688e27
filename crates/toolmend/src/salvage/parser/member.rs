//! The common member of a call's object, read in one go (issue #31).
//!
//! Nearly every member a model sends is `"key": value` with a plain key, its colon, and a plain
//! string, a small integer or a literal, then a comma or the closer. The main loop reads such a
//! member in four turns (key, colon, value, what follows), each through the whole state
//! machine: the key parked in its frame and taken back, the value handed up through a `Result`
//! and put into the object by the generic `emit`. That was about half of a ~100-byte call's
//! reading. Here the same steps run straight, calling the same readers, so a member costs what
//! its bytes cost.
//!
//! Not a second grammar: at the first thing that is not the common shape (no colon, a
//! container or any other value, a string that is not plain), the member is left where the main
//! loop would be at that point, with the key parked and the state set, and the main loop goes on
//! from there. The same readers run in the same order either way, so the result and the repairs
//! are the same. Calls only: the document readings change what a key or scalar is.

use super::{Expect, Frame, Parser, RunError, Step, numbers};
use crate::salvage::node::{Node, Str as Text};
use crate::salvage::scan::{self, Quote};

impl Parser<'_> {
    /// Reads the member whose key opens with the quote at the current position, inside the
    /// innermost object. `None`, with nothing consumed or logged, when the key is not plain
    /// (the main loop reads it); otherwise the step the main loop takes next, as after a value
    /// (`expect` set, a key read without its value parked in the frame).
    pub(super) fn read_member(
        &mut self,
        stack: &mut [Frame],
        expect: &mut Expect,
    ) -> Result<Option<Step>, RunError> {
        let start = self.pos;
        let quote = match self.bytes[start] {
            b'"' => Quote::Double,
            b'\'' => Quote::Single,
            _ => return Ok(None),
        };
        if !self.call_grammar
            || !matches!(stack.last(), Some(Frame::Object(..)))
            || self.memo.key_is_cut(start)
        {
            return Ok(None);
        }
        let Some(key) = self.read_plain_key_span(quote) else {
            return Ok(None);
        };
        self.skip_blank();
        if self.bytes.get(self.pos) != Some(&b':') {
            return Ok(Some(park(stack, expect, key, Expect::Colon)));
        }
        self.pos += 1;
        self.progressed = true;
        self.skip_blank();
        let Some(&b) = self.bytes.get(self.pos) else {
            return Ok(Some(park(stack, expect, key, Expect::Value)));
        };
        let value = match b {
            b'"' | b'\'' => {
                let quote = if b == b'"' {
                    Quote::Double
                } else {
                    Quote::Single
                };
                let open = self.pos;
                let Some(plain) = self.read_plain_string(quote) else {
                    return Ok(Some(park(stack, expect, key, Expect::Value)));
                };
                let (mut s, after) = (plain.text, self.pos);
                match self.concatenation(&mut s) {
                    super::Joined::Closed => {
                        if plain.canonical && self.pos == after {
                            self.value_span = Some(open..after);
                        }
                        Node::Str(s)
                    }
                    super::Joined::Cut => {
                        park(stack, expect, key, Expect::Value);
                        return Ok(Some(Step::Cut(Some(Node::Str(s)))));
                    }
                    super::Joined::Broken(at) => {
                        return Err(self.error(crate::salvage::SalvageErrorKind::Syntax, at));
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let end = scan::number_end(self.bytes, self.pos);
                let Some(value) = numbers::small_integer_value(&self.bytes[self.pos..end]) else {
                    return Ok(Some(park(stack, expect, key, Expect::Value)));
                };
                let start = self.pos;
                self.pos = end;
                Node::Int { value, start, end }
            }
            _ => match self.read_literal() {
                Some(literal) => literal,
                None => return Ok(Some(park(stack, expect, key, Expect::Value))),
            },
        };
        *expect = Expect::Next;
        let span = self.value_span.take();
        if let Some((Frame::Object(members, _), outer)) = stack.split_last_mut() {
            self.insert_member(members, outer, key, value, span);
        }
        // What follows the value: a comma goes straight on to the next key.
        self.skip_blank();
        if self.bytes.get(self.pos) == Some(&b',') {
            *expect = Expect::Key {
                comma: Some(self.pos),
            };
            self.pos += 1;
        }
        Ok(Some(Step::Go))
    }
}

/// Leaves a member whose key was read where the main loop would be: the key parked in the
/// innermost object, `next` expected.
fn park(stack: &mut [Frame], expect: &mut Expect, key: Text, next: Expect) -> Step {
    if let Some(Frame::Object(_, pending)) = stack.last_mut() {
        *pending = Some(key);
    }
    *expect = next;
    Step::Go
}
