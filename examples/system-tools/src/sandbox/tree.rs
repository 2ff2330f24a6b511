//! Making a command's whole process tree die with its call.
//!
//! Two ways, chosen once at start-up:
//!
//! - **cgroup v2** (when the server can create a child of its own cgroup): each command joins a
//!   fresh cgroup between `fork` and `exec`; ending the call writes `cgroup.kill`, which the
//!   kernel applies to every process in it — descendants that called `setsid`, changed their
//!   process group or double-forked included — then the cgroup is removed.
//! - **child subreaper** otherwise: the server is marked `PR_SET_CHILD_SUBREAPER`, so orphaned
//!   descendants are re-parented to it instead of to init; ending a call kills every process
//!   whose parent chain leads to the command or to an orphan the server adopted, repeating
//!   until none is left, and reaps the adopted ones.
//!
//! Ending a call means: the command exits (leftover background processes are killed), the
//! time-out or the output cap is hit, the call is cancelled or the server drops it on exit.

use std::collections::{BTreeSet, HashMap};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::memory::{CallMemory, MemoryLimiter};

/// How long ending a call waits for its processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(2);
/// Rounds of the subreaper sweep (each kills what the previous one could not see yet).
const SWEEP_ROUNDS: usize = 50;

/// How process trees are contained, chosen once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Containment {
    /// Per-call cgroups below this directory (the server's own cgroup).
    Cgroup(PathBuf),
    /// Child subreaper plus a `/proc` sweep.
    Subreaper,
}

/// Which containment is in force, for reports (no host path).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProcessContainment {
    /// Pick a cgroup when one can be made, the subreaper otherwise.
    Auto,
    /// Per-call cgroup v2, killed with `cgroup.kill`.
    Cgroup,
    /// Child subreaper plus killing the tracked tree.
    Subreaper,
}

impl Containment {
    /// Detects the containment to use.
    pub(crate) fn detect(wanted: ProcessContainment) -> Result<Self, String> {
        let cgroup = || own_cgroup_dir().and_then(|dir| probe_cgroup(&dir).map(|()| dir));
        match wanted {
            ProcessContainment::Subreaper => Ok(Containment::Subreaper),
            ProcessContainment::Cgroup => cgroup().map(Containment::Cgroup),
            ProcessContainment::Auto => Ok(match cgroup() {
                Ok(dir) => Containment::Cgroup(dir),
                Err(why) => {
                    tracing::info!(reason = %why, "no cgroup for commands; using a child subreaper");
                    Containment::Subreaper
                }
            }),
        }
    }

    pub(crate) fn kind(&self) -> ProcessContainment {
        match self {
            Containment::Cgroup(_) => ProcessContainment::Cgroup,
            Containment::Subreaper => ProcessContainment::Subreaper,
        }
    }

    /// Prepares the containment of one call, before its command is spawned.
    pub(crate) fn begin(&self) -> std::io::Result<CallTree> {
        match self {
            Containment::Cgroup(parent) => {
                let dir = new_call_group(parent)?;
                let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                    .map_err(std::io::Error::other)?;
                Ok(CallTree {
                    inner: TreeInner::Cgroup { dir, procs },
                    pid: None,
                    memory: None,
                })
            }
            Containment::Subreaper => {
                become_subreaper()?;
                Ok(CallTree {
                    inner: TreeInner::Tracked,
                    pid: None,
                    memory: None,
                })
            }
        }
    }
}

/// The process tree of one call; dropping it kills whatever is left of the tree.
#[derive(Debug)]
pub(crate) struct CallTree {
    inner: TreeInner,
    /// The command's pid once spawned (registered in [`live_roots`] until the tree is dropped).
    pid: Option<i32>,
    /// The call's memory group, when calls have one ([`CallTree::limit_memory`]).
    memory: Option<Arc<CallMemory>>,
}

#[derive(Debug)]
enum TreeInner {
    Cgroup { dir: PathBuf, procs: CString },
    Tracked,
}

impl CallTree {
    /// The `cgroup.procs` file the child must join, if any.
    pub(crate) fn cgroup_procs(&self) -> Option<&std::ffi::CStr> {
        match &self.inner {
            TreeInner::Cgroup { procs, .. } => Some(procs),
            TreeInner::Tracked => None,
        }
    }

