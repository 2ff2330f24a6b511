//! The debugger's tools. Every one answers in an [`Envelope`] with next steps; every one
//! but `debug_start` and `debug_list` names a session: the [`SessionRef`] extractor
//! resolves it for the caller before the fn runs (an unknown id, or another caller's,
//! answers `session_not_found` with "start a session first: …"), and the fn's first step
//! locks it, so two calls on one session never interleave.
//!
//! Permissions: `debug` for all tools; `debug_evaluate` needs `debug.evaluate` as well, since
//! an expression can do anything the program can.

use std::sync::Arc;
use std::time::Duration;

use mcp_toolbelt::envelope::{Envelope, Failure};
use mcp_toolbelt::paging::{Limited, Page, PageArgs};
use mcp_toolbelt::sessions::{SessionRef, Sessions};
use mcp_toolbelt::{Caller, State, mcp_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{DebuggerConfig, MAX_WAIT};
use crate::session::{Breakpoint, DebugSession, Frame, Motion, ThreadInfo, Variable, Where};

/// The permission every debugger tool needs.
pub const DEBUG: &str = "debug";
/// The extra permission `debug_evaluate` needs.
pub const DEBUG_EVALUATE: &str = "debug.evaluate";

/// The next step an unknown session id answers with.
pub const START_HINT: &str =
    "start a session first: debug_start program=FILE.py (debug_list shows your sessions)";

/// The debugger's settings, shared by its tools (the sessions are a state of their own, a
/// [`Sessions<DebugSession>`] made by [`Debugger::sessions`]).
///
/// ```
/// let debugger = debugger_mcp::Debugger::new(debugger_mcp::DebuggerConfig::new("/tmp", "python3"));
/// let sessions = debugger.sessions();
/// assert_eq!(sessions.per_caller(), 4);
/// assert!(sessions.is_empty());
/// ```
#[derive(Debug)]
pub struct Debugger {
    config: Arc<DebuggerConfig>,
}

impl Debugger {
    /// The debugger with these settings.
    pub fn new(config: DebuggerConfig) -> Self {
        Debugger {
            config: Arc::new(config),
        }
    }

    /// An empty session table for these settings: bounded per caller, a call waits for a
    /// session another call holds at most the start time plus the longest stop wait, and an
    /// unknown id answers with [`START_HINT`]. Register it as state beside the debugger.
    pub fn sessions(&self) -> Sessions<DebugSession> {
        Sessions::new(self.config.sessions_per_caller, START_HINT)
            .with_lock_timeout(self.config.start_timeout + MAX_WAIT)
    }

    /// The configuration.
    pub fn config(&self) -> &DebuggerConfig {
        &self.config
    }

    fn wait(&self, wait_ms: Option<u64>) -> Duration {
        wait_ms
            .map(Duration::from_millis)
            .unwrap_or(self.config.stop_wait)
            .min(MAX_WAIT)
    }
}

/// A session's place, as every execution call answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionWhere {
    /// The session
    pub session_id: String,
    /// Where the program is and why
    #[serde(flatten)]
    pub at: Where,
}

fn answer(session_id: &str, at: Where) -> Envelope<SessionWhere> {
    let summary = format!("{session_id}: {}", at.summary());
    let steps = at.next_steps(session_id);
    Envelope::ok(
        summary,
        SessionWhere {
            session_id: session_id.to_string(),
            at,
        },
    )
    .next_steps(steps)
}

