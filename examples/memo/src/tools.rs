//! The seven memo tools of seed 003 as `#[mcp_tool]` functions over [`MemoStore`].
//!
//! Each tool is one store call: arguments arrive validated against the schema, the store
//! applies its own rules, and a [`MemoError`](crate::MemoError) becomes a tool error with its
//! kind and action line (see the `From` impl in [`error`](crate::error)). The store is shared
//! state: register it with `ToolRegistryBuilder::state(store)`.
//!
//! All tools are in the `memo` category (so the command line offers `memo create`,
//! `memo list`, ...) and need no permission, as in the seed. `memo_create` takes the
//! [`Caller`] and records its subject as the memo's `created_by` (served over HTTP or TCP
//! with a tokens file whose lines name `subject=…`, or with OAuth); over stdio and on the
//! command line the caller is local and `created_by` is `null`.

use mcp_toolbelt::{Caller, Json, State, ToolError, ToolResult, mcp_tool};

use crate::model::{Memo, MemoList, SearchResults};
use crate::store::MemoStore;
use crate::validate::{
    MAX_CONTEXT_BYTES, MAX_LIST_LIMIT, MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, MIN_CONTEXT_BYTES,
};

/// Create a memo: a one-line title plus markdown content.
///
/// Returns the new memo with its id (a 26-character ULID); keep the id to read, update or
/// delete the memo later. `created_by` records who created it when the server knows.
/// With an `idempotency_key`, sending the same call again (a retry) creates nothing and
/// returns the memo the first one created.
#[mcp_tool(name = "memo_create", tags = ["memo", "write"])]
pub async fn memo_create(
    store: State<MemoStore>,
    caller: Caller,
    /// One-line title, 1 to 200 characters (leading and trailing spaces are trimmed)
    title: String,
    /// Body of the memo, usually markdown; may be empty (at most 1 MiB)
    content: String,
    /// A fresh random key (e.g. a UUID) for this memo, sent again only when retrying this
    /// same creation: a call repeating a key of the last 24 hours returns the memo that key created instead of making another
    idempotency_key: Option<String>,
) -> Result<Json<Memo>, ToolError> {
    Ok(Json(
        store
            .create_once(
                &title,
                &content,
                caller.subject(),
                idempotency_key.as_deref(),
            )
            .await?,
    ))
}

/// Read one memo in full (title, content, timestamps) by its id.
#[mcp_tool(
    name = "memo_get",
    tags = ["memo", "read"],
    read_only,
    idempotent
)]
pub async fn memo_get(
    store: State<MemoStore>,
    /// Memo id as returned by memo_create or memo_list: a 26-character ULID such as 01ARZ3NDEKTSV4RRFFQ69G5FAV
    id: String,
) -> Result<Json<Memo>, ToolError> {
    Ok(Json(store.get(&id).await?))
}

/// List memos, newest first, one page at a time.
///
/// Each memo comes with its id, title, a one-line preview of the content and timestamps.
/// `has_more` says whether to ask again with a larger offset.
#[mcp_tool(
    name = "memo_list",
    tags = ["memo", "read"],
    read_only,
    idempotent
)]
pub async fn memo_list(
    store: State<MemoStore>,
    #[arg(
        desc = "Most memos to return (default 50)",
        minimum = 1,
        maximum = MAX_LIST_LIMIT
    )]
    limit: Option<u32>,
    /// Number of newest memos to skip before this page (default 0)
    offset: Option<u32>,
) -> Result<Json<MemoList>, ToolError> {
    Ok(Json(store.list(limit, offset).await?))
}

/// Change a memo's title, content or both.
///
/// Returns the memo as it is now. Content is replaced as a whole, not appended to.
#[mcp_tool(
    name = "memo_update",
    tags = ["memo", "write"],
    destructive,
    idempotent
)]
pub async fn memo_update(
    store: State<MemoStore>,
    /// Id of the memo to change (a 26-character ULID)
    id: String,
    /// New one-line title (omit to keep the current one)
    title: Option<String>,
    /// New content replacing the old one entirely (omit to keep the current one)
    content: Option<String>,
) -> Result<Json<Memo>, ToolError> {
    Ok(Json(
        store
            .update(&id, title.as_deref(), content.as_deref())
            .await?,
    ))
}

/// Delete a memo permanently.
///
/// Returns what it held, so the caller can show or restore it.
#[mcp_tool(
    name = "memo_delete",
    tags = ["memo", "write"],
    destructive,
    idempotent
)]
pub async fn memo_delete(
    store: State<MemoStore>,
    /// Id of the memo to delete (a 26-character ULID)
    id: String,
) -> Result<Json<Memo>, ToolError> {
    Ok(Json(store.delete(&id).await?))
}

/// Full-text search over memo titles and contents, best match first.
///
/// Each hit comes with a snippet (matched words in **bold**). Every word must occur (accents
/// and case ignored);
/// "quoted phrases" must occur as written; word* matches by prefix; upper-case OR and NOT
/// combine terms. Any text is accepted as a query.
#[mcp_tool(
    name = "memo_search",
    tags = ["memo", "read", "search"],
    read_only,
    idempotent
)]
pub async fn memo_search(
    store: State<MemoStore>,
    #[arg(
        desc = "What to look for: words, \"a phrase\", prefix*, a OR b, a NOT b",
        min_length = 1,
        max_length = MAX_QUERY_CHARS
    )]
    query: String,
    #[arg(
        desc = "Most hits to return (default 20)",
        minimum = 1,
        maximum = MAX_SEARCH_LIMIT
    )]
    limit: Option<u32>,
) -> Result<Json<SearchResults>, ToolError> {
    Ok(Json(store.search(&query, limit).await?))
}

/// All memos as one markdown document, newest first, to load as context.
///
/// The document never exceeds `max_bytes`; when memos do not fit, it ends with a note saying
/// how many were left out (read those with memo_search or memo_get).
#[mcp_tool(
    name = "memo_get_all_context",
    tags = ["memo", "read", "context"],
    read_only,
    idempotent,
    cli_name = "context"
)]
pub async fn memo_get_all_context(
    store: State<MemoStore>,
    #[arg(
        desc = "Size bound of the document in bytes (default 65536)",
        minimum = MIN_CONTEXT_BYTES,
        maximum = MAX_CONTEXT_BYTES
    )]
    max_bytes: Option<u32>,
) -> Result<ToolResult, ToolError> {
    let context = store.get_all_context(max_bytes).await?;
    // The markdown is the text a model reads; the counts ride along as structured content
    // (without a second copy of the document).
    let counts = serde_json::json!({
        "included": context.included,
        "total": context.total,
        "truncated": context.truncated,
        "max_bytes": context.max_bytes,
    });
    Ok(ToolResult::text(context.markdown).with_structured(counts))
}
