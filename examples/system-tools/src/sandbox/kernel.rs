//! The kernel half of the command sandbox: a Landlock ruleset built from the configuration and
//! applied to every command between `fork` and `exec`.
//!
//! What one ruleset grants (everything else that Landlock handles is denied):
//!
//! - **allowed paths**: read, write, create, remove, rename inside them, except the denied paths.
//!   Landlock only grants, so a directory that holds a denied path (a *split* directory) gets no
//!   rule of its own; each of its other children is granted instead, recursively down to the
//!   denied path. A split directory can therefore not be listed, and entries created in it after
//!   the ruleset was built are out of reach until the next call (the ruleset is rebuilt per call).
//!   Allowed programs that live inside an allowed path are treated like denied paths for writing,
//!   so a command cannot rewrite them.
//! - **system paths** (`command_read_paths`): read files and list directories, no execution.
//! - **executable files**: each allowed program, its ELF interpreter and its `#!` interpreter;
//!   plus `command_exec_paths` (read + execute). Nothing else can be executed, so an allowed
//!   program cannot start a denied one through its own options.
//! - `/dev/null` read/write, `/dev/zero`, `/dev/random`, `/dev/urandom` read. No `/proc` at all.
//! - **network**: TCP bind and connect only on the configured ports.
//! - **scopes** (ABI 6): no signals to processes outside the command's own domain, no connection
//!   to abstract unix sockets created outside it.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use rustix::fs::{FileType, Mode, OFlags, fstat, openat};
use serde::{Deserialize, Serialize};

use super::error::SandboxError;

/// The Landlock ABI whose features the ruleset uses: file-system rights up to ABI 5, TCP rules
/// (ABI 4), signal and abstract-socket scoping (ABI 6).
pub const REQUIRED_ABI: i32 = 6;

/// Most rules one ruleset may hold (split directories with huge numbers of children).
const MAX_RULES: usize = 20_000;

/// Most interpreter hops followed from an allowed program (`script -> sh -> ld.so`).
const MAX_INTERPRETER_DEPTH: usize = 4;

/// Read-only system paths commands get by default: programs, libraries, and the few files of
/// `/etc` a dynamic binary reads. Entries missing on a machine are skipped.
pub const DEFAULT_COMMAND_READ_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/locale.alias",
];

/// Device files every command may read (`/dev/null` also write).
const READ_DEVICES: &[&str] = &["/dev/zero", "/dev/random", "/dev/urandom"];

/// What to do when the kernel cannot enforce the ruleset.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KernelSandboxMode {
    /// Commands are refused unless the kernel enforces every rule (Landlock ABI 6 or newer).
    #[default]
    Required,
    /// Commands run with whatever part of the ruleset the kernel supports (maybe none).
    BestEffort,
}

/// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a number.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Everything needed to build a command's ruleset, fixed at start-up.
#[derive(Debug)]
pub(crate) struct LandlockPolicy {
    mode: KernelSandboxMode,
    abi: i32,
    /// Why commands are refused (required mode on a kernel without the needed ABI).
    refusal: Option<String>,
    allowed: Vec<PathBuf>,
    /// Denied paths plus allowed programs inside allowed paths: no read/write rule covers them.
    excluded: Vec<PathBuf>,
    read_paths: Vec<PathBuf>,
    exec_paths: Vec<PathBuf>,
    exec_files: Vec<PathBuf>,
    tcp_connect: Vec<u16>,
    tcp_bind: Vec<u16>,
    /// Denied paths are hidden by the command's mount namespace: each allowed path is granted
    /// whole (one rule), instead of split around the denied paths.
    hidden_denied: bool,
}

/// Inputs of [`LandlockPolicy::new`].
pub(crate) struct PolicyInput<'a> {
    pub mode: KernelSandboxMode,
    pub abi: i32,
    pub allowed: &'a [PathBuf],
    pub denied: &'a [PathBuf],
    pub programs: Vec<PathBuf>,
    pub read_paths: Vec<PathBuf>,
    pub exec_paths: Vec<PathBuf>,
    pub tcp_connect: Vec<u16>,
    pub tcp_bind: Vec<u16>,
    pub hidden_denied: bool,
    /// Files never writable by commands besides the allowed programs (refused scripts).
    pub protected: Vec<PathBuf>,
}