/// Start debugging a Python program (under the server's root directory).
///
/// Launches the program under debugpy and waits (wait_ms, default 5000) for its first stop
/// — the first line with stop_on_entry, a breakpoint, an uncaught exception — or its end.
/// Answers the session id and where the program is. At most a few sessions per caller.
#[mcp_tool(name = "debug_start", permissions = [DEBUG], timeout_ms = 120000)]
pub async fn debug_start(
    debugger: State<Debugger>,
    sessions: State<Sessions<DebugSession>>,
    caller: Caller,
    /// The program: a .py file, relative to the root directory
    #[arg(min_length = 1, max_length = 4096)]
    program: String,
    /// Command-line arguments for the program
    #[arg(max_items = 64)]
    args: Vec<String>,
    /// Text for the program's standard input; it reads end-of-file after it (at once
    /// without it)
    #[arg(max_length = 1048576)]
    stdin: Option<String>,
    /// Stop at the program's first line
    stop_on_entry: bool,
    /// Breakpoints to set before it runs, as FILE:LINE
    #[arg(max_items = 64)]
    breakpoints: Vec<String>,
    /// How long to wait for the first stop, in ms (default 5000, at most 60000)
    #[arg(maximum = 60000)]
    wait_ms: Option<u64>,
) -> Result<Envelope<SessionWhere>, Failure> {
    sessions.check_room(&caller)?;
    if sessions.len() >= debugger.config.max_sessions {
        return Err(Failure::conflict(
            "server_busy",
            format!(
                "the server runs its maximum of {} sessions",
                debugger.config.max_sessions
            ),
        )
        .next_step("retry later, or stop a session you no longer need"));
    }
    let (session, at) = DebugSession::start(
        debugger.config.clone(),
        &program,
        &args,
        stdin,
        stop_on_entry,
        &breakpoints,
        debugger.wait(wait_ms),
    )
    .await?;
    // Past the bound meanwhile: dropping the session kills its processes.
    let id = sessions.insert(&caller, session)?;
    Ok(answer(&id, at))
}

/// Where a session's program is now, without changing anything.
#[mcp_tool(name = "debug_status", permissions = [DEBUG], read_only)]
pub async fn debug_status(
    #[extract] session: SessionRef<DebugSession>,
    /// The session, as debug_start answered
    session_id: String,
) -> Result<Envelope<SessionWhere>, Failure> {
    let session = session.lock().await?;
    Ok(answer(&session_id, session.where_now().await))
}

/// One of the caller's sessions in a listing.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionItem {
    /// Id
    pub session_id: String,
    /// The program
    pub program: String,
    /// `stopped`, `running`, `ended`, `adapter_died`, or `busy` (a call is using it)
    pub state: String,
    /// The adapter's process id
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_pid: Option<i32>,
    /// The program's process id
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_pid: Option<i32>,
}

/// List your debugging sessions (other callers' sessions are not shown), a page at a time.
#[mcp_tool(name = "debug_list", permissions = [DEBUG], read_only)]
pub async fn debug_list(
    sessions: State<Sessions<DebugSession>>,
    caller: Caller,
    #[args] page: PageArgs,
) -> Envelope<Page<SessionItem>> {
    let mut items = Vec::new();
    for session in sessions.list(&caller) {
        let item = match session.try_lock() {
            Some(guard) => SessionItem {
                session_id: session.id().to_string(),
                program: guard.program_name(),
                state: guard.where_now().await.state,
                adapter_pid: guard.adapter_pid(),
                program_pid: guard.program_pid(),
            },
            None => SessionItem {
                session_id: session.id().to_string(),
                program: String::new(),
                state: "busy".into(),
                adapter_pid: None,
                program_pid: None,
            },
        };
        items.push(item);
    }
    let page = page.select(items, 50);
    let hint = page.next_step("debug_list");
    Envelope::ok(page.describe("sessions"), page)
        .next_steps(hint)
        .next_step("start one: debug_start program=FILE.py")
}

/// Stop a session: end its program and its debug adapter, and forget it.
#[mcp_tool(name = "debug_stop", permissions = [DEBUG], destructive, idempotent)]
pub async fn debug_stop(
    sessions: State<Sessions<DebugSession>>,
    caller: Caller,
    #[extract] session: SessionRef<DebugSession>,
    /// The session to stop
    session_id: String,
) -> Result<Envelope<SessionWhere>, Failure> {
    let mut session = session.lock().await?;
    // Out of the table first (no new call finds it), then end the processes.
    sessions.remove(&caller, &session_id)?;
    let at = session.stop().await;
    let was = at.summary();
    Ok(Envelope::ok(
        format!("{session_id} stopped (it was {was})"),
        SessionWhere {
            session_id: session_id.clone(),
            at,
        },
    )
    .next_step("start another: debug_start program=FILE.py"))
}

