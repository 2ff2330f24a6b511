//! [`MemoStore`]: the async face of the memo database.
//!
//! One SQLite connection per store, behind a mutex, used only from tokio's blocking thread
//! pool (`spawn_blocking`), so no async worker thread ever waits on SQLite. Within a process
//! every operation is serialized by the mutex; across processes WAL mode lets readers run
//! alongside one writer, and the busy timeout makes a second writer wait instead of failing.
//! Every write is one `BEGIN IMMEDIATE` transaction.

mod context;
mod fts_query;
mod ops;
mod schema;

use std::sync::{Arc, Mutex};

use crate::config::StoreConfig;
use crate::error::MemoError;
use crate::model::{Memo, MemoContext, MemoList, SearchResults};
use crate::validate::{
    DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT, MAX_LIST_LIMIT, MAX_SEARCH_LIMIT, check_content,
    check_context_bytes, check_idempotency_key, check_limit, check_title, parse_id,
};
use ops::Db;

pub use schema::SCHEMA_VERSION;

/// A handle on one memo database. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct MemoStore {
    db: Arc<Mutex<Db>>,
    config: Arc<StoreConfig>,
}

impl std::fmt::Debug for MemoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoStore")
            .field("path", &self.config.path)
            .finish_non_exhaustive()
    }
}

impl MemoStore {
    /// Opens the database named by `config`, creating the file and schema when missing and
    /// migrating an older schema. Fails on files that are not memo databases.
    pub async fn open(config: StoreConfig) -> Result<Self, MemoError> {
        let config = Arc::new(config);
        let opened = Arc::clone(&config);
        let conn = blocking(move || schema::open(&opened)).await?;
        Ok(MemoStore {
            db: Arc::new(Mutex::new(Db::new(conn, config.path.clone()))),
            config,
        })
    }

    /// [`open`](Self::open) without an async runtime: opens (and creates or migrates) the
    /// database on the calling thread. For start-up code that runs before or outside async
    /// tasks, such as the command line's setup hook; async code should use `open`.
    pub fn open_blocking(config: StoreConfig) -> Result<Self, MemoError> {
        let conn = schema::open(&config)?;
        Ok(MemoStore {
            db: Arc::new(Mutex::new(Db::new(conn, config.path.clone()))),
            config: Arc::new(config),
        })
    }

    /// The configuration this store was opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Creates a memo with no author ([`created_by`](Memo::created_by) `null`), as the
    /// local user does; see [`create_by`](Self::create_by).
    pub async fn create(&self, title: &str, content: &str) -> Result<Memo, MemoError> {
        self.create_by(title, content, None).await
    }

    /// Creates a memo recording who created it (`created_by`, e.g. the subject of the MCP
    /// caller). The title is trimmed; it must be one non-empty line of at most
    /// [`MAX_TITLE_CHARS`](crate::MAX_TITLE_CHARS) characters. Content may be empty.
    pub async fn create_by(
        &self,
        title: &str,
        content: &str,
        created_by: Option<&str>,
    ) -> Result<Memo, MemoError> {
        self.create_once(title, content, created_by, None).await
    }

    /// [`create_by`](Self::create_by), at most once per idempotency key: a creation that
    /// repeats a key `created_by` used with the same title and content in the last
    /// [`IDEMPOTENCY_KEY_RETENTION`](crate::IDEMPOTENCY_KEY_RETENTION) creates nothing and
    /// returns the memo that key created (as it is now), so a retried call (a client's, or a
    /// balancer's after a replica crashed) never makes a second memo. Holds across
    /// processes sharing the database: the check and the insert are one write transaction.
    ///
    /// # Errors
    ///
    /// [`MemoError::Validation`] for a key that is empty, too long or has control
    /// characters, and for a key already used for another title or content;
    /// [`MemoError::NotFound`] when the memo the key created was deleted since.
    pub async fn create_once(
        &self,
        title: &str,
        content: &str,
        created_by: Option<&str>,
        idempotency_key: Option<&str>,
    ) -> Result<Memo, MemoError> {
        let title = check_title(title)?;
        check_content(content)?;
        if let Some(key) = idempotency_key {
            check_idempotency_key(key)?;
        }
        let content = content.to_string();
        let created_by = created_by.map(str::to_string);
        let key = idempotency_key.map(str::to_string);
        tracing::debug!(%title, bytes = content.len(), created_by, keyed = key.is_some(), "memo create");
        self.with_db(move |db| db.create(title, content, created_by, key))
            .await
    }

