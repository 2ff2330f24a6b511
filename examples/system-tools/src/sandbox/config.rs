//! The sandbox configuration file (TOML) and its defaults.
//!
//! Every key is optional. A missing key takes the same default it has when no file is given at all:
//! only the working directory is reachable and no command may run.
//!
//! ```toml
//! allowed_paths = ["./workspace", "/srv/shared"]   # relative entries: relative to this file's directory
//! denied_paths = ["./workspace/secrets"]           # denied wins over allowed
//! allowed_commands = ["ls", "git", "./bin/lint"]   # bare names are looked up in `command_search_path`
//! denied_commands = ["rm"]
//! command_timeout_secs = 30
//! max_output_bytes = 1048576
//! max_read_bytes = 10485760
//!
//! [command_timeouts]                               # per-command override, keyed as in allowed_commands
//! git = 120
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::SandboxError;
use super::isolation::NamespaceMode;
use super::kernel::{DEFAULT_COMMAND_READ_PATHS, KernelSandboxMode};
use super::tree::ProcessContainment;

/// Default timeout for one command, in seconds.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: f64 = 30.0;
/// Default cap on captured bytes per output stream (stdout and stderr each).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Default cap on the size of a file `read_file` will return.
pub const DEFAULT_MAX_READ_BYTES: u64 = 10 * 1024 * 1024;
/// Default cap on the size of the content `write_file` accepts: small enough that a request
/// carrying it (JSON-escaped or base64) fits in the stdio transport's 4 MiB line, so this
/// limit answers before the transport's does.
pub const DEFAULT_MAX_WRITE_BYTES: u64 = 2 * 1024 * 1024;
/// Largest `max_write_bytes` whose content, base64-encoded, still fits in one 4 MiB request
/// line; above it the transport refuses big writes before `write_file` sees them.
pub const MAX_WRITE_BYTES_PER_LINE: u64 = 3 * 1024 * 1024 - 64 * 1024;
/// Default cap on entries returned by `list_directory` and `search_files`.
pub const DEFAULT_MAX_LIST_ENTRIES: usize = 10_000;
/// Default cap on directory depth walked by recursive listing and search.
pub const DEFAULT_MAX_WALK_DEPTH: usize = 32;
/// Default cap on the byte length of a path given to a tool (Linux `PATH_MAX`).
pub const DEFAULT_MAX_PATH_BYTES: usize = 4096;
/// Longest timeout accepted anywhere in the configuration (one day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// Default cap on the processes and threads of one command call.
pub const DEFAULT_COMMAND_PIDS_MAX: u64 = 256;
/// Default memory cap of one command call (and address-space cap of each of its processes).
pub const DEFAULT_COMMAND_MEMORY_MAX_BYTES: u64 = 1024 * 1024 * 1024;
/// Default CPU seconds of each process of a command call.
pub const DEFAULT_COMMAND_CPU_SECS: u64 = 60;

