//! The one error type of the sandbox and the tools: every refusal says what, why, and what to do.

use std::fmt;

/// Broad class of a [`SandboxError`], named like the tool-error kinds of `mcp-toolbelt`
/// (`Error (permission_denied): ...`), so a wrapper can map it one to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The sandbox refused the operation (outside the allowed paths, denied, not allowed, a limit).
    PermissionDenied,
    /// The input itself is malformed (NUL byte, over-long path, bad glob, empty command).
    Validation,
    /// The path or program does not exist.
    NotFound,
    /// A command ran longer than its timeout and was killed.
    Timeout,
    /// The configuration is invalid.
    Config,
    /// An unexpected I/O failure.
    Internal,
}

impl ErrorKind {
    /// The snake_case name used in tool error messages, e.g. `permission_denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Validation => "validation",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Config => "config",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every way a sandboxed operation can fail. `Display` says what was refused and why;
/// [`SandboxError::action`] says what the caller can do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The sandbox refused the operation.
    #[error("{what} was refused: {reason}")]
    Denied {
        /// What was refused, e.g. `path '../x' (resolves to /tmp/x)`.
        what: String,
        /// Why, e.g. `it is outside the allowed paths (/work)`.
        reason: String,
        /// Suggested next step for the caller.
        action: String,
    },
    /// The input is malformed.
    #[error("{what} is invalid: {reason}")]
    InvalidInput {
        /// The offending input, e.g. `path`.
        what: String,
        /// What is wrong with it.
        reason: String,
        /// Suggested next step for the caller.
        action: String,
    },
    /// The target does not exist (only reported for targets inside the sandbox).
    #[error("{what} does not exist")]
    NotFound {
        /// What was looked for.
        what: String,
        /// Suggested next step for the caller.
        action: String,
    },
    /// A size limit was exceeded.
    #[error("{what} is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// What was too large.
        what: String,
        /// Its size in bytes (at least this many).
        size: u64,
        /// The configured limit in bytes.
        limit: u64,
        /// Suggested next step for the caller.
        action: String,
    },
    /// A command exceeded its timeout; its whole process group was killed.
    #[error("{what} timed out after {timeout_secs} s and was killed")]
    Timeout {
        /// The command, e.g. `command 'sleep' (/usr/bin/sleep)`.
        what: String,
        /// The timeout that applied, in seconds.
        timeout_secs: f64,
    },
    /// The sandbox configuration is invalid.
    #[error("{reason}")]
    Config {
        /// What is wrong with it.
        reason: String,
    },
    /// An I/O operation failed for a reason other than the ones above.
    #[error("{what} failed: {source}")]
    Io {
        /// The operation, e.g. `reading /work/a.txt`.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SandboxError::Denied { .. } | SandboxError::TooLarge { .. } => {
                ErrorKind::PermissionDenied
            }
            SandboxError::InvalidInput { .. } => ErrorKind::Validation,
            SandboxError::NotFound { .. } => ErrorKind::NotFound,
            SandboxError::Timeout { .. } => ErrorKind::Timeout,
            SandboxError::Config { .. } => ErrorKind::Config,
            SandboxError::Io { .. } => ErrorKind::Internal,
        }
    }

    /// A suggested next step for whoever made the call.
    pub fn action(&self) -> String {
        match self {
            SandboxError::Denied { action, .. }
            | SandboxError::InvalidInput { action, .. }
            | SandboxError::NotFound { action, .. }
            | SandboxError::TooLarge { action, .. } => action.clone(),
            SandboxError::Timeout { .. } => "Pass arguments that make the command finish sooner, \
                 or ask the operator to raise command_timeout_secs (or command_timeouts) in the \
                 sandbox configuration."
                .to_string(),
            SandboxError::Config { .. } => {
                "Fix the sandbox configuration file and start the server again.".to_string()
            }
            SandboxError::Io { .. } => {
                "Check that the target is accessible to the server process, then retry.".to_string()
            }
        }
    }

    /// `Error (kind): message\n\nAction: action` — the text form used for tool results.
    pub fn to_tool_text(&self) -> String {
        format!(
            "Error ({}): {}\n\nAction: {}",
            self.kind(),
            self,
            self.action()
        )
    }

    pub(crate) fn denied(
        what: impl Into<String>,
        reason: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        SandboxError::Denied {
            what: what.into(),
            reason: reason.into(),
            action: action.into(),
        }
    }

    pub(crate) fn invalid(
        what: impl Into<String>,
        reason: impl Into<String>,
        action: impl Into<String>,
    ) -> Self {
        SandboxError::InvalidInput {
            what: what.into(),
            reason: reason.into(),
            action: action.into(),
        }
    }

    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        SandboxError::Io {
            what: what.into(),
            source,
        }
    }
}

impl From<SandboxError> for mcp_toolbelt::ToolError {
    /// Keeps the kind (a sandbox refusal or a size limit is `permission_denied`), the message
    /// and the sandbox's own action line, so a client reads
    /// `Error (permission_denied): path '…' was refused: …` followed by what to do.
    fn from(err: SandboxError) -> Self {
        use mcp_toolbelt::ErrorKind as Kind;
        let kind = match err.kind() {
            ErrorKind::PermissionDenied => Kind::PermissionDenied,
            ErrorKind::Validation => Kind::Validation,
            ErrorKind::NotFound => Kind::NotFound,
            ErrorKind::Timeout => Kind::Timeout,
            ErrorKind::Config | ErrorKind::Internal => Kind::Internal,
        };
        match kind {
            Kind::PermissionDenied => tracing::info!(error = %err, "sandbox refusal"),
            Kind::Internal => tracing::warn!(error = %err, "system tool failure"),
            _ => tracing::debug!(error = %err, "system tool error"),
        }
        mcp_toolbelt::ToolError::new(kind, err.to_string()).with_action(err.action())
    }
}
