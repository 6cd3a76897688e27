//! The retry budget: how often the same invalid call is answered with a retry message.
//!
//! Keyed by (tool, canonical fingerprint of the raw arguments) within a session. The first
//! failure gets the retry message; the same failure again gets a sharper one; past
//! `max_reprompts` the outcome is `gave-up`. The key is kept as a 128-bit digest, never as the
//! argument text: a session of large invalid calls costs 16 bytes per distinct failure.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::feedback::RetryContext;

/// Default `max_reprompts`.
pub const DEFAULT_MAX_REPROMPTS: u8 = 1;
/// Largest allowed `max_reprompts`.
pub const MAX_REPROMPTS: u8 = 5;
/// Most distinct failures remembered per session; past it the oldest one is forgotten.
const MAX_REMEMBERED: usize = 4096;

/// The identity of one failure: a 128-bit digest of the tool name and the fingerprint.
type Digest = [u64; 2];

/// The digest of (`tool`, `fingerprint`): two SipHash runs (std's hasher, fixed keys) told apart
/// by a seed byte. A collision would merge two budgets; at 128 bits it does not happen.
fn digest(tool: &str, fingerprint: &str) -> Digest {
    [0u8, 1].map(|seed| {
        let mut hasher = DefaultHasher::new();
        (seed, tool, fingerprint).hash(&mut hasher);
        hasher.finish()
    })
}

/// The retry budget of one session.
#[derive(Debug, Clone)]
pub(crate) struct RetryBudget {
    max_reprompts: u8,
    failures: HashMap<Digest, u32>,
    /// The remembered failures, oldest first (what is forgotten when the map is full).
    order: VecDeque<Digest>,
}

impl RetryBudget {
    pub(crate) fn new(max_reprompts: u8) -> Self {
        Self {
            max_reprompts: max_reprompts.min(MAX_REPROMPTS),
            failures: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    pub(crate) fn set_max_reprompts(&mut self, max_reprompts: u8) {
        self.max_reprompts = max_reprompts.min(MAX_REPROMPTS);
    }

    /// Records one failure; says where it falls in the budget.
    pub(crate) fn fail(&mut self, tool: &str, fingerprint: &str) -> RetryContext {
        let key = digest(tool, fingerprint);
        if !self.failures.contains_key(&key) {
            if self.order.len() >= MAX_REMEMBERED {
                if let Some(oldest) = self.order.pop_front() {
                    self.failures.remove(&oldest);
                }
            }
            self.order.push_back(key);
        }
        let count = self.failures.entry(key).or_insert(0);
        *count += 1;
        if *count > u32::from(self.max_reprompts) {
            RetryContext::GaveUp {
                repeated: *count > 1,
            }
        } else if *count == 1 {
            RetryContext::First
        } else {
            RetryContext::Repeated
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(max: u8, times: usize) -> Vec<RetryContext> {
        let mut budget = RetryBudget::new(max);
        (0..times).map(|_| budget.fail("t", "{}")).collect()
    }

    #[test]
    fn budgets_zero_one_and_five() {
        use RetryContext::{First, GaveUp, Repeated};
        let again = GaveUp { repeated: true };
        assert_eq!(run(0, 2), [GaveUp { repeated: false }, again]);
        assert_eq!(run(1, 3), [First, again, again]);
        assert_eq!(
            run(5, 7),
            [First, Repeated, Repeated, Repeated, Repeated, again, again]
        );
    }

    #[test]
    fn different_calls_have_their_own_budget() {
        let mut budget = RetryBudget::new(1);
        assert_eq!(budget.fail("t", "a"), RetryContext::First);
        assert_eq!(budget.fail("t", "b"), RetryContext::First);
        assert_eq!(budget.fail("u", "a"), RetryContext::First);
    }

    // Issue #8 item 11: the budget keeps a digest, not the argument text.
    #[test]
    fn keeps_no_argument_text() {
        let mut budget = RetryBudget::new(1);
        let large = format!("{{\"content\": \"{}\"}}", "needle ".repeat(1000));
        budget.fail("write", &large);
        let kept = format!("{budget:?}");
        assert!(!kept.contains("needle"), "{kept}");
        assert!(kept.len() < 200, "{kept}");
        assert_eq!(
            budget.fail("write", &large),
            RetryContext::GaveUp { repeated: true }
        );
    }

    // Issue #8 item 11: a full budget forgets its oldest failure, not every failure.
    #[test]
    fn a_full_budget_forgets_the_oldest_failure_only() {
        let mut budget = RetryBudget::new(1);
        for i in 0..MAX_REMEMBERED {
            assert_eq!(budget.fail("t", &i.to_string()), RetryContext::First);
        }
        // One more: the first failure is forgotten, the second and the newest are not.
        assert_eq!(budget.fail("t", "new"), RetryContext::First);
        assert_eq!(budget.order.len(), MAX_REMEMBERED);
        let again = RetryContext::GaveUp { repeated: true };
        assert_eq!(budget.fail("t", "new"), again);
        assert_eq!(budget.fail("t", &(MAX_REMEMBERED - 1).to_string()), again);
        assert_eq!(budget.fail("t", "1"), again);
        assert_eq!(budget.fail("t", "0"), RetryContext::First);
    }
}
