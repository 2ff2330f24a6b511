//! Tasks (the MCP tasks extension, `io.modelcontextprotocol/tasks`, on protocol
//! 2026-07-28): a call of a task-supporting tool that outlives its first wait becomes a
//! task the client polls with `tasks/get`, answers with `tasks/update` and stops with
//! `tasks/cancel`.
//!
//! A [`TaskStore`] keeps the tasks: [`MemoryTaskStore`] in the process (the default), or
//! one shared by replicas (e.g. Redis), so that any replica answers for any task. The
//! replica that runs a task keeps a lease on it; a task whose lease runs out (its replica
//! died) is failed by whoever reads it next.
//!
//! This module holds the store's interface and records; `run.rs` drives a task's fn and
//! `wire.rs` turns records into the protocol's shapes.

pub(crate) mod counts;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod run;
pub(crate) mod wire;

#[cfg(feature = "redis")]
pub use super::redis_conn::RedisUrlError;
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::poison::LockIgnoringPoison;

/// What a task is doing, with what its status carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TaskState {
    /// The fn runs.
    Working,
    /// The fn waits for the client's answers to these requests (by key, as the protocol's
    /// `inputRequests` JSON).
    InputRequired {
        /// The questions not answered yet.
        requests: Map<String, Value>,
    },
    /// The fn returned: its `CallToolResult` (an `isError` one when the tool failed).
    Completed {
        /// The result, as the protocol writes it.
        result: Map<String, Value>,
    },
    /// The task could not finish (the server failed, or lost it): a JSON-RPC error object.
    Failed {
        /// `code`, `message` and maybe `data`.
        error: Map<String, Value>,
    },
    /// The client cancelled it.
    Cancelled,
}

impl TaskState {
    /// The protocol's name of its status (`working`, `input_required`, `completed`,
    /// `failed`, `cancelled`).
    ///
    /// ```
    /// use mcp_toolbelt::server::tasks::TaskState;
    /// assert_eq!(TaskState::Cancelled.status(), "cancelled");
    /// ```
    pub fn status(&self) -> &'static str {
        counts::STATUSES[counts::slot(self)]
    }

    /// True once nothing changes the task any more.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed { .. } | TaskState::Failed { .. } | TaskState::Cancelled
        )
    }
}

/// One task as a store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Its id (random, unguessable).
    pub id: String,
    /// Who may see and change it (the caller that created it).
    pub owner: String,
    /// The tool it runs.
    pub tool: String,
    /// Where it stands.
    pub state: TaskState,
    /// A human-readable note on the state (the fn's last progress message).
    pub status_message: Option<String>,
    /// When it was created and last changed (milliseconds since the Unix epoch).
    pub created_at_ms: u64,
    /// See `created_at_ms`.
    pub updated_at_ms: u64,
    /// How long it stays readable after it was last changed.
    pub ttl_ms: u64,
    /// Until when the replica running it vouches for it (refreshed while it runs).
    pub lease_until_ms: u64,
    /// Answers delivered by `tasks/update` that the running fn has not taken yet.
    pub responses: Map<String, Value>,
}

impl TaskRecord {
    /// True when the task can be forgotten at `now`: finished, and its TTL since the last
    /// change has passed (a live task is kept while its lease holds).
    pub fn expired(&self, now: u64) -> bool {
        self.state.is_terminal() && self.updated_at_ms.saturating_add(self.ttl_ms) <= now
    }

    /// True when the task claims to run but its replica stopped vouching for it.
    pub fn lease_lost(&self, now: u64) -> bool {
        !self.state.is_terminal() && self.lease_until_ms < now
    }
}

/// How long a finished task stays readable by default ([`Server::task_ttl`]).
///
/// [`Server::task_ttl`]: crate::server::Server::task_ttl
///
/// ```
/// assert_eq!(mcp_toolbelt::server::tasks::DEFAULT_TASK_TTL.as_secs(), 3600);
/// ```
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How long a replica's lease on a task it runs holds without refresh by default
/// ([`Server::task_lease`]).
///
/// [`Server::task_lease`]: crate::server::Server::task_lease
///
/// ```
/// assert_eq!(mcp_toolbelt::server::tasks::DEFAULT_TASK_LEASE.as_secs(), 30);
/// ```
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(30);

