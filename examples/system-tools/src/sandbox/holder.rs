//! The sandbox holder: one long-lived bubblewrap that keeps what every command call shares —
//! the user namespace mapped to the unprivileged uid, the mount namespace with the view
//! (system paths, allowed paths, hidden denied paths, the programs' closures bound one by one,
//! the `noexec` remounts) and the network namespace — with this binary inside it in its holder
//! mode (`system-tools-mcp --sandbox-holder`), which starts each call's command on request.
//! A call then no longer pays for building namespaces and the view.
//!
//! Per call (server side, [`HolderSlot::start_call`]):
//!
//! 1. the server sends a request on the holder's control socket: the program, its arguments,
//!    working directory, environment and limits, and as `SCM_RIGHTS` descriptors the
//!    command's stdin, stdout and stderr, one end of a fresh socket pair (the call's channel)
//!    and the call's Landlock ruleset;
//! 2. the holder hands the request to its spare: a child `clone`d ahead of the call with new
//!    user, pid, IPC and UTS namespaces (the user namespace nested in the holder's, so
//!    `RLIMIT_NPROC` counts per call), its uid and gid maps written (the same uid and gid as
//!    the holder's), its host name set and the commands' seccomp filters applied, waiting for
//!    a request. The holder sends the child's host pid on the call's channel (the holder is
//!    in the host's pid namespace), then makes the next spare. With no spare (the first
//!    call, or one that died) it makes the child for this request the same way;
//! 3. the server puts that pid in the call's cgroup (and memory group), then releases the
//!    child with one byte on the channel: nothing of the call runs before it is contained;
//! 4. the child (pid 1 of the call's pid namespace) forks the command (pid 2), which applies
//!    the launcher's limits, drops every capability, restricts itself with Landlock (and
//!    seccomp when its parent was not a spare) and executes the program
//!    ([`super::launch`]); the child sends the command's wait status on the channel when it
//!    ends, then exits, which ends every process left in the call's pid namespace.
//!
//! The spare moves the kernel's per-call set-up out of the call's way: building the
//! namespaces, and compiling and caching the seccomp filters (the kernel JIT-compiles a filter
//! and works out which system calls it always allows each time one is applied). That is about
//! a quarter of a millisecond of an `echo` call's 4–5 ms (`scripts/perf/system-tools-exec.sh`).
//!
//! Calls share the holder's mount and network namespaces only: each has its own pid, IPC,
//! UTS and user namespaces and its own Landlock domain (which scopes signals and abstract
//! Unix sockets to the call).
//!
//! The holder's life: started by the first call; replaced when it died (at most
//! [`START_ATTEMPTS`] starts per call, then the call fails with the reason) or when the set
//! of existing denied paths changed since its view was built (a denied path created or
//! removed after start: the next call gets a fresh view; calls still running keep the old
//! holder until they end). It exits when the server closes its control socket (the server
//! ended, or it was replaced and its last call ended); its calls' children die with it.

use std::ffi::{CString, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::isolation::{HiddenKind, Isolation};
use super::launch::{LaunchSpec, SETUP_FAILED, SETUP_PREFIX};

/// First argument that selects the holder mode of the binary.
pub const HOLDER_ARG: &str = "--sandbox-holder";

/// Largest request the holder reads (arguments, environment and working directory).
const MAX_REQUEST_BYTES: usize = 1024 * 1024;
/// Holder starts per call before the call fails.
pub(crate) const START_ATTEMPTS: usize = 2;
/// How long a starting holder may take to report ready.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Descriptors of a request: stdin, stdout, stderr, the call's channel, then optionally the
/// Landlock ruleset.
const REQUEST_FDS: usize = 5;

/// Holder → server on the control socket: the view is built.
const READY: u8 = b'R';
/// Holder → server on a call's channel: the child's host pid follows (4 bytes).
const STARTED: u8 = b'P';
/// Holder → server on a call's channel: the call could not start; length and text follow.
const FAILED: u8 = b'E';
/// Server → child: the child is in the call's cgroup, go on.
const GO: u8 = b'G';
/// Child → server: the command's wait status follows (4 bytes).
const STATUS: u8 = b'S';

/// Where the current holder is kept (one per sandbox), started on first use.
#[derive(Debug, Default)]
pub(crate) struct HolderSlot {
    current: tokio::sync::Mutex<Option<Arc<Holder>>>,
}

/// A running holder, as the server sees it. Dropping the last handle closes its control
/// socket, which ends the holder.
#[derive(Debug)]
pub(crate) struct Holder {
    control: tokio::sync::Mutex<UnixStream>,
    /// bubblewrap's pid (the holder's parent), registered as a live command so the
    /// subreaper's sweep leaves it alone.
    monitor: i32,
    child: std::sync::Mutex<Option<std::process::Child>>,
    /// The denied paths' kinds the view was built from.
    hidden: Vec<HiddenKind>,
    dead: AtomicBool,
}

impl Drop for Holder {
    fn drop(&mut self) {
        super::tree::forget_live(self.monitor);
        if let Some(mut child) = self.child.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // The holder exits at end of file on its control socket (closed with `self`);
            // bubblewrap follows. Reaped off the caller's thread.
            let _ = std::thread::Builder::new()
                .name("sandbox-holder-reap".into())
                .spawn(move || {
                    let _ = child.wait();
                });
        }
    }
}