    /// Gives the call a memory limit of `max_bytes` for all its processes together, where
    /// `limiter` has a controller; the handle tells, once the call ended, whether the limit
    /// ended the command.
    pub(crate) fn limit_memory(
        &mut self,
        limiter: &MemoryLimiter,
        max_bytes: u64,
    ) -> std::io::Result<Option<Arc<CallMemory>>> {
        let call_cgroup = match &self.inner {
            TreeInner::Cgroup { dir, .. } => Some(dir.as_path()),
            TreeInner::Tracked => None,
        };
        self.memory = limiter.begin(call_cgroup, max_bytes)?.map(Arc::new);
        Ok(self.memory.clone())
    }

    /// The memory group's `cgroup.procs` the child must join too (cgroup v1), if any.
    pub(crate) fn memory_procs(&self) -> Option<&std::ffi::CStr> {
        self.memory.as_deref().and_then(CallMemory::procs)
    }

    /// Spawns the command with `spawn` and records its pid as a live command, under the lock
    /// the subreaper sweep takes, so no sweep mistakes a fresh command for an orphan.
    pub(crate) fn spawn<T>(
        &mut self,
        spawn: impl FnOnce() -> std::io::Result<T>,
        pid_of: impl FnOnce(&T) -> Option<u32>,
    ) -> std::io::Result<T> {
        let mut live = live_roots().lock().unwrap_or_else(|e| e.into_inner());
        let child = spawn()?;
        self.pid = pid_of(&child).and_then(|p| i32::try_from(p).ok());
        if let Some(p) = self.pid {
            live.insert(p);
        }
        Ok(child)
    }

    /// Puts `pid` (a process the sandbox holder started for this call, waiting to be let
    /// go) in the call's cgroup and memory group, and records it as the tree's root.
    pub(crate) fn enter(&mut self, pid: i32) -> std::io::Result<()> {
        let mut live = live_roots().lock().unwrap_or_else(|e| e.into_inner());
        let groups = [self.cgroup_procs(), self.memory_procs()];
        for procs in groups.into_iter().flatten() {
            std::fs::write(
                std::ffi::OsStr::from_bytes(procs.to_bytes()),
                pid.to_string(),
            )?;
        }
        self.pid = Some(pid);
        live.insert(pid);
        Ok(())
    }

    /// Kills every process of the tree that is still running. Cheap to call more than once.
    pub(crate) fn kill(&self) {
        match &self.inner {
            TreeInner::Cgroup { dir, .. } => {
                if let Err(e) = std::fs::write(dir.join("cgroup.kill"), "1")
                    && e.kind() != std::io::ErrorKind::NotFound
                {
                    tracing::warn!(error = %e, "cannot kill the command's cgroup");
                }
            }
            TreeInner::Tracked => sweep(self.pid),
        }
    }
}

impl Drop for CallTree {
    fn drop(&mut self) {
        self.kill();
        if let Some(memory) = &self.memory {
            memory.record();
        }
        if let TreeInner::Cgroup { dir, .. } = &self.inner {
            self.remove_group(dir, "cgroup");
        }
        if let Some(dir) = self.memory.as_deref().and_then(CallMemory::own_dir) {
            self.remove_group(dir, "memory group");
        }
        if let Some(p) = self.pid {
            live_roots()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&p);
        }
    }
}

impl CallTree {
    /// Removes the call's (empty) group `dir`, killing again while processes are still
    /// leaving it, for at most [`KILL_WAIT`].
    fn remove_group(&self, dir: &Path, what: &str) {
        let deadline = Instant::now() + KILL_WAIT;
        // Processes just killed leave within microseconds to milliseconds: wait 50 µs
        // first, doubling up to 5 ms.
        let mut pause = Duration::from_micros(50);
        loop {
            match std::fs::remove_dir(dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) if Instant::now() >= deadline => {
                    tracing::warn!(error = %e, "cannot remove the command's {what}");
                    break;
                }
                Err(_) => {
                    self.kill();
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
            }
        }
    }
}

/// Creates the group of a new call below `parent` (a cgroup v2 directory, or a v1
/// hierarchy's), named `system-tools-mcp-<server pid>-<call number>`.
pub(crate) fn new_call_group(parent: &Path) -> std::io::Result<PathBuf> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = parent.join(format!(
        "system-tools-mcp-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `procs`. Makes no
/// allocation, so it is safe between `fork` and `exec`.
pub(crate) fn join_cgroup(procs: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: open/write/close on a valid C string and a static buffer.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, b"0".as_ptr().cast(), 1);
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if n != 1 {
            return Err(err);
        }
    }
    Ok(())
}