/// Environment variables passed to commands by default; everything else is cleared.
pub const DEFAULT_ENV_PASSTHROUGH: &[&str] = &["LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/// The sandbox configuration as written in the TOML file.
///
/// Turn it into an enforceable [`Sandbox`](super::Sandbox) with
/// [`Sandbox::from_config`](super::Sandbox::from_config), which canonicalizes every path and resolves
/// every command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// Directories (and files) the file tools may reach. `None` means "the working directory only".
    /// Relative entries are relative to [`SandboxConfig::relative_to`].
    pub allowed_paths: Option<Vec<PathBuf>>,
    /// Paths that are refused even inside an allowed path (denied wins). They may not exist yet.
    pub denied_paths: Vec<PathBuf>,
    /// Directory against which relative tool paths are resolved and in which commands run by
    /// default. Must be inside an allowed path. Default: the first allowed path.
    pub base_dir: Option<PathBuf>,
    /// Programs `execute_command` may run: bare names (looked up in `command_search_path`) or
    /// paths. Matched on the canonical file they resolve to. Empty (the default) allows none.
    pub allowed_commands: Vec<String>,
    /// Programs that are refused even if allowed (denied wins). Matched on the canonical file and
    /// on the bare program name.
    pub denied_commands: Vec<String>,
    /// Directories searched for bare command names, in order. Default: the server's `PATH`.
    /// Commands also receive this list as their `PATH`.
    pub command_search_path: Option<Vec<PathBuf>>,
    /// Timeout for one command run, in seconds (a caller may ask for less, never more).
    pub command_timeout_secs: f64,
    /// Per-command timeout overrides in seconds, keyed by the entry as written in
    /// `allowed_commands`.
    pub command_timeouts: BTreeMap<String, f64>,
    /// Cap on captured bytes per output stream; on overflow the output is truncated with a notice
    /// and the command's process group is stopped.
    pub max_output_bytes: usize,
    /// Files larger than this are refused by `read_file`.
    pub max_read_bytes: u64,
    /// Content larger than this is refused by `write_file`.
    pub max_write_bytes: u64,
    /// Cap on entries returned by one `list_directory` or `search_files` call.
    pub max_list_entries: usize,
    /// Cap on directory depth walked by recursive listing and search.
    pub max_walk_depth: usize,
    /// Paths longer than this many bytes are rejected.
    pub max_path_bytes: usize,
    /// Environment variables copied from the server into commands (everything else is cleared;
    /// `PATH` is always set from `command_search_path`).
    pub env_passthrough: Vec<String>,
    /// Best-effort check that command arguments which look like paths stay inside the sandbox.
    /// A first line only: the kernel sandbox (`kernel_sandbox`) is what bounds a command.
    pub confine_path_arguments: bool,
    /// Whether commands need the kernel (Landlock ABI 6) to enforce their ruleset
    /// (`"required"`, the default: without it commands are refused) or run with what the
    /// kernel supports (`"best_effort"`).
    pub kernel_sandbox: KernelSandboxMode,
    /// Paths commands may read (files) and list (directories), never write or execute.
    /// Default: [`DEFAULT_COMMAND_READ_PATHS`] (`/usr`, `/bin`, `/lib*`, the few `/etc` files a
    /// dynamic program reads).
    pub command_read_paths: Option<Vec<PathBuf>>,
    /// Paths whose programs commands may execute besides the allowed programs and their
    /// interpreters (for programs that run helpers, such as `/usr/lib/git-core`). Default: none.
    pub command_exec_paths: Vec<PathBuf>,
    /// TCP ports commands may connect to. Default: none.
    pub command_tcp_connect: Vec<u16>,
    /// TCP ports commands may bind. Default: none.
    pub command_tcp_bind: Vec<u16>,
    /// How a command's process tree is made to die with its call: `"auto"` (a cgroup v2 when
    /// one can be made, else a child subreaper), `"cgroup"` or `"subreaper"`.
    pub process_containment: ProcessContainment,
    /// Whether commands run in their own user, mount, pid, IPC, UTS and network namespaces
    /// built by bubblewrap (`"required"`, the default: without bubblewrap commands are
    /// refused) or under Landlock and the cgroup only (`"off"`).
    pub command_namespaces: NamespaceMode,
    /// With namespaces: whether commands start in one long-lived sandbox holder that keeps
    /// the namespaces and the view every call shares (`true`, the default: each call then
    /// only gets its own user, pid, IPC and UTS namespaces), or each in a bubblewrap of its
    /// own (`false`: slower, and the network namespace is the call's own).
    pub command_holder: bool,
    /// Host uid commands run as when the server runs as root (never 0). Default: the owner of
    /// the base directory when it is not root, else 65534 (`nobody`). A server that is not
    /// root runs commands as its own uid, in a user namespace without capabilities.
    pub command_uid: Option<u32>,
    /// Host gid for `command_uid` (default: the owner group of the base directory, or the
    /// uid's number).
    pub command_gid: Option<u32>,
    /// Processes and threads one command call may have (per call: each call has its own
    /// user namespace, and its own cgroup where the pids controller is available).
    pub command_pids_max: u64,
    /// Memory of one command call in bytes: the cgroup's `memory.max` (swap 0) where the
    /// memory controller is available, and always each process's address-space limit.
    pub command_memory_max_bytes: u64,
    /// CPU seconds each process of a command call may use (then SIGXCPU, SIGKILL).
    pub command_cpu_secs: u64,
    /// bubblewrap's path (default: `bwrap` on `PATH`). Not read from the file.
    #[doc(hidden)]
    #[serde(skip)]
    pub bwrap: Option<PathBuf>,
    /// The launcher binary (default: `SYSTEM_TOOLS_MCP_LAUNCHER`, or this binary). Not read
    /// from the file.
    #[doc(hidden)]
    #[serde(skip)]
    pub launcher: Option<PathBuf>,
    /// Overrides the probed Landlock ABI (tests of the refusal path). Not read from the file.
    #[doc(hidden)]
    #[serde(skip)]
    pub landlock_abi: Option<i32>,
    /// Directory that relative entries are resolved against. Set by [`SandboxConfig::load`] to the
    /// config file's directory; the working directory when `None`. Not read from the file.
    #[serde(skip)]
    pub relative_to: Option<PathBuf>,
    /// The file this configuration was loaded from, for error messages. Not read from the file.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            allowed_paths: None,
            denied_paths: Vec::new(),
            base_dir: None,
            allowed_commands: Vec::new(),
            denied_commands: Vec::new(),
            command_search_path: None,
            command_timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
            command_timeouts: BTreeMap::new(),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
            max_write_bytes: DEFAULT_MAX_WRITE_BYTES,
            max_list_entries: DEFAULT_MAX_LIST_ENTRIES,
            max_walk_depth: DEFAULT_MAX_WALK_DEPTH,
            max_path_bytes: DEFAULT_MAX_PATH_BYTES,
            env_passthrough: DEFAULT_ENV_PASSTHROUGH
                .iter()
                .map(|s| s.to_string())
                .collect(),
            confine_path_arguments: true,
            kernel_sandbox: KernelSandboxMode::Required,
            command_read_paths: None,
            command_exec_paths: Vec::new(),
            command_tcp_connect: Vec::new(),
            command_tcp_bind: Vec::new(),
            process_containment: ProcessContainment::Auto,
            command_namespaces: NamespaceMode::Required,
            command_holder: true,
            command_uid: None,
            command_gid: None,
            command_pids_max: DEFAULT_COMMAND_PIDS_MAX,
            command_memory_max_bytes: DEFAULT_COMMAND_MEMORY_MAX_BYTES,
            command_cpu_secs: DEFAULT_COMMAND_CPU_SECS,
            bwrap: None,
            launcher: None,
            landlock_abi: None,
            relative_to: None,
            source: None,
        }
    }
}

