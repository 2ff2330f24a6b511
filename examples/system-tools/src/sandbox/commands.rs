//! Command policy: which programs may run, matched on the canonical program file they resolve to,
//! and a best-effort check that path-like arguments stay inside the sandbox.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Sandbox;
use super::config::SandboxConfig;
use super::error::SandboxError;

/// Longest program name or path accepted.
const MAX_PROGRAM_BYTES: usize = 4096;
/// Cap on the summed byte length of all arguments.
pub const MAX_ARGS_BYTES: usize = 128 * 1024;
/// Cap on the number of arguments.
pub const MAX_ARGS: usize = 1024;

/// Programs that can start arbitrary other programs; allowing one allows everything.
const LAUNCHERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "fish", "ksh", "csh", "tcsh", "env", "xargs", "find", "sudo",
    "su", "doas", "nohup", "nice", "timeout", "stdbuf", "setsid", "python", "python3", "perl",
    "ruby", "node", "php", "lua", "awk", "gawk", "mawk", "busybox", "strace", "gdb", "make", "ssh",
    "git",
];

/// A command that passed the policy: what will actually be executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedCommand {
    /// Canonical program file that will be executed.
    pub program: PathBuf,
    /// The `allowed_commands` entry it matched.
    pub entry: String,
    /// Timeout that applies to it.
    pub timeout: Duration,
}

#[derive(Debug)]
struct AllowedCommand {
    entry: String,
    program: PathBuf,
    timeout: Duration,
    /// The program file as it was at start-up.
    identity: Option<FileIdentity>,
}

/// Device, inode, size and modification time of a file: a program whose identity changed
/// since start-up was replaced or rewritten, and is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl FileIdentity {
    fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
        })
    }
}

#[derive(Debug)]
pub(crate) struct CommandPolicy {
    allowed: Vec<AllowedCommand>,
    denied_programs: Vec<(String, PathBuf)>,
    denied_names: Vec<String>,
    unresolved: Vec<String>,
    /// Files of allowed scripts refused at start-up (still never writable by commands).
    refused: Vec<PathBuf>,
    search_path: Vec<PathBuf>,
}

