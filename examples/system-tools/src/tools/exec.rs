//! `execute_command`: run an allowed program without a shell.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use serde::Serialize;

use crate::sandbox::process::{RunError, run};
use crate::sandbox::{Sandbox, SandboxError};

/// Result of [`execute_command`] (a non-zero exit is a result, not an error).
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
    /// Standard output (lossy UTF-8), at most `max_output_bytes` bytes.
    pub stdout: String,
    /// Standard error (lossy UTF-8), at most `max_output_bytes` bytes.
    pub stderr: String,
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
    let ruleset = {
        let sandbox = sandbox.clone();
        super::blocking(move || sandbox.landlock().prepare()).await?
    };
    tracing::debug!(path_rules = ruleset.path_rules, "Landlock ruleset ready");
    let tree = sandbox
        .containment()
        .begin()
        .map_err(|e| SandboxError::io(format!("preparing the process tree of {}", what()), e))?;
    let outcome = match run(
        &checked.program,
        args,
        &cwd,
        sandbox.command_env(),
        (timeout, cap),
        &ruleset,
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
    for (name, captured) in [("stdout", &outcome.stdout), ("stderr", &outcome.stderr)] {
        if captured.truncated {
            notes.push(format!(
                "{name} was truncated to {cap} bytes (max_output_bytes); the command was stopped \
                 when it exceeded the limit"
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
        stdout: String::from_utf8_lossy(&outcome.stdout.bytes).into_owned(),
        stderr: String::from_utf8_lossy(&outcome.stderr.bytes).into_owned(),
        stdout_truncated: outcome.stdout.truncated,
        stderr_truncated: outcome.stderr.truncated,
        notice: (!notes.is_empty()).then(|| notes.join("; ")),
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
    })
}
