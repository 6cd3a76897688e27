//! The retry budget: how often the same invalid call is answered with a retry message.
//!
//! Keyed by (tool, canonical fingerprint of the raw arguments) within a session. The first
//! failure gets the retry message; the same failure again gets a sharper one; past
//! `max_reprompts` the outcome is `gave-up`.

use std::collections::HashMap;

use crate::feedback::RetryContext;

/// Default `max_reprompts`.
pub const DEFAULT_MAX_REPROMPTS: u8 = 1;
/// Largest allowed `max_reprompts`.
pub const MAX_REPROMPTS: u8 = 5;
/// Most distinct failures remembered per session; past it the oldest knowledge is dropped.
const MAX_REMEMBERED: usize = 4096;

/// The retry budget of one session.
#[derive(Debug, Clone)]
pub(crate) struct RetryBudget {
    max_reprompts: u8,
    failures: HashMap<(String, String), u32>,
}

impl RetryBudget {
    pub(crate) fn new(max_reprompts: u8) -> Self {
        Self {
            max_reprompts: max_reprompts.min(MAX_REPROMPTS),
            failures: HashMap::new(),
        }
    }

    pub(crate) fn set_max_reprompts(&mut self, max_reprompts: u8) {
        self.max_reprompts = max_reprompts.min(MAX_REPROMPTS);
    }

    /// Records one failure; says where it falls in the budget.
    pub(crate) fn fail(&mut self, tool: &str, fingerprint: String) -> RetryContext {
        if self.failures.len() >= MAX_REMEMBERED {
            self.failures.clear();
        }
        let count = self
            .failures
            .entry((tool.to_owned(), fingerprint))
            .or_insert(0);
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
        (0..times).map(|_| budget.fail("t", "{}".into())).collect()
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
        assert_eq!(budget.fail("t", "a".into()), RetryContext::First);
        assert_eq!(budget.fail("t", "b".into()), RetryContext::First);
        assert_eq!(budget.fail("u", "a".into()), RetryContext::First);
    }
}