/// `<cgroup2 mount>/<own cgroup path>` of this process.
fn own_cgroup_dir() -> Result<PathBuf, String> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let own = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("the process is in no cgroup v2 hierarchy")?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    let mount = mounts
        .lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            (right.split_whitespace().next()? == "cgroup2")
                .then(|| left.split_whitespace().nth(4).map(str::to_string))?
        })
        .ok_or("no cgroup v2 file system is mounted")?;
    Ok(Path::new(&mount).join(own.trim_start_matches('/')))
}

/// Checks that a child cgroup with `cgroup.kill` can be made below `dir` and that processes
/// can be moved there.
fn probe_cgroup(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!("system-tools-mcp-probe-{}", std::process::id()));
    std::fs::create_dir(&probe)
        .map_err(|e| format!("cannot create a cgroup below {}: {e}", dir.display()))?;
    let usable = probe.join("cgroup.kill").exists();
    let writable =
        rustix::fs::access(dir.join("cgroup.procs"), rustix::fs::Access::WRITE_OK).is_ok();
    let _ = std::fs::remove_dir(&probe);
    match (usable, writable) {
        (true, true) => Ok(()),
        (false, _) => Err("the kernel's cgroups have no cgroup.kill".to_string()),
        (_, false) => Err(format!(
            "processes cannot be moved out of {}",
            dir.display()
        )),
    }
}

/// Pids of commands currently running under the subreaper (their trees belong to live calls).
fn live_roots() -> &'static Mutex<BTreeSet<i32>> {
    static ROOTS: OnceLock<Mutex<BTreeSet<i32>>> = OnceLock::new();
    ROOTS.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Spawns a long-lived child of the server (the sandbox holder's bubblewrap) and records it
/// as live until [`forget_live`], so the subreaper's sweep never takes it for an orphan.
pub(crate) fn spawn_live(
    spawn: impl FnOnce() -> std::io::Result<std::process::Child>,
) -> std::io::Result<std::process::Child> {
    let mut live = live_roots().lock().unwrap_or_else(|e| e.into_inner());
    let child = spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        live.insert(pid);
    }
    Ok(child)
}

/// Ends what [`spawn_live`] recorded.
pub(crate) fn forget_live(pid: i32) {
    live_roots()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&pid);
}

fn become_subreaper() -> std::io::Result<()> {
    static DONE: OnceLock<i32> = OnceLock::new();
    // SAFETY: prctl with integer arguments.
    let rc = *DONE.get_or_init(|| unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) });
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::other("PR_SET_CHILD_SUBREAPER failed"))
    }
}

/// `pid -> parent pid` of every process, and the state letter.
fn process_table() -> HashMap<i32, (i32, char)> {
    let mut table = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) S ppid ...`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().and_then(|s| s.chars().next()).unwrap_or('?');
        if let Some(ppid) = fields.next().and_then(|s| s.parse().ok()) {
            table.insert(pid, (ppid, state));
        }
    }
    table
}

/// Kills the tree rooted at `root` and every orphan the server adopted that does not belong to
/// another live call, until none is left; then reaps the adopted ones.
fn sweep(root: Option<i32>) {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let deadline = Instant::now() + KILL_WAIT;
    for round in 0..SWEEP_ROUNDS {
        // Held while reading the table and killing, so no command is spawned in between.
        let live = live_roots().lock().unwrap_or_else(|e| e.into_inner());
        let table = process_table();
        // Roots of doomed trees: this call's command, and adopted orphans (children of the
        // server that are no live command).
        let mut doomed: BTreeSet<i32> = root.into_iter().collect();
        let mut adopted = Vec::new();
        for (&pid, &(ppid, _)) in &table {
            if ppid == me && !live.contains(&pid) && Some(pid) != root {
                doomed.insert(pid);
                adopted.push(pid);
            }
        }
        // Close over parent links.
        let mut grew = true;
        while grew {
            grew = false;
            for (&pid, &(ppid, _)) in &table {
                if doomed.contains(&ppid) && doomed.insert(pid) {
                    grew = true;
                }
            }
        }
        let running: Vec<i32> = doomed
            .iter()
            .copied()
            .filter(|p| table.get(p).is_some_and(|(_, s)| *s != 'Z' && *s != 'X'))
            .collect();
        for pid in &running {
            // SAFETY: kill(2) with integers.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        for pid in &adopted {
            // Adopted orphans are the server's children: reap them once dead.
            // SAFETY: waitpid on a specific child with WNOHANG.
            unsafe {
                libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        drop(live);
        if (running.is_empty() && adopted.is_empty()) || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(if round < 5 { 2 } else { 20 }));
    }
}
