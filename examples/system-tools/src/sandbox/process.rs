//! Running a checked program: no shell, cleared environment, own process group, confined by a
//! Landlock ruleset and contained in a [`CallTree`] that kills every descendant when the call
//! ends (exit, time-out, output cap, cancellation), and output capped per stream.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::isolation::Isolation;
use super::kernel::{PreparedRuleset, restrict_self};
use super::tree::{CallTree, join_cgroup};

/// Captured output of one stream.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    /// At most `cap` bytes.
    pub bytes: Vec<u8>,
    /// Whether more bytes were produced than kept.
    pub truncated: bool,
}

/// How a run ended.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
}

/// Why a run produced no outcome.
#[derive(Debug)]
pub(crate) enum RunError {
    /// The program could not be started.
    Spawn(std::io::Error),
    /// Reading output or waiting failed.
    Io(std::io::Error),
    /// The timeout elapsed; the process group was killed.
    Timeout,
}

/// Reads a stream keeping at most `cap` bytes. On overflow it kills the process tree (so an
/// endless producer stops) and keeps draining until end of file, discarding the rest.
async fn read_capped<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    tree: &CallTree,
) -> std::io::Result<Captured> {
    let mut out = Captured::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Ok(out);
        }
        let room = cap.saturating_sub(out.bytes.len());
        if n > room {
            out.bytes.extend_from_slice(&buf[..room]);
            if !out.truncated {
                out.truncated = true;
                tree.kill();
            }
        } else {
            out.bytes.extend_from_slice(&buf[..n]);
        }
    }
}

/// Runs `program` with `args` (each passed as one argv entry; no shell is involved) in `cwd`,
/// with exactly `env` as its environment and stdin closed.
///
/// Between `fork` and `exec` the child joins `tree`'s cgroup (when it has one) and restricts
/// itself with the Landlock ruleset, or, inside the namespaces of the isolation when there is
/// one, leaves that to the launcher; no step allocates. Whatever is left of the tree when the
/// command exits, times out or this future is dropped is killed.
pub(crate) async fn run(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
    limits: (Duration, usize),
    confinement: (&PreparedRuleset, Option<&Isolation>),
    mut tree: CallTree,
) -> Result<RunOutcome, RunError> {
    let (ruleset, isolation) = confinement;
    let ruleset_fd = ruleset.raw_fd();
    if let Some(iso) = isolation
        && let Some(slot) = iso.holder()
    {
        let started = Instant::now();
        let spec = iso.launch_spec(program, args);
        let mut call = slot
            .start_call(iso, &spec, cwd, env, ruleset_fd)
            .await
            .map_err(RunError::Spawn)?;
        if let Err(e) = tree.enter(call.pid) {
            // SAFETY: kill(2) of the call's first process, still waiting to be let go.
            unsafe { libc::kill(call.pid, libc::SIGKILL) };
            return Err(RunError::Spawn(e));
        }
        call.go().await.map_err(RunError::Spawn)?;
        let (stdout, stderr) = call.take_output();
        return collect(stdout, stderr, &mut call, limits, &tree, started).await;
    }
    // Kept open until the child is spawned: bubblewrap reads the empty files it binds over
    // denied files from it (the launcher closes it, with every other inherited descriptor).
    let dev_null = match isolation {
        Some(_) => Some(std::fs::File::open("/dev/null").map_err(RunError::Io)?),
        None => None,
    };
    let dev_null_fd = dev_null.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    let mut cmd = match isolation {
        Some(iso) => {
            let (bwrap, bwrap_args) =
                iso.command_line(program, args, cwd, ruleset_fd, dev_null_fd.unwrap_or(-1));
            let mut c = tokio::process::Command::new(bwrap);
            c.args(bwrap_args);
            c
        }
        None => {
            let mut c = tokio::process::Command::new(program);
            c.args(args);
            c
        }
    };
    let switch_to = isolation.and_then(Isolation::switch_to);
    let in_namespaces = isolation.is_some();
    cmd.current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let cgroup = tree.cgroup_procs().map(std::ffi::CStr::to_owned);
    let memory_group = tree.memory_procs().map(std::ffi::CStr::to_owned);
    // SAFETY: the closure only makes system calls on values prepared before the fork
    // (a C string, integers); it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            for procs in [&cgroup, &memory_group].into_iter().flatten() {
                join_cgroup(procs)?;
            }
            if !in_namespaces {
                return restrict_self(ruleset_fd);
            }
            // bubblewrap runs first: the launcher inside applies the ruleset (Landlock
            // forbids the mounts bubblewrap makes), so its descriptor must survive exec.
            for fd in [ruleset_fd, dev_null_fd].into_iter().flatten() {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            become_unprivileged(switch_to)
        });
    }
    let started = Instant::now();
    let mut child = tree
        .spawn(|| cmd.spawn(), tokio::process::Child::id)
        .map_err(RunError::Spawn)?;
    drop(dev_null);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    collect(stdout, stderr, &mut child, limits, &tree, started).await
}