/// A call started in the holder: its contained child's host pid, its channel and output.
pub(crate) struct HeldCall {
    /// Host pid of the call's first process (pid 1 of its pid namespace).
    pub pid: i32,
    channel: UnixStream,
    stdout: Option<tokio::net::unix::pipe::Receiver>,
    stderr: Option<tokio::net::unix::pipe::Receiver>,
    /// Keeps the holder alive while the call runs.
    _holder: Arc<Holder>,
}

impl HeldCall {
    /// The read ends of the command's stdout and stderr (once).
    pub(crate) fn take_output(
        &mut self,
    ) -> (
        Option<tokio::net::unix::pipe::Receiver>,
        Option<tokio::net::unix::pipe::Receiver>,
    ) {
        (self.stdout.take(), self.stderr.take())
    }

    /// Lets the call's command run (its pid is in the call's cgroup).
    pub(crate) async fn go(&mut self) -> std::io::Result<()> {
        self.channel.write_all(&[GO]).await
    }

    /// The command's exit status; a call whose first process was killed (time-out, output
    /// cap, memory limit) reads as killed by `SIGKILL`.
    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let mut msg = [0u8; 5];
        match self.channel.read_exact(&mut msg).await {
            Ok(_) if msg[0] == STATUS => {
                // The child exits right after: its end of the channel closing means it is
                // (nearly) out of the call's cgroup, which can then be removed at once.
                let mut rest = [0u8; 1];
                while self.channel.read(&mut rest).await? > 0 {}
                Ok(ExitStatus::from_raw(i32::from_le_bytes([
                    msg[1], msg[2], msg[3], msg[4],
                ])))
            }
            Ok(_) => Err(std::io::Error::other(
                "the sandbox holder sent an unexpected message",
            )),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Ok(ExitStatus::from_raw(libc::SIGKILL))
            }
            Err(e) => Err(e),
        }
    }
}

/// Why a call could not be started in a holder.
enum StartError {
    /// The holder is gone (a new one may be started).
    HolderGone(std::io::Error),
    /// Anything else.
    Other(std::io::Error),
}

