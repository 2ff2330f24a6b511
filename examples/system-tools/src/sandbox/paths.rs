//! Path checks: validate the raw input, resolve it to a canonical location (symlinks and `..`
//! resolved by the OS), then decide allowed / denied on that location.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

use super::Sandbox;
use super::error::SandboxError;

/// Longest single path component accepted (Linux `NAME_MAX`).
pub const MAX_COMPONENT_BYTES: usize = 255;

/// A path that passed the sandbox check.
///
/// `existing` is the canonical form of the deepest part of the path that exists (the whole path
/// when it exists); `missing` are the plain names below it that do not exist yet (never `..`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The path exactly as the caller gave it.
    pub input: String,
    /// Canonical (symlink-free, absolute) deepest existing ancestor, or the path itself.
    pub existing: PathBuf,
    /// Names below `existing` that do not exist yet; empty when the path exists.
    pub missing: Vec<OsString>,
    /// The full location as replies show it ([`Sandbox::show`]).
    pub shown: String,
}

impl ResolvedPath {
    /// The full checked location: `existing` joined with `missing`.
    pub fn full(&self) -> PathBuf {
        let mut p = self.existing.clone();
        for name in &self.missing {
            p.push(name);
        }
        p
    }

    /// Whether the whole path exists.
    pub fn exists(&self) -> bool {
        self.missing.is_empty()
    }

    /// `path '<input>' (resolves to <shown>)` for messages.
    pub fn describe(&self) -> String {
        describe(&self.input, Some(&self.shown))
    }
}

/// `path '<input>'`, plus `(resolves to ...)` when the shown resolved form differs.
pub(crate) fn describe(input: &str, shown: Option<&str>) -> String {
    match shown {
        Some(r) if r != input && Path::new(input) != Path::new(r) => {
            format!("path {input:?} (resolves to {r})")
        }
        _ => format!("path {input:?}"),
    }
}

/// Rejects inputs that are empty, contain NUL, are too long, or use `~`; `raw` is the path
/// `input` names (the same, or unescaped: [`path_from_text`](super::path_from_text)).
pub(crate) fn validate_input(
    input: &str,
    raw: &OsStr,
    max_path_bytes: usize,
) -> Result<(), SandboxError> {
    let what = || describe(input, None);
    if input.is_empty() {
        return Err(SandboxError::invalid(
            "path",
            "it is empty",
            "Pass a file or directory path; '.' means the sandbox base directory.",
        ));
    }
    if input.contains('\0') {
        return Err(SandboxError::invalid(
            format!("path {:?}", input.replace('\0', "\\0")),
            "it contains a NUL byte, which no file name can hold",
            "Remove the NUL byte from the path.",
        ));
    }
    if raw.len() > max_path_bytes {
        return Err(SandboxError::invalid(
            format!(
                "path of {} bytes starting {:?}",
                input.len(),
                truncate_str(input, 64)
            ),
            format!("it is longer than the limit of {max_path_bytes} bytes"),
            "Use a shorter path (relative paths are resolved against the sandbox base directory).",
        ));
    }
    if let Some(long) = Path::new(raw)
        .components()
        .find(|c| c.as_os_str().len() > MAX_COMPONENT_BYTES)
    {
        return Err(SandboxError::invalid(
            format!(
                "path of {} bytes starting {:?}",
                input.len(),
                truncate_str(input, 64)
            ),
            format!(
                "one of its components is {} bytes long; the file system limit is {MAX_COMPONENT_BYTES}",
                long.as_os_str().len()
            ),
            "Use shorter file and directory names.",
        ));
    }
    if input == "~" || input.starts_with("~/") {
        return Err(SandboxError::invalid(
            what(),
            "home-directory expansion ('~') is not supported",
            "Use an absolute path, or a path relative to the sandbox base directory.",
        ));
    }
    Ok(())
}

fn truncate_str(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Resolves an absolute path: finds the deepest prefix that exists, canonicalizes it (the OS
/// resolves every symlink and `..` in it), and returns the remaining plain names.
///
/// Fails when the remainder contains `..` (it cannot be resolved without the missing parts), or
/// when an existing prefix cannot be canonicalized (dangling symlink, loop, no permission).
pub(crate) fn resolve_absolute(
    input: &str,
    abs: &Path,
    show: &dyn Fn(&Path) -> String,
) -> Result<(PathBuf, Vec<OsString>), SandboxError> {
    let components: Vec<Component<'_>> = abs.components().collect();
    for split in (1..=components.len()).rev() {
        let prefix: PathBuf = components[..split].iter().collect();
        match std::fs::symlink_metadata(&prefix) {
            Ok(_) => {
                let canonical = std::fs::canonicalize(&prefix).map_err(|e| {
                    let why = if e.kind() == io::ErrorKind::NotFound {
                        "it is a symlink whose target does not exist".to_string()
                    } else {
                        explain_io(&e)
                    };
                    SandboxError::denied(
                        describe(input, None),
                        format!(
                            "{} cannot be resolved ({why}), so where it points cannot be checked",
                            show(&prefix),
                        ),
                        "Use a path that does not go through a dangling or looping symlink.",
                    )
                })?;
                let mut missing = Vec::new();
                for c in &components[split..] {
                    match c {
                        Component::Normal(name) => missing.push(name.to_os_string()),
                        Component::CurDir => {}
                        _ => {
                            return Err(SandboxError::denied(
                                describe(input, None),
                                format!(
                                    "it uses '..' after {}, which does not exist, so the path \
                                     cannot be resolved safely",
                                    show(&canonical.join(missing.iter().collect::<PathBuf>()))
                                ),
                                "Remove the '..' components, or create the directories first.",
                            ));
                        }
                    }
                }
                return Ok((canonical, missing));
            }
            Err(e) if is_absent(&e) => continue,
            Err(e) => {
                return Err(SandboxError::denied(
                    describe(input, None),
                    format!(
                        "{} cannot be examined ({}), so the path cannot be checked",
                        show(&prefix),
                        explain_io(&e)
                    ),
                    "Use a path inside the allowed paths that the server can read.",
                ));
            }
        }
    }
    // The root always exists; reaching here means the path had no components at all.
    Err(SandboxError::invalid(
        describe(input, None),
        "it has no components",
        "Pass a file or directory path.",
    ))
}

/// True for errors meaning "this prefix does not exist" (so the search moves one level up).
fn is_absent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory
}

/// A short human description of an I/O error.
pub(crate) fn explain_io(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) if code == rustix::io::Errno::LOOP.raw_os_error() => {
            "too many levels of symbolic links".to_string()
        }
        _ => e.to_string(),
    }
}

