//! The log of syntax repairs one salvage run makes.

use super::SyntaxRepair;
use crate::RepairKind;

/// Repairs made so far, keeping the first offset of each kind.
///
/// Only the first occurrence of a kind is kept: the engine reports each kind once per call, and a
/// 200 KB file with raw newlines would otherwise log thousands of identical entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct RepairLog {
    repairs: Vec<SyntaxRepair>,
    /// Pointers of keys sent twice (`duplicate_key_dropped`), bounded.
    dropped_keys: Vec<String>,
    /// A bit per kind in `repairs`: a kind is noted once per key or string of a call
    /// (`'…'` keys, Python literals), and finding it in the log took a call and a scan each.
    seen: u128,
}

/// The bit of `kind` in [`RepairLog::seen`].
const fn bit(kind: RepairKind) -> u128 {
    const _: () = assert!(RepairKind::ALL.len() <= 128);
    1 << (kind as u8 % 128)
}

impl RepairLog {
    /// Records `kind` at `offset` unless the kind is already logged.
    #[inline]
    pub(super) fn note(&mut self, kind: RepairKind, offset: usize) {
        debug_assert!(kind.is_syntax());
        if self.seen & bit(kind) == 0 {
            self.seen |= bit(kind);
            if self.repairs.capacity() == 0 {
                // Nearly every salvaged call notes a repair or two: room for a few at once,
                // without the growth path's bookkeeping (~45 instructions a call).
                self.repairs = Vec::with_capacity(4);
            }
            self.repairs.push(SyntaxRepair { kind, offset });
        }
    }

    /// [`Self::note`] with the test of the kind's bit inlined, for the notes made at every key
    /// or string (`quotes_normalized` in a `'…'` call): all but the first find the kind logged,
    /// which through the call cost ~45 instructions each (issue #31).
    #[inline(always)]
    pub(super) fn note_each(&mut self, kind: RepairKind, offset: usize) {
        if self.seen & bit(kind) == 0 {
            self.note(kind, offset);
        }
    }

    /// Records that the earlier value of the key at `pointer` was dropped, at `offset`.
    pub(super) fn drop_key(&mut self, pointer: String, offset: usize) {
        self.note(RepairKind::DuplicateKeyDropped, offset);
        self.add_dropped(pointer);
    }

    fn add_dropped(&mut self, pointer: String) {
        if self.dropped_keys.len() < crate::limits::MAX_REPORTED_DUPLICATE_KEYS
            && !self.dropped_keys.contains(&pointer)
        {
            self.dropped_keys.push(pointer);
        }
    }

    /// Whether nothing was repaired.
    pub(super) fn is_empty(&self) -> bool {
        self.repairs.is_empty()
    }

    /// Adds every repair of `other`, moved to `offset` (used for the inside of a double-encoded
    /// string, whose offsets do not map to the outer text byte for byte).
    pub(super) fn absorb_at(&mut self, other: &super::Found, offset: usize) {
        for r in &other.repairs {
            self.note(r.kind, offset);
        }
        for pointer in &other.dropped_keys {
            self.add_dropped(pointer.clone());
        }
    }

    /// The repairs in text order (stable for equal offsets), and the dropped keys' pointers.
    pub(super) fn into_sorted(mut self) -> (Vec<SyntaxRepair>, Vec<String>) {
        self.repairs.sort_by_key(|r| r.offset);
        (self.repairs, self.dropped_keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_offset_of_each_kind_in_text_order() {
        let mut log = RepairLog::default();
        log.note(RepairKind::TrailingCommaRemoved, 9);
        log.note(RepairKind::QuotesNormalized, 1);
        log.note(RepairKind::TrailingCommaRemoved, 20);
        let kinds: Vec<_> = log
            .into_sorted()
            .0
            .into_iter()
            .map(|r| (r.kind, r.offset))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (RepairKind::QuotesNormalized, 1),
                (RepairKind::TrailingCommaRemoved, 9)
            ]
        );
    }
}