impl HolderSlot {
    /// Starts a call in the current holder (starting or replacing the holder as needed).
    /// The call's child waits for [`HeldCall::go`].
    ///
    /// # Errors
    ///
    /// The holder could not be started [`START_ATTEMPTS`] times in a row, or the call could
    /// not be handed to it.
    pub(crate) async fn start_call(
        &self,
        iso: &Isolation,
        spec: &LaunchSpec,
        cwd: &Path,
        env: &[(String, String)],
        landlock_fd: Option<RawFd>,
    ) -> std::io::Result<HeldCall> {
        let request = encode_request(spec, cwd, env)?;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            let holder = self.holder(iso).await?;
            match start_in(&holder, &request, landlock_fd).await {
                Ok(call) => return Ok(call),
                Err(StartError::HolderGone(e)) => {
                    tracing::warn!(error = %e, "the sandbox holder is gone; starting a new one");
                    holder.dead.store(true, Ordering::Relaxed);
                    last = Some(e);
                }
                Err(StartError::Other(e)) => return Err(e),
            }
        }
        Err(std::io::Error::other(format!(
            "the sandbox holder ended {START_ATTEMPTS} times in a row: {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        )))
    }

    /// The current holder, started when there is none, it died, or the denied paths that
    /// exist are no longer the ones its view hides.
    async fn holder(&self, iso: &Isolation) -> std::io::Result<Arc<Holder>> {
        let mut current = self.current.lock().await;
        let hidden = iso.hidden_now();
        if let Some(h) = current.as_ref()
            && !h.dead.load(Ordering::Relaxed)
            && h.hidden == hidden
        {
            return Ok(h.clone());
        }
        if current.is_some() {
            tracing::info!("rebuilding the sandbox holder's view");
        }
        // The old holder (if any) ends once its running calls have ended.
        *current = None;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            match start_holder(iso).await {
                Ok(h) => {
                    let h = Arc::new(h);
                    *current = Some(h.clone());
                    return Ok(h);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the sandbox holder did not start");
                    last = Some(e);
                }
            }
        }
        Err(std::io::Error::other(format!(
            "the sandbox holder did not start ({START_ATTEMPTS} attempts): {}",
            last.map(|e| e.to_string()).unwrap_or_default()
        )))
    }
}

/// Starts bubblewrap with the holder inside and waits until its view is built.
async fn start_holder(iso: &Isolation) -> std::io::Result<Holder> {
    let (server_end, holder_end) = StdUnixStream::pair()?;
    let proc_dir = std::fs::File::open("/proc")?;
    let dev_null = std::fs::File::open("/dev/null")?;
    let fds = [
        holder_end.as_raw_fd(),
        proc_dir.as_raw_fd(),
        dev_null.as_raw_fd(),
    ];
    let (bwrap, args, hidden) = iso.holder_line(fds[2], fds[0], fds[1]);
    let mut cmd = std::process::Command::new(bwrap);
    cmd.args(args)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let switch_to = iso.switch_to();
    // SAFETY: the closure only makes system calls on integers prepared before the fork.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            for fd in fds {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Its own process group: signals meant for the server's group do not reach it.
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            super::process::become_unprivileged(switch_to)
        });
    }
    let mut child = super::tree::spawn_live(|| cmd.spawn())?;
    drop((holder_end, proc_dir, dev_null));
    let monitor = i32::try_from(child.id()).unwrap_or(0);
    server_end.set_nonblocking(true)?;
    let mut control = UnixStream::from_std(server_end)?;
    let mut ready = [0u8; 1];
    let outcome = tokio::time::timeout(START_TIMEOUT, control.read(&mut ready)).await;
    let failure = match outcome {
        Ok(Ok(1)) if ready[0] == READY => None,
        Ok(Ok(_)) => Some("it ended before its view was built".to_string()),
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(format!(
            "it was not ready within {} s",
            START_TIMEOUT.as_secs()
        )),
    };
    let stderr = child.stderr.take();
    if let Some(why) = failure {
        super::tree::forget_live(monitor);
        let _ = child.kill();
        let _ = child.wait();
        let mut said = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut said);
        }
        let said = said
            .lines()
            .find(|l| l.starts_with(SETUP_PREFIX) || l.starts_with("bwrap: "))
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        return Err(std::io::Error::other(format!("{why}{said}")));
    }
    if let Some(e) = stderr {
        // What the holder says later (it only writes when it stops) goes to the log.
        let _ = std::thread::Builder::new()
            .name("sandbox-holder-log".into())
            .spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(e).lines().map_while(Result::ok) {
                    tracing::warn!(holder = %line, "sandbox holder");
                }
            });
    }
    tracing::info!(pid = monitor, "sandbox holder started");
    Ok(Holder {
        control: tokio::sync::Mutex::new(control),
        monitor,
        child: std::sync::Mutex::new(Some(child)),
        hidden,
        dead: AtomicBool::new(false),
    })
}

