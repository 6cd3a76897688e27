//! Closing a value the text ended inside (`truncation_closed`).
//!
//! What was read is kept: complete members and elements, a cut-off string as far as it goes, a
//! number that parses. What cannot be completed without inventing is dropped: a dangling key or
//! colon, a cut-off literal (`tr`), an incomplete number (`1.`), a partial escape. Then every
//! open container is closed. Whether the closed value may be used is the caller's decision
//! (DESIGN §5.1: only for tools not marked mutating).

use super::{Expect, Frame, Parser};
use crate::RepairKind;
use crate::salvage::node::Node;

/// The literals a cut-off word may be the start of.
const LITERALS: [&str; 6] = ["true", "false", "null", "True", "False", "None"];

/// Whether `word` is a proper start of a literal, so the text may have been cut inside it.
pub(super) fn is_literal_prefix(word: &str) -> bool {
    LITERALS
        .iter()
        .any(|l| l.len() > word.len() && l.starts_with(word))
}

impl Parser<'_> {
    /// Closes every open container at the end of the text and returns the root.
    pub(super) fn close_at_end(&mut self, stack: &mut Vec<Frame>, mut expect: Expect) -> Node {
        self.log
            .note(RepairKind::TruncationClosed, self.bytes.len());
        if matches!(expect, Expect::Colon | Expect::Value) {
            if let Some(Frame::Object(_, key)) = stack.last_mut() {
                *key = None;
            }
        }
        loop {
            match self.pop(stack, &mut expect) {
                Some(root) => return root,
                None if stack.is_empty() => return Node::empty_object(),
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_prefixes() {
        for word in [
            "t", "tr", "tru", "f", "fals", "n", "nul", "T", "Tru", "N", "Non", "F",
        ] {
            assert!(is_literal_prefix(word), "{word}");
        }
        for word in ["true", "x", "trux", "none", "Nan", "yes"] {
            assert!(!is_literal_prefix(word), "{word}");
        }
    }
}
