//! The sandbox: which paths the file tools may touch and which programs `execute_command` may run.
//!
//! Build one from a [`SandboxConfig`] (usually loaded from TOML) with [`Sandbox::from_config`]; it is
//! cheap to clone and shareable across tasks. All checks are made on canonical locations: symlinks
//! and `..` are resolved by the OS before the allowed/denied decision, and files are then opened
//! component by component with `O_NOFOLLOW`, so a symlink swapped in after the check is refused
//! rather than followed.

mod commands;
mod config;
mod error;
pub(crate) mod holder;
pub(crate) mod isolation;
pub(crate) mod kernel;
pub mod launch;
mod memory;
mod path_text;
mod paths;
pub(crate) mod process;
pub(crate) mod secure_fs;
pub(crate) mod tree;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

pub use commands::{CheckedCommand, MAX_ARGS, MAX_ARGS_BYTES, resolve_program};
pub use config::*;
pub use error::{ErrorKind, SandboxError};
pub use isolation::{CommandLimits, CommandReach, NOBODY, NamespaceMode, ProgramReach};
pub use kernel::{
    DEFAULT_COMMAND_READ_PATHS, KernelSandboxMode, KernelSandboxReport, REQUIRED_ABI, kernel_abi,
};
pub use path_text::{path_from_text, path_text};
pub use paths::{MAX_COMPONENT_BYTES, ResolvedPath};
pub use tree::ProcessContainment;

use commands::CommandPolicy;
use isolation::{Isolation, IsolationInput};
use kernel::{LandlockPolicy, PolicyInput};
use memory::MemoryLimiter;
use tree::Containment;

/// Highest accepted `max_walk_depth` (each level holds one open directory descriptor).
pub const MAX_WALK_DEPTH_LIMIT: usize = 256;

/// Resource limits in force, taken from the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// Default timeout for a command run.
    #[serde(serialize_with = "serialize_secs")]
    #[schemars(with = "f64")]
    pub command_timeout: Duration,
    /// Cap on captured bytes per output stream.
    pub max_output_bytes: usize,
    /// Largest file `read_file` returns.
    pub max_read_bytes: u64,
    /// Largest content `write_file` accepts.
    pub max_write_bytes: u64,
    /// Cap on entries returned by one listing or search.
    pub max_list_entries: usize,
    /// Cap on entries examined by one search.
    pub max_scan_entries: usize,
    /// Cap on directory depth walked.
    pub max_walk_depth: usize,
    /// Cap on path length in bytes.
    pub max_path_bytes: usize,
}

fn serialize_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// How many entries a search may examine per entry it may return.
const SCAN_ENTRIES_PER_LIST_ENTRY: usize = 20;

/// An enforceable sandbox. Cheap to clone (shared inner state).
#[derive(Debug, Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    allowed_paths: Vec<PathBuf>,
    denied_paths: Vec<PathBuf>,
    base_dir: PathBuf,
    commands: CommandPolicy,
    limits: Limits,
    env: Vec<(String, String)>,
    confine_path_arguments: bool,
    source: Option<PathBuf>,
    /// The allowed paths as written in the configuration (parallel to `allowed_paths`).
    roots_shown: Vec<String>,
    /// The base directory as written in the configuration.
    base_shown: String,
    kernel: LandlockPolicy,
    containment: Containment,
    /// How each call's memory is limited (with `command_memory_max_bytes`).
    memory: MemoryLimiter,
    command_memory_max_bytes: u64,
    /// The namespaces commands run in, or why they cannot (`command_namespaces = "required"`).
    isolation: Result<Option<Isolation>, String>,
}

impl Sandbox {
    /// The safe default: only the current working directory, no commands.
    ///
    /// Fails when the working directory is `/`, since that would expose the whole file system.
    pub fn with_defaults() -> Result<Self, SandboxError> {
        Self::from_config(SandboxConfig::default())
    }

    /// Loads the configuration file when one is given, otherwise uses the safe defaults.
    pub fn load(path: Option<&Path>) -> Result<Self, SandboxError> {
        match path {
            Some(p) => Self::from_config(SandboxConfig::load(p)?),
            None => Self::with_defaults(),
        }
    }

