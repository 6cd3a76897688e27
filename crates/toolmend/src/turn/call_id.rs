//! Ids for calls recovered from text: unique across the turns of a conversation, without state.
//!
//! A recovered call has no id of its own. Numbering them `1, 2, …` in every turn gave the second
//! turn the first turn's ids, and agent loops that remember finished call ids (the OpenAI Agents
//! SDK) stop on a reused one. The id is instead `call_tm_<12 hex>_<n>`: the hex digits hash what
//! makes the turn itself unique — the caller's id for it ([`AssistantTurn::id`], the API's
//! response id or, in the proxy, a hash of the request), the number of turns the session has
//! seen, and the turn's text — and `n` counts the recovered calls of the turn. The same turn
//! run the same way gets the same ids (the CLI's JSONL output is reproducible); two turns of a
//! session differ at least by their number.
//!
//! [`AssistantTurn::id`]: crate::AssistantTurn::id

/// The prefix of every recovered call's id.
pub const RECOVERED_ID_PREFIX: &str = "call_tm_";

/// FNV-1a, 64 bits: stable across platforms and Rust releases (the std hasher is not promised
/// to be), and fast enough for the few texts hashed once per turn that recovers a call.
#[derive(Debug, Clone, Copy)]
pub struct StableHasher(u64);

impl StableHasher {
    /// A hasher at the FNV offset basis.
    #[must_use]
    pub const fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// Feeds `bytes`, then a separator so `("ab", "c")` and `("a", "bc")` differ.
    pub fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes.iter().chain(&[0xff]) {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The hash so far.
    #[must_use]
    pub const fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

/// The 12 hex digits (48 bits) that stand for one turn in its calls' ids.
#[must_use]
pub fn turn_tag(hash: u64) -> String {
    format!("{:012x}", hash & 0xffff_ffff_ffff)
}

/// The id of the `n`th recovered call (from 1) of the turn tagged `tag`.
#[must_use]
pub fn recovered_call_id(tag: &str, n: usize) -> String {
    format!("{RECOVERED_ID_PREFIX}{tag}_{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv_1a_with_separators() {
        let mut a = StableHasher::new();
        a.write(b"ab");
        a.write(b"c");
        let mut b = StableHasher::new();
        b.write(b"a");
        b.write(b"bc");
        assert_ne!(a.finish(), b.finish());
        assert_eq!(turn_tag(u64::MAX).len(), 12);
        assert_eq!(
            recovered_call_id("0123456789ab", 2),
            "call_tm_0123456789ab_2"
        );
    }
}
