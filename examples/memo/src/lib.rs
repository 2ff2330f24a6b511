//! Storage and logic of the `memo-mcp` example: memos (title + markdown content) kept in an
//! embedded SQLite database with FTS5 full-text search.
//!
//! [`MemoStore`] is plain async Rust with no MCP types, so each operation maps one-to-one onto
//! a tool (`memo_create`, `memo_get`, `memo_list`, `memo_update`, `memo_delete`, `memo_search`,
//! `memo_get_all_context`), and every returned value serializes to a JSON object with a schema.
//!
//! ```no_run
//! # async fn demo() -> Result<(), memo_mcp::MemoError> {
//! use memo_mcp::{MemoStore, StoreConfig};
//! let store = MemoStore::open(StoreConfig::default()).await?; // ./memos.db
//! let memo = store.create("Groceries", "milk, eggs").await?;
//! let hits = store.search("egg*", None).await?;
//! assert_eq!(hits.hits[0].id, memo.id);
//! # Ok(()) }
//! ```
//!
//! [`tools`] wraps each operation as an `#[mcp_tool]`, and [`cli::app`] is the whole
//! command line of the `memo-mcp` binary (`serve` plus one command per tool).
//!
//! # Search syntax
//! Words must all occur (as whole words, accents ignored); `"a phrase"` must occur as written;
//! `word*` matches by prefix; upper-case `OR` and `NOT` between terms combine them. Everything
//! else is taken literally, so no query can be a syntax error.

pub mod cli;
pub mod config;
pub mod error;
pub mod model;
pub mod store;
pub mod tools;
pub mod validate;

pub use config::{DB_PATH_ENV, DEFAULT_BUSY_TIMEOUT, DEFAULT_DB_FILE, StoreConfig};
pub use error::MemoError;
pub use model::{Memo, MemoContext, MemoList, MemoSummary, SearchHit, SearchResults};
pub use store::{MemoStore, SCHEMA_VERSION};
pub use validate::{
    DEFAULT_CONTEXT_BYTES, DEFAULT_LIST_LIMIT, DEFAULT_SEARCH_LIMIT, IDEMPOTENCY_KEY_RETENTION,
    MAX_CONTENT_BYTES, MAX_CONTEXT_BYTES, MAX_IDEMPOTENCY_KEY_CHARS, MAX_LIST_LIMIT,
    MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, MAX_TITLE_CHARS, MIN_CONTEXT_BYTES, parse_id,
};
