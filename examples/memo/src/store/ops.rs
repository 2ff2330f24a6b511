//! The SQL behind each store operation. Runs on a blocking thread with the connection locked.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use ulid::Generator;

use super::context::ContextWriter;
use crate::error::MemoError;
use crate::model::{Memo, MemoContext, MemoList, MemoSummary, SearchHit};
use crate::validate::IDEMPOTENCY_KEY_RETENTION;

/// Longest preview in a [`MemoSummary`], in characters.
const PREVIEW_CHARS: usize = 160;

/// Columns read into a [`Memo`], in the order [`memo_from_row`] expects.
const MEMO_COLUMNS: &str = "id, title, content, created_at, updated_at, created_by";

/// One open database plus the id generator; lives behind the store's mutex.
pub(crate) struct Db {
    conn: Connection,
    ids: Generator,
    path: PathBuf,
}

impl Db {
    /// Wraps an open, migrated connection.
    pub(crate) fn new(conn: Connection, path: PathBuf) -> Self {
        Db {
            conn,
            ids: Generator::new(),
            path,
        }
    }

    /// Maps a SQLite error raised while doing `what` to a [`MemoError::Storage`].
    fn err(&self, what: &'static str) -> impl Fn(rusqlite::Error) -> MemoError + '_ {
        storage_err(&self.path, what)
    }

    /// Inserts a new memo (title and content already validated) in its own transaction.
    /// Inserts a memo, or with `key` returns the memo an earlier creation with that key
    /// made (see [`MemoStore::create_once`](super::MemoStore::create_once)).
    pub(crate) fn create(
        &mut self,
        title: String,
        content: String,
        created_by: Option<String>,
        key: Option<String>,
    ) -> Result<Memo, MemoError> {
        // Ids are monotonic within this process, so id order is creation order.
        let id = self
            .ids
            .generate()
            .unwrap_or_else(|overflow| overflow.commit_overflow_increment());
        let at = millis_to_time(id.timestamp_ms() as i64)?;
        let memo = Memo {
            id: id.to_string(),
            title,
            content,
            created_at: at,
            updated_at: at,
            created_by,
        };
        let err = |what| storage_err(&self.path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("starting a write"))?;
        let request = key.as_ref().map(|key| Creation {
            creator: memo.created_by.clone().unwrap_or_default(),
            key: key.clone(),
            digest: creation_digest(&memo.title, &memo.content),
        });
        if let Some(creation) = &request
            && let Some(earlier) = creation.earlier(&tx, at.timestamp_millis(), &self.path)?
        {
            tx.commit().map_err(err("committing"))?;
            return Ok(earlier);
        }
        tx.prepare_cached(
            "INSERT INTO memos (id, title, content, created_at, updated_at, created_by)
             VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                memo.id,
                memo.title,
                memo.content,
                memo.created_at.timestamp_millis(),
                memo.created_by
            ])
        })
        .map_err(err("inserting a memo"))?;
        if let Some(creation) = &request {
            tx.prepare_cached(
                "INSERT INTO creations (creator, key, digest, memo_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    creation.creator,
                    creation.key,
                    creation.digest,
                    memo.id,
                    at.timestamp_millis()
                ])
            })
            .map_err(err("recording an idempotency key"))?;
        }
        tx.commit().map_err(err("committing a new memo"))?;
        Ok(memo)
    }

    /// Reads one memo by canonical id.
    pub(crate) fn get(&mut self, id: &str) -> Result<Memo, MemoError> {
        let sql = format!("SELECT {MEMO_COLUMNS} FROM memos WHERE id = ?1");
        self.conn
            .prepare_cached(&sql)
            .and_then(|mut stmt| stmt.query_row([id], memo_from_row).optional())
            .map_err(self.err("reading a memo"))?
            .ok_or_else(|| not_found(id))
    }

    /// Number of memos stored.
    pub(crate) fn count(&mut self) -> Result<u64, MemoError> {
        count(&self.conn).map_err(self.err("counting memos"))
    }

    /// One page of summaries, newest first, with the total, read in one snapshot.
    pub(crate) fn list(&mut self, limit: u32, offset: u32) -> Result<MemoList, MemoError> {
        let err = |what| storage_err(&self.path, what);
        let tx = self.conn.transaction().map_err(err("starting a read"))?;
        let total = count(&tx).map_err(err("counting memos"))?;
        let memos = tx
            .prepare_cached(
                "SELECT id, title, substr(content, 1, ?3), length(content), created_at, updated_at,
                        created_by
                 FROM memos ORDER BY id DESC LIMIT ?1 OFFSET ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![limit, offset, (PREVIEW_CHARS * 2) as i64],
                    summary_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(err("listing memos"))?;
        tx.finish().map_err(err("ending a read"))?;
        let has_more = u64::from(offset) + (memos.len() as u64) < total;
        Ok(MemoList {
            memos,
            total,
            offset,
            limit,
            has_more,
        })
    }

    /// Changes title and/or content (already validated) and bumps `updated_at`.
    pub(crate) fn update(
        &mut self,
        id: &str,
        title: Option<String>,
        content: Option<String>,
    ) -> Result<Memo, MemoError> {
        let err = |what| storage_err(&self.path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("starting a write"))?;
        let previous: i64 = tx
            .query_row("SELECT updated_at FROM memos WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
            .map_err(err("reading a memo"))?
            .ok_or_else(|| not_found(id))?;
        // Strictly later than before even when the clock has not moved (or went back).
        let updated_at = now_millis().max(previous.saturating_add(1));
        let sql = format!(
            "UPDATE memos SET title = coalesce(?2, title), content = coalesce(?3, content),
                 updated_at = ?4
             WHERE id = ?1 RETURNING {MEMO_COLUMNS}"
        );
        let memo = tx
            .query_row(&sql, params![id, title, content, updated_at], memo_from_row)
            .map_err(err("updating a memo"))?;
        tx.commit().map_err(err("committing an update"))?;
        Ok(memo)
    }

    /// Deletes a memo and returns what it held.
    pub(crate) fn delete(&mut self, id: &str) -> Result<Memo, MemoError> {
        let err = |what| storage_err(&self.path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("starting a write"))?;
        let sql = format!("DELETE FROM memos WHERE id = ?1 RETURNING {MEMO_COLUMNS}");
        let memo = tx
            .query_row(&sql, [id], memo_from_row)
            .optional()
            .map_err(err("deleting a memo"))?
            .ok_or_else(|| not_found(id))?;
        tx.commit().map_err(err("committing a delete"))?;
        Ok(memo)
    }

    /// Runs an FTS5 expression (built by `fts_query`); returns the best hits and the match count.
    pub(crate) fn search(
        &mut self,
        fts: &str,
        limit: u32,
    ) -> Result<(Vec<SearchHit>, u64), MemoError> {
        let path = &self.path;
        let err = |what| move |e| fts_error(what, path, e);
        let tx = self.conn.transaction().map_err(err("starting a read"))?;
        let total: i64 = tx
            .prepare_cached("SELECT count(*) FROM memos_fts WHERE memos_fts MATCH ?1")
            .and_then(|mut stmt| stmt.query_row([fts], |row| row.get(0)))
            .map_err(err("counting search matches"))?;
        // Title matches weigh ten times content matches; bm25() is lower for better matches.
        let hits = tx
            .prepare_cached(
                "SELECT m.id, m.title, m.created_at, m.updated_at,
                        snippet(memos_fts, -1, '**', '**', '…', 16),
                        bm25(memos_fts, 10.0, 1.0) AS rank
                 FROM memos_fts JOIN memos AS m ON m.pk = memos_fts.rowid
                 WHERE memos_fts MATCH ?1
                 ORDER BY rank, m.id DESC LIMIT ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![fts, limit], |row| {
                    Ok(SearchHit {
                        id: row.get(0)?,
                        title: row.get(1)?,
                        created_at: time_column(row, 2)?,
                        updated_at: time_column(row, 3)?,
                        snippet: row.get(4)?,
                        score: -row.get::<_, f64>(5)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(err("searching memos"))?;
        tx.finish().map_err(err("ending a read"))?;
        Ok((hits, total.max(0) as u64))
    }

    /// Renders every memo, newest first, into a markdown document of at most `max_bytes`.
    pub(crate) fn context(&mut self, max_bytes: u32) -> Result<MemoContext, MemoError> {
        let err = |what| storage_err(&self.path, what);
        let tx = self.conn.transaction().map_err(err("starting a read"))?;
        let total = count(&tx).map_err(err("counting memos"))?;
        let mut writer = ContextWriter::new(total, max_bytes);
        {
            let sql = format!("SELECT {MEMO_COLUMNS} FROM memos ORDER BY id DESC");
            let mut stmt = tx.prepare(&sql).map_err(err("reading memos"))?;
            let mut rows = stmt.query([]).map_err(err("reading memos"))?;
            // Rows are streamed, so a large store is never loaded whole.
            while let Some(row) = rows.next().map_err(err("reading memos"))? {
                let memo = memo_from_row(row).map_err(err("reading memos"))?;
                if !writer.push(&memo) {
                    break;
                }
            }
        }
        tx.finish().map_err(err("ending a read"))?;
        Ok(writer.finish())
    }
}

/// Maps a SQLite error raised while doing `what` on the database at `path`.
fn storage_err<'a>(
    path: &'a Path,
    what: &'static str,
) -> impl Fn(rusqlite::Error) -> MemoError + 'a {
    move |e| MemoError::storage(what, path, e)
}

/// `count(*)` of the memos table on any connection or transaction.
fn count(conn: &Connection) -> rusqlite::Result<u64> {
    conn.prepare_cached("SELECT count(*) FROM memos")?
        .query_row([], |row| row.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// The error for a missing memo.
fn not_found(id: &str) -> MemoError {
    MemoError::NotFound { id: id.to_string() }
}

/// Maps errors of a MATCH query; an FTS5 syntax error (which the query builder should make
/// impossible) becomes a validation error rather than a storage failure.
fn fts_error(what: &str, path: &Path, e: rusqlite::Error) -> MemoError {
    let text = e.to_string();
    if text.contains("fts5") || text.contains("syntax error") {
        return MemoError::validation(
            "query",
            format!("the search query could not be parsed: {text}"),
            "Search with plain words; use \"quotes\" for phrases and a trailing * for prefixes.",
        );
    }
    MemoError::storage(what, path, e)
}

/// One keyed `memo_create`: who asked (`""` for the local caller), the key, and a digest
/// of what was asked for.
struct Creation {
    creator: String,
    key: String,
    digest: String,
}

impl Creation {
    /// Within `tx`: forget keys older than the retention, then the memo an earlier creation
    /// with this key made, if there was one with the same request.
    fn earlier(
        &self,
        tx: &rusqlite::Transaction<'_>,
        now_ms: i64,
        path: &Path,
    ) -> Result<Option<Memo>, MemoError> {
        let err = |what| storage_err(path, what);
        let retention = i64::try_from(IDEMPOTENCY_KEY_RETENTION.as_millis()).unwrap_or(i64::MAX);
        tx.prepare_cached("DELETE FROM creations WHERE created_at < ?1")
            .and_then(|mut stmt| stmt.execute([now_ms.saturating_sub(retention)]))
            .map_err(err("forgetting old idempotency keys"))?;
        let earlier: Option<(String, String)> = tx
            .prepare_cached("SELECT digest, memo_id FROM creations WHERE creator = ?1 AND key = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![self.creator, self.key], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()
            })
            .map_err(err("reading an idempotency key"))?;
        let Some((digest, memo_id)) = earlier else {
            return Ok(None);
        };
        if digest != self.digest {
            return Err(MemoError::validation(
                "idempotency_key",
                "this idempotency key was already used to create a memo with another title or content",
                "Send a new key for a new memo; resend the same title and content with this \
                 key to get the memo it created.",
            ));
        }
        let sql = format!("SELECT {MEMO_COLUMNS} FROM memos WHERE id = ?1");
        tx.prepare_cached(&sql)
            .and_then(|mut stmt| stmt.query_row([&memo_id], memo_from_row).optional())
            .map_err(err("reading a memo"))?
            .map(Some)
            .ok_or_else(|| not_found(&memo_id))
    }
}

/// A digest of a creation's title and content (SHA-256, hex), so a reused key with another
/// memo is told apart without keeping the content twice.
fn creation_digest(title: &str, content: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update((title.len() as u64).to_be_bytes());
    hasher.update(title.as_bytes());
    hasher.update(content.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Reads a [`Memo`] from a row of [`MEMO_COLUMNS`].
fn memo_from_row(row: &Row<'_>) -> rusqlite::Result<Memo> {
    Ok(Memo {
        id: row.get(0)?,
        title: row.get(1)?,
        content: row.get(2)?,
        created_at: time_column(row, 3)?,
        updated_at: time_column(row, 4)?,
        created_by: row.get(5)?,
    })
}

/// Reads a [`MemoSummary`] from the `list` query's row.
fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<MemoSummary> {
    let head: String = row.get(2)?;
    let content_chars: i64 = row.get(3)?;
    Ok(MemoSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        preview: preview(&head, content_chars.max(0) as u64),
        content_chars: content_chars.max(0) as u64,
        created_at: time_column(row, 4)?,
        updated_at: time_column(row, 5)?,
        created_by: row.get(6)?,
    })
}

/// One-line preview of the start of a memo: whitespace collapsed, cut with `…`.
fn preview(head: &str, content_chars: u64) -> String {
    let words: Vec<&str> = head.split_whitespace().collect();
    let line = words.join(" ");
    let cut = line.chars().count() > PREVIEW_CHARS || (head.chars().count() as u64) < content_chars;
    let mut out: String = line.chars().take(PREVIEW_CHARS).collect();
    if cut {
        out.push('…');
    }
    out
}

/// Reads a millisecond timestamp column as a UTC time.
fn time_column(row: &Row<'_>, index: usize) -> rusqlite::Result<DateTime<Utc>> {
    let ms: i64 = row.get(index)?;
    DateTime::from_timestamp_millis(ms).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            Type::Integer,
            format!("timestamp {ms} out of range").into(),
        )
    })
}

/// Converts milliseconds since the epoch to a UTC time.
fn millis_to_time(ms: i64) -> Result<DateTime<Utc>, MemoError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| MemoError::Storage {
        message: format!("timestamp {ms} is out of range"),
        action: "Check the system clock.".to_string(),
    })
}

/// Milliseconds since the Unix epoch by the system clock (0 if the clock is before 1970).
fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::preview;

    #[test]
    fn previews_are_one_line_and_marked_when_cut() {
        assert_eq!(preview("a\n\n  b\tc", 8), "a b c");
        assert_eq!(preview("short", 50), "short…");
        let long = "x".repeat(300);
        let p = preview(&long, 300);
        assert_eq!(p.chars().count(), 161);
        assert!(p.ends_with('…'));
    }
}
