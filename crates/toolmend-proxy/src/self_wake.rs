//! A connection task that wakes itself while it runs is polled again at once, instead of being
//! rescheduled through the runtime.
//!
//! hyper's server connection registers its own waker on the request body's channel and the
//! handler, which hyper polls inside the same task, wakes it when it takes the body's chunk. A
//! task woken during its own poll is rescheduled by tokio as a yield, and a yield notifies an
//! idle worker: one futex wake of another thread per request, which the ideal hop (whose
//! upstream client reads the body in its own task) does not make. [`AbsorbSelfWakes`] gives
//! the connection a waker that, while the connection is being polled, only records the wake;
//! the poll then runs again in place. A wake from anywhere else, or between polls, goes to the
//! task's own waker as before. A future that keeps waking itself (a deliberate yield) is still
//! rescheduled after [`REPOLLS`] polls in place, so it yields as it meant to.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// Not being polled: a wake goes to the task.
const IDLE: u8 = 0;
/// Being polled, not woken yet.
const POLLING: u8 = 1;
/// Woken during the poll: poll again.
const WOKEN: u8 = 2;

/// Polls in place after a self-wake, per poll of the task, before the wake goes to the
/// runtime.
const REPOLLS: usize = 2;

thread_local! {
    /// A future polled under [`AbsorbSelfWakes`] asked to yield its turn ([`yield_turn`]).
    static YIELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Wakes the current task after the other tasks runnable on this thread had their turn: under
/// [`AbsorbSelfWakes`] the wake goes to the runtime at once instead of polling again in place.
pub(crate) fn yield_turn(cx: &Context<'_>) {
    YIELD.set(true);
    cx.waker().wake_by_ref();
}

/// The wake state shared by the connection's waker and its poll.
#[derive(Debug)]
struct Signal {
    state: AtomicU8,
    task: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // One atomic step: either the poll has not ended and will see WOKEN, or it has ended
        // (IDLE) and the task is woken.
        match self
            .state
            .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(WOKEN) => {}
            Err(_) => self.task.wake(),
        }
    }
}

/// `inner`, polled again in place when it wakes itself during its poll (see the module).
pub(crate) struct AbsorbSelfWakes<F> {
    inner: Pin<Box<F>>,
    signal: Arc<Signal>,
    waker: Waker,
}

impl<F: Future> AbsorbSelfWakes<F> {
    pub(crate) fn new(inner: F) -> Self {
        let signal = Arc::new(Signal {
            state: AtomicU8::new(IDLE),
            task: AtomicWaker::new(),
        });
        Self {
            inner: Box::pin(inner),
            waker: Waker::from(Arc::clone(&signal)),
            signal,
        }
    }
}

impl<F: Future> Future for AbsorbSelfWakes<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        this.signal.task.register(cx.waker());
        for _ in 0..=REPOLLS {
            this.signal.state.store(POLLING, Ordering::Release);
            YIELD.set(false);
            let mut inner_cx = Context::from_waker(&this.waker);
            let polled = this.inner.as_mut().poll(&mut inner_cx);
            let woken = this.signal.state.swap(IDLE, Ordering::AcqRel) == WOKEN;
            if polled.is_ready() || !woken {
                return polled;
            }
            if YIELD.replace(false) {
                break;
            }
        }
        // Still waking itself: a yield, which goes through the runtime.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wakes itself `times` times, then is ready.
    struct SelfWaking {
        times: usize,
        polls: usize,
    }

    impl Future for SelfWaking {
        type Output = usize;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > self.times {
                return Poll::Ready(self.polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// Counts the wakes that reach the task.
    struct Count(std::sync::atomic::AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll_once<F: Future>(
        future: &mut AbsorbSelfWakes<F>,
        count: &Arc<Count>,
    ) -> Poll<F::Output> {
        let waker = Waker::from(Arc::clone(count));
        Pin::new(future).poll(&mut Context::from_waker(&waker))
    }

    #[test]
    fn a_self_wake_polls_again_in_place() {
        let count = Arc::new(Count(0.into()));
        let mut future = AbsorbSelfWakes::new(SelfWaking { times: 2, polls: 0 });
        assert_eq!(poll_once(&mut future, &count), Poll::Ready(3));
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            0,
            "no wake reached the task"
        );
    }

    #[test]
    fn a_future_that_keeps_waking_itself_still_yields() {
        let count = Arc::new(Count(0.into()));
        let mut future = AbsorbSelfWakes::new(SelfWaking {
            times: 10,
            polls: 0,
        });
        assert!(poll_once(&mut future, &count).is_pending());
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the yield reached the task"
        );
        assert!(poll_once(&mut future, &count).is_pending());
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert_eq!(poll_once(&mut future, &count), Poll::Pending);
        assert_eq!(poll_once(&mut future, &count), Poll::Ready(11));
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task() {
        let count = Arc::new(Count(0.into()));
        let mut future = AbsorbSelfWakes::new(std::future::pending::<()>());
        assert!(poll_once(&mut future, &count).is_pending());
        future.waker.wake_by_ref();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }
}