/// Hands one call to `holder` and waits for its child's pid.
async fn start_in(
    holder: &Arc<Holder>,
    request: &[u8],
    landlock_fd: Option<RawFd>,
) -> Result<HeldCall, StartError> {
    let other = StartError::Other;
    let (out_r, out_w) = pipe().map_err(other)?;
    let (err_r, err_w) = pipe().map_err(other)?;
    let stdin = std::fs::File::open("/dev/null").map_err(other)?;
    let (channel, peer) = StdUnixStream::pair().map_err(other)?;
    let mut fds = vec![
        stdin.as_raw_fd(),
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
        peer.as_raw_fd(),
    ];
    fds.extend(landlock_fd);
    {
        let control = holder.control.lock().await;
        send_request(&control, request, &fds)
            .await
            .map_err(StartError::HolderGone)?;
    }
    drop((stdin, out_w, err_w, peer));
    channel.set_nonblocking(true).map_err(other)?;
    let mut channel = UnixStream::from_std(channel).map_err(other)?;
    let mut head = [0u8; 5];
    match channel.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(StartError::HolderGone(std::io::Error::other(
                "the sandbox holder ended before starting the call",
            )));
        }
        Err(e) => return Err(other(e)),
    }
    let number = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
    match head[0] {
        STARTED => {}
        FAILED => {
            let len = usize::try_from(number).unwrap_or(0).min(4096);
            let mut text = vec![0u8; len];
            let _ = channel.read_exact(&mut text).await;
            return Err(other(std::io::Error::other(format!(
                "the sandbox holder could not start the call: {}",
                String::from_utf8_lossy(&text)
            ))));
        }
        _ => {
            return Err(other(std::io::Error::other(
                "the sandbox holder sent an unexpected message",
            )));
        }
    }
    let receiver = |fd: OwnedFd| {
        set_nonblocking(fd.as_raw_fd())?;
        tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
    };
    Ok(HeldCall {
        pid: i32::try_from(number).map_err(|e| other(std::io::Error::other(e)))?,
        channel,
        stdout: Some(receiver(out_r).map_err(other)?),
        stderr: Some(receiver(err_r).map_err(other)?),
        _holder: holder.clone(),
    })
}