/// Bounds on how many tasks live at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    /// Live (unfinished) tasks one caller may have.
    pub per_owner: usize,
    /// Tasks the store holds in all (finished ones until they expire).
    pub total: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            per_owner: 32,
            total: 10_000,
        }
    }
}

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum TaskStoreError {
    /// The caller has `limit` live tasks already.
    #[error(
        "this caller has {limit} unfinished tasks, the most it may have; wait for one to finish or cancel one"
    )]
    TooManyForCaller {
        /// The bound.
        limit: usize,
    },
    /// The store holds `limit` tasks already.
    #[error("the server holds {limit} tasks, the most it keeps; try again when some have expired")]
    Full {
        /// The bound.
        limit: usize,
    },
    /// The store cannot be reached or failed (retry later).
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// A message for the replica running a task: read its record again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskSignal {
    /// `tasks/update` delivered answers.
    Answered(String),
    /// `tasks/cancel` cancelled it.
    Cancelled(String),
}

impl TaskSignal {
    /// The task it is about.
    pub fn task_id(&self) -> &str {
        match self {
            TaskSignal::Answered(id) | TaskSignal::Cancelled(id) => id,
        }
    }
}

/// A change to one record, applied atomically by [`TaskStore::modify`]; returns false to
/// leave the record as it was.
pub type TaskChange<'a> = &'a (dyn Fn(&mut TaskRecord) -> bool + Send + Sync);

/// Where tasks live: every replica that may answer for a task must share one store.
///
/// The operations are what the server needs and nothing more: create with bounds, read,
/// change one record atomically, and a signal bus that reaches the replica running a task
/// (signals may be lost: the runner also reads its record on every lease refresh).
pub trait TaskStore: Send + Sync + 'static {
    /// Store `task`, new, unless its owner has `limits.per_owner` unfinished tasks or the
    /// store holds `limits.total`.
    fn create(
        &self,
        task: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// The task `id`; `None` when there is none (or it expired).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Apply `change` to task `id` atomically and return the record as it is after;
    /// `None` when there is no such task.
    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Tell the replica running the task (whichever it is).
    fn signal(&self, signal: TaskSignal) -> BoxFuture<'_, Result<(), TaskStoreError>>;

    /// Every signal sent from now on, for the tasks this replica runs to pick theirs.
    fn signals(&self) -> BoxStream<'static, TaskSignal>;
}

/// A shared store serves as well (e.g. one the application also reads).
impl<T: TaskStore> TaskStore for std::sync::Arc<T> {
    fn create(
        &self,
        task: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        (**self).create(task, limits)
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        (**self).get(id)
    }

    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        (**self).modify(id, change)
    }

    fn signal(&self, signal: TaskSignal) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        (**self).signal(signal)
    }

    fn signals(&self) -> BoxStream<'static, TaskSignal> {
        (**self).signals()
    }
}

/// The signals `receiver` gets, as a stream. Signals missed when the receiver lags are
/// skipped: the runners' reads at each lease refresh make up for them.
pub(crate) fn signal_stream(
    receiver: broadcast::Receiver<TaskSignal>,
) -> BoxStream<'static, TaskSignal> {
    Box::pin(futures::stream::unfold(
        receiver,
        |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(signal) => return Some((signal, receiver)),
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        },
    ))
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `duration` in whole milliseconds.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The task store in this process: what a single server uses (tasks are lost with the
/// process). Expired tasks are dropped as the store is used.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use mcp_toolbelt::server::tasks::{MemoryTaskStore, TaskStore};
/// let store = MemoryTaskStore::new();
/// assert!(store.get("no-such-task").await.unwrap().is_none());
/// # });
/// ```
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    signals: broadcast::Sender<TaskSignal>,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore::new()
    }
}

