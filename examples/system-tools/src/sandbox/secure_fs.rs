//! Opening checked paths without following symlinks.
//!
//! A checked path is canonical, so it contains no symlink at check time. These helpers open the
//! allowed path that holds it (the *anchor*) one component at a time with `O_NOFOLLOW`, then the
//! rest with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)` from the
//! anchor's descriptor (one component at a time with `O_NOFOLLOW` where the kernel has no
//! `openat2`): if any component has been replaced by a symlink since the check, or the path
//! would leave the anchor, the open fails (`ELOOP`/`ENOTDIR`/`EXDEV`) instead of following it.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{CWD, Mode, OFlags, ResolveFlags, openat, openat2};

/// Flags for intermediate directories: search-only on Linux (needs only `x` permission).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn traverse_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn traverse_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Splits an absolute path into its plain names; anything else (`..`, `.`, relative) is an error.
fn names(path: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute path", path.display()),
        ));
    }
    for c in components {
        match c {
            Component::Normal(n) => out.push(n),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a canonical path", path.display()),
                ));
            }
        }
    }
    Ok(out)
}

/// Opens a canonical directory for traversal (not for reading entries), refusing symlinks.
pub(crate) fn open_dir_path(path: &Path) -> io::Result<OwnedFd> {
    let mut fd = openat(CWD, "/", traverse_flags(), Mode::empty())?;
    for name in names(path)? {
        fd = openat(&fd, name, traverse_flags(), Mode::empty())?;
    }
    Ok(fd)
}

/// Opens the canonical directory `path` for traversal from the canonical directory `anchor`
/// that holds it, refusing symlinks and anything that would leave `anchor`.
pub(crate) fn open_dir_beneath(anchor: &Path, path: &Path) -> io::Result<OwnedFd> {
    let Ok(rel) = path.strip_prefix(anchor) else {
        return open_dir_path(path);
    };
    let root = open_dir_path(anchor)?;
    if rel.as_os_str().is_empty() {
        return Ok(root);
    }
    match openat2(
        &root,
        rel,
        traverse_flags(),
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_SYMLINKS,
    ) {
        Err(rustix::io::Errno::NOSYS) => {
            let mut fd = root;
            for name in rel.iter() {
                fd = openat(&fd, name, traverse_flags(), Mode::empty())?;
            }
            Ok(fd)
        }
        other => Ok(other?),
    }
}

/// Opens a canonical directory inside `anchor` for reading its entries, refusing symlinks
/// anywhere.
pub(crate) fn open_dir_read(anchor: &Path, path: &Path) -> io::Result<OwnedFd> {
    let fd = open_dir_beneath(anchor, path)?;
    Ok(openat(
        &fd,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens the directory entry `name` (a plain name) below `dir` for reading entries, refusing a
/// symlink.
pub(crate) fn open_child_dir_read(dir: &OwnedFd, name: &OsStr) -> io::Result<OwnedFd> {
    Ok(openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens an existing canonical file inside `anchor` read-only, refusing symlinks anywhere.
/// `O_NONBLOCK` keeps a FIFO from blocking the open; callers check the file type on the
/// returned descriptor.
pub(crate) fn open_file_read(anchor: &Path, path: &Path) -> io::Result<std::fs::File> {
    let (parent, name) = split_parent(path)?;
    let dir = open_dir_beneath(anchor, parent)?;
    let fd = openat(
        &dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(std::fs::File::from(fd))
}

/// Result of [`open_file_write`].
pub(crate) struct OpenedForWrite {
    /// The file, opened write-only and not yet truncated.
    pub file: std::fs::File,
    /// Whether the file was created by this open.
    pub created: bool,
    /// Directories created on the way (absolute paths).
    pub created_dirs: Vec<std::path::PathBuf>,
}

/// Opens `existing/missing[0]/.../missing[n-1]` for writing without following symlinks.
///
/// `existing` is a canonical directory (or, when `missing` is empty, the canonical file itself).
/// With `create_dirs`, missing intermediate directories are created with `mkdirat` relative to
/// their parent's descriptor; otherwise more than one missing name is an error. The file is
/// created if absent (`0o644` before umask) and is not truncated here.
pub(crate) fn open_file_write(
    anchor: &Path,
    existing: &Path,
    missing: &[std::ffi::OsString],
    create_dirs: bool,
) -> io::Result<OpenedForWrite> {
    let mut created_dirs = Vec::new();
    let (dir, name) = match missing.split_last() {
        None => {
            let (parent, name) = split_parent(existing)?;
            (open_dir_beneath(anchor, parent)?, name.to_os_string())
        }
        Some((last, dirs)) => {
            if !dirs.is_empty() && !create_dirs {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "the parent directory does not exist",
                ));
            }
            let mut fd = open_dir_beneath(anchor, existing)?;
            let mut location = existing.to_path_buf();
            for d in dirs {
                location.push(d);
                match rustix::fs::mkdirat(&fd, d.as_os_str(), Mode::from_raw_mode(0o755)) {
                    Ok(()) => created_dirs.push(location.clone()),
                    Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                fd = openat(&fd, d.as_os_str(), traverse_flags(), Mode::empty())?;
            }
            (fd, last.clone())
        }
    };
    let base = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    // Try to create first so we know whether the file is new; fall back to opening it.
    let (fd, created) = match openat(
        &dir,
        name.as_os_str(),
        base | OFlags::CREATE | OFlags::EXCL,
        Mode::from_raw_mode(0o644),
    ) {
        Ok(fd) => (fd, true),
        Err(rustix::io::Errno::EXIST) => {
            (openat(&dir, name.as_os_str(), base, Mode::empty())?, false)
        }
        Err(e) => return Err(e.into()),
    };
    Ok(OpenedForWrite {
        file: std::fs::File::from(fd),
        created,
        created_dirs,
    })
}

fn split_parent(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is the root directory", path.display()),
        )),
    }
}

/// True when an error means "a symlink was met where the checked path had none" (or the path
/// would have left its anchor).
pub(crate) fn is_symlink_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(c) if c == rustix::io::Errno::LOOP.raw_os_error()
            || c == rustix::io::Errno::NOTDIR.raw_os_error()
            || c == rustix::io::Errno::XDEV.raw_os_error()
    )
}

