//! A memory limit per command call, kept by the kernel's memory controller: all processes of
//! one call together may use at most `command_memory_max_bytes` (swap included), so a call
//! that forks many processes, each under its own address-space limit, is still stopped at the
//! call's total; the kernel's OOM killer ends it inside its own group, and no other call's
//! memory is touched.
//!
//! Where the controller is, chosen once at start-up ([`MemoryLimiter::detect`]):
//! - **cgroup v2**: the call's own cgroup ([`Containment::Cgroup`]) when the memory controller
//!   is enabled for it: `memory.max` and `memory.swap.max = 0` are written there;
//! - **cgroup v1**: a group per call below the server's own group of the `memory` hierarchy
//!   (hosts with the hybrid layout, this project's test machines among them):
//!   `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`; the command joins it between
//!   `fork` and `exec`, like the v2 cgroup;
//! - **none** otherwise: each process keeps its address-space limit only, and the reports say
//!   so.
//!
//! After the call, the group's OOM-kill count says whether the limit ended the command.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::tree::{Containment, new_call_group};

/// How calls' memory is limited, chosen once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MemoryLimiter {
    /// In the call's own cgroup v2 directory.
    V2,
    /// Groups per call below this directory of the v1 `memory` hierarchy.
    V1(PathBuf),
    /// No memory controller the server can use (the reason, for the log).
    Unavailable(String),
}

/// The memory group of one call: joined by the command (v1), read for OOM kills at the end.
#[derive(Debug)]
pub(crate) struct CallMemory {
    /// The group's directory (v1: created for the call; v2: the call's cgroup).
    dir: PathBuf,
    /// v1: the `cgroup.procs` the command joins; v2: none (the call's cgroup already is it).
    procs: Option<CString>,
    /// OOM kills seen when the call ended ([`CallMemory::record`]).
    oom_kills: AtomicU64,
}

impl MemoryLimiter {
    /// Finds the memory controller calls can be limited by, given how their process trees are
    /// contained.
    pub(crate) fn detect(containment: &Containment) -> MemoryLimiter {
        if let Containment::Cgroup(parent) = containment {
            let enabled = std::fs::read_to_string(parent.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
            if enabled {
                return MemoryLimiter::V2;
            }
        }
        match own_v1_memory_dir().and_then(|dir| probe_v1(&dir).map(|()| dir)) {
            Ok(dir) => MemoryLimiter::V1(dir),
            Err(why) => MemoryLimiter::Unavailable(why),
        }
    }

    /// Whether calls get a memory limit of their own.
    pub(crate) fn is_available(&self) -> bool {
        !matches!(self, MemoryLimiter::Unavailable(_))
    }

    /// The controller, for reports and the start-up log (no host path).
    pub(crate) fn describe(&self) -> String {
        match self {
            MemoryLimiter::V2 => "cgroup v2 memory.max per call".to_string(),
            MemoryLimiter::V1(_) => "cgroup v1 memory group per call".to_string(),
            MemoryLimiter::Unavailable(why) => format!("none ({why})"),
        }
    }

    /// Sets up the memory limit of one call: `call_cgroup` is the call's v2 cgroup, if any.
    pub(crate) fn begin(
        &self,
        call_cgroup: Option<&Path>,
        max_bytes: u64,
    ) -> std::io::Result<Option<CallMemory>> {
        match self {
            MemoryLimiter::V2 => {
                let Some(dir) = call_cgroup else {
                    return Ok(None);
                };
                std::fs::write(dir.join("memory.max"), max_bytes.to_string())?;
                let swap = dir.join("memory.swap.max");
                if swap.exists() {
                    std::fs::write(swap, "0")?;
                }
                Ok(Some(CallMemory::new(dir.to_path_buf(), None)))
            }
            MemoryLimiter::V1(parent) => {
                let dir = new_call_group(parent)?;
                let set = || -> std::io::Result<CString> {
                    std::fs::write(dir.join("memory.limit_in_bytes"), max_bytes.to_string())?;
                    // Swap counted in: memory + swap may not pass the same total.
                    let memsw = dir.join("memory.memsw.limit_in_bytes");
                    if memsw.exists() {
                        std::fs::write(memsw, max_bytes.to_string())?;
                    }
                    CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
                        .map_err(std::io::Error::other)
                };
                match set() {
                    Ok(procs) => Ok(Some(CallMemory::new(dir, Some(procs)))),
                    Err(e) => {
                        let _ = std::fs::remove_dir(&dir);
                        Err(e)
                    }
                }
            }
            MemoryLimiter::Unavailable(_) => Ok(None),
        }
    }
}

impl CallMemory {
    fn new(dir: PathBuf, procs: Option<CString>) -> CallMemory {
        CallMemory {
            dir,
            procs,
            oom_kills: AtomicU64::new(0),
        }
    }

