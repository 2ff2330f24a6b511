//! One debugging session: a debugpy adapter (a child process in its own process group), the
//! program it launched, and the breakpoints set; every operation answers where the program
//! is and why.
//!
//! The session owns its processes: [`DebugSession::stop`] ends them politely and then by
//! force, and dropping a session kills them (adapter's process group and the program's).

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_toolbelt::envelope::Failure;
use mcp_toolbelt::paging::Limited;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{DebuggerConfig, resolve_in, shown};
use crate::dap::{Dap, DapError, RunState, Terminal, TerminalLaunch};

/// Lines shown either side of the current line in a code snapshot.
pub const SNAPSHOT_CONTEXT: usize = 2;
/// The longest value text shown for a variable or an evaluation.
pub const MAX_VALUE_CHARS: usize = 200;
/// The most adapter requests one variables call may make (nested expansion).
pub const MAX_VARIABLE_REQUESTS: usize = 40;
/// The largest source file read for a snapshot.
const MAX_SOURCE_BYTES: u64 = 2 * 1024 * 1024;

/// A place in a source file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Location {
    /// File, relative to the debugger's root when inside it
    pub file: String,
    /// Line (1-based)
    pub line: i64,
    /// Function (frame name)
    pub function: String,
}

/// One line of a code snapshot.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SnapshotLine {
    /// Line number
    pub line: i64,
    /// The line's text
    pub text: String,
    /// True for the line about to run
    pub current: bool,
}

/// Where the program is and why: every execution call answers with it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Where {
    /// `stopped`, `running`, `ended` (the program exited) or `adapter_died`
    pub state: String,
    /// Why it stopped: `entry`, `breakpoint`, `step`, `exception`, `pause`, `goto`…
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// More about the stop (an exception's type and message) or the adapter's death
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The thread that stopped
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<i64>,
    /// Where it stopped
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// The code around the current line
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshot: Vec<SnapshotLine>,
    /// The program's exit code, once it ended
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The newest lines the program printed (at most 5)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub output_tail: Vec<String>,
}

impl Where {
    /// One line: `stopped at loop.py:3 in add (breakpoint)`.
    pub fn summary(&self) -> String {
        match self.state.as_str() {
            "stopped" => {
                let at = self
                    .location
                    .as_ref()
                    .map(|l| format!(" at {}:{} in {}", l.file, l.line, l.function))
                    .unwrap_or_default();
                let why = match (&self.reason, &self.description) {
                    (Some(r), Some(d)) => format!(" ({r}: {d})"),
                    (Some(r), None) => format!(" ({r})"),
                    _ => String::new(),
                };
                format!("stopped{at}{why}")
            }
            "running" => "running (it has not stopped yet)".to_string(),
            "ended" => match self.exit_code {
                Some(code) => format!("the program ended with exit code {code}"),
                None => "the program ended".to_string(),
            },
            "adapter_died" => format!(
                "the debug adapter died: {}",
                self.description.as_deref().unwrap_or("no reason known")
            ),
            other => other.to_string(),
        }
    }

    /// What an agent could do next, for `session`.
    pub fn next_steps(&self, session: &str) -> Vec<String> {
        match self.state.as_str() {
            "stopped" => {
                let mut steps = vec![
                    format!("inspect: debug_variables session_id={session} (or debug_stack)"),
                    format!("step: debug_step session_id={session} kind=over|into|out"),
                    format!("continue: debug_continue session_id={session}"),
                ];
                if self.reason.as_deref() == Some("exception") {
                    steps.insert(
                        0,
                        format!("see how it got here: debug_stack session_id={session}"),
                    );
                }
                steps
            }
            "running" => vec![
                format!("pause it: debug_pause session_id={session}"),
                format!("wait for a stop: debug_continue session_id={session} wait_ms=20000"),
                format!("end it: debug_stop session_id={session}"),
            ],
            _ => vec![
                format!("release the session: debug_stop session_id={session}"),
                "run again: debug_start".to_string(),
            ],
        }
    }
}

/// One breakpoint as set.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct Breakpoint {
    /// File, relative to the root
    pub file: String,
    /// Line
    pub line: i64,
    /// Condition (a Python expression), if any
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// True when the adapter placed it on code
    pub verified: bool,
}

