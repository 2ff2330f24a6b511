//! The outer layers around every command: bubblewrap (Debian's `bubblewrap`, the sandbox
//! Flatpak uses) builds its namespaces and its view of the file system, then runs this
//! binary's launcher ([`super::launch`]) inside them, which adds `noexec`, resource limits,
//! drops capabilities and applies Landlock and seccomp before executing the program.
//!
//! The view (a mount namespace whose root is an empty tmpfs):
//! - each system path (`command_read_paths`) read-only (symlinks such as `/lib64 -> usr/lib64`
//!   recreated as symlinks), later remounted `noexec`;
//! - each allowed path read-write, later remounted `noexec`; every existing denied path below
//!   it covered by an empty read-only tmpfs (a directory) or an empty read-only file: its
//!   parent lists, `grep -r` and `find` walk past it, and its content is not there;
//! - the allowed programs, their ELF loader, the shared libraries they load (as listed by the
//!   loader at start-up) and the `command_exec_paths` entries bound read-only one by one on
//!   top: the only files that can be executed or mapped executable;
//! - allowed scripts refused at start-up (their `#!` interpreter is not allowed) bound
//!   read-only over themselves: nothing can rewrite, replace or `chmod` them (and their
//!   interpreter is not executable in the view);
//! - `/dev` with `null`, `zero`, `full`, `random`, `urandom` (Landlock narrows it);
//!   no `/proc`, no `/sys`, no `/tmp`.
//!
//! With the sandbox holder ([`super::holder`], the default) the view and the user, mount and
//! network namespaces are built once by one long-lived bubblewrap ([`Isolation::holder_line`])
//! and each call gets new user, pid, IPC and UTS namespaces from the holder; otherwise one
//! bubblewrap per call builds everything ([`Isolation::command_line`]).
//!
//! Namespaces: user (the command's uid maps to an unprivileged host uid: the server's own, or
//! when the server is root the configured `command_uid`, else the owner of the base
//! directory, else 65534), mount, pid, IPC, UTS, cgroup, and network (only loopback, unless
//! TCP ports are allowed: then the host's network, narrowed by Landlock and seccomp).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::launch::LaunchSpec;

/// Whether commands must run inside their namespaces.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum NamespaceMode {
    /// Commands are refused unless bubblewrap and this binary's launcher can build their
    /// namespaces (checked at start-up).
    #[default]
    Required,
    /// No namespaces: commands run under Landlock and the call's cgroup only (the layout of
    /// earlier versions; denied paths then block their parent directory).
    Off,
}

/// The uid used when a root server has no `command_uid` and the base directory is root's.
pub const NOBODY: u32 = 65534;

/// Per-call resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommandLimits {
    /// Processes (and threads) of one call.
    pub pids_max: u64,
    /// Memory of one call (cgroup `memory.max` where available; always the address-space
    /// limit of each process).
    pub memory_max_bytes: u64,
    /// CPU seconds of each process of one call.
    pub cpu_secs: u64,
}

/// What every command can reach inside its namespaces: `check-config` prints it. Paths are
/// the host's, as the command sees them (bound at the same place).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommandReach {
    /// The identity a command runs with.
    pub runs_as: String,
    /// Each allowed program and what it runs besides itself: its `#!` interpreters, the ELF
    /// loader and the libraries the loader maps.
    pub programs: Vec<ProgramReach>,
    /// Every file (or directory) a command can execute: the allowed programs' closures and
    /// `command_exec_paths`. Nothing else in the namespace is executable.
    pub executable: Vec<String>,
    /// Visible, read-only: the system files the configuration lists, the programs' own files
    /// inside the sandbox, `command_exec_paths`.
    pub read_only: Vec<String>,
    /// Visible and writable: the allowed paths (Landlock narrows further).
    pub read_write: Vec<String>,
    /// Denied paths: not there at all (an empty directory or file stands in their place).
    pub hidden: Vec<String>,
    /// The network it has.
    pub network: String,
    /// The processes it can see.
    pub processes: String,
}

/// One allowed program's entry in [`CommandReach`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProgramReach {
    /// The program.
    pub program: String,
    /// What it runs besides itself (interpreters, loader, libraries).
    pub runs: Vec<String>,
}