    /// Builds the sandbox: canonicalizes allowed paths (they must exist), resolves denied paths
    /// (they may not exist yet), resolves every command entry to its canonical program file.
    pub fn from_config(config: SandboxConfig) -> Result<Self, SandboxError> {
        config.validate_numbers()?;
        if config.max_walk_depth > MAX_WALK_DEPTH_LIMIT {
            return Err(SandboxError::Config {
                reason: format!(
                    "max_walk_depth is {}, over the limit of {MAX_WALK_DEPTH_LIMIT}",
                    config.max_walk_depth
                ),
            });
        }
        let cwd = std::env::current_dir().map_err(|e| SandboxError::Config {
            reason: format!("cannot read the working directory: {e}"),
        })?;
        let relative_to = config.relative_to.clone().unwrap_or_else(|| cwd.clone());
        let absolute = |p: &Path| -> PathBuf {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                relative_to.join(p)
            }
        };

        let allowed_as_configured: Vec<String> = match &config.allowed_paths {
            Some(list) => list.iter().map(|p| p.display().to_string()).collect(),
            None => vec![".".to_string()],
        };
        let allowed_input = match &config.allowed_paths {
            Some(list) => list.iter().map(|p| absolute(p)).collect::<Vec<_>>(),
            None => {
                let canonical = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
                if canonical == Path::new("/") {
                    return Err(SandboxError::Config {
                        reason: "no allowed_paths configured and the working directory is '/', \
                                 which would expose the whole file system; start the server in a \
                                 project directory or pass a sandbox configuration with allowed_paths"
                            .to_string(),
                    });
                }
                vec![cwd.clone()]
            }
        };
        let mut allowed_paths = Vec::new();
        let mut roots_shown = Vec::new();
        for (p, shown) in allowed_input.iter().zip(&allowed_as_configured) {
            let canonical = std::fs::canonicalize(p).map_err(|e| SandboxError::Config {
                reason: format!("allowed path {} cannot be resolved: {e}", p.display()),
            })?;
            if !allowed_paths.contains(&canonical) {
                allowed_paths.push(canonical);
                roots_shown.push(shown.clone());
            }
        }

        let mut denied_paths = Vec::new();
        for p in &config.denied_paths {
            let abs = absolute(p);
            let text = abs.to_string_lossy().into_owned();
            let (existing, missing) =
                paths::resolve_absolute(&text, &abs, &|p: &Path| p.display().to_string()).map_err(
                    |e| SandboxError::Config {
                        reason: format!("denied path {}: {e}", p.display()),
                    },
                )?;
            let mut full = existing;
            full.extend(missing);
            if !denied_paths.contains(&full) {
                denied_paths.push(full);
            }
        }

        let base_shown = match &config.base_dir {
            Some(b) => b.display().to_string(),
            None => roots_shown.first().cloned().unwrap_or_default(),
        };
        let base_dir = match &config.base_dir {
            Some(b) => std::fs::canonicalize(absolute(b)).map_err(|e| SandboxError::Config {
                reason: format!("base_dir {} cannot be resolved: {e}", b.display()),
            })?,
            None => allowed_paths
                .first()
                .cloned()
                .ok_or_else(|| SandboxError::Config {
                    reason: "allowed_paths is empty; list at least one directory".to_string(),
                })?,
        };
        if !base_dir.is_dir() {
            return Err(SandboxError::Config {
                reason: format!("base_dir {} is not a directory", base_dir.display()),
            });
        }
        if !allowed_paths.iter().any(|r| base_dir.starts_with(r)) {
            return Err(SandboxError::Config {
                reason: format!(
                    "base_dir {} is not inside any allowed path",
                    base_dir.display()
                ),
            });
        }
        if let Some(d) = denied_paths.iter().find(|d| base_dir.starts_with(d)) {
            return Err(SandboxError::Config {
                reason: format!(
                    "base_dir {} is inside the denied path {}",
                    base_dir.display(),
                    d.display()
                ),
            });
        }