impl CommandPolicy {
    /// Resolves every entry. Entries that do not resolve are logged and listed as unresolved
    /// (a shared config may name programs missing on this machine); timeouts for unknown entries
    /// are a configuration error.
    pub(crate) fn build(
        config: &SandboxConfig,
        relative_to: &Path,
        search_path: Vec<PathBuf>,
        default_timeout: Duration,
    ) -> Result<Self, SandboxError> {
        // Relative search-path entries (like ".") would make lookups depend on the command's
        // working directory, a classic hole: drop them.
        let mut deduped: Vec<PathBuf> = Vec::new();
        for p in search_path {
            if !p.is_absolute() {
                tracing::warn!(entry = %p.display(), "ignoring relative command search path entry");
            } else if !deduped.contains(&p) {
                deduped.push(p);
            }
        }
        let search_path = deduped;
        for key in config.command_timeouts.keys() {
            if !config.allowed_commands.contains(key) {
                return Err(SandboxError::Config {
                    reason: format!(
                        "command_timeouts has an entry for {key:?}, which is not in allowed_commands"
                    ),
                });
            }
        }
        let mut policy = CommandPolicy {
            allowed: Vec::new(),
            denied_programs: Vec::new(),
            denied_names: Vec::new(),
            unresolved: Vec::new(),
            refused: Vec::new(),
            search_path,
        };
        for entry in &config.denied_commands {
            check_entry_text(entry)?;
            if !entry.contains('/') {
                policy.denied_names.push(entry.clone());
            }
            match resolve_program(entry, relative_to, &policy.search_path) {
                Ok(program) => policy.denied_programs.push((entry.clone(), program)),
                Err(_) if !entry.contains('/') => {}
                Err(_) => policy.unresolved.push(entry.clone()),
            }
        }
        for entry in &config.allowed_commands {
            check_entry_text(entry)?;
            let program = match resolve_program(entry, relative_to, &policy.search_path) {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(%entry, error = %e, "allowed command does not resolve; ignoring it");
                    policy.unresolved.push(entry.clone());
                    continue;
                }
            };
            if let Some(reason) = policy.denial_reason(entry, &program) {
                tracing::warn!(%entry, program = %program.display(), %reason, "allowed command is also denied; it will be refused");
            }
            let name = program
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if LAUNCHERS.contains(&name.as_str()) || LAUNCHERS.contains(&entry.as_str()) {
                tracing::warn!(%entry, program = %program.display(),
                    "allowed command can start other programs; the sandbox cannot confine what it runs");
            }
            let timeout = config
                .command_timeouts
                .get(entry)
                .map(|s| Duration::from_secs_f64(*s))
                .unwrap_or(default_timeout);
            policy.allowed.push(AllowedCommand {
                entry: entry.clone(),
                identity: FileIdentity::of(&program),
                program,
                timeout,
            });
        }
        policy.refuse_unallowed_interpreters();
        Ok(policy)
    }

    /// A script runs its `#!` interpreter, which can then be started by anything the command
    /// runs: a script whose interpreter is not itself an allowed, non-denied program is
    /// refused at start-up (logged, listed with the unresolved entries, and kept in
    /// [`Self::refused_programs`] so that it stays as unwritable as an allowed program).
    fn refuse_unallowed_interpreters(&mut self) {
        let programs = self.programs();
        let mut keep = Vec::new();
        for a in std::mem::take(&mut self.allowed) {
            let refusal = super::kernel::script_interpreter(&a.program).and_then(|interp| {
                let canonical = std::fs::canonicalize(&interp).unwrap_or(interp.clone());
                if !programs.contains(&canonical) {
                    Some(format!(
                        "its #! interpreter {} is not an allowed command",
                        interp.display()
                    ))
                } else {
                    self.denial_reason(&interp.to_string_lossy(), &canonical)
                        .map(|why| format!("its #! interpreter {}: {why}", interp.display()))
                }
            });
            match refusal {
                Some(reason) => {
                    tracing::error!(entry = %a.entry, program = %a.program.display(), %reason,
                        "allowed script refused");
                    self.unresolved
                        .push(format!("{} (refused: {reason})", a.entry));
                    // Still the operator's file: neither the file tools nor commands may
                    // rewrite it (a new `#!` line would make it start on the next run).
                    if !self.refused.contains(&a.program) {
                        self.refused.push(a.program);
                    }
                }
                None => keep.push(a),
            }
        }
        self.allowed = keep;
    }

    /// Why a program is denied, if it is: by canonical file or by bare name.
    fn denial_reason(&self, requested: &str, program: &Path) -> Option<String> {
        if let Some((entry, _)) = self.denied_programs.iter().find(|(_, p)| p == program) {
            return Some(format!(
                "it resolves to the program of the denied_commands entry {entry:?}"
            ));
        }
        let names = [Path::new(requested).file_name(), program.file_name()];
        for name in names.into_iter().flatten() {
            let name = name.to_string_lossy();
            if self.denied_names.iter().any(|d| *d == name) {
                return Some(format!("the program name {name:?} is in denied_commands"));
            }
        }
        None
    }

    /// Canonical files of the allowed programs.
    pub(crate) fn programs(&self) -> Vec<PathBuf> {
        self.allowed.iter().map(|a| a.program.clone()).collect()
    }

    /// Files of allowed scripts refused at start-up.
    pub(crate) fn refused_programs(&self) -> &[PathBuf] {
        &self.refused
    }

    pub(crate) fn allowed_count(&self) -> usize {
        self.allowed.len()
    }

    pub(crate) fn search_path(&self) -> &[PathBuf] {
        &self.search_path
    }

    pub(crate) fn unresolved(&self) -> &[String] {
        &self.unresolved
    }

    /// The `PATH` value handed to commands.
    pub(crate) fn search_path_env(&self) -> Option<String> {
        std::env::join_paths(&self.search_path)
            .ok()
            .map(|s| s.to_string_lossy().into_owned())
    }

    pub(crate) fn allowed_report(&self) -> Vec<String> {
        self.allowed
            .iter()
            .map(|a| {
                format!(
                    "{} -> {} (timeout {} s)",
                    a.entry,
                    a.program.display(),
                    a.timeout.as_secs_f64()
                )
            })
            .collect()
    }

    pub(crate) fn denied_report(&self) -> Vec<String> {
        let mut out: BTreeMap<String, String> = BTreeMap::new();
        for name in &self.denied_names {
            out.insert(name.clone(), format!("{name} (by name)"));
        }
        for (entry, program) in &self.denied_programs {
            out.insert(entry.clone(), format!("{entry} -> {}", program.display()));
        }
        out.into_values().collect()
    }

    fn allowed_names(&self) -> String {
        if self.allowed.is_empty() {
            return "none".to_string();
        }
        self.allowed
            .iter()
            .map(|a| a.entry.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn check_entry_text(entry: &str) -> Result<(), SandboxError> {
    if entry.is_empty() || entry.contains('\0') {
        return Err(SandboxError::Config {
            reason: format!("command entry {entry:?} is empty or contains a NUL byte"),
        });
    }
    Ok(())
}

/// Resolves a program the way `execve` would find it, to its canonical file:
/// a name containing `/` is a path (relative ones against `cwd`); a bare name is looked up in
/// `search_path` (first executable regular file wins). Symlinks are resolved.
pub fn resolve_program(
    program: &str,
    cwd: &Path,
    search_path: &[PathBuf],
) -> Result<PathBuf, std::io::Error> {
    if program.contains('/') {
        let p = Path::new(program);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        let canonical = std::fs::canonicalize(&abs)?;
        return if is_executable_file(&canonical) {
            Ok(canonical)
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("{} is not an executable file", canonical.display()),
            ))
        };
    }
    for dir in search_path {
        let candidate = dir.join(program);
        if is_executable_file(&candidate) {
            return std::fs::canonicalize(&candidate);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{program:?} was not found in the command search path"),
    ))
}

