//! Running a checked program: no shell, cleared environment, own process group, timeout that
//! kills the whole group, and output capped per stream.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

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

/// Sends SIGKILL to the process group led by `pid` (ignoring "no such process").
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    if let Err(e) = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL)
        && e != rustix::io::Errno::SRCH
    {
        tracing::warn!(pid = pid.as_raw_nonzero().get(), error = %e, "failed to kill process group");
    }
}

/// Reads a stream keeping at most `cap` bytes. On overflow it kills the process group (so an
/// endless producer stops) and keeps draining until end of file, discarding the rest.
async fn read_capped<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    pgid: Option<u32>,
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
                kill_group(pgid);
            }
        } else {
            out.bytes.extend_from_slice(&buf[..n]);
        }
    }
}

/// Runs `program` with `args` (each passed as one argv entry; no shell is involved) in `cwd`,
/// with exactly `env` as its environment and stdin closed.
///
/// The child leads its own process group. When the main process exits, leftover members of the
/// group are killed; on timeout the whole group is killed and [`RunError::Timeout`] returned.
pub(crate) async fn run(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    max_output_bytes: usize,
) -> Result<RunOutcome, RunError> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pid = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();

    let work = async {
        let read_out = async {
            match stdout {
                Some(s) => read_capped(s, max_output_bytes, pid).await,
                None => Ok(Captured::default()),
            }
        };
        let read_err = async {
            match stderr {
                Some(s) => read_capped(s, max_output_bytes, pid).await,
                None => Ok(Captured::default()),
            }
        };
        let wait = async {
            let status = child.wait().await;
            // Background children left behind would otherwise keep the pipes open.
            kill_group(pid);
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
            kill_group(pid);
            Err(RunError::Io(e))
        }
        Err(_) => {
            kill_group(pid);
            // Reap the direct child (it was just sent SIGKILL, so this returns promptly).
            let _ = child.wait().await;
            Err(RunError::Timeout)
        }
    }
}
