//! Concurrency, restarts, on-disk format and files that are not memo databases.

mod common;

use std::collections::HashSet;

use common::fixture;
use memo_mcp::{MemoError, MemoStore, SCHEMA_VERSION, StoreConfig};

/// Spawns `tasks` tasks on `stores` (round robin), each creating `per_task` memos; returns all ids.
async fn create_concurrently(
    stores: &[MemoStore],
    tasks: usize,
    per_task: usize,
) -> Vec<(String, String)> {
    let mut handles = Vec::new();
    for t in 0..tasks {
        let store = stores[t % stores.len()].clone();
        handles.push(tokio::spawn(async move {
            let mut made = Vec::with_capacity(per_task);
            for i in 0..per_task {
                let title = format!("task {t} memo {i}");
                let memo = store
                    .create(&title, "concurrent body")
                    .await
                    .expect("create");
                made.push((memo.id, title));
            }
            made
        }));
    }
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.await.expect("task"));
    }
    all
}

/// Checks that every id is unique and readable with its own title, and the count matches.
async fn assert_all_present(store: &MemoStore, made: &[(String, String)]) {
    let ids: HashSet<&String> = made.iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), made.len(), "ids are unique");
    assert_eq!(store.count().await.unwrap(), made.len() as u64);
    for (id, title) in made {
        assert_eq!(&store.get(id).await.unwrap().title, title);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_tasks_creating_500_memos_each_lose_nothing() {
    let fx = fixture().await;
    let made = create_concurrently(std::slice::from_ref(&fx.store), 8, 500).await;
    assert_eq!(made.len(), 4000);
    assert_all_present(&fx.store, &made).await;
    let list = fx
        .store
        .list(Some(memo_mcp::MAX_LIST_LIMIT), None)
        .await
        .unwrap();
    assert_eq!(list.total, 4000);
    assert!(
        list.memos.windows(2).all(|w| w[0].id > w[1].id),
        "newest first"
    );
    let hits = fx.store.search("concurrent", Some(1)).await.unwrap();
    assert_eq!(hits.total_matches, 4000, "the index saw every insert");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn separate_connections_on_one_file_lose_nothing() {
    let fx = fixture().await;
    let stores = [fx.store.clone(), fx.reopen().await, fx.reopen().await];
    let made = create_concurrently(&stores, 6, 200).await;
    assert_eq!(made.len(), 1200);
    assert_all_present(&fx.reopen().await, &made).await;
}

#[tokio::test]
async fn data_survives_reopening() {
    let fx = fixture().await;
    let kept = fx
        .store
        .create("Keep me", "persistent words")
        .await
        .unwrap();
    let changed = fx.store.create("Change me", "old").await.unwrap();
    let gone = fx.store.create("Delete me", "doomed").await.unwrap();
    let changed = fx
        .store
        .update(&changed.id, None, Some("new words"))
        .await
        .unwrap();
    fx.store.delete(&gone.id).await.unwrap();
    let path = fx.db_path();
    drop(fx.store);

    let store = MemoStore::open(StoreConfig::new(&path)).await.unwrap();
    assert_eq!(store.count().await.unwrap(), 2);
    assert_eq!(store.get(&kept.id).await.unwrap(), kept);
    assert_eq!(store.get(&changed.id).await.unwrap(), changed);
    assert!(matches!(
        store.get(&gone.id).await,
        Err(MemoError::NotFound { .. })
    ));
    let hits = store.search("persistent", None).await.unwrap();
    assert_eq!(hits.hits[0].id, kept.id, "the search index persisted too");
    let newer = store.create("After restart", "x").await.unwrap();
    assert!(newer.id > changed.id, "ids keep increasing across restarts");
    drop(fx.dir);
}

#[tokio::test]
async fn on_disk_database_uses_wal_fts5_and_the_current_schema() {
    let fx = fixture().await;
    fx.store.create("t", "c").await.unwrap();
    let conn = rusqlite::Connection::open(fx.db_path()).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fts5: bool = conn
        .query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(fts5, "bundled SQLite has FTS5");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM memos_fts WHERE memos_fts MATCH 'c'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
}

#[tokio::test]
async fn in_memory_databases_work() {
    let store = MemoStore::open(StoreConfig::new(":memory:")).await.unwrap();
    let memo = store.create("ephemeral", "gone at drop").await.unwrap();
    assert_eq!(
        store.search("ephemeral", None).await.unwrap().hits[0].id,
        memo.id
    );
}

/// Opening `path` must fail with a storage error whose action is non-empty.
async fn assert_open_refused(path: &std::path::Path) -> MemoError {
    let err = MemoStore::open(StoreConfig::new(path)).await.unwrap_err();
    assert!(matches!(err, MemoError::Storage { .. }), "{err:?}");
    assert_eq!(err.kind(), "internal");
    assert!(!err.action().is_empty());
    err
}

#[tokio::test]
async fn foreign_newer_and_unreadable_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();

    let other_app = dir.path().join("other.db");
    rusqlite::Connection::open(&other_app)
        .unwrap()
        .execute_batch("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
        .unwrap();
    let err = assert_open_refused(&other_app).await;
    assert!(err.to_string().contains("another application"), "{err}");

    let newer = dir.path().join("newer.db");
    drop(MemoStore::open(StoreConfig::new(&newer)).await.unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let err = assert_open_refused(&newer).await;
    assert!(err.action().contains("Upgrade"), "{}", err.action());

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, just some text that is long enough ".repeat(20),
    )
    .unwrap();
    let err = assert_open_refused(&text).await;
    assert!(
        err.action().contains("not a usable memo database"),
        "{}",
        err.action()
    );

    let missing_dir = dir.path().join("no/such/dir/memos.db");
    let err = assert_open_refused(&missing_dir).await;
    assert!(
        err.action().contains("exists and is writable"),
        "{}",
        err.action()
    );
}

#[tokio::test]
async fn a_version_1_database_is_migrated_and_keeps_its_memos_without_an_author() {
    let fx = fixture().await;
    let old = fx
        .store
        .create("Before", "written by version 1")
        .await
        .unwrap();
    let common::Fixture { dir, store } = fx;
    drop(store);
    let path = dir.path().join("memos.db");
    // Turn the file back into what version 1 wrote: no created_by column, no creations.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE creations; ALTER TABLE memos DROP COLUMN created_by; \
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(conn);

    let store = MemoStore::open(StoreConfig::new(&path)).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 3);
    let migrated = store.get(&old.id).await.unwrap();
    assert_eq!(migrated, old);
    assert_eq!(migrated.created_by, None);
    let new = store
        .create_by("After", "by bob", Some("bob"))
        .await
        .unwrap();
    // The migrated file remembers idempotency keys.
    let keyed = store
        .create_once("Keyed", "once", Some("bob"), Some("k"))
        .await
        .unwrap();
    let again = store
        .create_once("Keyed", "once", Some("bob"), Some("k"))
        .await
        .unwrap();
    assert_eq!(again.id, keyed.id);
    assert_eq!(
        store.get(&new.id).await.unwrap().created_by.as_deref(),
        Some("bob")
    );
    assert_eq!(
        store.search("written", None).await.unwrap().hits[0].id,
        old.id
    );
}