/// Regular file (after following symlinks) with at least one execute bit.
fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

impl Sandbox {
    /// Decides whether `program` may run with working directory `cwd` (a checked directory):
    /// resolves it to its canonical file, then applies denied (wins) and allowed.
    pub fn check_command(&self, program: &str, cwd: &Path) -> Result<CheckedCommand, SandboxError> {
        let policy = self.command_policy();
        let what = || format!("command {program:?}");
        if program.is_empty() {
            return Err(SandboxError::invalid(
                "command",
                "it is empty",
                format!("Pass a program name, one of: {}.", policy.allowed_names()),
            ));
        }
        if program.contains('\0') {
            return Err(SandboxError::invalid(
                format!("command {:?}", program.replace('\0', "\\0")),
                "it contains a NUL byte",
                "Remove the NUL byte.",
            ));
        }
        if program.len() > MAX_PROGRAM_BYTES {
            return Err(SandboxError::invalid(
                format!("command of {} bytes", program.len()),
                format!("it is longer than {MAX_PROGRAM_BYTES} bytes"),
                "Pass a program name.",
            ));
        }
        if program.trim() != program
            || program.contains(char::is_whitespace) && !program.contains('/')
        {
            return Err(SandboxError::invalid(
                what(),
                "it contains whitespace; commands run without a shell, so the program and its \
                 arguments must be given separately",
                "Put only the program name in `command` and each argument in `args`.",
            ));
        }
        // A denied bare name is refused before any file system probing.
        if let Some(name) = Path::new(program).file_name() {
            let name = name.to_string_lossy();
            if policy.denied_names.iter().any(|d| *d == name) {
                return Err(SandboxError::denied(
                    what(),
                    format!("the program name {name:?} is in denied_commands"),
                    "This program is off limits in the sandbox configuration; use another one.",
                ));
            }
        }
        let resolved = match resolve_program(program, cwd, &policy.search_path) {
            Ok(p) => p,
            Err(_) if !program.contains('/') => {
                return Err(SandboxError::NotFound {
                    what: format!("program {program:?} in the command search path"),
                    action: format!(
                        "Use one of the allowed commands: {}.",
                        policy.allowed_names()
                    ),
                });
            }
            Err(_) => {
                // For paths, do not tell "missing" from "not allowed": both are refusals.
                return Err(SandboxError::denied(
                    what(),
                    "it does not resolve to an allowed program",
                    format!(
                        "Use one of the allowed commands: {}.",
                        policy.allowed_names()
                    ),
                ));
            }
        };
        // The resolved program is named only when it lies inside the sandbox.
        let what_resolved = || {
            if self.is_inside_allowed(&resolved) {
                format!("command {program:?} (resolves to {})", self.show(&resolved))
            } else {
                format!("command {program:?}")
            }
        };
        if let Some(reason) = policy.denial_reason(program, &resolved) {
            return Err(SandboxError::denied(
                what_resolved(),
                reason,
                "This program is off limits in the sandbox configuration; use another one.",
            ));
        }
        match policy.allowed.iter().find(|a| a.program == resolved) {
            Some(a) if a.identity.is_none() || FileIdentity::of(&resolved) != a.identity => {
                Err(SandboxError::denied(
                    what_resolved(),
                    "the program file was replaced or modified since the server started",
                    "Ask the operator to check the program and restart the server.",
                ))
            }
            Some(a) => Ok(CheckedCommand {
                program: resolved,
                entry: a.entry.clone(),
                timeout: a.timeout,
            }),
            None if policy.allowed.is_empty() => Err(SandboxError::denied(
                what_resolved(),
                "no commands are allowed (allowed_commands is empty)",
                "Ask the operator to add the program to allowed_commands in the sandbox configuration.",
            )),
            None => Err(SandboxError::denied(
                what_resolved(),
                format!(
                    "it is not in allowed_commands (allowed: {})",
                    policy.allowed_names()
                ),
                format!(
                    "Use one of the allowed commands: {}; or ask the operator to add this one.",
                    policy.allowed_names()
                ),
            )),
        }
    }