/// Everything fixed at start-up that each call's command line is built from.
#[derive(Debug)]
pub(crate) struct Isolation {
    bwrap: PathBuf,
    launcher: PathBuf,
    /// Host uid/gid the command runs as (and, inside its user namespace, the same numbers).
    pub uid: u32,
    pub gid: u32,
    /// Switch to `uid`/`gid` before starting bubblewrap (the server is root).
    switch_user: bool,
    /// Read-only system paths: (path, Some(symlink target) | None for a bind).
    read: Vec<(PathBuf, Option<PathBuf>)>,
    allowed: Vec<PathBuf>,
    denied: Vec<PathBuf>,
    /// Files bound one by one so they stay executable.
    exec: Vec<PathBuf>,
    /// Each allowed program and what it runs: its `#!` interpreters, loader and libraries.
    closures: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Whole directories bound executable (`command_exec_paths`).
    exec_dirs: Vec<PathBuf>,
    /// Allowed scripts refused at start-up: bound read-only over themselves, so no command
    /// can rewrite, replace or `chmod` them.
    protected: Vec<PathBuf>,
    host_network: bool,
    allow_listen: bool,
    pub limits: CommandLimits,
    /// The long-lived holder calls go through (`None`: one bubblewrap per call).
    holder: Option<super::holder::HolderSlot>,
}

/// Inputs of [`Isolation::new`].
pub(crate) struct IsolationInput<'a> {
    pub bwrap: Option<PathBuf>,
    pub launcher: Option<PathBuf>,
    pub command_uid: Option<u32>,
    pub command_gid: Option<u32>,
    pub base_dir: &'a Path,
    pub read_paths: &'a [PathBuf],
    pub allowed: &'a [PathBuf],
    pub denied: &'a [PathBuf],
    pub programs: &'a [PathBuf],
    pub exec_dirs: &'a [PathBuf],
    pub protected: &'a [PathBuf],
    pub tcp_connect: bool,
    pub tcp_bind: bool,
    pub limits: CommandLimits,
    /// Calls go through one long-lived sandbox holder (`command_holder`).
    pub holder: bool,
}

/// Device nodes a command sees (Landlock narrows what it may do with them).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Where the launcher appears inside the namespace.
const LAUNCHER_INSIDE: &str = "/.system-tools-mcp-launch";

