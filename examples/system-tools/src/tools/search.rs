//! `search_files`: glob matching below a directory, confined to the sandbox.

use std::path::{Component, Path};

use glob::{MatchOptions, Pattern};
use serde::Serialize;

use super::listing::{effective_limit, walk_notice};
use super::walk::{WalkOptions, walk, walk_root};
use super::{EntryKind, blocking, open_error};
use crate::sandbox::{Sandbox, SandboxError, path_text};

/// Longest glob pattern accepted.
const MAX_PATTERN_BYTES: usize = 1024;

/// One match of a [`SearchResult`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SearchMatch {
    /// Path relative to the searched directory.
    pub path: String,
    /// Entry type (symlinks not followed).
    #[serde(rename = "type")]
    pub kind: EntryKind,
    /// Size in bytes, for regular files.
    pub size: Option<u64>,
}

/// Result of [`search_files`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SearchResult {
    /// The searched directory, relative to the sandbox's base directory.
    pub root: String,
    /// The pattern as given.
    pub pattern: String,
    /// Matches in walk order.
    pub matches: Vec<SearchMatch>,
    /// Entries examined.
    pub examined: usize,
    /// Whether matches may be missing because a limit was reached.
    pub truncated: bool,
    /// Explanation of anything left out.
    pub notice: Option<String>,
}

/// Finds entries below `path` matching a glob. A pattern without `/` matches file names at any
/// depth (`*.rs`); a pattern with `/` matches the path relative to `path` (`src/**/*.rs`).
/// The walk never follows symlinks, skips denied paths, and is bounded by `max_walk_depth`,
/// `max_scan_entries` and `limit` (capped at `max_list_entries`) matches.
pub async fn search_files(
    sandbox: &Sandbox,
    path: &str,
    pattern: &str,
    limit: Option<usize>,
) -> Result<SearchResult, SandboxError> {
    let sandbox = sandbox.clone();
    let path = path.to_string();
    let pattern = pattern.to_string();
    blocking(move || search_blocking(&sandbox, &path, &pattern, limit)).await
}

fn compile(pattern: &str) -> Result<Pattern, SandboxError> {
    let what = format!("pattern {pattern:?}");
    if pattern.is_empty() {
        return Err(SandboxError::invalid(
            "pattern",
            "it is empty",
            "Pass a glob such as \"*.rs\" or \"src/**/*.toml\".",
        ));
    }
    if pattern.contains('\0') || pattern.len() > MAX_PATTERN_BYTES {
        return Err(SandboxError::invalid(
            "pattern",
            format!("it contains a NUL byte or is longer than {MAX_PATTERN_BYTES} bytes"),
            "Pass a short glob such as \"*.rs\".",
        ));
    }
    let p = Path::new(pattern);
    if p.is_absolute() || p.components().any(|c| c == Component::ParentDir) {
        return Err(SandboxError::invalid(
            what,
            "it is absolute or contains '..'; patterns are matched relative to the searched \
             directory",
            "Put the directory in `path` and a relative glob in `pattern`.",
        ));
    }
    Pattern::new(pattern).map_err(|e| {
        SandboxError::invalid(
            what,
            format!("it is not a valid glob: {e}"),
            "Use *, ?, [abc] and ** (as a whole path component).",
        )
    })
}

fn search_blocking(
    sandbox: &Sandbox,
    path: &str,
    pattern: &str,
    limit: Option<usize>,
) -> Result<SearchResult, SandboxError> {
    let compiled = compile(pattern)?;
    let by_path = pattern.contains('/');
    let root = walk_root(sandbox, path, "Pass the directory to search in `path`.")?;
    let max_matches = effective_limit(sandbox.limits().max_list_entries, limit)?;
    let options = WalkOptions {
        recursive: true,
        max_depth: sandbox.limits().max_walk_depth,
        max_examined: sandbox.limits().max_scan_entries,
    };
    let match_options = MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let mut matches = Vec::new();
    let mut hit_match_limit = false;
    let stats = walk(sandbox, &root.path, &options, &mut |e| {
        let subject = if by_path {
            e.rel.to_string_lossy().into_owned()
        } else {
            e.rel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        if compiled.matches_with(&subject, match_options) {
            if matches.len() >= max_matches {
                hit_match_limit = true;
                return false;
            }
            matches.push(SearchMatch {
                path: path_text(e.rel.as_os_str()),
                kind: e.kind,
                size: e.size,
            });
        }
        true
    })
    .map_err(|e| open_error(root.what.clone(), e))?;
    let mut notice = walk_notice(
        &stats,
        sandbox.limits().max_scan_entries,
        sandbox.limits().max_walk_depth,
        "examined entries",
    );
    if hit_match_limit {
        let extra = format!("stopped at {max_matches} matches; narrow the pattern to see the rest");
        notice = Some(match notice {
            Some(n) => format!("{extra}; {n}"),
            None => extra,
        });
    }
    Ok(SearchResult {
        root: sandbox.show(&root.path),
        pattern: pattern.to_string(),
        matches,
        examined: stats.examined,
        truncated: hit_match_limit || stats.budget_exhausted || stats.depth_limited > 0,
        notice,
    })
}
