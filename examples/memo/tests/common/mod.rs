//! Helpers shared by the integration tests.
#![allow(dead_code)]

use memo_mcp::{MemoError, MemoStore, StoreConfig};
use tempfile::TempDir;

/// A store on a fresh database file in its own temporary directory.
pub struct Fixture {
    /// Keeps the directory alive for the test's duration.
    pub dir: TempDir,
    /// The open store.
    pub store: MemoStore,
}

impl Fixture {
    /// Path of the database file.
    pub fn db_path(&self) -> std::path::PathBuf {
        self.dir.path().join("memos.db")
    }

    /// Opens a second, independent store (own connection) on the same file.
    pub async fn reopen(&self) -> MemoStore {
        MemoStore::open(StoreConfig::new(self.db_path()))
            .await
            .expect("reopen store")
    }
}

/// Creates a fixture.
pub async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = MemoStore::open(StoreConfig::new(dir.path().join("memos.db")))
        .await
        .expect("open store");
    Fixture { dir, store }
}

/// Asserts the error is a validation error about `field` with a non-empty action.
pub fn assert_validation(result: Result<impl std::fmt::Debug, MemoError>, field: &str) {
    match result {
        Err(MemoError::Validation {
            field: f, action, ..
        }) => {
            assert_eq!(f, field);
            assert!(!action.is_empty());
        }
        other => panic!("expected a validation error on {field}, got {other:?}"),
    }
}
