//! Descriptor-based directory walk shared by listing and search.
//!
//! Every directory is opened relative to its parent's descriptor with `O_NOFOLLOW`, so the walk
//! never leaves the starting directory through a symlink (symlinks are reported, not followed),
//! and entries inside denied paths are skipped without being examined.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, statat};

use super::{EntryKind, open_error};
use crate::sandbox::secure_fs::{open_child_dir_read, open_dir_read};
use crate::sandbox::{Sandbox, SandboxError};

/// One entry met by the walk.
#[derive(Debug, Clone)]
/// Where a walk starts: a sandboxed path that exists and is a directory.
pub(crate) struct WalkRoot {
    /// The resolved directory.
    pub(crate) path: PathBuf,
    /// How to name it in errors.
    pub(crate) what: String,
}

/// Check `path` in the sandbox and require an existing directory; `not_a_directory` is the
/// action suggested when it is a file.
pub(crate) fn walk_root(
    sandbox: &Sandbox,
    path: &str,
    not_a_directory: &str,
) -> Result<WalkRoot, SandboxError> {
    let resolved = sandbox.check_path(path)?;
    let what = resolved.describe();
    if !resolved.exists() {
        return Err(SandboxError::NotFound {
            what,
            action: "Check the path; list its parent directory to see what exists.".to_string(),
        });
    }
    let meta =
        std::fs::symlink_metadata(&resolved.existing).map_err(|e| open_error(what.clone(), e))?;
    if !meta.is_dir() {
        return Err(SandboxError::invalid(
            what,
            "it is not a directory",
            not_a_directory,
        ));
    }
    Ok(WalkRoot {
        path: resolved.existing,
        what,
    })
}

pub(crate) struct WalkEntry {
    /// Path relative to the walk's root.
    pub rel: PathBuf,
    /// Entry type (symlinks not followed).
    pub kind: EntryKind,
    /// Size in bytes for regular files.
    pub size: Option<u64>,
}

/// What the walk did besides visiting entries.
#[derive(Debug, Default)]
pub(crate) struct WalkStats {
    /// Entries examined.
    pub examined: usize,
    /// Entries skipped because they are inside a denied path.
    pub skipped_denied: usize,
    /// Directories not descended into because of the depth cap.
    pub depth_limited: usize,
    /// Directories that could not be read (permission, vanished).
    pub unreadable: usize,
    /// Whether the walk stopped early (visitor said stop, or the examine budget ran out).
    pub stopped: bool,
    /// Whether it was the examine budget that ran out.
    pub budget_exhausted: bool,
}

/// Walk settings.
pub(crate) struct WalkOptions {
    pub recursive: bool,
    pub max_depth: usize,
    pub max_examined: usize,
}

/// Walks `root` (a checked, canonical directory), calling `visit` for each entry in name order
/// (pre-order: a directory comes before its contents). `visit` returns `false` to stop.
pub(crate) fn walk(
    sandbox: &Sandbox,
    root: &Path,
    options: &WalkOptions,
    visit: &mut dyn FnMut(WalkEntry) -> bool,
) -> std::io::Result<WalkStats> {
    let fd = open_dir_read(sandbox.anchor_for(root), root)?;
    let mut stats = WalkStats::default();
    walk_dir(
        sandbox,
        &fd,
        root,
        Path::new(""),
        1,
        options,
        visit,
        &mut stats,
    );
    Ok(stats)
}

#[allow(clippy::too_many_arguments)]
fn walk_dir(
    sandbox: &Sandbox,
    fd: &OwnedFd,
    abs: &Path,
    rel: &Path,
    depth: usize,
    options: &WalkOptions,
    visit: &mut dyn FnMut(WalkEntry) -> bool,
    stats: &mut WalkStats,
) {
    let names = match read_names(fd, options.max_examined.saturating_sub(stats.examined) + 1) {
        Ok(n) => n,
        Err(e) => {
            tracing::debug!(dir = %abs.display(), error = %e, "cannot read directory");
            stats.unreadable += 1;
            return;
        }
    };
    for name in names {
        if stats.stopped {
            return;
        }
        let child_abs = abs.join(&name);
        if sandbox.denied_entry_for(&child_abs).is_some() {
            stats.skipped_denied += 1;
            continue;
        }
        if stats.examined >= options.max_examined {
            stats.stopped = true;
            stats.budget_exhausted = true;
            return;
        }
        stats.examined += 1;
        let Ok(st) = statat(fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) else {
            // Vanished between listing and stat.
            continue;
        };
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Directory,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        let child_rel = rel.join(&name);
        let entry = WalkEntry {
            rel: child_rel.clone(),
            kind,
            size: (kind == EntryKind::File).then_some(st.st_size as u64),
        };
        if !visit(entry) {
            stats.stopped = true;
            return;
        }
        if kind == EntryKind::Directory && options.recursive {
            if depth >= options.max_depth {
                stats.depth_limited += 1;
                continue;
            }
            match open_child_dir_read(fd, &name) {
                Ok(child) => walk_dir(
                    sandbox,
                    &child,
                    &child_abs,
                    &child_rel,
                    depth + 1,
                    options,
                    visit,
                    stats,
                ),
                Err(e) => {
                    tracing::debug!(dir = %child_abs.display(), error = %e, "cannot open directory");
                    stats.unreadable += 1;
                }
            }
        }
    }
}

/// Reads at most `max` entry names (without `.` and `..`), sorted.
fn read_names(fd: &OwnedFd, max: usize) -> std::io::Result<Vec<OsString>> {
    let mut names = Vec::new();
    for entry in Dir::read_from(fd)? {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        names.push(OsStr::from_bytes(bytes).to_os_string());
        if names.len() >= max {
            break;
        }
    }
    names.sort();
    Ok(names)
}