        let search_path = match &config.command_search_path {
            Some(list) => list.iter().map(|p| absolute(p)).collect(),
            None => std::env::var_os("PATH")
                .map(|v| std::env::split_paths(&v).collect())
                .unwrap_or_default(),
        };
        let command_timeout = Duration::from_secs_f64(config.command_timeout_secs);
        let commands = CommandPolicy::build(&config, &relative_to, search_path, command_timeout)?;

        let mut env = Vec::new();
        for name in &config.env_passthrough {
            if name == "PATH" {
                continue;
            }
            if let Ok(value) = std::env::var(name) {
                env.push((name.clone(), value));
            }
        }
        if let Some(joined) = commands.search_path_env() {
            env.push(("PATH".to_string(), joined));
        }

        let read_paths: Vec<PathBuf> = config
            .effective_command_read_paths()
            .iter()
            .map(|p| absolute(p))
            .collect();
        let exec_dirs: Vec<PathBuf> = config
            .command_exec_paths
            .iter()
            .map(|p| absolute(p))
            .collect();
        let programs = commands.programs();
        let isolation = match config.command_namespaces {
            NamespaceMode::Off => Ok(None),
            NamespaceMode::Required => Isolation::new(IsolationInput {
                bwrap: config.bwrap.clone(),
                launcher: config.launcher.clone(),
                command_uid: config.command_uid,
                command_gid: config.command_gid,
                base_dir: &base_dir,
                read_paths: &read_paths,
                allowed: &allowed_paths,
                denied: &denied_paths,
                programs: &programs,
                exec_dirs: &exec_dirs,
                protected: commands.refused_programs(),
                tcp_connect: !config.command_tcp_connect.is_empty(),
                tcp_bind: !config.command_tcp_bind.is_empty(),
                holder: config.command_holder,
                limits: CommandLimits {
                    pids_max: config.command_pids_max,
                    memory_max_bytes: config.command_memory_max_bytes,
                    cpu_secs: config.command_cpu_secs,
                },
            })
            .map(Some),
        };
        if let Err(reason) = &isolation
            && commands.allowed_count() > 0
        {
            tracing::error!(%reason, "commands are refused: their namespaces cannot be built; install bubblewrap or set command_namespaces = \"off\"");
        }
        let kernel = LandlockPolicy::new(PolicyInput {
            mode: config.kernel_sandbox,
            abi: config.landlock_abi.unwrap_or_else(kernel::kernel_abi),
            allowed: &allowed_paths,
            denied: &denied_paths,
            programs: commands.programs(),
            read_paths: config
                .effective_command_read_paths()
                .iter()
                .map(|p| absolute(p))
                .collect(),
            exec_paths: config
                .command_exec_paths
                .iter()
                .map(|p| absolute(p))
                .collect(),
            tcp_connect: config.command_tcp_connect.clone(),
            tcp_bind: config.command_tcp_bind.clone(),
            hidden_denied: matches!(isolation, Ok(Some(_))),
            protected: commands.refused_programs().to_vec(),
        });
        let containment = Containment::detect(config.process_containment).map_err(|reason| {
            SandboxError::Config {
                reason: format!("process_containment = \"cgroup\" cannot be honoured: {reason}"),
            }
        })?;
        let memory = MemoryLimiter::detect(&containment);

