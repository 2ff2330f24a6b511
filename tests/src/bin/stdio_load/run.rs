//! One measured run: spawn a server, handshake, pipeline the calls, collect the figures.

use std::process::Stdio;
use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

use crate::cli::{Method, RunConfig, Target};
use crate::proc_stats::{RssPoller, tree_kb};

/// How much of the server's stderr is kept for error reports.
const STDERR_TAIL_BYTES: usize = 4096;
/// Longest reply line accepted; a longer one ends the run with an error.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How long a server gets to exit after its stdin is closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// The figures of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunResult {
    /// Index of the target in the plan.
    #[serde(skip)]
    pub target: usize,
    /// Label of the server.
    pub label: String,
    /// Round number, from 1.
    pub round: u32,
    /// Requests that were to be sent.
    pub requests: u64,
    /// Requests actually written.
    pub sent: u64,
    /// Correct replies.
    pub ok: u64,
    /// Replies that were JSON-RPC errors, `isError: true`, or not the expected text.
    pub errors: u64,
    /// Requests without a reply when the run ended.
    pub unanswered: u64,
    /// Lines that were not a reply to one of our pending requests (bad JSON, unknown or
    /// duplicate id, server-to-client requests). Server notifications are not counted.
    pub unexpected: u64,
    /// Milliseconds from spawn to the end of the handshake.
    pub handshake_ms: f64,
    /// Seconds from the first call sent to the last reply read (or to the deadline).
    pub elapsed_s: f64,
    /// Replies (correct or not) per second over `elapsed_s` (with `--method list`, pages
    /// per second).
    pub rps: f64,
    /// Peak resident set in kB of the server's process tree: the sum of each process's
    /// `VmHWM` at the end of the run, or the largest polled `VmRSS` sum if that is larger
    /// (or the only figure, when the server died).
    pub peak_rss_kb: Option<u64>,
    /// Processes in the server's tree when the peak was read (1 for a plain server).
    pub processes: Option<usize>,
    /// Whether the deadline ended the run.
    pub timed_out: bool,
    /// The server's exit code after its stdin was closed (`None`: killed or unknown).
    pub exit_code: Option<i32>,
    /// What went wrong, if the run could not complete.
    pub failure: Option<String>,
}

impl RunResult {
    /// The run as one JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// True when every request got exactly one correct reply in time and nothing else
    /// (notifications aside) came back.
    pub fn is_clean(&self) -> bool {
        self.failure.is_none()
            && !self.timed_out
            && self.errors == 0
            && self.unanswered == 0
            && self.unexpected == 0
            && self.ok == self.requests
    }
}

/// Counters shared by the reader and the writer of one run.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) sent: AtomicU64,
    pub(crate) ok: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) unexpected: AtomicU64,
}

