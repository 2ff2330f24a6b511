//! [`RedisTaskStore`]: tasks kept in Redis, so that every replica behind a load balancer
//! answers for every task, and signals (answers, cancellation) reach the replica running
//! it through Redis pub/sub.
//!
//! Layout, under a prefix (default `mcp-toolbelt:tasks:`): `task:{id}` holds the record
//! as JSON and expires with it; `live:{owner}` is a sorted set of the owner's unfinished
//! tasks scored by lease (for the per-caller bound: a task whose lease ran out no longer
//! counts); `all` scores every task by its expiry (for the total bound); signals go out
//! on the channel `signals`. Creation checks the bounds and stores the task in one Lua
//! script; a change is a compare-and-set of the whole record in another, retried when a
//! concurrent change won.

use std::sync::OnceLock;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use tokio::sync::broadcast;

use super::{TaskChange, TaskLimits, TaskRecord, TaskSignal, TaskStore, TaskStoreError, now_ms};
use crate::server::redis_conn::{RedisConnection, RedisUrlError};

/// How long one Redis command may take before the request it serves gets a retryable
/// error.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// How many times a change is tried when concurrent changes keep winning.
const MAX_ATTEMPTS: usize = 16;

const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 'full' end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 'owner' end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[7])
return 'ok'
";

const COMPARE_AND_SET: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[2], ARGV[5])
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[5])
return 1
";

/// Tasks kept in Redis (feature `redis`): what replicas behind one load balancer share, so
/// that a task created through one is read, answered and cancelled through any other,
/// and a cancel reaches the replica running it.
///
/// The connection is made on first use and remade after Redis restarts; while Redis is
/// unreachable, task requests answer a retryable error (-32004) after at most a few
/// seconds, and calls that are not tasks go on as before.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_toolbelt::server::tasks::RedisTaskStore;
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// let store = RedisTaskStore::open("redis://127.0.0.1:6379/")?;
/// mcp_toolbelt::server::Server::new(registry)
///     .task_store(store)
///     .serve_stdio()
///     .await?;
/// # Ok(())
/// # }
/// ```
pub struct RedisTaskStore {
    redis: RedisConnection,
    prefix: String,
    create: Script,
    compare_and_set: Script,
    signals: broadcast::Sender<TaskSignal>,
    /// The pub/sub listener, started by the first [`TaskStore::signals`].
    listening: OnceLock<()>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// A store on the Redis server at `url` (`redis://HOST:PORT/DB`,
    /// `redis://:PASSWORD@HOST/`, `redis+unix:///PATH`). Nothing is connected yet.
    ///
    /// # Errors
    ///
    /// The URL is not a Redis URL.
    ///
    /// ```
    /// use mcp_toolbelt::server::tasks::RedisTaskStore;
    /// assert!(RedisTaskStore::open("redis://127.0.0.1:6379/0").is_ok());
    /// assert!(RedisTaskStore::open("http://example.com/").is_err());
    /// ```
    pub fn open(url: &str) -> Result<RedisTaskStore, RedisUrlError> {
        Ok(RedisTaskStore {
            redis: RedisConnection::open(url, COMMAND_TIMEOUT)?,
            prefix: "mcp-toolbelt:tasks:".into(),
            create: Script::new(CREATE),
            compare_and_set: Script::new(COMPARE_AND_SET),
            signals: broadcast::channel(1024).0,
            listening: OnceLock::new(),
        })
    }

    /// Keep the keys under `prefix` instead of `mcp-toolbelt:tasks:` (several servers on
    /// one Redis, each its own tasks).
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisTaskStore {
        self.prefix = prefix.into();
        self
    }

