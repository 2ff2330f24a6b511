//! [`RedisRateStore`]: the rate limiter's buckets in Redis, shared by replicas. Each check
//! is one Lua script (sent once, then run by its SHA: `EVALSHA`), atomic across every
//! replica, timed by Redis's own clock (`TIME`, so the replicas' clocks do not matter).
//! A key holds one number, the bucket's TAT in microseconds (see [`crate::rate`]), and
//! expires when its bucket is full again.

use std::time::Duration;

use redis::Script;
use redis::aio::ConnectionManager;

use crate::rate::{Draw, RateRefusal};
use crate::server::redis_conn::{RedisConnection, RedisUrlError};

/// How long one check may wait for Redis before the store counts as down.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// Draw on every bucket of KEYS (all or none). ARGV: each key's interval and tolerance
/// (µs). Returns `{1, 0, 0}` when admitted, else `{0, wait µs, which key (1-based)}`: the
/// longest wait among the refusing buckets.
const ADMIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local next = {}
local wait, which = 0, 0
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local tolerance = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  next[i] = tat + interval
  local ahead = next[i] - now
  if ahead > tolerance and ahead - tolerance > wait then
    wait, which = ahead - tolerance, i
  end
end
if which > 0 then return {0, wait, which} end
for i, key in ipairs(KEYS) do
  redis.call('SET', key, string.format('%.0f', next[i]), 'PX', math.ceil((next[i] - now) / 1000) + 1)
end
return {1, 0, 0}
";

/// How long until KEYS[1] would admit a call (0: now), without drawing on it. ARGV: its
/// interval and tolerance (µs).
const WAIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local ahead = tat + tonumber(ARGV[1]) - now
if ahead > tonumber(ARGV[2]) then return ahead - tonumber(ARGV[2]) end
return 0
";

/// Where a [`RateLimiter::shared`](super::RateLimiter::shared) keeps its buckets: a Redis
/// server (feature `redis`). Keys live under a prefix (default `mcp-toolbelt:rate:`) and
/// expire by themselves once their bucket is full again.
///
/// The connection is made on first use and remade after Redis restarts; a check that
/// cannot reach Redis within a second counts as the store being down.
///
/// ```
/// use mcp_toolbelt::server::RedisRateStore;
/// assert!(RedisRateStore::open("redis://127.0.0.1:6379/0").is_ok());
/// assert!(RedisRateStore::open("http://example.com/").is_err());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub struct RedisRateStore {
    redis: RedisConnection,
    prefix: String,
    admit: Script,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    wait: Script,
}

impl std::fmt::Debug for RedisRateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateStore")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisRateStore {
    /// A store on the Redis server at `url` (`redis://HOST:PORT/DB`,
    /// `redis://:PASSWORD@HOST/`, `redis+unix:///PATH`). Nothing is connected yet.
    ///
    /// # Errors
    ///
    /// The URL is not a Redis URL.
    pub fn open(url: &str) -> Result<RedisRateStore, RedisUrlError> {
        Ok(RedisRateStore {
            redis: RedisConnection::open(url, COMMAND_TIMEOUT)?,
            prefix: "mcp-toolbelt:rate:".into(),
            admit: Script::new(ADMIT),
            wait: Script::new(WAIT),
        })
    }

    /// Keep the keys under `prefix` instead of `mcp-toolbelt:rate:` (several servers on
    /// one Redis, each with buckets of its own).
    ///
    /// ```
    /// let store = mcp_toolbelt::server::RedisRateStore::open("redis://127.0.0.1/").unwrap()
    ///     .prefix("billing:rate:");
    /// # let _ = store;
    /// ```
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisRateStore {
        self.prefix = prefix.into();
        self
    }

    async fn connection(&self) -> redis::RedisResult<ConnectionManager> {
        self.redis.manager().await
    }

    /// Draw on every bucket of `draws` (all or none): `Ok(Err(refusal))` when a limit
    /// refuses the call.
    pub(super) async fn admit(
        &self,
        draws: &[Draw],
    ) -> redis::RedisResult<Result<(), RateRefusal>> {
        let mut connection = self.connection().await?;
        let mut invocation = self.admit.prepare_invoke();
        for draw in draws {
            invocation.key(format!("{}{}", self.prefix, draw.key));
        }
        for draw in draws {
            let interval = draw.rate.interval_us();
            invocation
                .arg(interval)
                .arg(interval.saturating_mul(draw.rate.burst()));
        }
        let (admitted, wait, which): (u8, u64, usize) =
            invocation.invoke_async(&mut connection).await?;
        if admitted == 1 {
            return Ok(Ok(()));
        }
        let limit = draws
            .get(which.saturating_sub(1))
            .map(|draw| draw.limit.clone())
            .ok_or_else(|| {
                redis::RedisError::from((redis::ErrorKind::Parse, "rate script: no such key"))
            })?;
        Ok(Err(RateRefusal {
            limit,
            retry_after: Duration::from_micros(wait),
        }))
    }

    /// How long until `draw` would admit a call (`None`: now), without drawing on it.
    #[cfg(feature = "http")]
    pub(super) async fn wait(&self, draw: &Draw) -> redis::RedisResult<Option<Duration>> {
        let mut connection = self.connection().await?;
        let interval = draw.rate.interval_us();
        let wait: u64 = self
            .wait
            .key(format!("{}{}", self.prefix, draw.key))
            .arg(interval)
            .arg(interval.saturating_mul(draw.rate.burst()))
            .invoke_async(&mut connection)
            .await?;
        Ok((wait > 0).then(|| Duration::from_micros(wait)))
    }
}