        let limits = Limits {
            command_timeout,
            max_output_bytes: config.max_output_bytes,
            max_read_bytes: config.max_read_bytes,
            max_write_bytes: config.max_write_bytes,
            max_list_entries: config.max_list_entries,
            max_scan_entries: config
                .max_list_entries
                .saturating_mul(SCAN_ENTRIES_PER_LIST_ENTRY),
            max_walk_depth: config.max_walk_depth,
            max_path_bytes: config.max_path_bytes,
        };
        let sandbox = Sandbox {
            inner: Arc::new(Inner {
                allowed_paths,
                denied_paths,
                base_dir,
                commands,
                limits,
                env,
                confine_path_arguments: config.confine_path_arguments,
                source: config.source.clone(),
                roots_shown,
                base_shown,
                kernel,
                containment,
                memory,
                command_memory_max_bytes: config.command_memory_max_bytes,
                isolation,
            }),
        };
        tracing::info!(
            allowed = %paths::join_paths(sandbox.allowed_paths()),
            denied = %paths::join_paths(sandbox.denied_paths()),
            commands = sandbox.inner.commands.allowed_count(),
            "sandbox ready"
        );
        let report = sandbox.kernel_report();
        match sandbox.inner.kernel.refusal() {
            Some(reason) if sandbox.inner.commands.allowed_count() > 0 => tracing::error!(
                %reason,
                "commands are refused: the kernel cannot enforce their sandbox; set \
                 kernel_sandbox = \"best_effort\" to run them anyway"
            ),
            _ => tracing::info!(
                kernel_abi = report.kernel_abi,
                status = %report.status,
                rules = %sandbox.inner.kernel.log_summary(),
                containment = ?sandbox.inner.containment.kind(),
                memory = %sandbox.inner.memory.describe(),
                "command sandbox (Landlock)"
            ),
        }
        Ok(sandbox)
    }

    /// How a location appears in replies, which never name a host path outside the sandbox:
    /// relative to the base directory (`.` for the base itself), else below an allowed path as
    /// written in the configuration, else `a location outside the sandbox`. A name that is
    /// not UTF-8 is escaped ([`path_text`]), so the reply can be sent back as a path.
    pub fn show(&self, location: &Path) -> String {
        if let Ok(rel) = location.strip_prefix(self.base_dir()) {
            return if rel.as_os_str().is_empty() {
                ".".to_string()
            } else {
                path_text(rel.as_os_str())
            };
        }
        let root = self
            .allowed_paths()
            .iter()
            .zip(&self.inner.roots_shown)
            .filter(|(r, _)| location.starts_with(r))
            .max_by_key(|(r, _)| r.as_os_str().len());
        match root {
            Some((r, shown)) => {
                let rel = location.strip_prefix(r).unwrap_or(Path::new(""));
                if rel.as_os_str().is_empty() {
                    shown.clone()
                } else {
                    path_text(Path::new(shown).join(rel).as_os_str())
                }
            }
            None => "a location outside the sandbox".to_string(),
        }
    }

    /// The allowed paths as written in the configuration, for messages.
    pub(crate) fn allowed_shown(&self) -> String {
        self.inner.roots_shown.join(", ")
    }

    /// The base directory as written in the configuration, for messages.
    pub(crate) fn base_shown(&self) -> &str {
        &self.inner.base_shown
    }

    /// Canonical allowed paths.
    pub fn allowed_paths(&self) -> &[PathBuf] {
        &self.inner.allowed_paths
    }

    /// Resolved denied paths.
    pub fn denied_paths(&self) -> &[PathBuf] {
        &self.inner.denied_paths
    }

    /// Canonical directory against which relative paths are resolved; default command directory.
    pub fn base_dir(&self) -> &Path {
        &self.inner.base_dir
    }

    /// Limits in force.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The configuration file this sandbox came from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.inner.source.as_deref()
    }

    /// Environment given to commands (name, value); everything else is cleared.
    pub fn command_env(&self) -> &[(String, String)] {
        &self.inner.env
    }

    /// Whether command arguments that look like paths are checked against the sandbox.
    pub fn confines_path_arguments(&self) -> bool {
        self.inner.confine_path_arguments
    }

    pub(crate) fn command_policy(&self) -> &CommandPolicy {
        &self.inner.commands
    }

    /// Whether a canonical path is the file of an allowed program (never written by the tools).
    pub fn is_allowed_program(&self, location: &Path) -> bool {
        self.inner.commands.programs().iter().any(|p| p == location)
    }

    /// Whether a canonical path is a program the operator listed: an allowed one, or an
    /// allowed script refused at start-up (its `#!` interpreter is not allowed). Neither the
    /// file tools nor commands may rewrite these.
    pub fn is_operator_program(&self, location: &Path) -> bool {
        self.is_allowed_program(location)
            || self
                .inner
                .commands
                .refused_programs()
                .iter()
                .any(|p| p == location)
    }

    pub(crate) fn landlock(&self) -> &LandlockPolicy {
        &self.inner.kernel
    }

    /// The namespaces commands run in (`None`: `command_namespaces = "off"`), or why commands
    /// are refused.
    pub(crate) fn isolation(&self) -> Result<Option<&Isolation>, SandboxError> {
        match &self.inner.isolation {
            Ok(i) => Ok(i.as_ref()),
            Err(reason) => Err(SandboxError::denied(
                "running commands",
                format!("their namespaces cannot be built: {reason}"),
                "Ask the operator to install bubblewrap (Debian package `bubblewrap`) and allow \
                 user namespaces, or to set command_namespaces = \"off\" in the sandbox \
                 configuration.",
            )),
        }
    }

    pub(crate) fn containment(&self) -> &Containment {
        &self.inner.containment
    }

    /// How each call's memory is limited, and the limit (`command_memory_max_bytes`).
    pub(crate) fn memory_limit(&self) -> (&MemoryLimiter, u64) {
        (&self.inner.memory, self.inner.command_memory_max_bytes)
    }

    /// Whether the kernel limits each command call's memory as a whole (else each process
    /// only has its address-space limit).
    pub fn limits_call_memory(&self) -> bool {
        self.inner.memory.is_available()
    }

    /// What the kernel enforces on commands (Landlock ABI, status, one sentence per rule group).
    pub fn kernel_report(&self) -> KernelSandboxReport {
        self.inner.kernel.report()
    }

    /// How a command's process tree is made to die with its call.
    pub fn process_containment(&self) -> ProcessContainment {
        self.inner.containment.kind()
    }

    /// A serializable summary of the effective sandbox (for `check-config` and logs).
    pub fn report(&self) -> SandboxReport {
        let policy = &self.inner.commands;
        SandboxReport {
            source: self.source().map(|p| p.display().to_string()),
            allowed_paths: display_all(self.allowed_paths()),
            denied_paths: display_all(self.denied_paths()),
            base_dir: self.base_dir().display().to_string(),
            allowed_commands: policy.allowed_report(),
            denied_commands: policy.denied_report(),
            unresolved_commands: policy.unresolved().to_vec(),
            command_search_path: display_all(policy.search_path()),
            env_passthrough: self.inner.env.iter().map(|(k, _)| k.clone()).collect(),
            confine_path_arguments: self.inner.confine_path_arguments,
            kernel_sandbox: self.kernel_report(),
            kernel_sandbox_rules: self.inner.kernel.log_summary(),
            process_containment: self.process_containment(),
            command_memory_limit: self.inner.memory.describe(),
            command_reach: match &self.inner.isolation {
                Ok(Some(isolation)) => Some(isolation.reach()),
                _ => None,
            },
            limits: self.limits().clone(),
        }
    }
}