/// Runs `target` once with `config`.
pub async fn run_once(index: usize, target: &Target, config: &RunConfig, round: u32) -> RunResult {
    let mut result = RunResult {
        target: index,
        label: target.label.clone(),
        round,
        requests: config.requests,
        sent: 0,
        ok: 0,
        errors: 0,
        unanswered: config.requests,
        unexpected: 0,
        handshake_ms: 0.0,
        elapsed_s: 0.0,
        rps: 0.0,
        peak_rss_kb: None,
        processes: None,
        timed_out: false,
        exit_code: None,
        failure: None,
    };

    let mut command = tokio::process::Command::new(&target.program);
    command
        .args(&target.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if config.server_stderr {
            Stdio::inherit()
        } else {
            Stdio::piped()
        })
        .kill_on_drop(true);
    let spawned_at = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            result.failure = Some(format!("cannot start {:?}: {err}", target.display));
            return result;
        }
    };
    let pid = child.id();
    let poller = pid.map(|pid| RssPoller::start(pid, Duration::from_millis(100)));
    let stderr_tail = child
        .stderr
        .take()
        .map(|stderr| tokio::spawn(keep_tail(stderr)));
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        result.failure = Some("the server's stdin/stdout were not captured".into());
        return result;
    };

    let deadline = tokio::time::Instant::from_std(spawned_at + config.deadline);
    let counters = Arc::new(Counters::default());
    let mut writer = BufWriter::with_capacity(64 * 1024, stdin);
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);

    let outcome = tokio::time::timeout_at(deadline, async {
        handshake(&mut writer, &mut reader, config).await?;
        result.handshake_ms = spawned_at.elapsed().as_secs_f64() * 1e3;
        crate::list::warm_up(&mut writer, &mut reader, config).await?;
        let started = Instant::now();
        let writer = match config.method {
            Method::Call => pipeline(writer, reader, config, &counters).await?,
            Method::List => crate::list::walk_lists(writer, reader, config, &counters).await?,
        };
        Ok::<_, anyhow::Error>((started.elapsed(), writer))
    })
    .await;

    let mut stdin_kept = None;
    match outcome {
        Ok(Ok((elapsed, writer))) => {
            result.elapsed_s = elapsed.as_secs_f64();
            stdin_kept = Some(writer);
        }
        Ok(Err(err)) => {
            result.failure = Some(format!("{err:#}"));
            result.elapsed_s = spawned_at.elapsed().as_secs_f64() - result.handshake_ms / 1e3;
        }
        Err(_) => {
            result.timed_out = true;
            result.elapsed_s = spawned_at.elapsed().as_secs_f64() - result.handshake_ms / 1e3;
        }
    }

    // Peak memory while the server is still running, then let it exit.
    let hwm = pid.and_then(|pid| tree_kb(pid, "VmHWM"));
    result.processes = hwm.map(|(_, n)| n);
    let hwm = hwm.map(|(kb, _)| kb);
    let polled = poller.and_then(RssPoller::stop);
    result.peak_rss_kb = match (hwm, polled) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    drop(stdin_kept);
    result.exit_code = finish(&mut child, result.timed_out).await;

    result.sent = counters.sent.load(Ordering::Relaxed);
    result.ok = counters.ok.load(Ordering::Relaxed);
    result.errors = counters.errors.load(Ordering::Relaxed);
    result.unexpected = counters.unexpected.load(Ordering::Relaxed);
    result.unanswered = config.requests - (result.ok + result.errors).min(config.requests);
    let answered = (result.ok + result.errors) as f64;
    if result.elapsed_s > 0.0 {
        result.rps = answered / result.elapsed_s;
    }
    if !result.is_clean()
        && let Some(tail) = stderr_tail
        && let Ok(Ok(tail)) = tokio::time::timeout(Duration::from_secs(1), tail).await
        && !tail.trim().is_empty()
    {
        tracing::warn!(
            "{}: server stderr (tail):\n{}",
            target.label,
            tail.trim_end()
        );
    }
    result
}

/// Sends `initialize`, waits for its reply, then sends `notifications/initialized`.
async fn handshake(
    writer: &mut BufWriter<ChildStdin>,
    reader: &mut BufReader<ChildStdout>,
    config: &RunConfig,
) -> anyhow::Result<()> {
    let init = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": config.protocol_version,
            "capabilities": {},
            "clientInfo": { "name": "stdio-load", "version": env!("CARGO_PKG_VERSION") }
        }
    });
    write_line(writer, init.to_string().as_bytes()).await?;
    writer.flush().await.context("writing initialize")?;
    let mut line = Vec::new();
    loop {
        if !read_line(reader, &mut line).await? {
            bail!("the server closed stdout before answering initialize");
        }
        let Ok(reply) = serde_json::from_slice::<Reply>(&line) else {
            continue; // not JSON: ignore during the handshake
        };
        if reply.method.is_some()
            || reply.id.as_ref().and_then(serde_json::Value::as_u64) != Some(0)
        {
            continue; // a notification or request from the server, or another reply
        }
        if reply.error.is_some() || reply.result.is_none() {
            bail!(
                "initialize was refused: {}",
                String::from_utf8_lossy(&line).trim_end()
            );
        }
        break;
    }
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    write_line(writer, initialized.as_bytes()).await?;
    writer
        .flush()
        .await
        .context("writing notifications/initialized")?;
    Ok(())
}

