//! What the operator configures: where programs may be, which Python runs debugpy, and the
//! bounds.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variable naming the root directory (`--root`).
pub const ROOT_ENV: &str = "DEBUGGER_MCP_ROOT";
/// Environment variable naming the Python interpreter that has debugpy (`--python`).
pub const PYTHON_ENV: &str = "DEBUGGER_MCP_PYTHON";

/// Settings of the debugger tools.
///
/// ```
/// let config = debugger_mcp::DebuggerConfig::new("/tmp", "python3");
/// assert_eq!(config.sessions_per_caller, 4);
/// assert!(config.request_timeout.as_secs() >= 1);
/// ```
#[derive(Debug, Clone)]
pub struct DebuggerConfig {
    /// Programs, breakpoints and snapshots must be inside this directory (canonical); it is
    /// the programs' working directory.
    pub root: PathBuf,
    /// The interpreter with `debugpy` installed; it runs the adapter and the programs.
    pub python: PathBuf,
    /// Most live sessions per caller.
    pub sessions_per_caller: usize,
    /// Most live sessions over all callers.
    pub max_sessions: usize,
    /// Longest wait for one adapter answer.
    pub request_timeout: Duration,
    /// Longest wait for the adapter to start and the program to launch.
    pub start_timeout: Duration,
    /// Default wait for a program to stop after continue or a step (`wait_ms` changes it per
    /// call, up to [`MAX_WAIT`]).
    pub stop_wait: Duration,
}

/// The longest `wait_ms` a call may ask for.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

impl DebuggerConfig {
    /// Defaults for `root` and `python`: 4 sessions per caller, 32 in all, 10 s per adapter
    /// answer, 20 s to start, 5 s to wait for a stop.
    pub fn new(root: impl Into<PathBuf>, python: impl Into<PathBuf>) -> Self {
        DebuggerConfig {
            root: root.into(),
            python: python.into(),
            sessions_per_caller: 4,
            max_sessions: 32,
            request_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(20),
            stop_wait: Duration::from_secs(5),
        }
    }

    /// The canonical root, or why it is unusable.
    pub fn canonical_root(&self) -> Result<PathBuf, String> {
        let root = self.root.canonicalize().map_err(|e| {
            format!(
                "the root directory {} is unusable: {e}",
                self.root.display()
            )
        })?;
        if !root.is_dir() {
            return Err(format!("the root {} is not a directory", root.display()));
        }
        Ok(root)
    }
}

/// `path` (relative to `root`, or absolute) as a canonical file path inside `root`.
///
/// ```
/// let dir = std::env::temp_dir().canonicalize().unwrap();
/// assert!(debugger_mcp::config::resolve_in(&dir, "../etc/passwd").is_err());
/// ```
pub fn resolve_in(root: &Path, path: &str) -> Result<PathBuf, String> {
    let candidate = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        root.join(path)
    };
    let resolved = candidate
        .canonicalize()
        .map_err(|e| format!("'{path}' cannot be opened under {}: {e}", root.display()))?;
    if !resolved.starts_with(root) {
        return Err(format!(
            "'{path}' is outside the debugger's root {}",
            root.display()
        ));
    }
    if !resolved.is_file() {
        return Err(format!("'{path}' is not a file"));
    }
    Ok(resolved)
}

/// `path` shown relative to `root` when it is inside it.
pub fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
