//! `list_directory`.

use serde::Serialize;

use super::walk::{WalkOptions, WalkStats, walk, walk_root};
use super::{EntryKind, blocking, open_error};
use crate::sandbox::{Sandbox, SandboxError, path_text};

/// One entry of a [`DirectoryListing`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DirEntryInfo {
    /// File name (a name that is not UTF-8 is escaped, `\\xHH` per byte: see
    /// [`path_text`]).
    pub name: String,
    /// Path relative to the listed directory (`sub/file.txt`), escaped like `name`; give it
    /// back to any tool as a path.
    pub path: String,
    /// Entry type; symlinks are reported as such and never followed.
    #[serde(rename = "type")]
    pub kind: EntryKind,
    /// Size in bytes, for regular files.
    pub size: Option<u64>,
}

/// Result of [`list_directory`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DirectoryListing {
    /// The listed directory, relative to the sandbox's base directory.
    pub path: String,
    /// Whether subdirectories were listed too.
    pub recursive: bool,
    /// Entries in name order (a directory before its contents).
    pub entries: Vec<DirEntryInfo>,
    /// Whether entries were left out because a limit was reached.
    pub truncated: bool,
    /// Explanation of anything left out (limits, denied paths, unreadable directories).
    pub notice: Option<String>,
}

/// Lists a directory inside the sandbox. `limit` lowers (never raises) the configured
/// `max_list_entries`. Entries inside denied paths are omitted; symlinks are not followed.
pub async fn list_directory(
    sandbox: &Sandbox,
    path: &str,
    recursive: bool,
    limit: Option<usize>,
) -> Result<DirectoryListing, SandboxError> {
    let sandbox = sandbox.clone();
    let path = path.to_string();
    blocking(move || list_blocking(&sandbox, &path, recursive, limit)).await
}

fn list_blocking(
    sandbox: &Sandbox,
    path: &str,
    recursive: bool,
    limit: Option<usize>,
) -> Result<DirectoryListing, SandboxError> {
    let root = walk_root(
        sandbox,
        path,
        "Use read_file for files, or list its parent directory.",
    )?;
    let max_entries = effective_limit(sandbox.limits().max_list_entries, limit)?;
    let options = WalkOptions {
        recursive,
        max_depth: sandbox.limits().max_walk_depth,
        max_examined: max_entries,
    };
    let mut entries = Vec::new();
    let stats = walk(sandbox, &root.path, &options, &mut |e| {
        entries.push(DirEntryInfo {
            name: e.rel.file_name().map(path_text).unwrap_or_default(),
            path: path_text(e.rel.as_os_str()),
            kind: e.kind,
            size: e.size,
        });
        true
    })
    .map_err(|e| open_error(root.what.clone(), e))?;
    Ok(DirectoryListing {
        path: sandbox.show(&root.path),
        recursive,
        entries,
        truncated: stats.budget_exhausted || stats.depth_limited > 0,
        notice: walk_notice(
            &stats,
            max_entries,
            sandbox.limits().max_walk_depth,
            "entries",
        ),
    })
}

/// `min(configured, requested)`; a requested 0 is invalid.
pub(crate) fn effective_limit(
    configured: usize,
    requested: Option<usize>,
) -> Result<usize, SandboxError> {
    match requested {
        Some(0) => Err(SandboxError::invalid(
            "limit",
            "it is 0",
            "Pass a positive limit, or omit it for the configured maximum.",
        )),
        Some(n) => Ok(n.min(configured)),
        None => Ok(configured),
    }
}

/// A sentence per thing the walk left out, or `None`.
pub(crate) fn walk_notice(
    stats: &WalkStats,
    budget: usize,
    max_depth: usize,
    budget_noun: &str,
) -> Option<String> {
    let mut parts = Vec::new();
    if stats.budget_exhausted {
        parts.push(format!(
            "stopped after {budget} {budget_noun}; narrow the path or pattern to see the rest"
        ));
    }
    if stats.depth_limited > 0 {
        parts.push(format!(
            "{} deeper than {max_depth} levels {} not descended into",
            plural(stats.depth_limited, "directory", "directories"),
            if stats.depth_limited == 1 {
                "was"
            } else {
                "were"
            }
        ));
    }
    if stats.skipped_denied > 0 {
        parts.push(format!(
            "{} inside denied paths omitted",
            plural(stats.skipped_denied, "entry", "entries")
        ));
    }
    if stats.unreadable > 0 {
        parts.push(format!(
            "{} could not be read",
            plural(stats.unreadable, "directory", "directories")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `1 entry`, `2 entries`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