    /// The `cgroup.procs` file the command must join (v1), if any.
    pub(crate) fn procs(&self) -> Option<&std::ffi::CStr> {
        self.procs.as_deref()
    }

    /// Reads the group's OOM-kill count; called once the call's processes are killed, before
    /// the group is removed.
    pub(crate) fn record(&self) {
        // v2: `oom_kill N` in memory.events; v1: `oom_kill N` in memory.oom_control.
        let file = if self.procs.is_some() {
            "memory.oom_control"
        } else {
            "memory.events"
        };
        let kills = std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    l.strip_prefix("oom_kill ")
                        .and_then(|n| n.trim().parse().ok())
                })
            })
            .unwrap_or(0);
        self.oom_kills.store(kills, Ordering::Relaxed);
    }

    /// How many processes of the call the kernel's OOM killer ended at the call's limit.
    pub(crate) fn oom_kills(&self) -> u64 {
        self.oom_kills.load(Ordering::Relaxed)
    }

    /// The v1 group's directory, which the call removes once its processes are gone (a v2
    /// call cgroup is removed with the call's tree).
    pub(crate) fn own_dir(&self) -> Option<&Path> {
        self.procs.is_some().then_some(self.dir.as_path())
    }
}

/// `<v1 memory mount>/<own path in that hierarchy>` of this process.
fn own_v1_memory_dir() -> Result<PathBuf, String> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let own = cgroups
        .lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == "memory")
                .then(|| path.to_string())
        })
        .ok_or("no cgroup v2 memory controller and no v1 memory hierarchy")?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    // `id parent major:minor root mount-point options … - cgroup source super-options`
    let (root, point) = mounts
        .lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut right = right.split_whitespace();
            let (fs, _source, options) = (right.next()?, right.next()?, right.next()?);
            if fs != "cgroup" || !options.split(',').any(|o| o == "memory") {
                return None;
            }
            let mut left = left.split_whitespace().skip(3);
            Some((left.next()?.to_string(), left.next()?.to_string()))
        })
        .ok_or("the v1 memory hierarchy is not mounted")?;
    let inside = own
        .strip_prefix(&root)
        .unwrap_or(&own)
        .trim_start_matches('/');
    Ok(Path::new(&point).join(inside))
}

/// Checks that a group with a memory limit can be made below `dir` and processes moved in.
fn probe_v1(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!("system-tools-mcp-probe-{}", std::process::id()));
    std::fs::create_dir(&probe)
        .map_err(|e| format!("cannot create a memory group below {}: {e}", dir.display()))?;
    let limit = std::fs::write(probe.join("memory.limit_in_bytes"), "1073741824");
    let procs = rustix::fs::access(probe.join("cgroup.procs"), rustix::fs::Access::WRITE_OK);
    let _ = std::fs::remove_dir(&probe);
    match (limit, procs) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), _) => Err(format!(
            "cannot set a memory limit below {}: {e}",
            dir.display()
        )),
        (_, Err(e)) => Err(format!(
            "processes cannot join a memory group below {}: {e}",
            dir.display()
        )),
    }
}