/// A started command whose exit status can be awaited.
pub(crate) trait Exits {
    /// Waits for the exit status.
    async fn exit_status(&mut self) -> std::io::Result<ExitStatus>;
}

impl Exits for tokio::process::Child {
    async fn exit_status(&mut self) -> std::io::Result<ExitStatus> {
        self.wait().await
    }
}

impl Exits for super::holder::HeldCall {
    async fn exit_status(&mut self) -> std::io::Result<ExitStatus> {
        self.wait().await
    }
}

/// Reads both streams (capped) and the exit status within the time-out; whatever is left of
/// the tree afterwards is killed.
async fn collect(
    stdout: Option<impl AsyncRead + Unpin>,
    stderr: Option<impl AsyncRead + Unpin>,
    child: &mut impl Exits,
    limits: (Duration, usize),
    tree: &CallTree,
    started: Instant,
) -> Result<RunOutcome, RunError> {
    let (timeout, max_output_bytes) = limits;
    let work = async {
        let read_out = async {
            match stdout {
                Some(s) => read_capped(s, max_output_bytes, tree).await,
                None => Ok(Captured::default()),
            }
        };
        let read_err = async {
            match stderr {
                Some(s) => read_capped(s, max_output_bytes, tree).await,
                None => Ok(Captured::default()),
            }
        };
        let wait = async {
            let status = child.exit_status().await;
            // Background children left behind would otherwise keep the pipes open.
            tree.kill();
            status
        };
        let (out, err, status) = tokio::join!(read_out, read_err, wait);
        Ok::<_, std::io::Error>((status?, out?, err?))
    };

    let result = tokio::time::timeout(timeout, work).await;
    match result {
        Ok(Ok((status, stdout, stderr))) => Ok(RunOutcome {
            status,
            stdout,
            stderr,
            duration: started.elapsed(),
        }),
        Ok(Err(e)) => {
            tree.kill();
            Err(RunError::Io(e))
        }
        Err(_) => {
            tree.kill();
            // Reap the direct child (it was just sent SIGKILL, so this returns promptly).
            let _ = child.exit_status().await;
            Err(RunError::Timeout)
        }
    }
}

/// Between `fork` and `exec` of bubblewrap (per call, or the sandbox holder's): becomes
/// `switch_to`'s uid and gid (with that gid as the only group) when given, and sets
/// `no_new_privs`. Allocation-free.
///
/// # Errors
///
/// The system call that failed.
pub(crate) fn become_unprivileged(switch_to: Option<(u32, u32)>) -> std::io::Result<()> {
    // SAFETY: plain system calls on integers and a live one-element array.
    unsafe {
        if let Some((uid, gid)) = switch_to {
            let groups = [gid];
            if libc::setgroups(1, groups.as_ptr()) != 0
                || libc::setresgid(gid, gid, gid) != 0
                || libc::setresuid(uid, uid, uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