fn display_all(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

/// Serializable summary of an effective sandbox.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SandboxReport {
    /// Configuration file, if one was loaded.
    pub source: Option<String>,
    /// Canonical allowed paths.
    pub allowed_paths: Vec<String>,
    /// Resolved denied paths.
    pub denied_paths: Vec<String>,
    /// Base directory for relative paths.
    pub base_dir: String,
    /// Allowed commands: `entry -> canonical program (timeout s)`.
    pub allowed_commands: Vec<String>,
    /// Denied commands: `entry -> canonical program` or the bare name.
    pub denied_commands: Vec<String>,
    /// Command entries that did not resolve to a program on this machine.
    pub unresolved_commands: Vec<String>,
    /// Directories searched for bare command names.
    pub command_search_path: Vec<String>,
    /// Names of environment variables passed to commands.
    pub env_passthrough: Vec<String>,
    /// Whether path-like command arguments are checked.
    pub confine_path_arguments: bool,
    /// What the kernel enforces on commands.
    pub kernel_sandbox: KernelSandboxReport,
    /// Every path the Landlock rules name.
    pub kernel_sandbox_rules: String,
    /// How a command's process tree dies with its call.
    pub process_containment: ProcessContainment,
    /// How a call's memory is limited as a whole (`command_memory_max_bytes`): the kernel's
    /// memory controller, or `none (why)` when each process has only its address-space limit.
    pub command_memory_limit: String,
    /// What every command can reach in its namespaces (absent when commands run without
    /// namespaces, or cannot run).
    pub command_reach: Option<CommandReach>,
    /// Limits in force.
    pub limits: Limits,
}
