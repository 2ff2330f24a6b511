//! Graceful shutdown, the same on every transport: when the server's shutdown token fires
//! it stops accepting, lets the calls in flight finish for the shutdown grace, then cancels
//! what is still running (as a client's `notifications/cancelled` would) and returns.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long cancelled work gets to unwind once the grace is over.
const UNWIND: Duration = Duration::from_millis(500);

/// How long the end of serving waits for the audit log's queue to be written.
#[cfg(feature = "audit")]
const AUDIT_FLUSH: Duration = Duration::from_secs(5);

/// One listener's (or one stream's) shutdown: `draining` fires first, `hard` once the
/// grace is over (or everything finished).
pub(crate) struct Drain {
    /// The server's shutdown token: stop accepting, finish what is in flight.
    pub(crate) draining: CancellationToken,
    /// Cancel everything still running.
    pub(crate) hard: CancellationToken,
    /// This one ends the grace timer when dropped (the copies of [`watch`](Self::watch)
    /// do not).
    owner: bool,
    /// The audit log the owner flushes when serving ends.
    #[cfg(feature = "audit")]
    audit: Option<super::AuditLog>,
}

impl Drain {
    /// Watch `shutdown`; `hard` fires `grace` after it (needs a tokio runtime).
    pub(crate) fn start(shutdown: CancellationToken, grace: Duration) -> Drain {
        let hard = CancellationToken::new();
        let (draining, timer) = (shutdown.clone(), hard.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = draining.cancelled() => {}
                _ = timer.cancelled() => return,
            }
            tracing::info!(
                ?grace,
                "shutting down: accepting nothing new; calls in flight may finish"
            );
            tokio::select! {
                _ = tokio::time::sleep(grace) => {
                    tracing::warn!(?grace, "the shutdown grace is over: cancelling the calls still running");
                    timer.cancel();
                }
                _ = timer.cancelled() => {}
            }
        });
        Drain {
            draining: shutdown,
            hard,
            owner: true,
            #[cfg(feature = "audit")]
            audit: None,
        }
    }

    /// Flush `audit` when serving ends (this drain, the owner, is dropped).
    #[cfg(feature = "audit")]
    pub(crate) fn flushing(mut self, audit: Option<super::AuditLog>) -> Drain {
        self.audit = audit;
        self
    }

    /// The same tokens, for a connection's task.
    pub(crate) fn watch(&self) -> Drain {
        Drain {
            draining: self.draining.clone(),
            hard: self.hard.clone(),
            owner: false,
            #[cfg(feature = "audit")]
            audit: None,
        }
    }

    /// Wait until `finished` (nothing left in flight) or the grace is over.
    pub(crate) async fn settle(&self, finished: impl Future<Output = ()>) {
        tokio::select! {
            _ = finished => {}
            _ = self.hard.cancelled() => {}
        }
    }

    /// After the accept loop ended: wait until `finished` (nothing left in flight) or the
    /// grace is over, then [`end`](Self::end).
    pub(crate) async fn finish(&self, finished: impl Future<Output = ()>, tasks: &TaskTracker) {
        self.settle(finished).await;
        self.end(tasks).await;
    }

    /// Cancel what is left and give `tasks` a moment to unwind.
    pub(crate) async fn end(&self, tasks: &TaskTracker) {
        self.hard.cancel();
        tasks.close();
        if tokio::time::timeout(UNWIND, tasks.wait()).await.is_err() {
            tracing::warn!("some connections did not close after the shutdown grace");
        }
    }
}

impl Drop for Drain {
    fn drop(&mut self) {
        // Whatever ends serving ends the timer and what still runs under `hard`.
        if self.owner {
            self.hard.cancel();
            // The lines of every call answered reach the log before serving returns (a
            // short blocking wait on the writer thread, once, at the end).
            #[cfg(feature = "audit")]
            if let Some(audit) = &self.audit
                && !audit.flush(AUDIT_FLUSH)
            {
                tracing::warn!(
                    ?AUDIT_FLUSH,
                    "audit log: the queue was not written out before serving ended"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_hard_stop_comes_one_grace_after_the_shutdown() {
        let shutdown = CancellationToken::new();
        let drain = Drain::start(shutdown.clone(), Duration::from_millis(300));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!drain.hard.is_cancelled(), "no shutdown yet: no hard stop");
        shutdown.cancel();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!drain.hard.is_cancelled(), "still within the grace");
        tokio::time::timeout(Duration::from_secs(5), drain.hard.cancelled())
            .await
            .expect("the grace ends");
    }

    #[tokio::test]
    async fn finishing_early_cancels_at_once() {
        let shutdown = CancellationToken::new();
        let drain = Drain::start(shutdown.clone(), Duration::from_secs(30));
        shutdown.cancel();
        let started = std::time::Instant::now();
        drain.finish(async {}, &TaskTracker::new()).await;
        assert!(drain.hard.is_cancelled());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
