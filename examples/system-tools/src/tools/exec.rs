//! `execute_command`: run an allowed program without a shell.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use serde::Serialize;

use super::ContentEncoding;
use super::output::encode;
use crate::sandbox::process::{RunError, run};
use crate::sandbox::{Sandbox, SandboxError};

/// Result of [`execute_command`] (a non-zero exit is a result, not an error).
///
/// Over MCP the two streams are not part of the structured content: each is sent once, as
/// the text of its own content block (stdout first, stderr second), encoded as
/// `stdout_encoding` / `stderr_encoding` say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommandOutput {
    /// The command as requested.
    pub command: String,
    /// The `allowed_commands` entry that ran, as configured.
    pub program: String,
    /// Arguments, each passed as-is (no shell: `;`, `|`, `$()` are plain characters).
    pub args: Vec<String>,
    /// Working directory it ran in, relative to the sandbox's base directory.
    pub cwd: String,
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// Signal number, when a signal ended it (9 when stopped for exceeding the output cap).
    pub signal: Option<i32>,
    /// Whether it exited with code 0.
    pub success: bool,
    /// Standard output, encoded as `stdout_encoding`; its JSON-escaped size is at most
    /// `max_output_bytes`. Sent as the first content block, not in the structured content.
    #[serde(skip)]
    pub stdout: String,
    /// Standard error, like `stdout`; sent as the second content block.
    #[serde(skip)]
    pub stderr: String,
    /// `utf-8` text, or `base64` for output that is not text (or mostly control characters).
    pub stdout_encoding: ContentEncoding,
    /// Encoding of stderr, like `stdout_encoding`.
    pub stderr_encoding: ContentEncoding,
    /// Whether stdout was cut at the cap.
    pub stdout_truncated: bool,
    /// Whether stderr was cut at the cap.
    pub stderr_truncated: bool,
    /// Explains truncation, when it happened.
    pub notice: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// Runs `command` with `args` in `cwd` (default: the sandbox base directory).