/// One stack frame.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Frame {
    /// Index (0 is the innermost; `frame` arguments take it)
    pub index: usize,
    /// Where
    pub location: Location,
}

/// One variable, with its children when expanded.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Variable {
    /// Name
    pub name: String,
    /// Value as text (cut at 200 characters)
    pub value: String,
    /// Type name
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Members, when expanded (within the depth asked for)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Limited<Variable>>,
    /// True when it has members that were not expanded (depth or request budget)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expandable: bool,
}

/// A thread of the program.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadInfo {
    /// Thread id
    pub id: i64,
    /// Name
    pub name: String,
}

/// Execution requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// Run to the next stop.
    Continue,
    /// Step over the current line.
    Over,
    /// Step into a call.
    Into,
    /// Run until the current function returns.
    Out,
}

impl Motion {
    fn command(self) -> &'static str {
        match self {
            Motion::Continue => "continue",
            Motion::Over => "next",
            Motion::Into => "stepIn",
            Motion::Out => "stepOut",
        }
    }
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}… ({} characters in all)",
            &text[..at],
            text.chars().count()
        ),
    }
}

fn adapter_failure(err: DapError) -> Failure {
    match err {
        DapError::Failed { command, message } => Failure::upstream(
            "adapter_refused",
            format!(
                "the debug adapter refused '{command}': {}",
                cut(&message, 500)
            ),
        ),
        DapError::Timeout { command, ms } => Failure::timeout(
            "adapter_timeout",
            format!("the debug adapter did not answer '{command}' within {ms} ms"),
        )
        .next_step("check debug_status; stop the session with debug_stop if it stays stuck"),
        DapError::AdapterGone(why) => {
            Failure::upstream("adapter_died", format!("the debug adapter is gone ({why})"))
                .next_step("release the session with debug_stop, then debug_start again")
        }
    }
}

/// A debugging session: see the [module docs](self).
pub struct DebugSession {
    dap: Dap,
    child: tokio::process::Child,
    adapter_pid: Option<i32>,
    /// debugpy's launcher, started for the adapter (`runInTerminal`): the program's parent.
    launcher: Arc<std::sync::Mutex<Option<tokio::process::Child>>>,
    root: PathBuf,
    program: PathBuf,
    config: Arc<DebuggerConfig>,
    breakpoints: BTreeMap<PathBuf, Vec<(i64, Option<String>, bool)>>,
    /// The adapter's newest stderr lines (for a start that fails).
    stderr_tail: Arc<std::sync::Mutex<VecDeque<String>>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

/// The most stderr lines of an adapter kept.
const STDERR_LINES_KEPT: usize = 10;

/// Read the adapter's stderr to its end, keeping its last lines and logging them.
async fn keep_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<std::sync::Mutex<VecDeque<String>>>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        // At most 4 KiB a line: a longer one is kept in pieces.
        match (&mut reader).take(4096).read_until(b'\n', &mut bytes).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&bytes);
        let line = line.trim_end();
        let line = cut(line, 300);
        tracing::debug!(line = %line, "debug adapter stderr");
        let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() == STDERR_LINES_KEPT {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

impl std::fmt::Debug for DebugSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugSession")
            .field("program", &self.program)
            .field("adapter_pid", &self.adapter_pid)
            .finish_non_exhaustive()
    }
}

/// Parse `file:line` (the last `:` splits).
pub fn parse_location(location: &str) -> Result<(&str, i64), Failure> {
    let bad = || {
        Failure::validation(
            "bad_location",
            format!(
                "'{}' is not FILE:LINE (for example loop.py:12)",
                cut(location, 100)
            ),
        )
    };
    let (file, line) = location.rsplit_once(':').ok_or_else(bad)?;
    let line: i64 = line.trim().parse().map_err(|_| bad())?;
    if file.is_empty() || line < 1 {
        return Err(bad());
    }
    Ok((file, line))
}

