//! A thin Debug Adapter Protocol client: `Content-Length` framed JSON over a byte stream
//! (the adapter's stdio), requests matched to responses by `seq`, events folded into a
//! [`Program`] state that callers wait on with a time-out.
//!
//! Every wait is bounded: a request waits at most its time-out, and a dead adapter fails
//! every pending and later request at once ([`DapError::AdapterGone`]).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use debugger_mcp::dap::{Dap, encode_frame};
//! use std::time::Duration;
//! // An in-memory "adapter" that answers one request.
//! let (client_side, mut adapter_side) = tokio::io::duplex(4096);
//! let (read, write) = tokio::io::split(client_side);
//! let dap = Dap::new(read, write, Duration::from_secs(2));
//! tokio::spawn(async move {
//!     use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!     let mut buf = vec![0u8; 1024];
//!     let _ = adapter_side.read(&mut buf).await.unwrap();
//!     let reply = serde_json::json!({"seq": 1, "type": "response", "request_seq": 1,
//!         "success": true, "command": "threads", "body": {"threads": []}});
//!     adapter_side.write_all(&encode_frame(&reply)).await.unwrap();
//!     let _ = adapter_side.read(&mut buf).await; // hold the stream open
//! });
//! let body = dap.request("threads", serde_json::json!({})).await.unwrap();
//! assert_eq!(body["threads"], serde_json::json!([]));
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{oneshot, watch};

/// The largest message accepted from an adapter; a larger `Content-Length` ends the
/// connection (the adapter is then treated as dead).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// The most program output lines kept per session (the newest win).
pub const OUTPUT_LINES_KEPT: usize = 40;

/// The most characters kept of one output line.
pub const MAX_LINE_CHARS: usize = 300;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DapError {
    /// The adapter answered `success: false`.
    #[error("the debug adapter refused '{command}': {message}")]
    Failed {
        /// The request's command.
        command: String,
        /// The adapter's message.
        message: String,
    },
    /// No answer within the time-out.
    #[error("the debug adapter did not answer '{command}' within {ms} ms")]
    Timeout {
        /// The request's command.
        command: String,
        /// The time-out.
        ms: u128,
    },
    /// The adapter's stream closed (it exited or was killed).
    #[error("the debug adapter is gone ({0})")]
    AdapterGone(String),
}

/// What the debugged program is doing, as the adapter's events tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// Launched, not yet configured.
    Starting,
    /// Running (after a continue or a step, until the next stop).
    Running,
    /// Stopped in `thread` for `reason` (`breakpoint`, `step`, `entry`, `exception`, `pause`…).
    Stopped {
        /// The thread that stopped.
        thread: i64,
        /// The adapter's reason.
        reason: String,
        /// The adapter's description or text, if any.
        description: Option<String>,
    },
    /// The program ended (`terminated` event).
    Ended,
    /// The adapter's stream closed before the program ended.
    AdapterDied(String),
}

impl RunState {
    /// True once nothing more can happen (program ended, adapter dead).
    pub fn is_final(&self) -> bool {
        matches!(self, RunState::Ended | RunState::AdapterDied(_))
    }
}

/// The program's state, updated by the reader as events arrive.
#[derive(Debug, Clone)]
pub struct Program {
    /// Current state.
    pub state: RunState,
    /// Counts `stopped` events: a wait for "the next stop" compares it.
    pub stops: u64,
    /// `initialized` was received (the adapter takes configuration now).
    pub initialized: bool,
    /// The debuggee's process id (`process` event).
    pub pid: Option<i32>,
    /// The exit code (`exited` event).
    pub exit_code: Option<i64>,
    /// The newest output lines (stdout/stderr of the program), at most [`OUTPUT_LINES_KEPT`].
    pub output: VecDeque<String>,
    /// Output after the last newline (not yet a whole line).
    pub partial_line: String,
}

/// What a `runInTerminal` reverse request asks the client to start: debugpy's launcher,
/// which then starts the program and connects back to the adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalLaunch {
    /// The command line (program first).
    pub args: Vec<String>,
    /// The working directory, if the adapter names one.
    pub cwd: Option<String>,
    /// Environment changes: a value to set, or `None` to remove the variable.
    pub env: Vec<(String, Option<String>)>,
}

/// The most command-line words and environment entries a `runInTerminal` may carry.
const MAX_TERMINAL_WORDS: usize = 1024;