/// Sends one request (length, then body) with `fds` attached to its first bytes.
async fn send_request(control: &UnixStream, request: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let framed = framed(request);
    let mut sent = 0;
    while sent < framed.len() {
        control.writable().await?;
        let attach: &[RawFd] = if sent == 0 { fds } else { &[] };
        match control.try_io(tokio::io::Interest::WRITABLE, || {
            send_with_fds(control.as_raw_fd(), &framed[sent..], attach)
        }) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A request frame: the body's length (4 bytes, little-endian), then the body (at most
/// [`MAX_REQUEST_BYTES`], which [`encode_request`] checks).
fn framed(body: &[u8]) -> Vec<u8> {
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    [&len.to_le_bytes()[..], body].concat()
}

/// The request's body: length-prefixed fields — the working directory, the number of
/// environment entries, the entries (`NAME=value`), then the launcher's arguments.
fn encode_request(
    spec: &LaunchSpec,
    cwd: &Path,
    env: &[(String, String)],
) -> std::io::Result<Vec<u8>> {
    let mut fields: Vec<Vec<u8>> = vec![
        cwd.as_os_str().as_bytes().to_vec(),
        env.len().to_string().into_bytes(),
    ];
    fields.extend(env.iter().map(|(k, v)| format!("{k}={v}").into_bytes()));
    fields.extend(spec.to_args().into_iter().map(OsString::into_vec));
    let mut out = Vec::new();
    for f in fields {
        out.extend_from_slice(&u32::try_from(f.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(&f);
    }
    if out.len() > MAX_REQUEST_BYTES {
        return Err(std::io::Error::other(format!(
            "the command's arguments and environment take {} bytes, over the sandbox holder's \
             limit of {MAX_REQUEST_BYTES}",
            out.len()
        )));
    }
    Ok(out)
}

/// A decoded request.
struct Request {
    cwd: CString,
    env: Vec<CString>,
    spec: LaunchSpec,
}

fn decode_request(body: &[u8]) -> Result<Request, String> {
    let mut fields = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let (len, tail) = rest.split_at_checked(4).ok_or("truncated field length")?;
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let (field, tail) = tail.split_at_checked(len).ok_or("truncated field")?;
        fields.push(field.to_vec());
        rest = tail;
    }
    let mut fields = fields.into_iter();
    let cwd = CString::new(fields.next().ok_or("no working directory")?)
        .map_err(|_| "the working directory holds a NUL byte")?;
    let count: usize = fields
        .next()
        .and_then(|n| String::from_utf8(n).ok())
        .and_then(|n| n.parse().ok())
        .ok_or("no environment count")?;
    let mut env = Vec::new();
    for _ in 0..count {
        let entry = fields.next().ok_or("missing environment entry")?;
        env.push(CString::new(entry).map_err(|_| "an environment entry holds a NUL byte")?);
    }
    let mut args = fields.map(OsString::from_vec);
    if args.next().as_deref() != Some(super::launch::SANDBOX_EXEC_ARG.as_ref()) {
        return Err("no launcher arguments".to_string());
    }
    let spec = LaunchSpec::parse(args)?;
    Ok(Request { cwd, env, spec })
}

// ---------------------------------------------------------------------------------------
// Inside the namespaces: the holder's loop and each call's child.
// ---------------------------------------------------------------------------------------

/// Runs the holder (`system-tools-mcp --sandbox-holder --control-fd N --proc-fd N
/// [--noexec PATH]…`); never returns.
pub(crate) fn run_holder(args: impl Iterator<Item = OsString>) -> ! {
    let err = match holder_main(args) {
        Ok(()) => std::process::exit(0),
        Err(e) => e,
    };
    eprintln!("{SETUP_PREFIX}holder: {err}");
    std::process::exit(SETUP_FAILED);
}

fn holder_main(mut args: impl Iterator<Item = OsString>) -> Result<(), String> {
    let (mut control, mut proc_dir, mut noexec) = (None, None, Vec::new());
    while let Some(a) = args.next() {
        let mut number = |what: &str| -> Result<RawFd, String> {
            args.next()
                .and_then(|v| v.to_str().and_then(|s| s.parse().ok()))
                .ok_or_else(|| format!("{what} needs a number"))
        };
        match a.to_str() {
            Some("--control-fd") => control = Some(number("--control-fd")?),
            Some("--proc-fd") => proc_dir = Some(number("--proc-fd")?),
            Some("--noexec") => noexec.push(args.next().ok_or("--noexec needs a path")?),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    let control = control.ok_or("no --control-fd")?;
    let proc_dir = proc_dir.ok_or("no --proc-fd")?;
    for fd in [control, proc_dir] {
        // SAFETY: fcntl on inherited descriptors.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    for p in &noexec {
        super::launch::remount_noexec(p)
            .map_err(|e| format!("remounting {} noexec: {e}", p.to_string_lossy()))?;
    }
    // Compiled once here; every call's command inherits them.
    for allow_listen in [false, true] {
        if let Err(e) = super::launch::compiled_filters(allow_listen) {
            return Err(format!("building the seccomp filter: {e}"));
        }
    }
    // Each call's child is reaped by the kernel (the holder needs none of their statuses).
    // SAFETY: setting a signal disposition.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    write_all(control, &[READY]).map_err(|e| format!("reporting ready: {e}"))?;
    // SAFETY: getuid/getgid never fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let ids = CallIds {
        proc_dir,
        uid,
        gid,
        inherited: [control, proc_dir],
    };
    // Made after the first request (whose seccomp variant it then knows), and again after
    // each call was handed on.
    let mut spare: Option<Spare> = None;
    let mut body = Vec::new();
    loop {
        let mut fds = Vec::new();
        match read_frame(control, &mut body, &mut fds) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading a request: {e}")),
        }
        if fds.len() < REQUEST_FDS - 1 {
            // Not a request this server sends; nothing to answer on.
            continue;
        }
        let channel = fds[3].as_raw_fd();
        let request = match decode_request(&body) {
            Ok(mut r) => {
                r.spec.landlock_fd = fds.get(4).map(AsRawFd::as_raw_fd);
                r
            }
            Err(e) => {
                report_failure(channel, &format!("bad request: {e}"));
                continue;
            }
        };
        let allow_listen = request.spec.allow_listen;
        let handed = spare
            .take()
            .and_then(|s| s.hand_on(&request, &body, &fds).ok());
        let pid = match handed {
            Some(pid) => pid,
            None => match start_call_child(&ids, &request, &fds) {
                Ok(pid) => pid,
                Err(e) => {
                    report_failure(channel, &e);
                    continue;
                }
            },
        };
        let mut msg = [STARTED, 0, 0, 0, 0];
        msg[1..].copy_from_slice(&(pid as u32).to_le_bytes());
        let _ = write_all(channel, &msg);
        // The request's descriptors close here (the child has its copies), before the next
        // spare is made: it must hold none of them.
        drop(fds);
        spare = Spare::make(&ids, allow_listen).ok();
    }
}

/// What every call's first process gets from the holder: the `/proc` it writes the id maps
/// through, the uid and gid they map to, and the holder's descriptors it must close.
struct CallIds {
    proc_dir: RawFd,
    uid: u32,
    gid: u32,
    inherited: [RawFd; 2],
}

/// The namespaces every call gets of its own (the user namespace nested in the holder's).
const CALL_NAMESPACES: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;

/// `clone`s a call's first process into its own namespaces and writes its id maps; the
/// child runs `child` (which does not return) and never returns. Returns its host pid.
fn clone_call_process(ids: &CallIds, child: impl FnOnce()) -> Result<i32, String> {
    // SAFETY: a fork-like clone (no new stack, no shared memory) in a single-threaded
    // process; the child runs `child`, which never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (CALL_NAMESPACES | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        child();
        quit(1);
    }
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("cannot create the call's namespaces: {e}"));
    }
    let pid = pid as i32;
    if let Err(e) = write_id_maps(ids.proc_dir, pid, ids.uid, ids.gid) {
        // SAFETY: kill of our own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return Err(format!("cannot map the call's uid: {e}"));
    }
    Ok(pid)
}

