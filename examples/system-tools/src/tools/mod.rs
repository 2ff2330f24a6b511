//! The tool logic of seed 001's built-in tools, as plain async functions over a [`Sandbox`].
//!
//! Each returns a `Serialize + JsonSchema` output struct or a [`SandboxError`]; wrapping one in an
//! `#[mcp_tool]` function is a one-liner: [`mcp`] holds those wrappers. Blocking file-system work runs on tokio's blocking pool.
//!
//! [`Sandbox`]: crate::sandbox::Sandbox

mod catalog;
mod echo;
mod exec;
mod files;
mod listing;
pub mod mcp;
mod output;
mod search;
mod system_info;
mod walk;

pub use catalog::{TOOLS, ToolSpec};
pub use echo::{EchoOutput, echo};
pub use exec::{CommandOutput, execute_command};
pub use files::{ReadFileOutput, WriteFileOutput, read_file, write_file};
pub use listing::{DirEntryInfo, DirectoryListing, list_directory};
pub use search::{SearchMatch, SearchResult, search_files};
pub use system_info::{SystemInfo, system_info};

use serde::{Deserialize, Serialize};

use crate::sandbox::SandboxError;

/// Type of a directory entry, as seen without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (never followed by listing or search).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// How file content is carried in a string.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum ContentEncoding {
    /// UTF-8 text (reading a file that is not valid UTF-8 is an error).
    #[default]
    #[serde(rename = "utf-8", alias = "utf8")]
    Utf8,
    /// Standard base64 with padding, for binary content.
    #[serde(rename = "base64")]
    Base64,
}

/// Runs blocking work on tokio's blocking pool.
async fn blocking<T, F>(f: F) -> Result<T, SandboxError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, SandboxError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| SandboxError::Io {
            what: "a file-system task".to_string(),
            source: std::io::Error::other(e.to_string()),
        })?
}

/// Maps an error from opening a checked path to a [`SandboxError`] naming `what`.
fn open_error(what: String, e: std::io::Error) -> SandboxError {
    if crate::sandbox::secure_fs::is_symlink_refusal(&e) {
        return SandboxError::Denied {
            what,
            reason: "a symlink or non-directory appeared in the path after it was checked, and \
                     symlinks are never followed when opening"
                .to_string(),
            action: "Retry; if it persists, the path is being changed concurrently.".to_string(),
        };
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => SandboxError::NotFound {
            what,
            action: "Check the path with list_directory or search_files.".to_string(),
        },
        std::io::ErrorKind::PermissionDenied => SandboxError::Denied {
            what,
            reason: "the operating system refused access (permission denied)".to_string(),
            action: "Choose a file the server process is allowed to access.".to_string(),
        },
        _ => SandboxError::Io { what, source: e },
    }
}
