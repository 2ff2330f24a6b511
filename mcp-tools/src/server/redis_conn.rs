//! How the Redis stores (`tasks/redis.rs`, `rate_limit/redis.rs`) reach their server
//! (feature `redis`): one client per store, one multiplexed connection made on first use
//! and remade after Redis restarts, every command bounded by the store's timeout.

use std::time::Duration;

use redis::Client;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

/// Why a Redis store could not be made: its URL is not a Redis URL.
///
/// ```
/// use mcp_toolbelt::server::tasks::RedisTaskStore;
/// let error = RedisTaskStore::open("http://example.com/").unwrap_err();
/// assert!(error.to_string().starts_with("invalid Redis URL"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("invalid Redis URL: {0}")]
pub struct RedisUrlError(#[source] pub(crate) redis::RedisError);

/// A store's way to its Redis server.
pub(crate) struct RedisConnection {
    client: Client,
    timeout: Duration,
    manager: OnceCell<ConnectionManager>,
}

impl RedisConnection {
    /// The Redis server at `url`; nothing is connected yet. Connecting and each command's
    /// answer are bounded by `timeout`.
    pub(crate) fn open(url: &str, timeout: Duration) -> Result<RedisConnection, RedisUrlError> {
        Ok(RedisConnection {
            client: Client::open(url).map_err(RedisUrlError)?,
            timeout,
            manager: OnceCell::new(),
        })
    }

    /// The client, for what needs a connection of its own (pub/sub).
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The shared connection, made on first use (one retry per command).
    pub(crate) async fn manager(&self) -> redis::RedisResult<ConnectionManager> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1);
        let manager = self
            .manager
            .get_or_try_init(|| ConnectionManager::new_with_config(self.client.clone(), config))
            .await?;
        Ok(manager.clone())
    }
}
