//! Opening a connection: pragmas, feature checks and schema migrations.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::config::StoreConfig;
use crate::error::MemoError;

/// `PRAGMA application_id` of a memo database (ASCII "MEMO"), so other SQLite files are refused.
pub(crate) const APPLICATION_ID: i32 = 0x4D45_4D4F;

/// Schema migrations; entry `i` moves the schema from version `i` to `i + 1`.
///
/// 1. `pk` is an explicit INTEGER PRIMARY KEY so rowids stay stable across VACUUM, which the
///    external-content FTS5 index relies on; `id` is the public ULID.
/// 2. `created_by`: the subject of the caller that created the memo (NULL for the local
///    caller, and for every memo created before this version).
/// 3. `creations`: the idempotency keys of `memo_create` (per creator, `''` for the local
///    caller), each with a digest of the title and content it created and that memo's id;
///    kept for `IDEMPOTENCY_KEY_RETENTION`.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE memos (
    pk         INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    title      TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE VIRTUAL TABLE memos_fts USING fts5(
    title, content,
    content = 'memos', content_rowid = 'pk',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER memos_after_insert AFTER INSERT ON memos BEGIN
    INSERT INTO memos_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
CREATE TRIGGER memos_after_delete AFTER DELETE ON memos BEGIN
    INSERT INTO memos_fts(memos_fts, rowid, title, content)
        VALUES ('delete', old.pk, old.title, old.content);
END;
CREATE TRIGGER memos_after_update AFTER UPDATE OF title, content ON memos BEGIN
    INSERT INTO memos_fts(memos_fts, rowid, title, content)
        VALUES ('delete', old.pk, old.title, old.content);
    INSERT INTO memos_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
"#,
    "ALTER TABLE memos ADD COLUMN created_by TEXT;",
    r#"
CREATE TABLE creations (
    creator    TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    digest     TEXT    NOT NULL,
    memo_id    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (creator, key)
);
CREATE INDEX creations_by_age ON creations (created_at);
"#,
];

/// The schema version this build writes (kept in `PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Opens (creating if needed) the database, sets pragmas and brings the schema up to date.
pub(crate) fn open(config: &StoreConfig) -> Result<Connection, MemoError> {
    let path = config.path.as_path();
    let err = |what: &str| {
        let what = what.to_string();
        move |e: rusqlite::Error| MemoError::storage(&what, path, e)
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags).map_err(err("opening the database"))?;
    conn.busy_timeout(config.busy_timeout)
        .map_err(err("setting the busy timeout"))?;
    check_fts5(&conn, path)?;

    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
        .map_err(err("switching to WAL mode"))?;
    if mode != "wal" && mode != "memory" {
        tracing::warn!(path = %path.display(), mode, "database is not in WAL mode");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(err("setting synchronous mode"))?;
    migrate(&mut conn, path)?;
    tracing::info!(path = %path.display(), schema = SCHEMA_VERSION, journal = %mode, "memo store open");
    Ok(conn)
}

/// Fails clearly when the linked SQLite lacks FTS5 (the bundled build always has it).
fn check_fts5(conn: &Connection, path: &Path) -> Result<(), MemoError> {
    let has: bool = conn
        .query_row(
            "SELECT sqlite_compileoption_used('ENABLE_FTS5')",
            [],
            |row| row.get(0),
        )
        .map_err(|e| MemoError::storage("checking for FTS5", path, e))?;
    if has {
        Ok(())
    } else {
        Err(MemoError::Storage {
            message: "the linked SQLite library was built without FTS5".to_string(),
            action: "Build memo-mcp with rusqlite's `bundled` feature.".to_string(),
        })
    }
}

/// Applies missing migrations in one write transaction, refusing foreign or newer databases.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), MemoError> {
    let err = |what: &'static str| move |e: rusqlite::Error| MemoError::storage(what, path, e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(err("starting the schema migration"))?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(err("reading the schema version"))?;
    let app_id: i32 = tx
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .map_err(err("reading the application id"))?;
    let foreign = || MemoError::Storage {
        message: format!(
            "{} is a SQLite database of another application",
            path.display()
        ),
        action: "Point MEMO_MCP_DB at a new file or an existing memo database.".to_string(),
    };
    if (app_id != 0 && app_id != APPLICATION_ID) || version < 0 {
        return Err(foreign());
    }
    if version == 0 {
        let tables: i64 = tx
            .query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
            .map_err(err("inspecting the database"))?;
        if tables > 0 {
            return Err(foreign());
        }
    }
    if version > SCHEMA_VERSION {
        return Err(MemoError::Storage {
            message: format!(
                "{} has schema version {version}, newer than this build's {SCHEMA_VERSION}",
                path.display()
            ),
            action: "Upgrade memo-mcp, or use another database file.".to_string(),
        });
    }
    if version < SCHEMA_VERSION {
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            tracing::info!(to = index + 1, "migrating memo schema");
            tx.execute_batch(sql).map_err(err("migrating the schema"))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(err("setting the application id"))?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(err("setting the schema version"))?;
    }
    tx.commit().map_err(err("committing the schema migration"))
}