impl TerminalLaunch {
    /// Read a `runInTerminal` request's arguments.
    ///
    /// # Errors
    /// The reason, when `args` is missing, empty or not all strings, or a bound is passed.
    pub fn from_arguments(arguments: &Value) -> Result<TerminalLaunch, String> {
        let args = arguments["args"]
            .as_array()
            .filter(|a| !a.is_empty() && a.len() <= MAX_TERMINAL_WORDS)
            .ok_or("runInTerminal needs 1 to 1024 args")?
            .iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("runInTerminal args must be strings")?;
        let mut env = Vec::new();
        if let Some(map) = arguments["env"].as_object() {
            if map.len() > MAX_TERMINAL_WORDS {
                return Err("runInTerminal env has over 1024 entries".into());
            }
            for (name, value) in map {
                env.push((name.clone(), value.as_str().map(str::to_string)));
            }
        }
        Ok(TerminalLaunch {
            args,
            cwd: arguments["cwd"].as_str().map(str::to_string),
            env,
        })
    }
}

/// Starts what a `runInTerminal` reverse request asks for and answers the started
/// process's id (see [`Dap::with_terminal`]).
pub type Terminal = Arc<dyn Fn(TerminalLaunch) -> Result<u32, String> + Send + Sync>;

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>>;
type Writer = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// One connection to a debug adapter.
pub struct Dap {
    writer: Writer,
    seq: Arc<AtomicI64>,
    pending: Pending,
    program: Arc<Mutex<Program>>,
    changed: watch::Receiver<u64>,
    timeout: Duration,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Dap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dap")
            .field("program", &self.program())
            .finish_non_exhaustive()
    }
}

/// `message` as one DAP frame: `Content-Length: N\r\n\r\n` and the JSON.
pub fn encode_frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body.as_bytes());
    frame
}

/// Read one frame; `Ok(None)` at a clean end of stream.
async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<Option<Value>, String> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    loop {
        line.clear();
        let read = (&mut *reader)
            .take(1024)
            .read_line(&mut line)
            .await
            .map_err(|e| format!("read error: {e}"))?;
        if read == 0 {
            return if length.is_none() {
                Ok(None)
            } else {
                Err("stream ended inside a header".into())
            };
        }
        if !line.ends_with('\n') {
            return Err("a header line over 1 KiB".into());
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = trimmed.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length '{value}'"))?;
            if n > MAX_FRAME_BYTES {
                return Err(format!(
                    "a {n}-byte message is over the {MAX_FRAME_BYTES}-byte bound"
                ));
            }
            length = Some(n);
        }
    }
    let mut body = vec![0u8; length.unwrap_or(0)];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("read error in a body: {e}"))?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("a body that is not JSON: {e}"))
}

impl Dap {
    /// Talk DAP over `read`/`write`; each request waits at most `timeout` by default.
    /// Reverse requests are refused.
    pub fn new<R, W>(read: R, write: W, timeout: Duration) -> Dap
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Dap::with_terminal(read, write, timeout, None)
    }

    /// Like [`Dap::new`], with `terminal` answering the adapter's `runInTerminal` reverse
    /// requests (the client then starts the launcher itself, with the standard input it
    /// chooses; announce it with `supportsRunInTerminalRequest` in `initialize`).
    pub fn with_terminal<R, W>(
        read: R,
        write: W,
        timeout: Duration,
        terminal: Option<Terminal>,
    ) -> Dap
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Writer = Arc::new(tokio::sync::Mutex::new(Box::new(write)));
        let pending: Pending = Arc::default();
        let seq = Arc::new(AtomicI64::new(1));
        let program = Arc::new(Mutex::new(Program {
            state: RunState::Starting,
            stops: 0,
            initialized: false,
            pid: None,
            exit_code: None,
            output: VecDeque::new(),
            partial_line: String::new(),
        }));
        let (tx, changed) = watch::channel(0u64);
        let reader = tokio::spawn(read_loop(
            BufReader::new(read),
            pending.clone(),
            program.clone(),
            tx,
            writer.clone(),
            seq.clone(),
            terminal,
        ));
        Dap {
            writer,
            seq,
            pending,
            program,
            changed,
            timeout,
            reader,
        }
    }

    /// A snapshot of the program's state.
    pub fn program(&self) -> Program {
        self.program
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Mark the program running after a request that resumed it, unless a stop already
    /// came after `stops_before` stops (the adapter may send it before we get here).
    pub fn mark_running_if(&self, stops_before: u64) {
        let mut program = self.program.lock().unwrap_or_else(|e| e.into_inner());
        if program.stops == stops_before && !program.state.is_final() {
            program.state = RunState::Running;
        }
    }

    /// Send a request and wait for its response body, at most the default time-out.
    pub async fn request(&self, command: &str, arguments: Value) -> Result<Value, DapError> {
        self.request_within(command, arguments, self.timeout).await
    }

    /// Send a request without waiting; the receiver gets the response (used for `launch`,
    /// which debugpy answers only after `configurationDone`).
    pub async fn send(&self, command: &str, arguments: Value) -> Result<Reply, DapError> {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(seq, tx);
        let frame = encode_frame(&json!({
            "seq": seq, "type": "request", "command": command, "arguments": arguments
        }));
        let written = {
            let mut writer = self.writer.lock().await;
            match tokio::time::timeout(self.timeout, async {
                writer.write_all(&frame).await?;
                writer.flush().await
            })
            .await
            {
                Ok(result) => result.map_err(|e| e.to_string()),
                Err(_) => Err("writing the request timed out".to_string()),
            }
        };
        if let Err(err) = written {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&seq);
            return Err(DapError::AdapterGone(err));
        }
        Ok(Reply {
            seq,
            command: command.to_string(),
            rx,
            pending: self.pending.clone(),
        })
    }

    /// [`request`](Self::request) with its own time-out.
    pub async fn request_within(
        &self,
        command: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, DapError> {
        self.send(command, arguments).await?.wait(timeout).await
    }

    /// Wait until `done(program)` holds or `timeout` passes; the final program state
    /// either way.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&Program) -> bool,
    ) -> (bool, Program) {
        let mut changed = self.changed.clone();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let program = self.program();
            if done(&program) {
                return (true, program);
            }
            if program.state.is_final() {
                return (false, program);
            }
            match tokio::time::timeout_at(deadline, changed.changed()).await {
                Ok(Ok(())) => {}
                // The reader is gone: the state is final now.
                Ok(Err(_)) => {
                    let program = self.program();
                    return (done(&program), program);
                }
                Err(_) => return (false, self.program()),
            }
        }
    }

    /// Wait for a stop after `stops_before` stops, or the end; at most `timeout`.
    pub async fn wait_for_stop(&self, stops_before: u64, timeout: Duration) -> Program {
        self.wait_until(timeout, |p| {
            p.stops > stops_before && matches!(p.state, RunState::Stopped { .. })
        })
        .await
        .1
    }
}