    /// Checks command arguments: no NUL bytes, bounded size, and (when `confine_path_arguments`
    /// is on) every argument that looks like a path — absolute, containing `/` or `..`, naming an
    /// existing entry, or the value of `--opt=value`, `key=value` or `-Xvalue` — must resolve
    /// inside the sandbox. Best effort: it cannot see paths a program builds by itself.
    pub fn check_arguments(&self, args: &[String], cwd: &Path) -> Result<(), SandboxError> {
        if args.len() > MAX_ARGS {
            return Err(SandboxError::invalid(
                "args",
                format!(
                    "there are {} arguments, over the limit of {MAX_ARGS}",
                    args.len()
                ),
                "Pass fewer arguments.",
            ));
        }
        let total: usize = args.iter().map(String::len).sum();
        if total > MAX_ARGS_BYTES {
            return Err(SandboxError::invalid(
                "args",
                format!("they total {total} bytes, over the limit of {MAX_ARGS_BYTES}"),
                "Pass shorter arguments.",
            ));
        }
        for (i, arg) in args.iter().enumerate() {
            if arg.contains('\0') {
                return Err(SandboxError::invalid(
                    format!("argument {i} {:?}", arg.replace('\0', "\\0")),
                    "it contains a NUL byte, which cannot be passed to a program",
                    "Remove the NUL byte.",
                ));
            }
        }
        if !self.confines_path_arguments() {
            return Ok(());
        }
        for arg in args {
            for candidate in path_candidates(arg) {
                if !looks_like_path(candidate, cwd) {
                    continue;
                }
                let checked = self
                    .check_path_in(candidate, cwd)
                    .and_then(|resolved| reject_hard_linked(&resolved.full(), candidate));
                if let Err(e) = checked {
                    let reason = match &e {
                        SandboxError::Denied { reason, .. }
                        | SandboxError::InvalidInput { reason, .. } => reason.clone(),
                        other => other.to_string(),
                    };
                    let shown = if candidate == arg {
                        format!("argument {arg:?}")
                    } else {
                        format!("argument {arg:?} (path part {candidate:?})")
                    };
                    return Err(SandboxError::denied(
                        shown,
                        format!("it looks like a path, and {reason}"),
                        "Pass only paths inside the sandbox as arguments; relative ones are \
                         resolved against the command's working directory.",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Refuses a regular file with more than one hard link: another name of it may lie outside
/// the sandbox, and no path check (nor Landlock, which grants by path) can tell.
fn reject_hard_linked(location: &Path, input: &str) -> Result<(), SandboxError> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(location) {
        Ok(m) if m.is_file() && m.nlink() > 1 => Err(SandboxError::denied(
            format!("path {input:?}"),
            format!(
                "it is a file with {} hard links, and another name of it may be outside the sandbox",
                m.nlink()
            ),
            "Use a file with a single name.",
        )),
        _ => Ok(()),
    }
}

/// How many letters of a short-option cluster (`-rnfVALUE`) may precede an attached value.
const MAX_CLUSTER_LETTERS: usize = 8;

/// The argument itself, the value after the first `=`, and for a short-option cluster
/// (`-fVALUE`, `-rnfVALUE`) every suffix that could be the attached value of one of its letters.
fn path_candidates(arg: &str) -> Vec<&str> {
    let mut out = vec![arg];
    if let Some((_, value)) = arg.split_once('=') {
        out.push(value);
    }
    if arg.starts_with('-') && !arg.starts_with("--") {
        for (i, _) in arg.char_indices().skip(2).take(MAX_CLUSTER_LETTERS) {
            out.push(&arg[i..]);
        }
    }
    out.retain(|c| !c.is_empty() && *c != "-");
    out
}

fn looks_like_path(candidate: &str, cwd: &Path) -> bool {
    candidate.starts_with('/')
        || candidate.contains('/')
        || candidate == ".."
        || candidate.starts_with('~')
        || std::fs::symlink_metadata(cwd.join(candidate)).is_ok()
}