#[cfg(test)]
mod tests {
    //! Simulated check-then-swap races: a path is valid (symlink-free) when checked, then a
    //! component is replaced by a symlink pointing outside; every open must refuse it.

    use super::*;
    use std::os::unix::fs::symlink;

    struct Layout {
        _tmp: tempfile::TempDir,
        inside: std::path::PathBuf,
        outside: std::path::PathBuf,
    }

    fn layout() -> Layout {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let inside = base.join("inside");
        let outside = base.join("outside");
        std::fs::create_dir_all(inside.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(inside.join("sub/f.txt"), "inside").unwrap();
        std::fs::write(outside.join("f.txt"), "outside").unwrap();
        Layout {
            _tmp: tmp,
            inside,
            outside,
        }
    }

    /// Replaces `inside/sub` by a symlink to `outside` (after a check would have passed).
    fn swap_sub_for_symlink(l: &Layout) {
        std::fs::remove_dir_all(l.inside.join("sub")).unwrap();
        symlink(&l.outside, l.inside.join("sub")).unwrap();
    }

    #[test]
    fn reads_a_symlink_free_path() {
        let l = layout();
        let mut f = open_file_read(&l.inside, &l.inside.join("sub/f.txt")).unwrap();
        let mut s = String::new();
        std::io::Read::read_to_string(&mut f, &mut s).unwrap();
        assert_eq!(s, "inside");
    }

    #[test]
    fn read_refuses_a_parent_swapped_for_a_symlink() {
        let l = layout();
        let checked = l.inside.join("sub/f.txt");
        swap_sub_for_symlink(&l);
        let e = open_file_read(&l.inside, &checked).unwrap_err();
        assert!(is_symlink_refusal(&e), "{e}");
    }

    #[test]
    fn read_refuses_a_final_symlink() {
        let l = layout();
        let checked = l.inside.join("sub/f.txt");
        std::fs::remove_file(&checked).unwrap();
        symlink(l.outside.join("f.txt"), &checked).unwrap();
        let e = open_file_read(&l.inside, &checked).unwrap_err();
        assert!(is_symlink_refusal(&e), "{e}");
    }

    #[test]
    fn write_refuses_a_parent_swapped_for_a_symlink() {
        let l = layout();
        let existing = l.inside.join("sub");
        swap_sub_for_symlink(&l);
        let e = open_file_write(&l.inside, &existing, &["new.txt".into()], false)
            .err()
            .expect("must refuse");
        assert!(is_symlink_refusal(&e), "{e}");
        assert!(!l.outside.join("new.txt").exists());
    }

    #[test]
    fn write_refuses_a_final_symlink_even_when_creating() {
        let l = layout();
        let existing = l.inside.join("sub");
        symlink(l.outside.join("made.txt"), existing.join("new.txt")).unwrap();
        let e = open_file_write(&l.inside, &existing, &["new.txt".into()], false)
            .err()
            .expect("must refuse");
        assert!(is_symlink_refusal(&e), "{e}");
        assert!(!l.outside.join("made.txt").exists());
    }

    #[test]
    fn create_dirs_refuses_a_directory_swapped_for_a_symlink() {
        let l = layout();
        // Checked: inside/sub exists, "a/b/new.txt" missing below it. Swap `sub` before creating.
        let existing = l.inside.join("sub");
        swap_sub_for_symlink(&l);
        let e = open_file_write(
            &l.inside,
            &existing,
            &["a".into(), "b".into(), "new.txt".into()],
            true,
        )
        .err()
        .expect("must refuse");
        assert!(is_symlink_refusal(&e), "{e}");
        assert!(!l.outside.join("a").exists());
    }

    #[test]
    fn create_dirs_creates_each_level() {
        let l = layout();
        let opened = open_file_write(
            &l.inside,
            &l.inside,
            &["x".into(), "y".into(), "f".into()],
            true,
        )
        .unwrap();
        assert!(opened.created);
        assert_eq!(
            opened.created_dirs,
            vec![l.inside.join("x"), l.inside.join("x/y")]
        );
        assert!(l.inside.join("x/y/f").is_file());
    }

    #[test]
    fn dir_open_refuses_a_symlinked_directory() {
        let l = layout();
        let checked = l.inside.join("sub");
        swap_sub_for_symlink(&l);
        let e = open_dir_read(&l.inside, &checked).unwrap_err();
        assert!(is_symlink_refusal(&e), "{e}");
    }

    #[test]
    fn non_canonical_paths_are_rejected() {
        assert!(open_dir_path(Path::new("relative")).is_err());
        assert!(open_dir_path(Path::new("/tmp/../etc")).is_err());
    }
}