impl Isolation {
    /// Resolves bubblewrap, the launcher, the command's uid and the libraries of every
    /// program; fails with the reason commands cannot be isolated.
    pub(crate) fn new(input: IsolationInput<'_>) -> Result<Self, String> {
        let bwrap = match input.bwrap {
            Some(p) => p,
            None => find_in_path("bwrap").ok_or(
                "bubblewrap (`bwrap`) is not installed (Debian package `bubblewrap`)".to_string(),
            )?,
        };
        let launcher = match input.launcher {
            Some(p) => p,
            None => default_launcher().ok_or(
                "the system-tools-mcp binary (the launcher run inside the namespaces) cannot \
                 be found; set SYSTEM_TOOLS_MCP_LAUNCHER"
                    .to_string(),
            )?,
        };
        if !launcher.is_file() {
            return Err(format!("the launcher {} is not a file", launcher.display()));
        }
        // SAFETY: geteuid/getegid never fail.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let (uid, gid, switch_user) = if euid == 0 {
            let owner = std::fs::metadata(input.base_dir)
                .map(|m| (m.uid(), m.gid()))
                .ok()
                .filter(|(u, _)| *u != 0);
            let (u, g) = match (input.command_uid, owner) {
                (Some(u), _) => (u, input.command_gid.unwrap_or(u)),
                (None, Some((u, g))) => (u, input.command_gid.unwrap_or(g)),
                (None, None) => (NOBODY, input.command_gid.unwrap_or(NOBODY)),
            };
            if u == 0 {
                return Err("command_uid is 0: commands never run as root".to_string());
            }
            (u, g, true)
        } else {
            if input.command_uid.is_some_and(|u| u != euid) {
                return Err(format!(
                    "command_uid is set, but the server is not root and can only run commands \
                     as its own uid {euid}"
                ));
            }
            (euid, egid, false)
        };
        let mut read = Vec::new();
        for p in input.read_paths {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(p) {
                        read.push((p.clone(), Some(target)));
                    }
                }
                Ok(_) => read.push((p.clone(), None)),
                Err(_) => {}
            }
        }
        let mut exec: Vec<PathBuf> = Vec::new();
        let mut closures = Vec::new();
        for program in input.programs {
            let closure = program_closure(program);
            for f in &closure {
                if !exec.contains(f) {
                    exec.push(f.clone());
                }
            }
            closures.push((program.clone(), closure));
        }
        Ok(Isolation {
            bwrap,
            launcher,
            uid,
            gid,
            switch_user,
            read,
            allowed: input.allowed.to_vec(),
            denied: input.denied.to_vec(),
            exec,
            closures,
            exec_dirs: input.exec_dirs.to_vec(),
            protected: input
                .protected
                .iter()
                .filter(|p| input.allowed.iter().any(|a| p.starts_with(a)))
                .cloned()
                .collect(),
            host_network: input.tcp_connect || input.tcp_bind,
            allow_listen: input.tcp_bind,
            limits: input.limits,
            holder: input.holder.then(super::holder::HolderSlot::default),
        })
    }

    /// What a command can reach, the same for every call (see [`CommandReach`]).
    pub(crate) fn reach(&self) -> CommandReach {
        let shown = |paths: &mut dyn Iterator<Item = &PathBuf>| -> Vec<String> {
            paths.map(|p| p.display().to_string()).collect()
        };
        let writable: Vec<&PathBuf> = self
            .allowed
            .iter()
            .filter(|root| !self.denied.iter().any(|d| root.starts_with(d)))
            .collect();
        CommandReach {
            runs_as: format!(
                "uid {} gid {} in a user namespace of its own, no capabilities, no_new_privs",
                self.uid, self.gid
            ),
            programs: self
                .closures
                .iter()
                .map(|(program, closure)| ProgramReach {
                    program: program.display().to_string(),
                    runs: shown(&mut closure.iter().filter(|f| *f != program)),
                })
                .collect(),
            executable: shown(&mut self.exec.iter().chain(&self.exec_dirs)),
            read_only: shown(
                &mut self
                    .read
                    .iter()
                    .map(|(p, _)| p)
                    .chain(&self.protected)
                    .chain(&self.exec_dirs),
            ),
            read_write: shown(&mut writable.into_iter()),
            hidden: shown(&mut self.denied.iter()),
            network: if !self.host_network && self.holder.is_some() {
                "none: a network namespace with only loopback, shared by the calls of one \
                 sandbox holder (no TCP port, no UDP; abstract Unix sockets and signals scoped \
                 to each call by Landlock)"
                    .into()
            } else if !self.host_network {
                "none: a network namespace of its own with only loopback".into()
            } else if self.allow_listen {
                "the host's, limited by Landlock to the configured TCP ports (connect and bind); \
                 sockets other than Unix and TCP refused by seccomp"
                    .into()
            } else {
                "the host's, limited by Landlock to the configured TCP ports (connect only); \
                 sockets other than Unix and TCP, and listen, refused by seccomp"
                    .into()
            },
            processes: "a pid namespace of its own: it sees and signals only its own processes"
                .into(),
        }
    }

    /// The uid/gid to switch to before bubblewrap starts, when the server is root.
    pub(crate) fn switch_to(&self) -> Option<(u32, u32)> {
        self.switch_user.then_some((self.uid, self.gid))
    }

    /// Bubblewrap's path and arguments for one command. `dev_null` is a descriptor of
    /// `/dev/null` bubblewrap inherits: denied files are covered by empty files read from it.
    pub(crate) fn command_line(
        &self,
        program: &Path,
        args: &[String],
        cwd: &Path,
        landlock_fd: Option<i32>,
        dev_null: i32,
    ) -> (PathBuf, Vec<OsString>) {
        let mut a: Vec<OsString> = Vec::with_capacity(64);
        self.namespace_args(&mut a, true);
        let (noexec, _) = self.view_args(&mut a, dev_null);
        let cwd_arg: &OsStr = cwd.as_os_str();
        for part in [
            "--chdir".as_ref(),
            cwd_arg,
            "--".as_ref(),
            LAUNCHER_INSIDE.as_ref(),
        ] {
            a.push(part.to_os_string());
        }
        let mut spec = self.launch_spec(program, args);
        spec.noexec = noexec;
        spec.landlock_fd = landlock_fd;
        a.extend(spec.to_args());
        (self.bwrap.clone(), a)
    }

    /// Bubblewrap's path and arguments for the sandbox holder ([`super::holder`]): the
    /// namespaces and the view every call shares, then this binary in its holder mode, which
    /// reads requests from `control` and opens `/proc/PID/uid_map` of its children below
    /// `proc_dir` (both descriptors inherited). Also returns the denied paths' kinds the
    /// view was built from ([`Isolation::hidden_now`]).
    pub(crate) fn holder_line(
        &self,
        dev_null: i32,
        control: i32,
        proc_dir: i32,
    ) -> (PathBuf, Vec<OsString>, Vec<HiddenKind>) {
        let mut a: Vec<OsString> = Vec::with_capacity(64);
        self.namespace_args(&mut a, false);
        let (noexec, hidden) = self.view_args(&mut a, dev_null);
        for part in [
            "--chdir",
            "/",
            "--",
            LAUNCHER_INSIDE,
            super::holder::HOLDER_ARG,
            "--control-fd",
            &control.to_string(),
            "--proc-fd",
            &proc_dir.to_string(),
        ] {
            a.push(part.into());
        }
        for p in noexec {
            a.push("--noexec".into());
            a.push(p);
        }
        (self.bwrap.clone(), a, hidden)
    }

    /// What the launcher applies to one command, without `noexec` mount points or a Landlock
    /// descriptor (the caller adds those).
    pub(crate) fn launch_spec(&self, program: &Path, args: &[String]) -> LaunchSpec {
        LaunchSpec {
            noexec: Vec::new(),
            landlock_fd: None,
            nproc: self.limits.pids_max,
            address_space: self.limits.memory_max_bytes,
            cpu_secs: self.limits.cpu_secs,
            allow_listen: self.allow_listen,
            program: program.as_os_str().to_os_string(),
            args: args.iter().map(OsString::from).collect(),
        }
    }

    /// Whether calls go through a long-lived sandbox holder (`command_holder = true`).
    pub(crate) fn holder(&self) -> Option<&super::holder::HolderSlot> {
        self.holder.as_ref()
    }

    /// The kind of each denied path now (the holder's view is rebuilt when it differs from
    /// the kinds it was built from).
    pub(crate) fn hidden_now(&self) -> Vec<HiddenKind> {
        self.denied.iter().map(|d| HiddenKind::of(d)).collect()
    }

    /// bubblewrap's namespace options: with `per_call`, every namespace of one command (user,
    /// pid, IPC, UTS, cgroup, network); else the holder's (no pid namespace: the holder's
    /// children keep host pids the server can put in the call's cgroup; each call gets its
    /// own user, pid, IPC and UTS namespaces from the holder).
    fn namespace_args(&self, a: &mut Vec<OsString>, per_call: bool) {
        let mut push = |parts: &[&str]| a.extend(parts.iter().map(OsString::from));
        push(&[
            "--unshare-user",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--new-session",
            "--hostname",
            "sandbox",
            // Held in the command's user namespace by the launcher only (to remount noexec,
            // then to empty the bounding set); it drops both before the program runs.
            "--cap-add",
            "CAP_SYS_ADMIN",
            "--cap-add",
            "CAP_SETPCAP",
        ]);
        if per_call {
            push(&["--unshare-pid", "--die-with-parent"]);
        } else {
            // The holder writes the uid and gid maps of each call's user namespace.
            push(&["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]);
        }
        if !self.host_network {
            push(&["--unshare-net"]);
        }
        let uid = self.uid.to_string();
        let gid = self.gid.to_string();
        push(&["--uid", &uid, "--gid", &gid]);
    }

    /// The view's bubblewrap options; returns the mount points to remount `noexec` and the
    /// kind of each denied path it hid.
    fn view_args(&self, a: &mut Vec<OsString>, dev_null: i32) -> (Vec<OsString>, Vec<HiddenKind>) {
        let empty_fd = dev_null.to_string();
        let hidden = self.hidden_now();
        let mut push = |parts: &[&OsStr]| a.extend(parts.iter().map(|p| p.to_os_string()));
        // The namespace's root (a tmpfs holding only mount points and the launcher) gets no
        // Landlock right, so nothing can be written there.
        let mut noexec: Vec<OsString> = Vec::new();
        for (p, link) in &self.read {
            match link {
                Some(target) => push(&["--symlink".as_ref(), target.as_os_str(), p.as_os_str()]),
                None => {
                    push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]);
                    noexec.push(p.clone().into_os_string());
                }
            }
        }
        // Device nodes one by one: bubblewrap's `--dev` needs devpts, which makes it nest a
        // second user namespace, in which the launcher could not remount anything.
        for dev in DEVICES {
            push(&["--dev-bind-try".as_ref(), dev.as_ref(), dev.as_ref()]);
        }
        let mut roots: Vec<&PathBuf> = self.allowed.iter().collect();
        roots.sort_by_key(|r| r.as_os_str().len());
        for root in roots {
            if self.denied.iter().any(|d| root.starts_with(d)) {
                continue;
            }
            push(&["--bind".as_ref(), root.as_os_str(), root.as_os_str()]);
            noexec.push(root.clone().into_os_string());
            for (d, kind) in self.denied.iter().zip(&hidden) {
                if !d.starts_with(root) {
                    continue;
                }
                match kind {
                    HiddenKind::Directory => push(&[
                        "--tmpfs".as_ref(),
                        d.as_os_str(),
                        "--remount-ro".as_ref(),
                        d.as_os_str(),
                    ]),
                    // An empty read-only file, read by bubblewrap from `/dev/null`.
                    HiddenKind::File => {
                        push(&["--ro-bind-data".as_ref(), empty_fd.as_ref(), d.as_os_str()])
                    }
                    // Missing (nothing to hide) or another kind of entry (a symlink's
                    // target needs its own grant to be reached).
                    HiddenKind::Absent => {}
                }
            }
        }
        for d in &self.exec_dirs {
            push(&["--ro-bind-try".as_ref(), d.as_os_str(), d.as_os_str()]);
        }
        for f in &self.exec {
            push(&["--ro-bind-try".as_ref(), f.as_os_str(), f.as_os_str()]);
        }
        for f in &self.protected {
            push(&["--ro-bind-try".as_ref(), f.as_os_str(), f.as_os_str()]);
        }
        push(&[
            "--ro-bind".as_ref(),
            self.launcher.as_os_str(),
            LAUNCHER_INSIDE.as_ref(),
        ]);
        (noexec, hidden)
    }
}