/// A ruleset ready to be applied in a child: its descriptor and what it holds.
#[derive(Debug)]
pub(crate) struct PreparedRuleset {
    fd: Option<OwnedFd>,
    /// Number of path rules in it.
    pub path_rules: usize,
}

impl PreparedRuleset {
    /// The raw descriptor for the child (`None` when nothing is enforced).
    pub(crate) fn raw_fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(|f| f.as_raw_fd())
    }
}

/// Applies a ruleset to the calling process: `PR_SET_NO_NEW_PRIVS`, then
/// `landlock_restrict_self`. Makes no allocation, so it is safe between `fork` and `exec`.
pub(crate) fn restrict_self(fd: Option<RawFd>) -> std::io::Result<()> {
    // SAFETY: plain system calls on integers.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(fd) = fd
            && libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What the kernel enforces on commands, for `system_info`, `check-config` and the log.
/// Holds no host path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelSandboxReport {
    /// `required` or `best_effort`.
    pub mode: KernelSandboxMode,
    /// The kernel's Landlock ABI (0: no Landlock).
    pub kernel_abi: i32,
    /// The ABI whose features the ruleset uses.
    pub ruleset_abi: i32,
    /// `enforced` (every rule), `partial` (best effort on an older kernel), `none` (best effort
    /// without Landlock) or `commands_refused` (required, but the kernel cannot enforce it).
    pub status: String,
    /// One sentence per rule group.
    pub rules: Vec<String>,
}

impl LandlockPolicy {
    pub(crate) fn new(input: PolicyInput<'_>) -> Self {
        let PolicyInput {
            mode,
            abi,
            allowed,
            denied,
            programs,
            read_paths,
            exec_paths,
            tcp_connect,
            tcp_bind,
            hidden_denied,
            protected,
        } = input;
        let refusal = (mode == KernelSandboxMode::Required && abi < REQUIRED_ABI).then(|| {
            if abi == 0 {
                format!(
                    "the kernel has no Landlock support (Landlock ABI {REQUIRED_ABI} is needed to \
                     confine commands)"
                )
            } else {
                format!(
                    "the kernel's Landlock ABI is {abi}, and confining commands needs ABI \
                     {REQUIRED_ABI} (signal and abstract-socket scoping)"
                )
            }
        });
        let mut excluded: Vec<PathBuf> = denied.to_vec();
        for p in programs.iter().chain(&protected) {
            if allowed.iter().any(|a| p.starts_with(a)) && !excluded.contains(p) {
                excluded.push(p.clone());
            }
        }
        let mut exec_files = Vec::new();
        for p in programs {
            collect_interpreters(&p, 0, &mut exec_files);
        }
        LandlockPolicy {
            mode,
            abi,
            refusal,
            allowed: allowed.to_vec(),
            excluded,
            read_paths: canonical_existing(read_paths),
            exec_paths: canonical_existing(exec_paths),
            exec_files,
            tcp_connect,
            tcp_bind,
            hidden_denied,
        }
    }

    /// Why commands cannot run, when they cannot.
    pub(crate) fn refusal(&self) -> Option<&str> {
        self.refusal.as_deref()
    }