///
/// The program is resolved (PATH lookup or relative path, symlinks followed) and must be an
/// allowed, non-denied canonical file; path-like arguments must stay inside the sandbox (unless
/// `confine_path_arguments = false`). The environment is cleared except the configured
/// pass-through variables. `timeout_secs` may lower, never raise, the configured timeout; on
/// timeout the whole process group is killed and [`SandboxError::Timeout`] returned.
pub async fn execute_command(
    sandbox: &Sandbox,
    command: &str,
    args: &[String],
    cwd: Option<&str>,
    timeout_secs: Option<f64>,
) -> Result<CommandOutput, SandboxError> {
    let cwd_input = cwd.unwrap_or(".");
    let resolved_cwd = sandbox.check_path(cwd_input).map_err(|e| match e {
        SandboxError::Denied {
            what,
            reason,
            action,
        } => SandboxError::Denied {
            what: format!("working directory {what}"),
            reason,
            action,
        },
        other => other,
    })?;
    let cwd_what = || format!("working directory {}", resolved_cwd.describe());
    if !resolved_cwd.exists() {
        return Err(SandboxError::NotFound {
            what: cwd_what(),
            action: "Pass an existing directory as cwd, or omit it.".to_string(),
        });
    }
    if !resolved_cwd.existing.is_dir() {
        return Err(SandboxError::invalid(
            cwd_what(),
            "it is not a directory",
            "Pass a directory as cwd, or omit it.",
        ));
    }
    let cwd = resolved_cwd.existing.clone();
    let checked = sandbox.check_command(command, &cwd)?;
    sandbox.check_arguments(args, &cwd)?;
    let timeout = match timeout_secs {
        None => checked.timeout,
        Some(t) if t.is_finite() && t > 0.0 => {
            Duration::from_secs_f64(t.min(checked.timeout.as_secs_f64()))
        }
        Some(t) => {
            return Err(SandboxError::invalid(
                "timeout_secs",
                format!("{t} is not a positive number of seconds"),
                "Pass a positive timeout, or omit it for the configured one.",
            ));
        }
    };
    let what = || format!("command {command:?}");
    tracing::info!(program = %checked.program.display(), ?args, cwd = %cwd.display(), "running command");
    let cap = sandbox.limits().max_output_bytes;
    let isolation = sandbox.isolation()?;
    let ruleset = {
        let sandbox = sandbox.clone();
        super::blocking(move || sandbox.landlock().prepare()).await?
    };
    tracing::debug!(path_rules = ruleset.path_rules, "Landlock ruleset ready");
    let mut tree = sandbox
        .containment()
        .begin()
        .map_err(|e| SandboxError::io(format!("preparing the process tree of {}", what()), e))?;
    let (limiter, memory_max) = sandbox.memory_limit();
    let memory = tree
        .limit_memory(limiter, memory_max)
        .map_err(|e| SandboxError::io(format!("limiting the memory of {}", what()), e))?;
    let outcome = match run(
        &checked.program,
        args,
        &cwd,
        sandbox.command_env(),
        (timeout, cap),
        (&ruleset, isolation),
        tree,
    )
    .await
    {
        Ok(o) => o,
        Err(RunError::Timeout) => {
            return Err(SandboxError::Timeout {
                what: what(),
                timeout_secs: timeout.as_secs_f64(),
            });
        }
        Err(RunError::Spawn(e)) => return Err(SandboxError::io(format!("starting {}", what()), e)),
        Err(RunError::Io(e)) => return Err(SandboxError::io(format!("running {}", what()), e)),
    };
    let mut notes = Vec::new();
    if isolation.is_some() && outcome.status.code() == Some(crate::sandbox::launch::SETUP_FAILED) {
        let err = String::from_utf8_lossy(&outcome.stderr.bytes);
        if let Some(line) = err.lines().find(|l| {
            l.starts_with(crate::sandbox::launch::SETUP_PREFIX) || l.starts_with("bwrap: ")
        }) {
            return Err(SandboxError::io(
                format!("setting up the sandbox of {}", what()),
                std::io::Error::other(line.to_string()),
            ));
        }
    }
    if let Some(iso) = isolation {
        let limits = iso.limits;
        // bubblewrap's init reports a signal death as the exit code 128 + signal.
        let died_of = |sig: i32| {
            outcome.status.signal() == Some(sig) || outcome.status.code() == Some(128 + sig)
        };
        if died_of(libc::SIGXCPU)
            || (died_of(libc::SIGKILL) && outcome.duration.as_secs() >= limits.cpu_secs)
        {
            notes.push(format!(
                "the command was stopped at its CPU limit of {} s per process (command_cpu_secs)",
                limits.cpu_secs
            ));
        }
    }
    if let Some(kills) = memory.map(|m| m.oom_kills()).filter(|&k| k > 0) {
        notes.push(format!(
            "the command was stopped at its memory limit of {memory_max} bytes for the whole \
             call (command_memory_max_bytes): the kernel ended {kills} of its processes"
        ));
    }
    let stdout = encode(&outcome.stdout.bytes, cap);
    let stderr = encode(&outcome.stderr.bytes, cap);
    for (name, captured, encoded) in [
        ("stdout", &outcome.stdout, &stdout),
        ("stderr", &outcome.stderr, &stderr),
    ] {
        if captured.truncated {
            notes.push(format!(
                "{name} was truncated to {cap} bytes (max_output_bytes); the command was stopped \
                 when it exceeded the limit"
            ));
        } else if encoded.cut {
            notes.push(format!(
                "{name} was cut to fit {cap} bytes once encoded (max_output_bytes)"
            ));
        }
    }
    Ok(CommandOutput {
        command: command.to_string(),
        program: checked.entry.clone(),
        args: args.to_vec(),
        cwd: sandbox.show(&cwd),
        exit_code: outcome.status.code(),
        signal: outcome.status.signal(),
        success: outcome.status.success(),
        stdout_truncated: outcome.stdout.truncated || stdout.cut,
        stderr_truncated: outcome.stderr.truncated || stderr.cut,
        stdout: stdout.text,
        stderr: stderr.text,
        stdout_encoding: stdout.encoding,
        stderr_encoding: stderr.encoding,
        notice: (!notes.is_empty()).then(|| notes.join("; ")),
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
    })
}

impl mcp_toolbelt::output::IntoToolResult for CommandOutput {
    /// The metadata as structured content, stdout and stderr as two text blocks, so the
    /// output crosses the wire once and escaped once.
    fn into_tool_result(self) -> Result<mcp_toolbelt::ToolResult, mcp_toolbelt::ToolError> {
        let metadata = serde_json::to_value(&self).map_err(|e| {
            mcp_toolbelt::ToolError::internal(format!("cannot serialize the command result: {e}"))
        })?;
        Ok(mcp_toolbelt::ToolResult::text(self.stdout)
            .with(mcp_toolbelt::ContentBlock::text(self.stderr))
            .with_structured(metadata))
    }

    fn output_schema() -> Option<mcp_toolbelt::schema::JsonObject> {
        Some(mcp_toolbelt::schema::output_schema_for::<CommandOutput>())
    }
}
