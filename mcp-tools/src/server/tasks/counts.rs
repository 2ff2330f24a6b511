//! The tasks this replica runs, by status, as the metrics show them
//! (`mcp_toolbelt_tasks{status}`): counted where the task's fn runs, from the moment the
//! call became a task, so that a sum over the replicas is the total without ever reading
//! the store (which may be Redis) at scrape time.
//!
//! A running task counts under the status its runner last wrote or read (`working`,
//! `input_required`); an ended one counts under its end (`completed`, `failed`,
//! `cancelled`) for as long as it stays readable (the task TTL after its end), at most
//! [`TaskLimits::total`](super::TaskLimits) of them (past that the oldest stop counting:
//! the store could not hold more anyway).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::TaskState;
use crate::poison::LockIgnoringPoison;

/// The statuses a task count has, in the order the metrics write them (the protocol's
/// names, [`TaskState::status`]).
pub(crate) const STATUSES: [&str; 5] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

/// Where a status counts in [`STATUSES`].
pub(super) fn slot(state: &TaskState) -> usize {
    match state {
        TaskState::Working => 0,
        TaskState::InputRequired { .. } => 1,
        TaskState::Completed { .. } => 2,
        TaskState::Failed { .. } => 3,
        TaskState::Cancelled => 4,
    }
}

/// The counts of one replica's tasks by status; cheap to clone (one `Arc`).
#[derive(Clone)]
pub(crate) struct TaskCounts {
    inner: Arc<Counts>,
}

struct Counts {
    /// Running tasks by status (`working`, `input_required`).
    live: [AtomicI64; 2],
    /// Ended tasks still readable, oldest first.
    ended: Mutex<Ended>,
    /// How long an ended task stays readable (the server's task TTL).
    ttl: Duration,
    /// At most this many ended tasks are remembered.
    bound: usize,
}

#[derive(Default)]
struct Ended {
    /// When each stops counting, and under which status (its slot); in the order they
    /// ended, so their deadlines are in order too (one TTL per server).
    order: VecDeque<(Instant, usize)>,
    /// How many of `order` are under each terminal status (slots 2, 3, 4).
    by_status: [u64; 3],
}

impl Ended {
    fn forget_until(&mut self, now: Instant) {
        while let Some(&(until, slot)) = self.order.front() {
            if until > now {
                break;
            }
            self.order.pop_front();
            self.by_status[slot - 2] -= 1;
        }
    }
}

impl TaskCounts {
    /// Counts of tasks that stay readable for `ttl` after they end, remembering at most
    /// `bound` ended ones.
    pub(crate) fn new(ttl: Duration, bound: usize) -> TaskCounts {
        TaskCounts {
            inner: Arc::new(Counts {
                live: Default::default(),
                ended: Mutex::new(Ended::default()),
                ttl,
                bound: bound.max(1),
            }),
        }
    }

    /// A task created now, `working`, run here: counted until the returned tally drops.
    pub(crate) fn started(&self) -> TaskTally {
        self.inner.live[0].fetch_add(1, Ordering::Relaxed);
        TaskTally {
            counts: self.clone(),
            at: Some(0),
        }
    }

    /// Each status's count now, in the order of [`STATUSES`].
    pub(crate) fn read(&self) -> [i64; STATUSES.len()] {
        let inner = &self.inner;
        let mut ended = inner.ended.lock_ignoring_poison();
        ended.forget_until(Instant::now());
        let by_status = ended.by_status;
        drop(ended);
        [
            inner.live[0].load(Ordering::Relaxed),
            inner.live[1].load(Ordering::Relaxed),
            i64::try_from(by_status[0]).unwrap_or(i64::MAX),
            i64::try_from(by_status[1]).unwrap_or(i64::MAX),
            i64::try_from(by_status[2]).unwrap_or(i64::MAX),
        ]
    }

    fn ended(&self, slot: usize) {
        let inner = &self.inner;
        let now = Instant::now();
        let mut ended = inner.ended.lock_ignoring_poison();
        ended.forget_until(now);
        if ended.order.len() >= inner.bound
            && let Some((_, oldest)) = ended.order.pop_front()
        {
            ended.by_status[oldest - 2] -= 1;
        }
        ended.order.push_back((now + inner.ttl, slot));
        ended.by_status[slot - 2] += 1;
    }
}

/// One running task's place in its replica's [`TaskCounts`]: moved as its runner sees the
/// task change, to its end once it ended; a tally dropped before the task ended (the store
/// lost the task, or the runner stopped) stops counting it.
pub(crate) struct TaskTally {
    counts: TaskCounts,
    /// The task's slot while it runs; `None` once it ended.
    at: Option<usize>,
}

impl TaskTally {
    /// The runner wrote or read the task as `state`.
    pub(crate) fn saw(&mut self, state: &TaskState) {
        let Some(at) = self.at else {
            return;
        };
        let now = slot(state);
        if now == at {
            return;
        }
        self.counts.inner.live[at].fetch_sub(1, Ordering::Relaxed);
        if now < 2 {
            self.counts.inner.live[now].fetch_add(1, Ordering::Relaxed);
            self.at = Some(now);
        } else {
            self.counts.ended(now);
            self.at = None;
        }
    }
}

impl Drop for TaskTally {
    fn drop(&mut self) {
        if let Some(at) = self.at.take() {
            self.counts.inner.live[at].fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    fn failed() -> TaskState {
        TaskState::Failed { error: Map::new() }
    }

    #[test]
    fn the_status_names_are_the_protocols() {
        for state in [
            TaskState::Working,
            TaskState::InputRequired {
                requests: Map::new(),
            },
            TaskState::Completed { result: Map::new() },
            failed(),
            TaskState::Cancelled,
        ] {
            let written = serde_json::to_value(&state).unwrap();
            assert_eq!(written["status"], STATUSES[slot(&state)]);
            assert_eq!(state.status(), STATUSES[slot(&state)]);
        }
    }

    #[test]
    fn a_task_moves_between_statuses_and_ends_once() {
        let counts = TaskCounts::new(Duration::from_secs(60), 10);
        let mut asking = counts.started();
        let mut cancelled = counts.started();
        assert_eq!(counts.read(), [2, 0, 0, 0, 0]);
        asking.saw(&TaskState::InputRequired {
            requests: Map::new(),
        });
        assert_eq!(counts.read(), [1, 1, 0, 0, 0]);
        cancelled.saw(&TaskState::Cancelled);
        cancelled.saw(&failed());
        assert_eq!(counts.read(), [0, 1, 0, 0, 1], "an ended task stays ended");
        asking.saw(&TaskState::Working);
        asking.saw(&TaskState::Completed { result: Map::new() });
        drop((asking, cancelled));
        assert_eq!(counts.read(), [0, 0, 1, 0, 1]);
        let lost = counts.started();
        drop(lost);
        assert_eq!(counts.read(), [0, 0, 1, 0, 1], "a lost task stops counting");
    }

    #[test]
    fn ended_tasks_stop_counting_after_the_ttl_or_past_the_bound() {
        let counts = TaskCounts::new(Duration::from_millis(30), 2);
        for state in [failed(), failed(), TaskState::Cancelled] {
            counts.started().saw(&state);
        }
        assert_eq!(counts.read(), [0, 0, 0, 1, 1], "the oldest past the bound");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(counts.read(), [0, 0, 0, 0, 0], "all past the TTL");
    }
}