    pub(crate) fn report(&self) -> KernelSandboxReport {
        let status = if self.refusal.is_some() {
            "commands_refused"
        } else if self.abi >= REQUIRED_ABI {
            "enforced"
        } else if self.abi > 0 {
            "partial"
        } else {
            "none"
        };
        let ports = |p: &[u16]| {
            if p.is_empty() {
                "no port".to_string()
            } else {
                p.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
            }
        };
        KernelSandboxReport {
            mode: self.mode,
            kernel_abi: self.abi,
            ruleset_abi: REQUIRED_ABI,
            status: status.to_string(),
            rules: vec![
                format!(
                    "read/write: inside the {} allowed path(s), except {} denied path(s) and the \
                     allowed programs stored there",
                    self.allowed.len(),
                    self.excluded.len()
                ),
                format!(
                    "read only: {} system path(s) (command_read_paths), /dev/null (also write), \
                     /dev/zero, /dev/random, /dev/urandom; no /proc",
                    self.read_paths.len()
                ),
                format!(
                    "execute: the allowed programs and their interpreters ({} file(s)), and {} \
                     command_exec_paths entr(ies); nothing else",
                    self.exec_files.len(),
                    self.exec_paths.len()
                ),
                format!(
                    "network: TCP connect to {}, TCP bind to {}",
                    ports(&self.tcp_connect),
                    ports(&self.tcp_bind)
                ),
                "scopes: no signals to processes outside the command, no abstract unix sockets \
                 created outside it"
                    .to_string(),
            ],
        }
    }

    /// A line for the start-up log with every path the rules name.
    pub(crate) fn log_summary(&self) -> String {
        let join = |v: &[PathBuf]| {
            v.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "read/write [{}] minus [{}]; read [{}]; execute [{}] and [{}]; tcp connect {:?}, bind {:?}",
            join(&self.allowed),
            join(&self.excluded),
            join(&self.read_paths),
            join(&self.exec_files),
            join(&self.exec_paths),
            self.tcp_connect,
            self.tcp_bind
        )
    }

    /// Builds the ruleset for one command from the file system as it is now.
    pub(crate) fn prepare(&self) -> Result<PreparedRuleset, SandboxError> {
        if let Some(reason) = &self.refusal {
            return Err(refused(reason));
        }
        if self.abi == 0 {
            return Ok(PreparedRuleset {
                fd: None,
                path_rules: 0,
            });
        }
        let err = |e: landlock::RulesetError| {
            SandboxError::io(
                "building the Landlock ruleset",
                std::io::Error::other(e.to_string()),
            )
        };
        let abi = ABI::V6;
        let level = match self.mode {
            KernelSandboxMode::Required => CompatLevel::HardRequirement,
            KernelSandboxMode::BestEffort => CompatLevel::BestEffort,
        };
        let mut ruleset = Ruleset::default()
            .set_compatibility(level)
            .handle_access(AccessFs::from_all(abi))
            .map_err(err)?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(err)?
            .create()
            .map_err(err)?;
        let mut rules = Rules { count: 0 };
        for root in &self.allowed {
            if self.excluded.iter().any(|d| root.starts_with(d)) {
                continue;
            }
            let fd = match super::secure_fs::open_dir_path(root) {
                Ok(fd) => fd,
                // A file given as an allowed path.
                Err(_) => match open_path(root) {
                    Ok(fd) => fd,
                    Err(e) => {
                        tracing::warn!(path = %root.display(), error = %e, "allowed path cannot be opened for the Landlock ruleset");
                        continue;
                    }
                },
            };
            ruleset = self.grant(ruleset, fd, root, &mut rules)?;
        }
        for p in &self.read_paths {
            ruleset = add_path(
                ruleset,
                p,
                read_dir_rights(),
                read_file_rights(),
                &mut rules,
            )?;
        }
        for p in &self.exec_paths {
            ruleset = add_path(
                ruleset,
                p,
                read_dir_rights() | AccessFs::Execute,
                read_file_rights() | AccessFs::Execute,
                &mut rules,
            )?;
        }
        for p in &self.exec_files {
            let rights = read_file_rights() | AccessFs::Execute;
            ruleset = add_path(ruleset, p, rights, rights, &mut rules)?;
        }
        let null_rights = read_file_rights() | AccessFs::WriteFile | AccessFs::Truncate;
        ruleset = add_path(
            ruleset,
            Path::new("/dev/null"),
            null_rights,
            null_rights,
            &mut rules,
        )?;
        for d in READ_DEVICES {
            ruleset = add_path(
                ruleset,
                Path::new(d),
                read_file_rights(),
                read_file_rights(),
                &mut rules,
            )?;
        }
        for port in &self.tcp_connect {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(err)?;
        }
        for port in &self.tcp_bind {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::BindTcp))
                .map_err(err)?;
        }
        Ok(PreparedRuleset {
            fd: Option::<OwnedFd>::from(ruleset),
            path_rules: rules.count,
        })
    }

    /// Grants read/write on `path` (open as `fd`), or, when excluded paths lie below it, on each
    /// of its children that is not excluded (recursively).
    fn grant(
        &self,
        mut ruleset: RulesetCreated,
        fd: OwnedFd,
        path: &Path,
        rules: &mut Rules,
    ) -> Result<RulesetCreated, SandboxError> {
        let is_dir = is_directory(&fd);
        let split = is_dir
            && !self.hidden_denied
            && self
                .excluded
                .iter()
                .any(|d| d != path && d.starts_with(path));
        if !split {
            let rights = if is_dir {
                rw_dir_rights()
            } else {
                rw_file_rights()
            };
            return rules.add(ruleset, fd, rights);
        }
        let listing = openat(
            &fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| SandboxError::io("listing a directory for the Landlock ruleset", e.into()))?;
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&listing).map_err(|e| {
            SandboxError::io("listing a directory for the Landlock ruleset", e.into())
        })? {
            let entry = entry.map_err(|e| {
                SandboxError::io("listing a directory for the Landlock ruleset", e.into())
            })?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        for name in names {
            let child = path.join(&name);
            if self.excluded.iter().any(|d| child.starts_with(d)) {
                continue;
            }
            let Ok(child_fd) = openat(
                &fd,
                &name,
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            // Symlinks are resolved at access time to a target that needs its own rule;
            // FIFOs, sockets and devices get none.
            if let Ok(FileType::Directory | FileType::RegularFile) =
                fstat(&child_fd).map(|st| FileType::from_raw_mode(st.st_mode))
            {
                ruleset = self.grant(ruleset, child_fd, &child, rules)?;
            }
        }
        Ok(ruleset)
    }
}

