//! Arrival order, shared by the channels (the box's queue, the web API's pending window): a
//! channel's queue is FIFO, but a request reaches it only after it was parsed, validated and
//! checked against the store, and a worker thread preempted in between would let a later
//! request overtake an earlier one. A [`Turn`] is taken when the request arrives (its body
//! read) and enters the queue only after every earlier turn of the same channel has entered it
//! or been given up, so the channel serves requests in arrival order.
//!
//! What a turn waits for is only the CPU and store work of the requests ahead of it (nothing
//! between taking a turn and queueing waits on a client or a device), so it adds no waiting of
//! its own beyond the order.
//!
//! The server's own order (issue 27): an invoice request takes a turn of the certification
//! service's [`Arrivals`] as soon as its head is read, before anything that can wait (the key
//! checked on a blocking thread, the body read), and takes its channel's turn only once every
//! earlier request has taken its own or given up ([`Turn::wait_at_most`]). Requests sent a few
//! milliseconds apart thus reach their channel in the order they were sent, whatever the
//! scheduling of the threads in between. That wait is bounded by [`ORDER_WAIT`]: a client
//! whose body trickles in delays the requests that arrived after it by that much at most,
//! after which they go on in their own order.
//!
//! The order is the whole service's, not one organization's: a slow-body client with a valid
//! key (a wrong key gives its place up before the body is read) delays every organization's
//! invoices arriving while its body is read by up to [`ORDER_WAIT`] each, for as long as its
//! body may take (the body limits, within `request_timeout_secs`). The waits run side by
//! side, so they do not add up and throughput is unchanged (docs/configuration.md, "Arrival
//! order and slow clients").

/// The longest a request waits for the requests that arrived before it to take their channel's
/// turn (see the module documentation).
pub const ORDER_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::watch;

/// The turns of one device that have not entered its queue yet.
#[derive(Debug)]
pub(crate) struct Arrivals {
    next: AtomicU64,
    pending: watch::Sender<BTreeSet<u64>>,
}

impl Arrivals {
    pub(crate) fn new() -> Arrivals {
        Arrivals {
            next: AtomicU64::new(0),
            pending: watch::Sender::new(BTreeSet::new()),
        }
    }

    /// A new turn, after every turn taken before it.
    pub(crate) fn take(self: &Arc<Self>) -> Turn {
        // The number and the insertion under the watch's lock together, so turns enter the
        // set in number order and `first()` is always the oldest pending one.
        let mut ticket = 0;
        self.pending.send_modify(|pending| {
            ticket = self.next.fetch_add(1, Ordering::Relaxed);
            pending.insert(ticket);
        });
        Turn {
            arrivals: Arc::clone(self),
            ticket,
            done: false,
        }
    }
}

/// A place in the arrival order of one device (see the module documentation). Dropping it
/// gives the place up, so the turns behind it go on.
#[derive(Debug)]
pub struct Turn {
    arrivals: Arc<Arrivals>,
    ticket: u64,
    done: bool,
}

impl Turn {
    /// Waits until every earlier turn has entered the queue or been given up.
    pub(crate) async fn wait(&self) {
        let mut pending = self.arrivals.pending.subscribe();
        // The sender lives in `self.arrivals`, so the channel cannot close while we wait.
        let _ = pending
            .wait_for(|pending| pending.first().is_none_or(|first| *first >= self.ticket))
            .await;
    }

    /// [`Turn::wait`], for at most `within`: whether every earlier turn was done in time.
    pub(crate) async fn wait_at_most(&self, within: std::time::Duration) -> bool {
        tokio::time::timeout(within, self.wait()).await.is_ok()
    }

    /// Ends the turn: the next one may enter the queue.
    pub(crate) fn finish(mut self) {
        self.release();
    }

    fn release(&mut self) {
        if !self.done {
            self.done = true;
            let ticket = self.ticket;
            self.arrivals.pending.send_modify(|pending| {
                pending.remove(&ticket);
            });
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_turn_waits_for_the_turns_taken_before_it() {
        let arrivals = Arc::new(Arrivals::new());
        let first = arrivals.take();
        let second = arrivals.take();
        let third = arrivals.take();
        // The third waits while the first is pending, even once the second has finished.
        second.finish();
        let waiting = tokio::spawn(async move {
            third.wait().await;
            third
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished(), "overtook the first turn");
        first.finish();
        let third = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("the third turn is free once the first has finished")
            .unwrap();
        // A turn given up (dropped) frees the ones behind it too.
        let fourth = arrivals.take();
        drop(third);
        tokio::time::timeout(Duration::from_secs(5), fourth.wait())
            .await
            .expect("the fourth turn is free");
    }

    #[tokio::test]
    async fn a_bounded_wait_goes_on_after_its_bound() {
        let arrivals = Arc::new(Arrivals::new());
        let slow = arrivals.take();
        let next = arrivals.take();
        let short = Duration::from_millis(50);
        assert!(
            !next.wait_at_most(short).await,
            "the first is still pending"
        );
        drop(slow);
        assert!(next.wait_at_most(short).await);
    }

    #[tokio::test]
    async fn the_first_turn_does_not_wait() {
        let arrivals = Arc::new(Arrivals::new());
        let turn = arrivals.take();
        tokio::time::timeout(Duration::from_secs(5), turn.wait())
            .await
            .expect("nobody ahead");
    }
}