impl Sandbox {
    /// Validates `input`, resolves it (relative inputs against [`Sandbox::base_dir`]) and checks
    /// the resolved location against the allowed and denied paths.
    ///
    /// The path need not exist; when it does not, its deepest existing ancestor is resolved and
    /// the rest must be plain names. Nothing is created or opened.
    ///
    /// `input` is a path as the tools' text gives it: a path that holds `\x` is unescaped
    /// first ([`path_from_text`](super::path_from_text)), so a name that is not UTF-8 can be
    /// named.
    pub fn check_path(&self, input: &str) -> Result<ResolvedPath, SandboxError> {
        let raw = super::path_from_text(input)?;
        self.check_raw_in(input, &raw, self.base_dir())
    }

    /// Like [`Sandbox::check_path`], but relative inputs are resolved against `base` (which should
    /// itself be a checked, canonical directory, e.g. a command's working directory).
    ///
    /// `input` is taken as it is, never unescaped: a command's arguments reach the program as
    /// written, so the path checked must be the one the program will open.
    pub fn check_path_in(&self, input: &str, base: &Path) -> Result<ResolvedPath, SandboxError> {
        self.check_raw_in(input, OsStr::new(input), base)
    }

    /// [`Sandbox::check_path_in`] of the path `raw`, which the caller wrote as `input`.
    fn check_raw_in(
        &self,
        input: &str,
        raw: &OsStr,
        base: &Path,
    ) -> Result<ResolvedPath, SandboxError> {
        let max = self.limits().max_path_bytes;
        validate_input(input, raw, max)?;
        let abs = if Path::new(raw).is_absolute() {
            PathBuf::from(raw)
        } else {
            base.join(raw)
        };
        if abs.as_os_str().len() > max {
            return Err(SandboxError::invalid(
                describe(input, None),
                format!(
                    "joined with the base directory it is {} bytes, over the limit of {max} bytes",
                    abs.as_os_str().len()
                ),
                "Use a shorter path.",
            ));
        }
        let (existing, missing) = resolve_absolute(input, &abs, &|p: &Path| self.show(p))?;
        let mut resolved = ResolvedPath {
            input: input.to_string(),
            existing,
            missing,
            shown: String::new(),
        };
        resolved.shown = self.show(&resolved.full());
        self.check_location(&resolved.full(), || resolved.describe())?;
        Ok(resolved)
    }

    /// Checks an already canonical location: inside an allowed path and not inside a denied one.
    /// `what` names the target in the error.
    pub fn check_location(
        &self,
        location: &Path,
        what: impl FnOnce() -> String,
    ) -> Result<(), SandboxError> {
        if let Some(denied) = self.denied_entry_for(location) {
            let denied = self.show(denied);
            return Err(SandboxError::denied(
                what(),
                format!("it is inside the denied path {denied}"),
                format!(
                    "This location is off limits in the sandbox configuration; use a path outside {denied}."
                ),
            ));
        }
        if !self.is_inside_allowed(location) {
            return Err(SandboxError::denied(
                what(),
                format!("it is outside the allowed paths ({})", self.allowed_shown()),
                format!(
                    "Use a path inside {}; relative paths are resolved against {}.",
                    self.allowed_shown(),
                    self.base_shown()
                ),
            ));
        }
        Ok(())
    }

    /// The innermost allowed path holding a canonical location (the location itself when none
    /// does), from which it is opened with `RESOLVE_BENEATH`.
    pub(crate) fn anchor_for<'a>(&'a self, location: &'a Path) -> &'a Path {
        self.allowed_paths()
            .iter()
            .filter(|r| location.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
            .map_or(location, PathBuf::as_path)
    }

    /// Whether a canonical location is inside (or equal to) an allowed path.
    pub fn is_inside_allowed(&self, location: &Path) -> bool {
        self.allowed_paths().iter().any(|r| location.starts_with(r))
    }

    /// The denied entry that contains a canonical location, if any.
    pub fn denied_entry_for(&self, location: &Path) -> Option<&Path> {
        self.denied_paths()
            .iter()
            .find(|d| location.starts_with(d))
            .map(PathBuf::as_path)
    }
}

/// `a, b, c` for paths.
pub(crate) fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