struct Rules {
    count: usize,
}

impl Rules {
    fn add(
        &mut self,
        ruleset: RulesetCreated,
        fd: impl AsFd,
        rights: BitFlags<AccessFs>,
    ) -> Result<RulesetCreated, SandboxError> {
        self.count += 1;
        if self.count > MAX_RULES {
            return Err(SandboxError::denied(
                "the command's Landlock ruleset",
                format!(
                    "it would need more than {MAX_RULES} rules (directories holding denied paths \
                     have too many entries)"
                ),
                "Ask the operator to move the denied paths, or to allow narrower paths.",
            ));
        }
        ruleset.add_rule(PathBeneath::new(fd, rights)).map_err(|e| {
            SandboxError::io(
                "adding a Landlock rule",
                std::io::Error::other(e.to_string()),
            )
        })
    }
}

fn refused(reason: &str) -> SandboxError {
    SandboxError::denied(
        "running commands",
        format!("{reason}, and kernel_sandbox is \"required\""),
        "Ask the operator to run the server on a kernel with Landlock ABI 6 or newer, or to set \
         kernel_sandbox = \"best_effort\" in the sandbox configuration (commands then run with \
         only the argument checks and what the kernel supports).",
    )
}

/// Adds a rule for an existing path (directory or file rights by its type); missing paths are
/// skipped.
fn add_path(
    ruleset: RulesetCreated,
    path: &Path,
    dir_rights: BitFlags<AccessFs>,
    file_rights: BitFlags<AccessFs>,
    rules: &mut Rules,
) -> Result<RulesetCreated, SandboxError> {
    let Ok(fd) = open_path(path) else {
        return Ok(ruleset);
    };
    let rights = if is_directory(&fd) {
        dir_rights
    } else {
        file_rights
    };
    rules.add(ruleset, fd, rights)
}

fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    Ok(openat(
        rustix::fs::CWD,
        path,
        OFlags::PATH | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

fn is_directory(fd: &OwnedFd) -> bool {
    fstat(fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

fn read_file_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile.into()
}

fn read_dir_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

fn rw_file_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate
}

/// Everything of ABI 6 but execution, device ioctls and device-node creation.
fn rw_dir_rights() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI::V6)
        & !(AccessFs::Execute | AccessFs::IoctlDev | AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// Canonical forms of the paths that exist, without those inside another one.
fn canonical_existing(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if let Ok(c) = std::fs::canonicalize(&p)
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    let all = out.clone();
    out.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    out
}

/// `program` and the chain of interpreters the kernel loads for it (for the namespace's
/// view: the files bound executable).
pub(crate) fn collect_interpreters_pub(program: &Path, out: &mut Vec<PathBuf>) {
    collect_interpreters(program, 0, out);
}

/// Adds `program` and, recursively, the interpreter the kernel loads for it: the `PT_INTERP`
/// of an ELF file or the first word of a `#!` line.
fn collect_interpreters(program: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(program) = std::fs::canonicalize(program) else {
        return;
    };
    if out.contains(&program) {
        return;
    }
    out.push(program.clone());
    if depth >= MAX_INTERPRETER_DEPTH {
        return;
    }
    if let Some(interpreter) = interpreter_of(&program) {
        collect_interpreters(&interpreter, depth + 1, out);
    }
}

/// The interpreter named by a script's `#!` line (`None` for anything else).
pub(crate) fn script_interpreter(program: &Path) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    head[..n]
        .starts_with(b"#!")
        .then(|| interpreter_of(program))?
}

fn interpreter_of(program: &Path) -> Option<PathBuf> {
    let mut file = std::fs::File::open(program).ok()?;
    let mut head = [0u8; 256];
    let n = file.read(&mut head).ok()?;
    let head = &head[..n];
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|b| *b == b'\n').next()?;
        let word = line
            .split(|b| *b == b' ' || *b == b'\t')
            .find(|w| !w.is_empty())?;
        return Some(PathBuf::from(OsStr::from_bytes(word)));
    }
    elf_interpreter(&mut file, head)
}

/// The `PT_INTERP` path of a 64-bit little-endian ELF file.
fn elf_interpreter(file: &mut std::fs::File, head: &[u8]) -> Option<PathBuf> {
    use std::io::{Seek, SeekFrom};
    if head.len() < 64 || &head[..4] != b"\x7fELF" || head[4] != 2 || head[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
    let phoff = u64_at(head, 32);
    let phentsize = usize::from(u16_at(head, 54));
    let phnum = usize::from(u16_at(head, 56)).min(64);
    if phentsize < 56 {
        return None;
    }
    let mut table = vec![0u8; phentsize * phnum];
    file.seek(SeekFrom::Start(phoff)).ok()?;
    file.read_exact(&mut table).ok()?;
    for ph in table.chunks_exact(phentsize) {
        const PT_INTERP: u32 = 3;
        if u32::from_le_bytes([ph[0], ph[1], ph[2], ph[3]]) == PT_INTERP {
            let offset = u64_at(ph, 8);
            let size = usize::try_from(u64_at(ph, 32)).ok()?.min(4096);
            let mut name = vec![0u8; size];
            file.seek(SeekFrom::Start(offset)).ok()?;
            file.read_exact(&mut name).ok()?;
            let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
            return Some(PathBuf::from(OsStr::from_bytes(&name[..end])));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_kernel_reports_an_abi() {
        // The machines this project runs on have Landlock; the number is what `system_info` shows.
        assert!(kernel_abi() >= 0);
    }

    #[test]
    fn finds_the_elf_interpreter_of_a_dynamic_program() {
        let ls = std::fs::canonicalize("/bin/ls").unwrap();
        let mut out = Vec::new();
        collect_interpreters(&ls, 0, &mut out);
        assert_eq!(out[0], ls);
        assert!(
            out.iter().any(|p| p.to_string_lossy().contains("ld-linux")),
            "{out:?}"
        );
    }

    #[test]
    fn follows_a_shebang_to_its_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s");
        std::fs::write(&script, "#!/bin/sh -e\necho hi\n").unwrap();
        let mut out = Vec::new();
        collect_interpreters(&script, 0, &mut out);
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        assert!(out.contains(&sh), "{out:?}");
        assert!(out.len() >= 3, "script, sh and its loader: {out:?}");
    }
}