impl Drop for Dap {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// A response on its way.
pub struct Reply {
    seq: i64,
    command: String,
    rx: oneshot::Receiver<Result<Value, String>>,
    pending: Pending,
}

impl Reply {
    /// Wait at most `timeout` for the response body.
    pub async fn wait(self, timeout: Duration) -> Result<Value, DapError> {
        match tokio::time::timeout(timeout, self.rx).await {
            Ok(Ok(Ok(body))) => Ok(body),
            Ok(Ok(Err(message))) => Err(DapError::Failed {
                command: self.command,
                message,
            }),
            Ok(Err(_)) => Err(DapError::AdapterGone("its output stream closed".into())),
            Err(_) => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&self.seq);
                Err(DapError::Timeout {
                    command: self.command,
                    ms: timeout.as_millis(),
                })
            }
        }
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: BufReader<R>,
    pending: Pending,
    program: Arc<Mutex<Program>>,
    changed: watch::Sender<u64>,
    writer: Writer,
    seq: Arc<AtomicI64>,
    terminal: Option<Terminal>,
) {
    let bump = |changed: &watch::Sender<u64>| changed.send_modify(|n| *n += 1);
    let end = loop {
        let message = match read_frame(&mut reader).await {
            Ok(Some(message)) => message,
            Ok(None) => break "its output stream closed".to_string(),
            Err(err) => break err,
        };
        match message["type"].as_str() {
            Some("response") => {
                let Some(request_seq) = message["request_seq"].as_i64() else {
                    continue;
                };
                let waiter = pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&request_seq);
                if let Some(waiter) = waiter {
                    let result = if message["success"].as_bool() == Some(true) {
                        Ok(message.get("body").cloned().unwrap_or(Value::Null))
                    } else {
                        Err(message["body"]["error"]["format"]
                            .as_str()
                            .or(message["message"].as_str())
                            .unwrap_or("no reason given")
                            .to_string())
                    };
                    let _ = waiter.send(result);
                }
            }
            Some("event") => {
                apply_event(&program, &message);
                bump(&changed);
            }
            Some("request") => {
                // runInTerminal when a terminal is given; others (startDebugging) refused.
                let answer = match (&terminal, message["command"].as_str()) {
                    (Some(terminal), Some("runInTerminal")) => {
                        TerminalLaunch::from_arguments(&message["arguments"])
                            .and_then(|launch| terminal(launch))
                            .map(|pid| json!({"processId": pid}))
                    }
                    _ => Err("not supported by this client".to_string()),
                };
                let mut reply = json!({
                    "seq": seq.fetch_add(1, Ordering::Relaxed), "type": "response",
                    "request_seq": message["seq"], "success": answer.is_ok(),
                    "command": message["command"],
                });
                match answer {
                    Ok(body) => reply["body"] = body,
                    Err(reason) => reply["message"] = Value::String(reason),
                }
                let mut writer = writer.lock().await;
                let _ = tokio::time::timeout(
                    Duration::from_secs(2),
                    writer.write_all(&encode_frame(&reply)),
                )
                .await;
                let _ = writer.flush().await;
            }
            _ => {}
        }
    };
    tracing::debug!(reason = %end, "debug adapter stream ended");
    {
        let mut program = program.lock().unwrap_or_else(|e| e.into_inner());
        if program.state != RunState::Ended {
            program.state = RunState::AdapterDied(end);
        }
    }
    // Dropping the senders fails every pending request at once.
    pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
    bump(&changed);
}