    /// Reads one memo by id (a ULID, any letter case).
    pub async fn get(&self, id: &str) -> Result<Memo, MemoError> {
        let id = parse_id(id)?;
        self.with_db(move |db| db.get(&id)).await
    }

    /// Lists memo summaries, newest first. `limit` defaults to
    /// [`DEFAULT_LIST_LIMIT`](crate::DEFAULT_LIST_LIMIT) and may be at most
    /// [`MAX_LIST_LIMIT`](crate::MAX_LIST_LIMIT); `offset` (default 0) skips that many memos.
    pub async fn list(
        &self,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<MemoList, MemoError> {
        let limit = check_limit("limit", limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT)?;
        let offset = offset.unwrap_or(0);
        self.with_db(move |db| db.list(limit, offset)).await
    }

    /// Changes the title and/or the content of a memo (same rules as [`create`](Self::create))
    /// and sets `updated_at` to now, always strictly later than its previous value.
    /// At least one of `title` and `content` must be given.
    pub async fn update(
        &self,
        id: &str,
        title: Option<&str>,
        content: Option<&str>,
    ) -> Result<Memo, MemoError> {
        let id = parse_id(id)?;
        if title.is_none() && content.is_none() {
            return Err(MemoError::validation(
                "title",
                "neither a new title nor new content was given",
                "Pass a title, a content, or both.",
            ));
        }
        let title = title.map(check_title).transpose()?;
        if let Some(content) = content {
            check_content(content)?;
        }
        let content = content.map(str::to_string);
        self.with_db(move |db| db.update(&id, title, content)).await
    }

    /// Deletes a memo and returns its last state.
    pub async fn delete(&self, id: &str) -> Result<Memo, MemoError> {
        let id = parse_id(id)?;
        self.with_db(move |db| db.delete(&id)).await
    }

    /// Full-text search over titles and contents, best match first (BM25, title matches count
    /// ten times), each hit with a snippet. See the crate docs for the query syntax; any text is
    /// accepted, and a query without a single word is a validation error. `limit` defaults to
    /// [`DEFAULT_SEARCH_LIMIT`](crate::DEFAULT_SEARCH_LIMIT), at most
    /// [`MAX_SEARCH_LIMIT`](crate::MAX_SEARCH_LIMIT).
    pub async fn search(
        &self,
        query: &str,
        limit: Option<u32>,
    ) -> Result<SearchResults, MemoError> {
        let limit = check_limit("limit", limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT)?;
        let fts = fts_query::to_fts5(query)?;
        tracing::debug!(query, %fts, "memo search");
        let expr = fts.clone();
        let (hits, total_matches) = self.with_db(move |db| db.search(&expr, limit)).await?;
        Ok(SearchResults {
            query: query.to_string(),
            interpreted_as: fts,
            hits,
            total_matches,
            limit,
        })
    }

    /// All memos as one markdown document, newest first, at most `max_bytes` long (default
    /// [`DEFAULT_CONTEXT_BYTES`](crate::DEFAULT_CONTEXT_BYTES), allowed range
    /// [`MIN_CONTEXT_BYTES`](crate::MIN_CONTEXT_BYTES)..=[`MAX_CONTEXT_BYTES`](crate::MAX_CONTEXT_BYTES)).
    /// When memos do not fit, the document says how many were left out.
    pub async fn get_all_context(&self, max_bytes: Option<u32>) -> Result<MemoContext, MemoError> {
        let max_bytes = check_context_bytes(max_bytes)?;
        self.with_db(move |db| db.context(max_bytes)).await
    }

    /// Number of memos stored.
    pub async fn count(&self) -> Result<u64, MemoError> {
        self.with_db(|db| db.count()).await
    }

    /// Runs `op` on a blocking thread with the connection locked.
    async fn with_db<T, F>(&self, op: F) -> Result<T, MemoError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T, MemoError> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        blocking(move || {
            // A panic while locked cannot leave a half-done write: the open transaction is
            // rolled back when it is dropped during unwinding. So a poisoned lock is safe to use.
            let mut guard = db.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            op(&mut guard)
        })
        .await
    }
}

/// Runs `f` on tokio's blocking pool, turning a panic into a storage error.
async fn blocking<T, F>(f: F) -> Result<T, MemoError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, MemoError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(join) => {
            tracing::error!(error = %join, "memo store operation panicked or was cancelled");
            Err(MemoError::Storage {
                message: format!("the database operation did not complete: {join}"),
                action: "Retry; if it keeps failing, check the server log on stderr.".to_string(),
            })
        }
    }
}