/// Writes the calls from a separate task, bounded by the window, and reads the replies
/// here. Returns the writer (stdin kept open) once every request is answered.
async fn pipeline(
    writer: BufWriter<ChildStdin>,
    mut reader: BufReader<ChildStdout>,
    config: &RunConfig,
    counters: &Arc<Counters>,
) -> anyhow::Result<BufWriter<ChildStdin>> {
    let window = Arc::new(Semaphore::new(
        config.window.min(Semaphore::MAX_PERMITS as u64) as usize,
    ));
    let write_task = tokio::spawn(write_calls(
        writer,
        Arc::clone(&window),
        config.clone(),
        Arc::clone(counters),
    ));
    // Abort the writer if this future is dropped (deadline) or fails.
    let mut guard = AbortOnDrop(write_task);

    let total = config.requests;
    let mut seen = vec![false; total as usize + 1];
    let mut answered = 0u64;
    let mut line = Vec::new();
    while answered < total {
        if !read_line(&mut reader, &mut line).await? {
            bail!("the server closed stdout after {answered} of {total} replies");
        }
        match classify(&line, config.expect_text.as_deref()) {
            Line::Reply { id, correct } if id >= 1 && id <= total && !seen[id as usize] => {
                seen[id as usize] = true;
                answered += 1;
                window.add_permits(1);
                if correct {
                    counters.ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    counters.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            Line::Notification => {}
            Line::Reply { .. } | Line::Other => {
                counters.unexpected.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    let writer = (&mut guard.0).await.context("the writer task panicked")??;
    Ok(writer)
}

/// Aborts the writer task when dropped (a no-op once it has finished).
struct AbortOnDrop(tokio::task::JoinHandle<anyhow::Result<BufWriter<ChildStdin>>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Writes `config.requests` calls with ids 1..=N, never more than the window ahead of the
/// replies; flushes whenever it has to wait for the window.
async fn write_calls(
    mut writer: BufWriter<ChildStdin>,
    window: Arc<Semaphore>,
    config: RunConfig,
    counters: Arc<Counters>,
) -> anyhow::Result<BufWriter<ChildStdin>> {
    let head = br#"{"jsonrpc":"2.0","id":"#;
    let tail = format!(
        r#","method":"tools/call","params":{{"name":{},"arguments":{}}}}}"#,
        config.tool_json, config.arguments_json
    );
    let mut line = Vec::with_capacity(head.len() + tail.len() + 24);
    for id in 1..=config.requests {
        let permit = match window.try_acquire() {
            Ok(permit) => permit,
            Err(_) => {
                writer
                    .flush()
                    .await
                    .context("writing to the server's stdin")?;
                window.acquire().await.context("the window closed")?
            }
        };
        permit.forget();
        line.clear();
        line.extend_from_slice(head);
        line.extend_from_slice(id.to_string().as_bytes());
        line.extend_from_slice(tail.as_bytes());
        write_line(&mut writer, &line).await?;
        counters.sent.fetch_add(1, Ordering::Relaxed);
    }
    writer
        .flush()
        .await
        .context("writing to the server's stdin")?;
    Ok(writer)
}

/// The parts of a server message the harness looks at.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    result: Option<ReplyResult>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// The parts of a `tools/call` result the harness looks at.
#[derive(Deserialize)]
struct ReplyResult {
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
    #[serde(default)]
    content: Option<Vec<ContentBlock>>,
}

/// A content block; only text is inspected.
#[derive(Deserialize)]
struct ContentBlock {
    #[serde(default)]
    text: Option<String>,
}

/// What one line from the server is.
enum Line {
    /// A response to request `id`; `correct` per the run's criteria.
    Reply { id: u64, correct: bool },
    /// A notification (method, no id): ignored.
    Notification,
    /// Anything else: bad JSON, non-numeric id, a server-to-client request.
    Other,
}

/// Sorts one line from the server.
fn classify(line: &[u8], expect_text: Option<&str>) -> Line {
    let Ok(reply) = serde_json::from_slice::<Reply>(line) else {
        return Line::Other;
    };
    if reply.method.is_some() {
        return if reply.id.is_none() {
            Line::Notification
        } else {
            Line::Other
        };
    }
    let Some(id) = reply.id.as_ref().and_then(serde_json::Value::as_u64) else {
        return Line::Other;
    };
    let correct = match (&reply.error, &reply.result) {
        (None, Some(result)) => {
            result.is_error != Some(true)
                && expect_text.is_none_or(|want| {
                    result
                        .content
                        .as_ref()
                        .and_then(|blocks| blocks.first())
                        .and_then(|block| block.text.as_deref())
                        == Some(want)
                })
        }
        _ => false,
    };
    Line::Reply { id, correct }
}

/// Writes one message and its newline.
pub(crate) async fn write_line(
    writer: &mut BufWriter<ChildStdin>,
    line: &[u8],
) -> anyhow::Result<()> {
    writer
        .write_all(line)
        .await
        .context("writing to the server's stdin")?;
    writer
        .write_all(b"\n")
        .await
        .context("writing to the server's stdin")?;
    Ok(())
}

/// Reads one line into `buf` (newline stripped). `Ok(false)` at end of stream.
pub(crate) async fn read_line(
    reader: &mut BufReader<ChildStdout>,
    buf: &mut Vec<u8>,
) -> anyhow::Result<bool> {
    buf.clear();
    let limit = (MAX_LINE_BYTES + 1) as u64;
    let n = (&mut *reader)
        .take(limit)
        .read_until(b'\n', buf)
        .await
        .context("reading the server's stdout")?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() > MAX_LINE_BYTES {
        bail!("the server sent a line longer than {MAX_LINE_BYTES} bytes");
    }
    Ok(true)
}

/// Collects the last [`STDERR_TAIL_BYTES`] of the server's stderr.
async fn keep_tail(mut stderr: tokio::process::ChildStderr) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 8192];
    while let Ok(n) = stderr.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * STDERR_TAIL_BYTES {
            tail.drain(..tail.len() - STDERR_TAIL_BYTES);
        }
    }
    if tail.len() > STDERR_TAIL_BYTES {
        tail.drain(..tail.len() - STDERR_TAIL_BYTES);
    }
    String::from_utf8_lossy(&tail).into_owned()
}

/// Lets the server exit after its stdin closed; kills it if it lingers or the run timed out.
/// Returns its exit code when it exited by itself.
async fn finish(child: &mut Child, kill_now: bool) -> Option<i32> {
    if !kill_now && let Ok(Ok(status)) = tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        return status.code();
    }
    if let Err(err) = child.start_kill() {
        tracing::warn!("cannot kill the server: {err}");
    }
    let _ = child.wait().await;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small MCP-speaking stdio server in Python whose misbehaviour is chosen by `mode`.
    const FAKE_SERVER: &str = r#"
import sys, json, time
mode = sys.argv[1]
n = 0
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}}), flush=True)
        continue
    if "id" not in m:
        continue
    n += 1
    if mode == "die" and n > 10:
        sys.exit(3)
    if mode == "hang" and n > 10:
        time.sleep(100)
    text = m["params"]["arguments"].get("message", "")
    if mode == "noisy":
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}), flush=True)
        print("not json", flush=True)
    if mode == "iserror" and n % 2 == 0:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "bad"}], "isError": True}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": text}]}}), flush=True)