    async fn connection(&self) -> Result<ConnectionManager, TaskStoreError> {
        self.redis.manager().await.map_err(unavailable)
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    fn live_key(&self, owner: &str) -> String {
        format!("{}live:{owner}", self.prefix)
    }

    fn all_key(&self) -> String {
        format!("{}all", self.prefix)
    }

    fn channel(&self) -> String {
        format!("{}signals", self.prefix)
    }

    async fn read(&self, id: &str) -> Result<Option<(String, TaskRecord)>, TaskStoreError> {
        let mut connection = self.connection().await?;
        let text: Option<String> = connection
            .get(self.task_key(id))
            .await
            .map_err(unavailable)?;
        let Some(text) = text else {
            return Ok(None);
        };
        let record = serde_json::from_str(&text)
            .map_err(|e| TaskStoreError::Unavailable(format!("task {id} is unreadable: {e}")))?;
        Ok(Some((text, record)))
    }

    /// Start forwarding the Redis channel into `self.signals`, reconnecting as needed.
    fn listen(self: &RedisTaskStore) {
        let client = self.redis.client().clone();
        let channel = self.channel();
        let sender = self.signals.clone();
        // Signals missed while Redis is away are made up for by the runners' reads at each
        // lease refresh.
        tokio::spawn(async move {
            let deliver = |signal: TaskSignal| {
                let _ = sender.send(signal);
            };
            crate::server::pubsub::follow(&client, &channel, "task signals", || true, deliver)
                .await;
        });
    }
}

fn unavailable(error: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(error.to_string())
}

/// When the record may be forgotten: a finished task its TTL after its last change, an
/// unfinished one its TTL after its lease (so a task whose replica died is still there to
/// be failed by the next read).
fn expires_at(task: &TaskRecord) -> u64 {
    let from = match task.state.is_terminal() {
        true => task.updated_at_ms,
        false => task.updated_at_ms.max(task.lease_until_ms),
    };
    from.saturating_add(task.ttl_ms)
}

impl TaskStore for RedisTaskStore {
    fn create(
        &self,
        task: TaskRecord,
        limits: TaskLimits,
    ) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = serde_json::to_string(&task)
                .map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
            let mut connection = self.connection().await?;
            let outcome: String = self
                .create
                .key(self.task_key(&task.id))
                .key(self.live_key(&task.owner))
                .key(self.all_key())
                .arg(text)
                .arg(now_ms())
                .arg(expires_at(&task))
                .arg(task.lease_until_ms)
                .arg(limits.per_owner)
                .arg(limits.total)
                .arg(&task.id)
                .invoke_async(&mut connection)
                .await
                .map_err(unavailable)?;
            match outcome.as_str() {
                "ok" => Ok(()),
                "owner" => Err(TaskStoreError::TooManyForCaller {
                    limit: limits.per_owner,
                }),
                _ => Err(TaskStoreError::Full {
                    limit: limits.total,
                }),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move { Ok(self.read(id).await?.map(|(_, record)| record)) })
    }

    fn modify<'a>(
        &'a self,
        id: &'a str,
        change: TaskChange<'a>,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            for _ in 0..MAX_ATTEMPTS {
                let Some((before, mut record)) = self.read(id).await? else {
                    return Ok(None);
                };
                if !change(&mut record) {
                    return Ok(Some(record));
                }
                let after = serde_json::to_string(&record)
                    .map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
                let lease = match record.state.is_terminal() {
                    true => String::new(),
                    false => record.lease_until_ms.to_string(),
                };
                let mut connection = self.connection().await?;
                let set: i64 = self
                    .compare_and_set
                    .key(self.task_key(id))
                    .key(self.live_key(&record.owner))
                    .key(self.all_key())
                    .arg(before)
                    .arg(after)
                    .arg(expires_at(&record))
                    .arg(lease)
                    .arg(id)
                    .invoke_async(&mut connection)
                    .await
                    .map_err(unavailable)?;
                if set == 1 {
                    return Ok(Some(record));
                }
            }
            Err(TaskStoreError::Unavailable(format!(
                "task {id} kept changing under {MAX_ATTEMPTS} attempts to change it"
            )))
        })
    }

    fn signal(&self, signal: TaskSignal) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let text = serde_json::to_string(&signal)
                .map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
            let mut connection = self.connection().await?;
            let _receivers: i64 = connection
                .publish(self.channel(), text)
                .await
                .map_err(unavailable)?;
            Ok(())
        })
    }

    fn signals(&self) -> BoxStream<'static, TaskSignal> {
        if self.listening.set(()).is_ok() {
            self.listen();
        }
        super::signal_stream(self.signals.subscribe())
    }
}