/// Starts the call's first process for `request` now (no spare, or it could not take it).
fn start_call_child(ids: &CallIds, request: &Request, fds: &[OwnedFd]) -> Result<i32, String> {
    clone_call_process(ids, || {
        let fd = |i: usize| fds.get(i).map_or(-1, AsRawFd::as_raw_fd);
        if let Err(e) = enter_call(ids.inherited) {
            setup_failed(fd(2), fd(3), &e);
        }
        run_call(request, fds, false)
    })
}

/// A call's first process made ahead of the request it will run: its namespaces built, its
/// id maps written and the commands' seccomp filters applied to it (the kernel's work for
/// both — namespace set-up, compiling and caching the filter — then happens between calls
/// instead of in one), waiting on `feed` for the request and its descriptors.
struct Spare {
    pid: i32,
    /// The holder's end of the socket the request is handed on through.
    feed: OwnedFd,
    /// The seccomp variant applied (the operator's TCP bind setting).
    allow_listen: bool,
}

impl Spare {
    fn make(ids: &CallIds, allow_listen: bool) -> Result<Self, String> {
        let mut pair = [0; 2];
        // SAFETY: socketpair fills two descriptors this process then owns.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error().to_string());
        }
        // SAFETY: as above.
        let (feed, theirs) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let pid = clone_call_process(ids, || {
            // SAFETY: closing the holder's end in the child, which never uses it.
            unsafe { libc::close(feed.as_raw_fd()) };
            spare_child(ids.inherited, theirs.as_raw_fd(), allow_listen)
        })?;
        drop(theirs);
        Ok(Spare {
            pid,
            feed,
            allow_listen,
        })
    }

    /// Hands `request` (as `body`, with `fds`) on to the spare; returns its pid. On an error
    /// the spare is killed (the call then gets a fresh child).
    fn hand_on(self, request: &Request, body: &[u8], fds: &[OwnedFd]) -> std::io::Result<i32> {
        let fits = request.spec.allow_listen == self.allow_listen && request.spec.noexec.is_empty();
        let sent = if fits {
            let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
            write_frame(self.feed.as_raw_fd(), body, &raw)
        } else {
            Err(std::io::Error::other(
                "the spare's seccomp variant does not fit",
            ))
        };
        if sent.is_err() {
            // SAFETY: kill of our own child.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        sent.map(|()| self.pid)
    }
}

/// A spare's life: enters the call's namespaces, applies the commands' seccomp filters,
/// waits for its request, then runs the call. Exits quietly when the holder closes `feed`
/// without one (it was discarded, or the holder ended); the holder then starts the call
/// afresh.
fn spare_child(inherited: [RawFd; 2], feed: RawFd, allow_listen: bool) -> ! {
    if enter_call(inherited).is_err() {
        quit(1);
    }
    let Ok(filters) = super::launch::compiled_filters(allow_listen) else {
        quit(1);
    };
    for f in filters {
        if seccompiler::apply_filter(f).is_err() {
            quit(1);
        }
    }
    let (mut body, mut fds) = (Vec::new(), Vec::new());
    if !matches!(read_frame(feed, &mut body, &mut fds), Ok(true)) {
        quit(0);
    }
    // SAFETY: the feed is not used again.
    unsafe { libc::close(feed) };
    let Ok(mut request) = decode_request(&body) else {
        quit(1);
    };
    request.spec.landlock_fd = fds.get(4).map(AsRawFd::as_raw_fd);
    run_call(&request, &fds, true)
}