/// Set a breakpoint at FILE:LINE, optionally with a condition (a Python expression).
#[mcp_tool(name = "debug_breakpoint_set", permissions = [DEBUG], idempotent)]
pub async fn debug_breakpoint_set(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// Where: FILE:LINE, the file relative to the root
    location: String,
    /// Stop only when this Python expression is true
    condition: Option<String>,
) -> Result<Envelope<Breakpoint>, Failure> {
    let mut session = session.lock().await?;
    let bp = session.set_breakpoint(&location, condition).await?;
    let verified = if bp.verified {
        ""
    } else {
        " (not verified: no code on that line?)"
    };
    Ok(Envelope::ok(
        format!("breakpoint at {}:{}{verified}", bp.file, bp.line),
        bp,
    )
    .next_step(format!("run to it: debug_continue session_id={session_id}")))
}

/// Remove the breakpoint at FILE:LINE.
#[mcp_tool(name = "debug_breakpoint_remove", permissions = [DEBUG], idempotent)]
pub async fn debug_breakpoint_remove(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// The breakpoint's FILE:LINE
    location: String,
) -> Result<Envelope<bool>, Failure> {
    let mut session = session.lock().await?;
    Ok(if session.remove_breakpoint(&location).await? {
        Envelope::ok(format!("removed the breakpoint at {location}"), true)
    } else {
        Envelope::ok(format!("there was no breakpoint at {location}"), false).next_step(format!(
            "see them: debug_breakpoint_list session_id={session_id}"
        ))
    })
}

/// List a session's breakpoints.
#[mcp_tool(name = "debug_breakpoint_list", permissions = [DEBUG], read_only)]
pub async fn debug_breakpoint_list(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
) -> Result<Envelope<Limited<Breakpoint>>, Failure> {
    let session = session.lock().await?;
    let list = Limited::new(session.breakpoints(), 200);
    Ok(
        Envelope::ok(list.describe("breakpoints"), list).next_step(format!(
            "add one: debug_breakpoint_set session_id={session_id} location=FILE:LINE"
        )),
    )
}

/// Continue the program until its next stop (breakpoint, exception), its end, or wait_ms.
/// On a program that is already running, wait for its next stop.
#[mcp_tool(name = "debug_continue", permissions = [DEBUG], timeout_ms = 120000)]
pub async fn debug_continue(
    debugger: State<Debugger>,
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// How long to wait for the next stop, in ms (default 5000, at most 60000)
    #[arg(maximum = 60000)]
    wait_ms: Option<u64>,
) -> Result<Envelope<SessionWhere>, Failure> {
    let mut session = session.lock().await?;
    let at = session
        .motion(Motion::Continue, debugger.wait(wait_ms))
        .await?;
    Ok(answer(&session_id, at))
}

/// How to step.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Run the current line, stepping over calls
    Over,
    /// Step into the call on the current line
    Into,
    /// Run until the current function returns
    Out,
}

/// Step: over the current line (default), into a call, or out of the current function.
#[mcp_tool(name = "debug_step", permissions = [DEBUG], timeout_ms = 120000)]
pub async fn debug_step(
    debugger: State<Debugger>,
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// over (default), into or out
    kind: Option<StepKind>,
    /// How long to wait for the step to end, in ms (default 5000, at most 60000)
    #[arg(maximum = 60000)]
    wait_ms: Option<u64>,
) -> Result<Envelope<SessionWhere>, Failure> {
    let motion = match kind.unwrap_or(StepKind::Over) {
        StepKind::Over => Motion::Over,
        StepKind::Into => Motion::Into,
        StepKind::Out => Motion::Out,
    };
    let mut session = session.lock().await?;
    let at = session.motion(motion, debugger.wait(wait_ms)).await?;
    Ok(answer(&session_id, at))
}

/// Run until FILE:LINE (or an earlier stop, the end, or wait_ms).
#[mcp_tool(name = "debug_run_to", permissions = [DEBUG], timeout_ms = 120000)]
pub async fn debug_run_to(
    debugger: State<Debugger>,
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// Where to stop: FILE:LINE
    location: String,
    /// How long to wait, in ms (default 5000, at most 60000)
    #[arg(maximum = 60000)]
    wait_ms: Option<u64>,
) -> Result<Envelope<SessionWhere>, Failure> {
    let mut session = session.lock().await?;
    let at = session.run_to(&location, debugger.wait(wait_ms)).await?;
    Ok(answer(&session_id, at))
}

