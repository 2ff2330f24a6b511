//! The one error type of the memo store, with a machine-readable kind and a suggested action.

use std::path::Path;

use rusqlite::ErrorCode;

/// Everything that can go wrong in a memo operation.
///
/// Each value carries a human message (its `Display`), a stable [`kind`](MemoError::kind) that
/// matches the tool-error kinds of `mcp-toolbelt` (`not_found`, `validation`, `internal`), and an
/// [`action`](MemoError::action): one sentence telling the caller what to do next.
#[derive(Debug, thiserror::Error)]
pub enum MemoError {
    /// No memo has this (well-formed) id.
    #[error("memo {id} not found")]
    NotFound {
        /// The canonical (upper-case) ULID that was looked up.
        id: String,
    },
    /// The id is not a valid ULID.
    #[error("invalid memo id {id:?}: {reason}")]
    InvalidId {
        /// The id as the caller gave it.
        id: String,
        /// Why it was rejected.
        reason: String,
    },
    /// An argument broke a rule (empty title, too long, bad limit, unusable search query...).
    #[error("invalid {field}: {message}")]
    Validation {
        /// The argument at fault (`title`, `content`, `query`, `limit`, ...).
        field: &'static str,
        /// What is wrong with it.
        message: String,
        /// What to change.
        action: String,
    },
    /// The database could not be opened, read or written.
    #[error("storage error: {message}")]
    Storage {
        /// What failed, including SQLite's own message.
        message: String,
        /// What the operator can do about it.
        action: String,
    },
}

impl MemoError {
    /// Stable error kind, one of `not_found`, `validation` or `internal`.
    pub fn kind(&self) -> &'static str {
        match self {
            MemoError::NotFound { .. } => "not_found",
            MemoError::InvalidId { .. } | MemoError::Validation { .. } => "validation",
            MemoError::Storage { .. } => "internal",
        }
    }

    /// The suggested next step for whoever sees this error.
    pub fn action(&self) -> String {
        match self {
            MemoError::NotFound { .. } => {
                "Check the id, or call memo_list or memo_search to find the memo you want."
                    .to_string()
            }
            MemoError::InvalidId { .. } => {
                "Pass a memo id exactly as returned by memo_create or memo_list: \
                 a 26-character ULID such as 01ARZ3NDEKTSV4RRFFQ69G5FAV."
                    .to_string()
            }
            MemoError::Validation { action, .. } | MemoError::Storage { action, .. } => {
                action.clone()
            }
        }
    }

    /// Builds a [`MemoError::Validation`].
    pub(crate) fn validation(
        field: &'static str,
        message: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        MemoError::Validation {
            field,
            message: message.into(),
            action: action.into(),
        }
    }

    /// Builds a [`MemoError::Storage`] from a SQLite error raised while doing `what` on the
    /// database at `path`, choosing the action from SQLite's error code.
    pub(crate) fn storage(what: &str, path: &Path, err: rusqlite::Error) -> Self {
        let code = err.sqlite_error_code();
        let action = match code {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                "Another process holds a long write lock on the memo database; retry shortly."
                    .to_string()
            }
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly) => {
                format!(
                    "Make sure the directory of {} exists and is writable, or configure another \
                     database path (MEMO_MCP_DB).",
                    path.display()
                )
            }
            Some(ErrorCode::DiskFull) => "Free disk space, then retry.".to_string(),
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => format!(
                "{} is not a usable memo database; point MEMO_MCP_DB at another file.",
                path.display()
            ),
            _ => "Retry; if it keeps failing, check the server log on stderr.".to_string(),
        };
        MemoError::Storage {
            message: format!("{what} failed on {}: {err}", path.display()),
            action,
        }
    }
}

impl From<MemoError> for mcp_toolbelt::ToolError {
    /// Keeps the kind (`not_found`, `validation_error`, `internal_error`), the message and
    /// the store's own action line, so a client reads `Error (not_found): memo … not found`
    /// followed by what to do.
    fn from(err: MemoError) -> Self {
        use mcp_toolbelt::ErrorKind;
        let kind = match &err {
            MemoError::NotFound { .. } => ErrorKind::NotFound,
            MemoError::InvalidId { .. } | MemoError::Validation { .. } => ErrorKind::Validation,
            MemoError::Storage { .. } => ErrorKind::Internal,
        };
        if kind == ErrorKind::Internal {
            tracing::error!(error = %err, "memo storage failure");
        }
        mcp_toolbelt::ToolError::new(kind, err.to_string()).with_action(err.action())
    }
}