/// Maps the call's uid and gid to the holder's own (so the command runs as the same
/// unprivileged uid, and files it creates are that uid's).
fn write_id_maps(proc_dir: RawFd, pid: i32, uid: u32, gid: u32) -> std::io::Result<()> {
    for (file, id) in [("uid_map", uid), ("gid_map", gid)] {
        let path = CString::new(format!("{pid}/{file}")).map_err(std::io::Error::other)?;
        // SAFETY: openat on a valid C string relative to the inherited `/proc` descriptor.
        let fd = unsafe { libc::openat(proc_dir, path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened and owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        write_all(fd.as_raw_fd(), format!("{id} {id} 1\n").as_bytes())?;
    }
    Ok(())
}

/// The first steps of a call's first process (pid 1 of its pid namespace), before its
/// request: it dies with the holder, closes the holder's descriptors and names its host.
fn enter_call(inherited: [RawFd; 2]) -> Result<(), String> {
    // SAFETY: plain system calls on integers in a single-threaded process.
    unsafe {
        // Dies with the holder (which dies with the server). (`getppid` is 0 in a new pid
        // namespace, so a holder that died before this line goes unnoticed here; the child
        // then ends when the server closes the call's channel.)
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        for fd in inherited {
            libc::close(fd);
        }
        let name = b"sandbox";
        if libc::sethostname(name.as_ptr().cast(), name.len()) != 0 {
            return Err(format!(
                "setting the host name: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The rest of a call's first process: waits until the server has put it in the call's
/// cgroup, forks the command, reports its wait status. `filtered`: the seccomp filters are
/// applied already (a spare), so the command's launcher skips them. Never returns.
fn run_call(request: &Request, fds: &[OwnedFd], filtered: bool) -> ! {
    let fd = |i: usize| fds.get(i).map_or(-1, AsRawFd::as_raw_fd);
    let (stdin, stdout, stderr, channel) = (fd(0), fd(1), fd(2), fd(3));
    // SAFETY: plain system calls on integers and C strings in a single-threaded process.
    unsafe {
        let mut go = [0u8; 1];
        if libc::read(channel, go.as_mut_ptr().cast(), 1) != 1 || go[0] != GO {
            libc::_exit(1);
        }
        let fail = |what: String| setup_failed(stderr, channel, &what);
        libc::setsid();
        if libc::chdir(request.cwd.as_ptr()) != 0 {
            fail(format!(
                "entering the working directory: {}",
                std::io::Error::last_os_error()
            ));
        }
        let command = libc::fork();
        if command < 0 {
            fail(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if command == 0 {
            for (from, to) in [(stdin, 0), (stdout, 1), (stderr, 2)] {
                if libc::dup2(from, to) < 0 {
                    libc::_exit(SETUP_FAILED);
                }
            }
            let err = super::launch::launch(&request.spec, Some(&request.env), filtered);
            let line = format!("{SETUP_PREFIX}{err}\n");
            libc::write(2, line.as_ptr().cast(), line.len());
            libc::_exit(SETUP_FAILED);
        }
        // The command's output ends when it (and what it started) ends, not with this process.
        for fd in [stdin, stdout, stderr, 0, 1, 2] {
            libc::close(fd);
        }
        loop {
            let mut status = 0;
            let pid = libc::waitpid(-1, &mut status, 0);
            if pid == command {
                report_status(channel, status);
                // Ending pid 1 ends every process left in the call's pid namespace.
                libc::_exit(0);
            }
            if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(1);
            }
        }
    }
}

/// Says why the call's sandbox could not be set up (on the command's stderr, as the launcher
/// does), reports the launcher's exit status and exits.
fn setup_failed(stderr: RawFd, channel: RawFd, what: &str) -> ! {
    let line = format!("{SETUP_PREFIX}{what}\n");
    // SAFETY: write of a live buffer, then _exit.
    unsafe {
        libc::write(stderr, line.as_ptr().cast(), line.len());
        report_status(channel, SETUP_FAILED << 8);
        libc::_exit(SETUP_FAILED)
    }
}

fn report_status(channel: RawFd, status: i32) {
    let mut msg = [STATUS, 0, 0, 0, 0];
    msg[1..].copy_from_slice(&status.to_le_bytes());
    let _ = write_all(channel, &msg);
}

fn report_failure(channel: RawFd, text: &str) {
    let mut msg = vec![FAILED];
    msg.extend_from_slice(&u32::try_from(text.len()).unwrap_or(0).to_le_bytes());
    msg.extend_from_slice(text.as_bytes());
    let _ = write_all(channel, &msg);
}

// ---------------------------------------------------------------------------------------
// Descriptors and sockets.
// ---------------------------------------------------------------------------------------

/// Reads one request frame (length, then body, descriptors on its first bytes) from `sock`
/// into `body` and `fds`. `Ok(false)`: the peer closed the socket.
fn read_frame(sock: RawFd, body: &mut Vec<u8>, fds: &mut Vec<OwnedFd>) -> std::io::Result<bool> {
    let mut head = [0u8; 4];
    let n = recv_with_fds(sock, &mut head, fds)?;
    if n == 0 {
        return Ok(false);
    }
    let mut stream = borrowed_stream(sock);
    if n < 4 {
        stream.read_exact(&mut head[n..])?;
    }
    let len = u32::from_le_bytes(head) as usize;
    if len > MAX_REQUEST_BYTES {
        return Err(std::io::Error::other(format!("a request of {len} bytes")));
    }
    body.resize(len, 0);
    stream.read_exact(body)?;
    Ok(true)
}

/// Writes one request frame (see [`read_frame`]) to a blocking peer, waiting while its
/// socket buffer is full.
fn write_frame(sock: RawFd, body: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let framed = framed(body);
    let mut sent = 0;
    while sent < framed.len() {
        let attach: &[RawFd] = if sent == 0 { fds } else { &[] };
        match send_with_fds(sock, &framed[sent..], attach) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut ready = libc::pollfd {
                    fd: sock,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: poll on one live pollfd.
                unsafe { libc::poll(&mut ready, 1, -1) };
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends a call's process at once (it must not run the holder's exit handlers).
fn quit(code: i32) -> ! {
    // SAFETY: _exit never returns.
    unsafe { libc::_exit(code) }
}

/// A `std` stream over a descriptor this process keeps (never closed through it).
fn borrowed_stream(fd: RawFd) -> std::mem::ManuallyDrop<StdUnixStream> {
    // SAFETY: the descriptor stays open for the holder's life; ManuallyDrop never closes it.
    std::mem::ManuallyDrop::new(unsafe { StdUnixStream::from_raw_fd(fd) })
}

fn write_all(fd: RawFd, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: write of a valid buffer (SIGPIPE is ignored in this binary: a closed peer
        // is an error).
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors this process then owns.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `sendmsg` of `bytes` with `fds` as `SCM_RIGHTS` (none when empty).
fn send_with_fds(sock: RawFd, bytes: &[u8], fds: &[RawFd]) -> std::io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let mut space = [0u64; 16];
    // SAFETY: a zeroed msghdr pointing at live buffers; the control buffer is large and
    // aligned enough for REQUEST_FDS descriptors.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !fds.is_empty() {
            let data_len = std::mem::size_of_val(fds) as u32;
            msg.msg_control = space.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(data_len) as _;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(data_len) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast(), fds.len());
        }
        let n = libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

/// `recvmsg` into `buf`, collecting `SCM_RIGHTS` descriptors (close-on-exec) into `fds`.
fn recv_with_fds(sock: RawFd, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> std::io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut space = [0u64; 16];
    // SAFETY: a zeroed msghdr pointing at live buffers; the kernel fills the control buffer
    // and the loop reads only the headers it wrote.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&space) as _;
        let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            fds.clear();
            return Err(std::io::Error::other("too many descriptors in a request"));
        }
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            noexec: Vec::new(),
            landlock_fd: None,
            nproc: 64,
            address_space: 1 << 30,
            cpu_secs: 5,
            allow_listen: false,
            program: "/usr/bin/printf".into(),
            args: vec![
                "%s\n".into(),
                "two words".into(),
                String::new().into(),
                "--".into(),
            ],
        }
    }

    #[test]
    fn a_request_decodes_to_what_was_encoded() {
        let env = vec![
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
        ];
        let body = encode_request(&spec(), Path::new("/work/base dir"), &env).unwrap();
        let r = decode_request(&body).unwrap();
        assert_eq!(r.cwd.as_bytes(), b"/work/base dir");
        let env: Vec<&[u8]> = r.env.iter().map(|c| c.as_bytes()).collect();
        assert_eq!(env, [&b"PATH=/usr/bin:/bin"[..], b"LANG=C.UTF-8"]);
        assert_eq!(r.spec, spec());
    }

    #[test]
    fn a_truncated_or_oversized_request_is_refused() {
        let body = encode_request(&spec(), Path::new("/"), &[]).unwrap();
        for cut in [1, 5, body.len() - 1] {
            assert!(decode_request(&body[..cut]).is_err(), "cut at {cut}");
        }
        let mut big = spec();
        big.args = vec!["x".repeat(MAX_REQUEST_BYTES).into()];
        let err = encode_request(&big, Path::new("/"), &[]).unwrap_err();
        assert!(
            err.to_string().contains("over the sandbox holder's limit"),
            "{err}"
        );
    }
}