"#;

    fn fake(mode: &str) -> Target {
        Target {
            label: mode.to_string(),
            program: "python3".to_string(),
            args: vec!["-c".into(), FAKE_SERVER.into(), mode.into()],
            display: format!("fake {mode}"),
        }
    }

    fn config(requests: u64, deadline_s: u64) -> RunConfig {
        RunConfig {
            method: Method::Call,
            expect_tools: None,
            warm_up_walks: 0,
            requests,
            window: 8,
            deadline: Duration::from_secs(deadline_s),
            tool_json: r#""echo""#.into(),
            arguments_json: r#"{"message":"hi"}"#.into(),
            expect_text: Some("hi".into()),
            protocol_version: "2025-11-25".into(),
            server_stderr: false,
        }
    }

    #[tokio::test]
    async fn counts_every_reply_of_a_well_behaved_server() {
        let r = run_once(0, &fake("ok"), &config(200, 60), 1).await;
        assert!(r.is_clean(), "{}", r.to_json());
        assert_eq!((r.sent, r.ok, r.errors, r.unanswered), (200, 200, 0, 0));
        assert_eq!(r.exit_code, Some(0));
        assert!(r.peak_rss_kb.is_some_and(|kb| kb > 0));
        assert_eq!(r.processes, Some(1));
    }

    #[tokio::test]
    async fn is_error_results_and_wrong_text_count_as_errors() {
        let r = run_once(0, &fake("iserror"), &config(100, 60), 1).await;
        assert_eq!(
            (r.ok, r.errors, r.unanswered),
            (50, 50, 0),
            "{}",
            r.to_json()
        );
        assert!(!r.is_clean());

        let mut cfg = config(20, 60);
        cfg.expect_text = Some("something else".into());
        let r = run_once(0, &fake("ok"), &cfg, 1).await;
        assert_eq!((r.ok, r.errors), (0, 20), "{}", r.to_json());
    }

    #[tokio::test]
    async fn notifications_are_ignored_and_garbage_is_counted() {
        let r = run_once(0, &fake("noisy"), &config(50, 60), 1).await;
        assert_eq!(r.ok, 50, "{}", r.to_json());
        // One non-JSON line per reply; the one after the last reply may not be read.
        assert!(r.unexpected >= 49, "{}", r.to_json());
        assert!(!r.is_clean());
    }

    #[tokio::test]
    async fn a_server_that_dies_ends_the_run_with_a_failure() {
        let r = run_once(0, &fake("die"), &config(100, 60), 1).await;
        assert_eq!(r.ok, 10, "{}", r.to_json());
        assert_eq!(r.unanswered, 90);
        assert!(
            r.failure
                .as_deref()
                .is_some_and(|f| f.contains("closed stdout"))
        );
        assert_eq!(r.exit_code, Some(3));
        assert!(!r.timed_out);
    }

    #[tokio::test]
    async fn the_deadline_stops_a_hung_server() {
        let r = run_once(0, &fake("hang"), &config(100, 2), 1).await;
        assert!(r.timed_out, "{}", r.to_json());
        assert_eq!(r.ok, 10);
        assert_eq!(r.exit_code, None, "a timed-out server is killed");
        assert!(!r.is_clean());
    }

    #[tokio::test]
    async fn a_missing_program_is_reported() {
        let mut target = fake("ok");
        target.program = "/nonexistent/stdio-load-test".into();
        let r = run_once(0, &target, &config(10, 5), 1).await;
        assert!(
            r.failure
                .as_deref()
                .is_some_and(|f| f.contains("cannot start"))
        );
        assert_eq!(r.unanswered, 10);
    }

    #[test]
    fn classify_sorts_lines() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        assert!(matches!(
            classify(ok, Some("hi")),
            Line::Reply {
                id: 7,
                correct: true
            }
        ));
        assert!(matches!(
            classify(ok, Some("no")),
            Line::Reply {
                id: 7,
                correct: false
            }
        ));
        let err = br#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"x"}}"#;
        assert!(matches!(
            classify(err, None),
            Line::Reply {
                id: 8,
                correct: false
            }
        ));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        assert!(matches!(classify(note, None), Line::Notification));
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(classify(request, None), Line::Other));
        assert!(matches!(classify(b"{oops", None), Line::Other));
        let string_id = br#"{"jsonrpc":"2.0","id":"a","result":{}}"#;
        assert!(matches!(classify(string_id, None), Line::Other));
    }
}