impl DebugSession {
    /// Start debugpy's adapter, launch `program` (a path inside the root) with `args` and
    /// `stdin` as its standard input (end-of-file after it; at once without it), set
    /// `breakpoints` (`file:line`), and wait at most `wait` for the first stop (entry, a
    /// breakpoint, an exception) or the end. The session and where the program is.
    ///
    /// The adapter asks this server to start its launcher (`runInTerminal`), so the
    /// launcher is this server's own child, in a process group of its own, given `stdin`
    /// through a pipe; the program is the launcher's child and inherits it.
    pub async fn start(
        config: Arc<DebuggerConfig>,
        program: &str,
        args: &[String],
        stdin: Option<String>,
        stop_on_entry: bool,
        breakpoints: &[String],
        wait: Duration,
    ) -> Result<(DebugSession, Where), Failure> {
        let root = config
            .canonical_root()
            .map_err(|e| Failure::internal("bad_root", e))?;
        let program_path = resolve_in(&root, program).map_err(|e| {
            Failure::not_found("program_not_found", e).next_step(format!(
                "give a .py file under {} (relative paths start there)",
                root.display()
            ))
        })?;
        let mut parsed = Vec::new();
        for location in breakpoints {
            let (file, line) = parse_location(location)?;
            let path =
                resolve_in(&root, file).map_err(|e| Failure::not_found("file_not_found", e))?;
            parsed.push((path, line));
        }
        let mut command = tokio::process::Command::new(&config.python);
        command
            .args(["-m", "debugpy.adapter"])
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            Failure::internal(
                "adapter_start_failed",
                format!(
                    "cannot run {} -m debugpy.adapter: {e}",
                    config.python.display()
                ),
            )
            .next_step("the operator must point --python at an interpreter with debugpy installed")
        })?;
        let stdin_pipe = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let stderr_tail = Arc::new(std::sync::Mutex::new(VecDeque::new()));
        let stderr_task = tokio::spawn(keep_stderr(stderr, stderr_tail.clone()));
        let adapter_pid = child.id().and_then(|p| i32::try_from(p).ok());
        let launcher = Arc::new(std::sync::Mutex::new(None));
        let terminal = launcher_starter(stdin, launcher.clone());
        let dap = Dap::with_terminal(stdout, stdin_pipe, config.request_timeout, Some(terminal));
        let mut session = DebugSession {
            dap,
            child,
            adapter_pid,
            launcher,
            root: root.clone(),
            program: program_path.clone(),
            config: config.clone(),
            breakpoints: BTreeMap::new(),
            stderr_tail,
            stderr_task: Some(stderr_task),
        };
        tracing::info!(program = %program_path.display(), adapter_pid, "starting a debug session");
        let start = config.start_timeout;
        let initialized = session
            .dap
            .request_within(
                "initialize",
                json!({"adapterID": "debugpy", "clientID": "debugger-mcp", "clientName": "debugger-mcp",
                       "linesStartAt1": true, "columnsStartAt1": true, "pathFormat": "path",
                       "supportsRunInTerminalRequest": true}),
                start,
            )
            .await;
        if let Err(err) = initialized {
            return Err(session.not_started(err).await);
        }
        let launch = session
            .dap
            .send(
                "launch",
                json!({"program": program_path, "args": args, "cwd": root, "stopOnEntry": stop_on_entry,
                       "console": "integratedTerminal", "python": [config.python], "justMyCode": true,
                       "redirectOutput": true}),
            )
            .await;
        let launch = match launch {
            Ok(launch) => launch,
            Err(err) => return Err(session.not_started(err).await),
        };
        let (ready, state) = session.dap.wait_until(start, |p| p.initialized).await;
        if !ready {
            return Err(Failure::upstream(
                "adapter_start_failed",
                format!(
                    "the debug adapter did not get ready within {} ms ({:?})",
                    start.as_millis(),
                    state.state
                ),
            ));
        }
        for (path, line) in parsed {
            session
                .breakpoints
                .entry(path)
                .or_default()
                .push((line, None, false));
        }
        let files: Vec<PathBuf> = session.breakpoints.keys().cloned().collect();
        for file in files {
            session.send_breakpoints(&file).await?;
        }
        session
            .dap
            .request("setExceptionBreakpoints", json!({"filters": ["uncaught"]}))
            .await
            .map_err(adapter_failure)?;
        let configured = session
            .dap
            .request_within("configurationDone", json!({}), start)
            .await;
        if let Err(err) = configured {
            return Err(session.not_started(err).await);
        }
        match launch.wait(start).await {
            Ok(_) => {}
            Err(DapError::Failed { message, .. }) => {
                return Err(Failure::upstream(
                    "launch_failed",
                    format!(
                        "debugpy could not launch the program: {}",
                        cut(&message, 500)
                    ),
                ));
            }
            Err(other) => return Err(session.not_started(other).await),
        }
        session.dap.mark_running_if(0);
        session.dap.wait_for_stop(0, wait).await;
        let at = session.where_now().await;
        Ok((session, at))
    }

    /// The failure of a start that went wrong at `err`, with the adapter's last stderr
    /// lines (waiting briefly for them when it died).
    async fn not_started(&mut self, err: DapError) -> Failure {
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
        }
        let tail: Vec<String> = self
            .stderr_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr ends: {}", tail.join(" | "))
        };
        Failure::upstream(
            "adapter_start_failed",
            format!(
                "the debug adapter did not start: {}{said}",
                adapter_failure(err).message()
            ),
        )
        .next_step(format!(
            "check that {} -m debugpy.adapter runs (install debugpy into that interpreter)",
            self.config.python.display()
        ))
    }

    /// The adapter's process id.
    pub fn adapter_pid(&self) -> Option<i32> {
        self.adapter_pid
    }

    /// The program's process id (once launched).
    pub fn program_pid(&self) -> Option<i32> {
        self.dap.program().pid
    }

    /// The program's path, relative to the root.
    pub fn program_name(&self) -> String {
        shown(&self.root, &self.program)
    }

    /// Where the program is now (asks the adapter for the top frame when stopped).
    pub async fn where_now(&self) -> Where {
        let program = self.dap.program();
        let mut output_tail: Vec<String> =
            program.output.iter().rev().take(5).rev().cloned().collect();
        if !program.partial_line.is_empty() {
            if output_tail.len() == 5 {
                output_tail.remove(0);
            }
            output_tail.push(program.partial_line.clone());
        }
        let mut at = Where {
            state: String::new(),
            reason: None,
            description: None,
            thread_id: None,
            location: None,
            snapshot: Vec::new(),
            exit_code: program.exit_code,
            output_tail,
        };
        match program.state {
            RunState::Starting | RunState::Running => at.state = "running".into(),
            RunState::Ended => at.state = "ended".into(),
            RunState::AdapterDied(why) => {
                at.state = "adapter_died".into();
                at.description = Some(why);
            }
            RunState::Stopped {
                thread,
                reason,
                description,
            } => {
                at.state = "stopped".into();
                at.thread_id = Some(thread);
                at.description = description;
                if reason == "exception"
                    && let Ok(info) = self
                        .dap
                        .request("exceptionInfo", json!({"threadId": thread}))
                        .await
                {
                    let id = info["exceptionId"].as_str().unwrap_or("exception");
                    let text = info["description"].as_str().unwrap_or("");
                    at.description = Some(cut(&format!("{id}: {text}"), 300));
                }
                at.reason = Some(reason);
                if let Ok(frames) = self.frames(thread, 1).await
                    && let Some(top) = frames.items.into_iter().next()
                {
                    at.snapshot = self.snapshot(&top.location);
                    at.location = Some(top.location);
                }
            }
        }
        at
    }

    fn snapshot(&self, location: &Location) -> Vec<SnapshotLine> {
        let path = self.root.join(&location.file);
        let Ok(meta) = std::fs::metadata(&path) else {
            return Vec::new();
        };
        if meta.len() > MAX_SOURCE_BYTES {
            return Vec::new();
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Vec::new();
        };
        let current = location.line.max(1) as usize;
        let first = current.saturating_sub(SNAPSHOT_CONTEXT).max(1);
        text.lines()
            .enumerate()
            .skip(first - 1)
            .take(current + SNAPSHOT_CONTEXT + 1 - first)
            .map(|(i, line)| SnapshotLine {
                line: i as i64 + 1,
                text: cut(line, 160),
                current: i + 1 == current,
            })
            .collect()
    }

    /// The stopped thread, or a failure saying why the program cannot be inspected.
    fn stopped_thread(&self) -> Result<i64, Failure> {
        match self.dap.program().state {
            RunState::Stopped { thread, .. } => Ok(thread),
            RunState::Running | RunState::Starting => Err(Failure::conflict(
                "not_stopped",
                "the program is running; it must be stopped for this",
            )
            .next_step(
                "pause it with debug_pause, or set a breakpoint and wait with debug_status",
            )),
            RunState::Ended => Err(self.ended()),
            RunState::AdapterDied(why) => Err(Failure::upstream(
                "adapter_died",
                format!("the debug adapter died ({why})"),
            )
            .next_step("release the session with debug_stop, then debug_start again")),
        }
    }

    fn ended(&self) -> Failure {
        let code = self
            .dap
            .program()
            .exit_code
            .map(|c| format!(" with exit code {c}"))
            .unwrap_or_default();
        Failure::conflict("program_ended", format!("the program has ended{code}"))
            .next_step("release the session with debug_stop; run it again with debug_start")
    }

    /// Continue or step, then wait at most `wait` for the next stop or the end.
    pub async fn motion(&mut self, motion: Motion, wait: Duration) -> Result<Where, Failure> {
        let program = self.dap.program();
        if motion == Motion::Continue
            && matches!(program.state, RunState::Running | RunState::Starting)
        {
            // Already running: continuing means waiting for the next stop.
            self.dap.wait_for_stop(program.stops, wait).await;
            return Ok(self.where_now().await);
        }
        let thread = self.stopped_thread()?;
        let before = self.dap.program().stops;
        self.dap
            .request(motion.command(), json!({"threadId": thread}))
            .await
            .map_err(adapter_failure)?;
        self.dap.mark_running_if(before);
        self.dap.wait_for_stop(before, wait).await;
        Ok(self.where_now().await)
    }

    /// Pause a running program; wait at most `wait` for it to stop.
    pub async fn pause(&mut self, wait: Duration) -> Result<Where, Failure> {
        match self.dap.program().state {
            RunState::Running | RunState::Starting => {}
            RunState::Stopped { .. } => return Ok(self.where_now().await),
            _ => return Err(self.stopped_thread().unwrap_err()),
        }
        let before = self.dap.program().stops;
        let threads = self.threads().await?;
        let thread = threads.first().map(|t| t.id).unwrap_or(0);
        self.dap
            .request("pause", json!({"threadId": thread}))
            .await
            .map_err(adapter_failure)?;
        self.dap.wait_for_stop(before, wait).await;
        Ok(self.where_now().await)
    }

    /// Run until `location` (a temporary breakpoint), another stop, or the end.
    pub async fn run_to(&mut self, location: &str, wait: Duration) -> Result<Where, Failure> {
        let thread = self.stopped_thread()?;
        let (file, line) = parse_location(location)?;
        let path =
            resolve_in(&self.root, file).map_err(|e| Failure::not_found("file_not_found", e))?;
        let kept = self.breakpoints.get(&path).cloned().unwrap_or_default();
        let mut with_target = kept.clone();
        if !with_target.iter().any(|(l, _, _)| *l == line) {
            with_target.push((line, None, false));
        }
        self.breakpoints.insert(path.clone(), with_target);
        let sent = self.send_breakpoints(&path).await;
        self.breakpoints.insert(path.clone(), kept);
        sent?;
        let before = self.dap.program().stops;
        let resumed = self
            .dap
            .request("continue", json!({"threadId": thread}))
            .await;
        if resumed.is_ok() {
            self.dap.mark_running_if(before);
            self.dap.wait_for_stop(before, wait).await;
        }
        // Put the breakpoints back as they were (unless the program is gone).
        if !self.dap.program().state.is_final() {
            self.send_breakpoints(&path).await?;
        }
        resumed.map_err(adapter_failure)?;
        Ok(self.where_now().await)
    }

    async fn send_breakpoints(&mut self, path: &Path) -> Result<(), Failure> {
        let list = self.breakpoints.get(path).cloned().unwrap_or_default();
        let body = self
            .dap
            .request(
                "setBreakpoints",
                json!({
                    "source": {"path": path},
                    "breakpoints": list.iter().map(|(line, condition, _)| match condition {
                        Some(c) => json!({"line": line, "condition": c}),
                        None => json!({"line": line}),
                    }).collect::<Vec<_>>(),
                }),
            )
            .await
            .map_err(adapter_failure)?;
        if let (Some(set), Some(placed)) = (
            self.breakpoints.get_mut(path),
            body["breakpoints"].as_array(),
        ) {
            for (entry, answer) in set.iter_mut().zip(placed) {
                entry.2 = answer["verified"].as_bool().unwrap_or(false);
            }
        }
        Ok(())
    }

    fn ensure_alive(&self) -> Result<(), Failure> {
        match self.dap.program().state {
            RunState::Ended => Err(self.ended()),
            RunState::AdapterDied(_) => Err(self.stopped_thread().unwrap_err()),
            _ => Ok(()),
        }
    }

    /// Set (or replace) the breakpoint at `location` with an optional condition.
    pub async fn set_breakpoint(
        &mut self,
        location: &str,
        condition: Option<String>,
    ) -> Result<Breakpoint, Failure> {
        self.ensure_alive()?;
        let (file, line) = parse_location(location)?;
        let path =
            resolve_in(&self.root, file).map_err(|e| Failure::not_found("file_not_found", e))?;
        let list = self.breakpoints.entry(path.clone()).or_default();
        list.retain(|(l, _, _)| *l != line);
        list.push((line, condition.clone(), false));
        self.send_breakpoints(&path).await?;
        let verified = self.breakpoints[&path]
            .iter()
            .any(|(l, _, v)| *l == line && *v);
        Ok(Breakpoint {
            file: shown(&self.root, &path),
            line,
            condition,
            verified,
        })
    }

    /// Remove the breakpoint at `location`; false when there was none.
    pub async fn remove_breakpoint(&mut self, location: &str) -> Result<bool, Failure> {
        self.ensure_alive()?;
        let (file, line) = parse_location(location)?;
        let path =
            resolve_in(&self.root, file).map_err(|e| Failure::not_found("file_not_found", e))?;
        let Some(list) = self.breakpoints.get_mut(&path) else {
            return Ok(false);
        };
        let before = list.len();
        list.retain(|(l, _, _)| *l != line);
        if list.len() == before {
            return Ok(false);
        }
        self.send_breakpoints(&path).await?;
        if self.breakpoints.get(&path).is_some_and(Vec::is_empty) {
            self.breakpoints.remove(&path);
        }
        Ok(true)
    }

    /// Every breakpoint set.
    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        self.breakpoints
            .iter()
            .flat_map(|(path, list)| {
                list.iter().map(|(line, condition, verified)| Breakpoint {
                    file: shown(&self.root, path),
                    line: *line,
                    condition: condition.clone(),
                    verified: *verified,
                })
            })
            .collect()
    }

    async fn frames(&self, thread: i64, limit: usize) -> Result<Limited<Frame>, Failure> {
        let body = self
            .dap
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": limit}),
            )
            .await
            .map_err(adapter_failure)?;
        let frames: Vec<Frame> = body["stackFrames"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .take(limit)
            .enumerate()
            .map(|(index, f)| Frame {
                index,
                location: Location {
                    file: f["source"]["path"]
                        .as_str()
                        .map(|p| shown(&self.root, Path::new(p)))
                        .unwrap_or_else(|| "<unknown>".into()),
                    line: f["line"].as_i64().unwrap_or(0),
                    function: f["name"].as_str().unwrap_or("?").to_string(),
                },
            })
            .collect();
        let total = body["totalFrames"]
            .as_u64()
            .map(|t| t as usize)
            .unwrap_or(frames.len());
        Ok(Limited::from_parts(frames, total))
    }

    async fn frame_id(&self, thread: i64, index: usize) -> Result<i64, Failure> {
        let body = self
            .dap
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": index, "levels": 1}),
            )
            .await
            .map_err(adapter_failure)?;
        body["stackFrames"][0]["id"].as_i64().ok_or_else(|| {
            Failure::not_found("no_such_frame", format!("there is no frame {index}"))
                .next_step("see the frames with debug_stack")
        })
    }

    /// The innermost `limit` frames of the stopped thread, and how many there are.
    pub async fn stack(&self, limit: usize) -> Result<Limited<Frame>, Failure> {
        let thread = self.stopped_thread()?;
        self.frames(thread, limit).await
    }

    /// The `locals` or `globals` of frame `frame`: at most `limit` per level, nested `depth`
    /// levels deep.
    pub async fn variables(
        &self,
        globals: bool,
        frame: usize,
        depth: usize,
        limit: usize,
    ) -> Result<Limited<Variable>, Failure> {
        let thread = self.stopped_thread()?;
        let frame_id = self.frame_id(thread, frame).await?;
        let scopes = self
            .dap
            .request("scopes", json!({"frameId": frame_id}))
            .await
            .map_err(adapter_failure)?;
        let wanted = if globals { "globals" } else { "locals" };
        let reference = scopes["scopes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| {
                s["name"]
                    .as_str()
                    .is_some_and(|n| n.eq_ignore_ascii_case(wanted))
            })
            .and_then(|s| s["variablesReference"].as_i64())
            .ok_or_else(|| {
                Failure::not_found("no_such_scope", format!("frame {frame} has no {wanted}"))
            })?;
        let mut budget = MAX_VARIABLE_REQUESTS;
        self.expand(reference, depth, limit, &mut budget, true)
            .await
    }

    fn expand<'a>(
        &'a self,
        reference: i64,
        depth: usize,
        limit: usize,
        budget: &'a mut usize,
        top: bool,
    ) -> futures::future::BoxFuture<'a, Result<Limited<Variable>, Failure>> {
        Box::pin(async move {
            *budget = budget.saturating_sub(1);
            let body = self
                .dap
                .request("variables", json!({"variablesReference": reference}))
                .await
                .map_err(adapter_failure)?;
            let mut listed: Vec<Value> = Vec::new();
            for v in body["variables"].as_array().into_iter().flatten() {
                match v["name"].as_str().unwrap_or("") {
                    // debugpy's group of dunder names: noise for an agent.
                    "special variables" => {}
                    // debugpy's groups of functions and classes: in a scope their members
                    // are listed in place (a module's functions); in an object (its methods)
                    // they are left out.
                    "function variables" | "class variables" | "protected variables" => {
                        let group = v["variablesReference"].as_i64().unwrap_or(0);
                        if top && group > 0 && *budget > 0 {
                            *budget -= 1;
                            let members = self
                                .dap
                                .request("variables", json!({"variablesReference": group}))
                                .await
                                .map_err(adapter_failure)?;
                            listed.extend(
                                members["variables"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .cloned(),
                            );
                        }
                    }
                    _ => listed.push(v.clone()),
                }
            }
            let limited = Limited::new(listed, limit);
            let mut items = Vec::with_capacity(limited.items.len());
            for v in limited.items.iter() {
                let child_ref = v["variablesReference"].as_i64().unwrap_or(0);
                let mut variable = Variable {
                    name: v["name"].as_str().unwrap_or("?").to_string(),
                    value: cut(v["value"].as_str().unwrap_or(""), MAX_VALUE_CHARS),
                    r#type: v["type"].as_str().map(str::to_string),
                    children: None,
                    expandable: child_ref > 0,
                };
                if child_ref > 0 && depth > 0 && *budget > 0 {
                    variable.children = Some(
                        self.expand(child_ref, depth - 1, limit, budget, false)
                            .await?,
                    );
                    variable.expandable = false;
                }
                items.push(variable);
            }
            Ok(Limited::from_parts(items, limited.total))
        })
    }

    /// Evaluate `expression` in frame `frame` (it may have side effects).
    pub async fn evaluate(
        &self,
        expression: &str,
        frame: usize,
    ) -> Result<(String, Option<String>), Failure> {
        let thread = self.stopped_thread()?;
        let frame_id = self.frame_id(thread, frame).await?;
        let body = self
            .dap
            .request(
                "evaluate",
                json!({"expression": expression, "frameId": frame_id, "context": "repl"}),
            )
            .await
            .map_err(|err| match err {
                DapError::Failed { message, .. } => Failure::validation(
                    "evaluation_failed",
                    format!("the expression failed: {}", cut(&message, 500)),
                ),
                other => adapter_failure(other),
            })?;
        Ok((
            cut(body["result"].as_str().unwrap_or(""), 2000),
            body["type"].as_str().map(str::to_string),
        ))
    }

    /// The program's threads.
    pub async fn threads(&self) -> Result<Vec<ThreadInfo>, Failure> {
        self.ensure_alive()?;
        let body = self
            .dap
            .request("threads", json!({}))
            .await
            .map_err(adapter_failure)?;
        Ok(body["threads"]
            .as_array()
            .into_iter()
            .flatten()
            .take(256)
            .map(|t| ThreadInfo {
                id: t["id"].as_i64().unwrap_or(0),
                name: t["name"].as_str().unwrap_or("").to_string(),
            })
            .collect())
    }

    /// End the session: ask the adapter to end the program (briefly), then kill what is
    /// left of both process groups and reap the adapter. Where the program was.
    pub async fn stop(&mut self) -> Where {
        let at = self.where_now().await;
        if !self.dap.program().state.is_final() {
            let _ = self
                .dap
                .request_within(
                    "disconnect",
                    json!({"terminateDebuggee": true}),
                    Duration::from_secs(2),
                )
                .await;
        }
        self.kill_now();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        at
    }

    /// Kill the program's and the adapter's process groups now.
    fn kill_now(&mut self) {
        if let Some(pid) = self.dap.program().pid {
            kill_group(pid);
        }
        if let Some(pid) = self.adapter_pid {
            kill_group(pid);
        }
        let launcher = self
            .launcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut launcher) = launcher {
            if let Some(pid) = launcher.id().and_then(|p| i32::try_from(p).ok()) {
                kill_group(pid);
            }
            let _ = launcher.start_kill();
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for DebugSession {
    fn drop(&mut self) {
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        self.kill_now();
    }
}

/// Answers the adapter's `runInTerminal`: starts debugpy's launcher as this server's child,
/// in its own process group, with `stdin` written to its standard input and then closed
/// (at once without it), its output discarded (the launcher captures the program's output
/// and sends it as DAP `output` events). The child is kept in `slot`; a second request is
/// refused.
fn launcher_starter(
    stdin: Option<String>,
    slot: Arc<std::sync::Mutex<Option<tokio::process::Child>>>,
) -> Terminal {
    Arc::new(move |launch: TerminalLaunch| {
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return Err("the launcher is already started".to_string());
        }
        let (program, args) = launch.args.split_first().ok_or("no command line")?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        for (name, value) in &launch.env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the launcher: {e}"))?;
        let pid = child.id().ok_or("the launcher exited at once")?;
        let mut pipe = child.stdin.take().expect("piped");
        let text = stdin.clone().unwrap_or_default();
        // Dropping the pipe after the text is the program's end-of-file.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = pipe.write_all(text.as_bytes()).await;
        });
        *slot = Some(child);
        Ok(pid)
    })
}

/// SIGKILL to process group `pgid` and to the process itself (it may have left the group).
fn kill_group(pid: i32) {
    if pid <= 1 {
        return;
    }
    // SAFETY: plain syscalls on a pid this session started; no memory is shared.
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_from_the_right() {
        assert_eq!(parse_location("a/b.py:12").unwrap(), ("a/b.py", 12));
        assert_eq!(parse_location("C:x.py:3").unwrap(), ("C:x.py", 3));
        for bad in ["x.py", "x.py:0", ":3", "x.py:three"] {
            assert_eq!(
                parse_location(bad).unwrap_err().code(),
                "bad_location",
                "{bad}"
            );
        }
    }

    #[test]
    fn long_values_are_cut() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("abcdef", 3), "abc… (6 characters in all)");
    }
}