impl std::fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTaskStore").finish_non_exhaustive()
    }
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> MemoryTaskStore {
        MemoryTaskStore {
            tasks: Mutex::new(HashMap::new()),
            signals: broadcast::channel(1024).0,
        }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock_ignoring_poison()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        task: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let now = now_ms();
        let mut tasks = self.tasks();
        tasks.retain(|_, t| !t.expired(now));
        let result = if tasks.len() >= limits.total {
            Err(TaskStoreError::Full {
                limit: limits.total,
            })
        } else if tasks
            .values()
            .filter(|t| t.owner == task.owner && !t.state.is_terminal())
            .count()
            >= limits.per_owner
        {
            Err(TaskStoreError::TooManyForCaller {
                limit: limits.per_owner,
            })
        } else {
            tasks.insert(task.id.clone(), task);
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let now = now_ms();
        let mut tasks = self.tasks();
        let found = match tasks.get(id) {
            Some(task) if task.expired(now) => {
                tasks.remove(id);
                None
            }
            other => other.cloned(),
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let mut tasks = self.tasks();
        let after = tasks.get_mut(id).map(|task| {
            let mut changed = task.clone();
            if change(&mut changed) {
                *task = changed;
            }
            task.clone()
        });
        Box::pin(std::future::ready(Ok(after)))
    }

    fn signal(&self, signal: TaskSignal) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        // No receiver: no task runs here now; nothing to tell.
        let _ = self.signals.send(signal);
        Box::pin(std::future::ready(Ok(())))
    }

    fn signals(&self) -> BoxStream<'static, TaskSignal> {
        signal_stream(self.signals.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn task(id: &str, owner: &str, state: TaskState, updated_at_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            owner: owner.into(),
            tool: "t".into(),
            state,
            status_message: None,
            created_at_ms: updated_at_ms,
            updated_at_ms,
            ttl_ms: 60_000,
            lease_until_ms: now_ms() + 60_000,
            responses: Map::new(),
        }
    }

    fn create(
        store: &MemoryTaskStore,
        record: TaskRecord,
        limits: TaskLimits,
    ) -> Result<(), TaskStoreError> {
        store.create(record, limits).now_or_never().expect("ready")
    }

    #[test]
    fn bounds_count_unfinished_tasks_per_owner_and_all_tasks() {
        let store = MemoryTaskStore::new();
        let limits = TaskLimits {
            per_owner: 2,
            total: 4,
        };
        let now = now_ms();
        create(&store, task("a1", "alice", TaskState::Working, now), limits).unwrap();
        create(&store, task("a2", "alice", TaskState::Working, now), limits).unwrap();
        let refused = create(&store, task("a3", "alice", TaskState::Working, now), limits);
        assert!(matches!(
            refused,
            Err(TaskStoreError::TooManyForCaller { limit: 2 })
        ));
        // A finished task no longer counts against its owner…
        store
            .modify("a1", &|t: &mut TaskRecord| {
                t.state = TaskState::Cancelled;
                true
            })
            .now_or_never()
            .unwrap()
            .unwrap();
        create(&store, task("a3", "alice", TaskState::Working, now), limits).unwrap();
        create(&store, task("b1", "bob", TaskState::Working, now), limits).unwrap();
        // …but is held (and counted in all) until it expires.
        let full = create(&store, task("b2", "bob", TaskState::Working, now), limits);
        assert!(matches!(full, Err(TaskStoreError::Full { limit: 4 })));
    }

    #[test]
    fn finished_tasks_expire_their_ttl_after_their_last_change() {
        let store = MemoryTaskStore::new();
        let long_ago = now_ms() - 120_000;
        let finished = task("old", "alice", TaskState::Cancelled, long_ago);
        let working = task("busy", "alice", TaskState::Working, long_ago);
        assert!(finished.expired(now_ms()));
        assert!(
            !working.expired(now_ms()),
            "a live task is kept while its lease holds"
        );
        create(&store, finished, TaskLimits::default()).unwrap();
        create(&store, working, TaskLimits::default()).unwrap();
        assert!(store.get("old").now_or_never().unwrap().unwrap().is_none());
        assert!(store.get("busy").now_or_never().unwrap().unwrap().is_some());
    }

    #[test]
    fn a_lease_is_lost_only_by_an_unfinished_task_past_it() {
        let mut record = task("t", "alice", TaskState::Working, now_ms());
        assert!(!record.lease_lost(now_ms()));
        record.lease_until_ms = now_ms() - 1;
        assert!(record.lease_lost(now_ms()));
        record.state = TaskState::Cancelled;
        assert!(!record.lease_lost(now_ms()));
    }

    #[test]
    fn a_change_that_declines_leaves_the_record() {
        let store = MemoryTaskStore::new();
        create(
            &store,
            task("t", "alice", TaskState::Working, 1),
            TaskLimits::default(),
        )
        .unwrap();
        let after = store
            .modify("t", &|t: &mut TaskRecord| {
                t.tool = "changed".into();
                false
            })
            .now_or_never()
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(after.tool, "t");
        let missing = store
            .modify("nope", &|_| true)
            .now_or_never()
            .unwrap()
            .unwrap();
        assert!(missing.is_none());
    }
}
