//! Per-run counters: one atomic counter per repair kind, plus outcome counts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::RepairKind;

/// Atomic counters for one run (a `Mender`, shared across threads).
///
/// Each kind counts once per call, however many paths it repaired there.
#[derive(Debug)]
pub struct RepairStats {
    kinds: Vec<AtomicU64>,
    calls: AtomicU64,
    invalid: AtomicU64,
    recovered: AtomicU64,
    storms_broken: AtomicU64,
    gave_up: AtomicU64,
}

impl Default for RepairStats {
    fn default() -> Self {
        Self {
            kinds: RepairKind::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
            calls: AtomicU64::new(0),
            invalid: AtomicU64::new(0),
            recovered: AtomicU64::new(0),
            storms_broken: AtomicU64::new(0),
            gave_up: AtomicU64::new(0),
        }
    }
}

/// A point-in-time copy of [`RepairStats`], serialisable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RepairStatsSnapshot {
    /// Calls seen.
    pub calls: u64,
    /// Calls per repair kind (kinds never seen are left out).
    pub kinds: BTreeMap<RepairKind, u64>,
    /// Calls that could not be saved.
    pub invalid: u64,
    /// Calls recovered from text.
    pub recovered: u64,
    /// Calls suppressed by the storm breaker.
    pub storms_broken: u64,
    /// Calls rejected past the retry budget.
    pub gave_up: u64,
}

impl RepairStats {
    /// Fresh counters at zero.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn count_call(&self, kinds: impl IntoIterator<Item = RepairKind>) {
        // Each kind once per call: a bit per kind of `RepairKind::ALL`, no allocation.
        const _: () = assert!(RepairKind::ALL.len() <= 128);
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut seen = 0u128;
        for kind in kinds {
            if let Some(i) = RepairKind::ALL.iter().position(|k| *k == kind)
                && seen & (1 << i) == 0
            {
                seen |= 1 << i;
                self.kinds[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts one occurrence of `kind` for a call that is not listed (a dropped duplicate).
    pub(crate) fn count_kind(&self, kind: RepairKind) {
        if let Some(i) = RepairKind::ALL.iter().position(|k| *k == kind) {
            self.kinds[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a call that passed untouched: one counter, nothing else.
    pub(crate) fn count_valid(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_invalid(&self) {
        self.invalid.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_recovered(&self) {
        self.recovered.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_storm(&self) {
        self.storms_broken.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_gave_up(&self) {
        self.gave_up.fetch_add(1, Ordering::Relaxed);
    }

    /// A serialisable copy of the counters now.
    #[must_use]
    pub fn snapshot(&self) -> RepairStatsSnapshot {
        let kinds = RepairKind::ALL
            .iter()
            .zip(&self.kinds)
            .map(|(kind, n)| (*kind, n.load(Ordering::Relaxed)))
            .filter(|(_, n)| *n > 0)
            .collect();
        RepairStatsSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            kinds,
            invalid: self.invalid.load(Ordering::Relaxed),
            recovered: self.recovered.load(Ordering::Relaxed),
            storms_broken: self.storms_broken.load(Ordering::Relaxed),
            gave_up: self.gave_up.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_counts_once_per_call() {
        let stats = RepairStats::new();
        stats.count_call([
            RepairKind::NullStripped,
            RepairKind::NullStripped,
            RepairKind::ScalarCoerced,
        ]);
        stats.count_call([RepairKind::NullStripped]);
        stats.count_invalid();
        let snap = stats.snapshot();
        assert_eq!(snap.calls, 2);
        assert_eq!(snap.kinds[&RepairKind::NullStripped], 2);
        assert_eq!(snap.kinds[&RepairKind::ScalarCoerced], 1);
        assert_eq!(snap.invalid, 1);
        let json = serde_json::to_value(&snap).unwrap();
        assert_eq!(json["kinds"]["null_stripped"], 2);
    }
}
