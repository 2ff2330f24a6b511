//! Values returned by the store. All of them serialize to JSON objects and describe themselves
//! with a JSON Schema, so a tool can return them as structured output unchanged.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A complete memo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Memo {
    /// Unique id: a 26-character ULID whose leading part encodes the creation time.
    pub id: String,
    /// Title: one line, 1 to 200 characters.
    pub title: String,
    /// Body text, usually markdown.
    pub content: String,
    /// When the memo was created (UTC, millisecond precision).
    pub created_at: DateTime<Utc>,
    /// When the memo was last changed (UTC); strictly later after every update.
    pub updated_at: DateTime<Utc>,
    /// Who created the memo: the subject of the authenticated caller (a token's
    /// `subject=NAME` in the server's tokens file, or an OAuth token's `sub`); `null` for the
    /// local caller (stdio, the command line) and for callers without a subject.
    pub created_by: Option<String>,
}

/// A memo without its full content, as listed by [`MemoStore::list`](crate::MemoStore::list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemoSummary {
    /// Unique id (ULID).
    pub id: String,
    /// Title.
    pub title: String,
    /// The start of the content on one line, ending in `…` when cut.
    pub preview: String,
    /// Length of the full content in characters.
    pub content_chars: u64,
    /// When the memo was created (UTC).
    pub created_at: DateTime<Utc>,
    /// When the memo was last changed (UTC).
    pub updated_at: DateTime<Utc>,
    /// Who created the memo: the subject of the authenticated caller (a token's
    /// `subject=NAME` in the server's tokens file, or an OAuth token's `sub`); `null` for the
    /// local caller (stdio, the command line) and for callers without a subject.
    pub created_by: Option<String>,
}

/// One page of memo summaries, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemoList {
    /// The memos on this page, newest first.
    pub memos: Vec<MemoSummary>,
    /// Number of memos in the store.
    pub total: u64,
    /// Number of memos skipped before this page.
    pub offset: u32,
    /// Largest page size that was asked for.
    pub limit: u32,
    /// Whether more memos follow this page (ask again with a larger offset).
    pub has_more: bool,
}

/// One memo matching a full-text search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    /// Unique id (ULID).
    pub id: String,
    /// Title.
    pub title: String,
    /// Excerpt around the best match, matched words wrapped in `**`.
    pub snippet: String,
    /// Relevance (BM25, title matches weigh more); higher is better.
    pub score: f64,
    /// When the memo was created (UTC).
    pub created_at: DateTime<Utc>,
    /// When the memo was last changed (UTC).
    pub updated_at: DateTime<Utc>,
}

/// The answer to a full-text search, best match first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResults {
    /// The query as the caller wrote it.
    pub query: String,
    /// The FTS5 expression the query was turned into (every word quoted, so it cannot fail).
    pub interpreted_as: String,
    /// Matching memos, best first, at most `limit` of them.
    pub hits: Vec<SearchHit>,
    /// Number of memos matching in total.
    pub total_matches: u64,
    /// Largest number of hits that was asked for.
    pub limit: u32,
}

/// All memos rendered as one markdown document, for loading into a model's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemoContext {
    /// The markdown document, newest memo first; never longer than `max_bytes`.
    pub markdown: String,
    /// Number of memos (fully or partly) included.
    pub included: u64,
    /// Number of memos in the store.
    pub total: u64,
    /// Whether memos were left out or cut to respect the size bound.
    pub truncated: bool,
    /// The size bound in bytes that was applied.
    pub max_bytes: u32,
}