/// Pause a running program.
#[mcp_tool(name = "debug_pause", permissions = [DEBUG], timeout_ms = 120000)]
pub async fn debug_pause(
    debugger: State<Debugger>,
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
) -> Result<Envelope<SessionWhere>, Failure> {
    let mut session = session.lock().await?;
    let at = session.pause(debugger.config.stop_wait).await?;
    Ok(answer(&session_id, at))
}

/// The call stack of the stopped thread, innermost first (limited).
#[mcp_tool(name = "debug_stack", permissions = [DEBUG], read_only)]
pub async fn debug_stack(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// Most frames to show (default 20)
    #[arg(minimum = 1, maximum = 200)]
    limit: Option<u32>,
) -> Result<Envelope<Limited<Frame>>, Failure> {
    let session = session.lock().await?;
    let frames = session.stack(limit.unwrap_or(20) as usize).await?;
    let more = frames.truncated.then(|| {
        format!(
            "see more: debug_stack session_id={session_id} limit={}",
            (frames.showing * 2).min(200)
        )
    });
    Ok(Envelope::ok(frames.describe("frames"), frames)
        .next_steps(more)
        .next_step(format!(
            "a frame's variables: debug_variables session_id={session_id} frame=N"
        )))
}

/// Which variables.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The frame's local variables
    Locals,
    /// The module's global variables
    Globals,
}

/// Local (default) or global variables of a frame, nested to a depth, limited per level.
#[mcp_tool(name = "debug_variables", permissions = [DEBUG], read_only)]
pub async fn debug_variables(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// locals (default) or globals
    scope: Option<Scope>,
    /// Frame index from debug_stack (default 0, the innermost)
    frame: Option<u32>,
    /// How deep to expand members of lists, dicts and objects (default 1, at most 4)
    #[arg(maximum = 4)]
    depth: Option<u32>,
    /// Most variables per level (default 30)
    #[arg(minimum = 1, maximum = 200)]
    limit: Option<u32>,
) -> Result<Envelope<Limited<Variable>>, Failure> {
    let session = session.lock().await?;
    let globals = scope == Some(Scope::Globals);
    let frame = frame.unwrap_or(0) as usize;
    let depth = depth.unwrap_or(1) as usize;
    let vars = session
        .variables(globals, frame, depth, limit.unwrap_or(30) as usize)
        .await?;
    let what = if globals { "globals" } else { "locals" };
    Ok(
        Envelope::ok(format!("{} of frame {frame}", vars.describe(what)), vars)
            .next_step(format!(
                "evaluate an expression: debug_evaluate session_id={session_id} expression=..."
            ))
            .next_step(format!("step: debug_step session_id={session_id}")),
    )
}

/// What an expression evaluated to.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Evaluation {
    /// The expression
    pub expression: String,
    /// Its value as text (cut at 2000 characters)
    pub result: String,
    /// Its type
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
}

/// Evaluate a Python expression in a frame of the stopped program. It runs in the program
/// and may change it: needs the debug.evaluate permission.
#[mcp_tool(name = "debug_evaluate", permissions = [DEBUG, DEBUG_EVALUATE], destructive)]
pub async fn debug_evaluate(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
    /// A Python expression
    #[arg(min_length = 1, max_length = 10000)]
    expression: String,
    /// Frame index from debug_stack (default 0)
    frame: Option<u32>,
) -> Result<Envelope<Evaluation>, Failure> {
    let session = session.lock().await?;
    let (result, r#type) = session
        .evaluate(&expression, frame.unwrap_or(0) as usize)
        .await?;
    Ok(Envelope::ok(
        format!(
            "{expression} = {}",
            result.chars().take(80).collect::<String>()
        ),
        Evaluation {
            expression,
            result,
            r#type,
        },
    )
    .next_step(format!("continue: debug_continue session_id={session_id}")))
}

/// The program's threads.
#[mcp_tool(name = "debug_threads", permissions = [DEBUG], read_only)]
pub async fn debug_threads(
    #[extract] session: SessionRef<DebugSession>,
    /// The session
    session_id: String,
) -> Result<Envelope<Limited<ThreadInfo>>, Failure> {
    let session = session.lock().await?;
    let list = Limited::new(session.threads().await?, 256);
    Ok(Envelope::ok(list.describe("threads"), list)
        .next_step(format!("inspect: debug_stack session_id={session_id}")))
}