fn apply_event(program: &Mutex<Program>, message: &Value) {
    let body = &message["body"];
    let mut program = program.lock().unwrap_or_else(|e| e.into_inner());
    match message["event"].as_str().unwrap_or("") {
        "initialized" => program.initialized = true,
        "process" => {
            program.pid = body["systemProcessId"]
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
        }
        "stopped" => {
            if program.state.is_final() {
                return;
            }
            program.stops += 1;
            program.state = RunState::Stopped {
                thread: body["threadId"].as_i64().unwrap_or(0),
                reason: body["reason"].as_str().unwrap_or("unknown").to_string(),
                description: body["text"]
                    .as_str()
                    .or(body["description"].as_str())
                    .map(str::to_string),
            };
        }
        "continued" if !program.state.is_final() => program.state = RunState::Running,
        "exited" => program.exit_code = body["exitCode"].as_i64(),
        "terminated" => program.state = RunState::Ended,
        "output" => {
            let category = body["category"].as_str().unwrap_or("console");
            if matches!(category, "stdout" | "stderr") {
                // debugpy sends output in pieces: lines are put together before keeping them.
                let text = body["output"].as_str().unwrap_or("");
                for (i, piece) in text.split('\n').enumerate() {
                    if i > 0 {
                        let line = std::mem::take(&mut program.partial_line);
                        if program.output.len() == OUTPUT_LINES_KEPT {
                            program.output.pop_front();
                        }
                        program.output.push_back(line);
                    }
                    let room = MAX_LINE_CHARS.saturating_sub(program.partial_line.chars().count());
                    program.partial_line.extend(piece.chars().take(room));
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_oversized_ones_are_refused() {
        let message = json!({"seq": 1, "type": "event", "event": "initialized"});
        let mut bytes = encode_frame(&message);
        bytes.extend_from_slice(&encode_frame(&message));
        let mut reader = BufReader::new(&bytes[..]);
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Some(message.clone())
        );
        assert_eq!(read_frame(&mut reader).await.unwrap(), Some(message));
        assert_eq!(read_frame(&mut reader).await.unwrap(), None);

        let huge = format!("Content-Length: {}\r\n\r\n", MAX_FRAME_BYTES + 1);
        let mut reader = BufReader::new(huge.as_bytes());
        assert!(read_frame(&mut reader).await.unwrap_err().contains("bound"));
    }

    #[tokio::test]
    async fn a_dead_adapter_fails_pending_requests_at_once() {
        let (client_side, adapter_side) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(client_side);
        let dap = Dap::new(read, write, Duration::from_secs(30));
        let reply = dap.send("threads", json!({})).await.unwrap();
        drop(adapter_side);
        let started = std::time::Instant::now();
        assert!(matches!(
            reply.wait(Duration::from_secs(30)).await,
            Err(DapError::AdapterGone(_))
        ));
        assert!(started.elapsed() < Duration::from_secs(5));
        let (_, program) = dap.wait_until(Duration::from_secs(5), |_| false).await;
        assert!(matches!(program.state, RunState::AdapterDied(_)));
    }

    #[test]
    fn run_in_terminal_arguments_are_read_and_bounded() {
        let launch = TerminalLaunch::from_arguments(&json!({
            "args": ["python", "launcher"], "cwd": "/tmp", "env": {"A": "1", "B": null}
        }))
        .unwrap();
        assert_eq!(launch.args, ["python", "launcher"]);
        assert_eq!(launch.cwd.as_deref(), Some("/tmp"));
        assert_eq!(
            launch.env,
            [
                ("A".to_string(), Some("1".to_string())),
                ("B".to_string(), None)
            ]
        );
        for bad in [
            json!({}),
            json!({"args": []}),
            json!({"args": ["python", 3]}),
            json!({"args": vec!["x"; MAX_TERMINAL_WORDS + 1]}),
        ] {
            assert!(TerminalLaunch::from_arguments(&bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out() {
        let (client_side, _adapter_side) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(client_side);
        let dap = Dap::new(read, write, Duration::from_millis(50));
        let err = dap.request("threads", json!({})).await.unwrap_err();
        assert!(matches!(err, DapError::Timeout { .. }), "{err}");
    }
}