impl SandboxConfig {
    /// `command_read_paths`, or its default.
    pub fn effective_command_read_paths(&self) -> Vec<PathBuf> {
        match &self.command_read_paths {
            Some(list) => list.clone(),
            None => DEFAULT_COMMAND_READ_PATHS
                .iter()
                .map(PathBuf::from)
                .collect(),
        }
    }

    /// Parses a configuration from TOML text. Relative entries will be resolved against the
    /// working directory unless [`SandboxConfig::relative_to`] is set afterwards.
    pub fn from_toml_str(text: &str) -> Result<Self, SandboxError> {
        let config: SandboxConfig = toml::from_str(text).map_err(|e| SandboxError::Config {
            reason: format!("invalid sandbox configuration: {e}"),
        })?;
        config.validate_numbers()?;
        Ok(config)
    }

    /// Reads and parses a TOML file; relative entries in it are resolved against the file's
    /// directory.
    pub fn load(path: &Path) -> Result<Self, SandboxError> {
        let text = std::fs::read_to_string(path).map_err(|e| SandboxError::Config {
            reason: format!("cannot read sandbox configuration {}: {e}", path.display()),
        })?;
        let mut config = Self::from_toml_str(&text).map_err(|e| match e {
            SandboxError::Config { reason } => SandboxError::Config {
                reason: format!("{}: {reason}", path.display()),
            },
            other => other,
        })?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        config.relative_to = Some(std::path::absolute(&dir).map_err(|e| SandboxError::Config {
            reason: format!("cannot make {} absolute: {e}", dir.display()),
        })?);
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// Checks the numeric limits: timeouts finite, positive and at most a day; caps non-zero.
    pub fn validate_numbers(&self) -> Result<(), SandboxError> {
        check_timeout("command_timeout_secs", self.command_timeout_secs)?;
        for (name, secs) in &self.command_timeouts {
            check_timeout(&format!("command_timeouts.{name}"), *secs)?;
        }
        if self.max_write_bytes > MAX_WRITE_BYTES_PER_LINE {
            tracing::warn!(
                max_write_bytes = self.max_write_bytes,
                "max_write_bytes is over what one 4 MiB stdio request line can carry; bigger \
                 writes will be refused by the transport before write_file's own limit answers"
            );
        }
        let caps = [
            ("max_output_bytes", self.max_output_bytes as u64),
            ("max_read_bytes", self.max_read_bytes),
            ("max_write_bytes", self.max_write_bytes),
            ("max_list_entries", self.max_list_entries as u64),
            ("max_walk_depth", self.max_walk_depth as u64),
            ("max_path_bytes", self.max_path_bytes as u64),
            ("command_pids_max", self.command_pids_max),
            ("command_memory_max_bytes", self.command_memory_max_bytes),
            ("command_cpu_secs", self.command_cpu_secs),
        ];
        for (name, value) in caps {
            if value == 0 {
                return Err(SandboxError::Config {
                    reason: format!("{name} must be greater than 0"),
                });
            }
        }
        Ok(())
    }
}

fn check_timeout(name: &str, secs: f64) -> Result<(), SandboxError> {
    if !secs.is_finite() || secs <= 0.0 || secs > MAX_TIMEOUT_SECS {
        return Err(SandboxError::Config {
            reason: format!(
                "{name} must be a number of seconds greater than 0 and at most {MAX_TIMEOUT_SECS}, got {secs}"
            ),
        });
    }
    Ok(())
}