/// What stands at a denied path, as far as the view is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HiddenKind {
    /// A directory: covered by an empty read-only tmpfs.
    Directory,
    /// A file: covered by an empty read-only file.
    File,
    /// Nothing, or another kind of entry: nothing to cover.
    Absent,
}

impl HiddenKind {
    fn of(path: &Path) -> Self {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => HiddenKind::Directory,
            Ok(m) if m.is_file() => HiddenKind::File,
            _ => HiddenKind::Absent,
        }
    }
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `SYSTEM_TOOLS_MCP_LAUNCHER`, else this process's binary when it is `system-tools-mcp`,
/// else a `system-tools-mcp` beside it or one directory up (tests run from `deps/`).
fn default_launcher() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SYSTEM_TOOLS_MCP_LAUNCHER") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_name() == Some(OsStr::new("system-tools-mcp")) {
        return Some(exe);
    }
    let dir = exe.parent()?;
    [
        dir.join("system-tools-mcp"),
        dir.parent()?.join("system-tools-mcp"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// A program, its ELF loader and the shared libraries it loads, as the loader lists them
/// (`ld.so --list`, which maps the libraries without running any code of theirs); for a
/// script, the same for its `#!` interpreter.
fn program_closure(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut chain = Vec::new();
    super::kernel::collect_interpreters_pub(program, &mut chain);
    // chain: program, its interpreter(s), …, the ELF loader last.
    for f in &chain {
        if !out.contains(f) {
            out.push(f.clone());
        }
    }
    let loader = chain
        .iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.as_bytes().starts_with(b"ld-"))
        })
        .cloned();
    let Some(loader) = loader else {
        return out;
    };
    for f in &chain {
        if *f == loader {
            continue;
        }
        let Ok(listed) = std::process::Command::new(&loader)
            .arg("--list")
            .arg(f)
            .env_clear()
            .output()
        else {
            continue;
        };
        for line in listed.stdout.split(|b| *b == b'\n') {
            // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or `/lib64/ld-… (0x…)`.
            let text = match line.windows(4).position(|w| w == b" => ") {
                Some(i) => &line[i + 4..],
                None => line,
            };
            let path = text
                .split(|b| *b == b' ' || *b == b'\t')
                .find(|w| !w.is_empty())
                .unwrap_or_default();
            if path.starts_with(b"/")
                && let Ok(c) = std::fs::canonicalize(OsStr::from_bytes(path))
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
    }
    out
}
