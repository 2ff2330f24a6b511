//! Where the memo database lives and how long a write may wait for a lock.

use std::path::PathBuf;
use std::time::Duration;

/// Environment variable naming the database file (overrides the default path).
pub const DB_PATH_ENV: &str = "MEMO_MCP_DB";

/// File name used when no path is configured: created in the working directory.
pub const DEFAULT_DB_FILE: &str = "memos.db";

/// Default time a statement waits for another connection's lock before failing.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Settings for [`MemoStore::open`](crate::MemoStore::open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// Path of the SQLite file; created (with its schema) on first open. The special path
    /// `:memory:` gives a private in-memory database that vanishes with the store.
    pub path: PathBuf,
    /// How long a statement waits for a lock held by another connection or process.
    pub busy_timeout: Duration,
}

impl StoreConfig {
    /// A config for the database at `path` with the default busy timeout.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        StoreConfig {
            path: path.into(),
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
        }
    }

    /// The path from [`DB_PATH_ENV`] when it is set and not empty, otherwise the default.
    pub fn from_env() -> Self {
        match std::env::var_os(DB_PATH_ENV) {
            Some(path) if !path.is_empty() => StoreConfig::new(path),
            _ => StoreConfig::default(),
        }
    }

    /// Replaces the busy timeout.
    pub fn with_busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }
}

impl Default for StoreConfig {
    /// `memos.db` in the working directory, so the example runs with zero setup.
    fn default() -> Self {
        StoreConfig::new(DEFAULT_DB_FILE)
    }
}
