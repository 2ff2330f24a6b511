//! The `debugger-mcp` command line, generated from the tools by `mcp_toolbelt::cli`.
//!
//! `debugger-mcp --root DIR --python PY serve` serves the tools over MCP (stdio by default;
//! `--tcp`, `--http` with tokens for several callers). Every tool is also a command
//! (`debugger-mcp debug start --program loop.py --stop-on-entry`), though a session lives
//! only as long as the process that started it, so sessions are for `serve`.

use std::path::PathBuf;

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::cli::App;

use crate::config::{DebuggerConfig, PYTHON_ENV, ROOT_ENV};
use crate::tools::Debugger;

/// Global flags of `debugger-mcp`.
#[derive(Debug, clap::Args)]
pub struct DebuggerArgs {
    /// Directory the programs must be in (and run in) [default: the working directory]
    #[arg(long, value_name = "DIR", env = ROOT_ENV)]
    pub root: Option<PathBuf>,
    /// Python interpreter with debugpy installed [default: python3]
    #[arg(long, value_name = "PATH", env = PYTHON_ENV)]
    pub python: Option<PathBuf>,
    /// Most live sessions per caller
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub sessions_per_caller: usize,
    /// Most live sessions over all callers (not `--max-sessions`: that is `serve --http`'s
    /// bound on MCP sessions)
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub max_debug_sessions: usize,
}

impl DebuggerArgs {
    /// The configuration these flags give, or why the root is unusable.
    pub fn config(&self) -> Result<DebuggerConfig, String> {
        let root = self.root.clone().unwrap_or_else(|| PathBuf::from("."));
        let python = self
            .python
            .clone()
            .unwrap_or_else(|| PathBuf::from("python3"));
        let mut config = DebuggerConfig::new(root, python);
        config.sessions_per_caller = self.sessions_per_caller.max(1);
        config.max_sessions = self.max_debug_sessions.max(1);
        config.root = config.canonical_root()?;
        Ok(config)
    }
}

/// The command line of `debugger-mcp`.
pub fn app() -> App {
    mcp_toolbelt::cli_app!(ToolRegistry::builder()).setup(|args: DebuggerArgs, builder| {
        let config = args.config()?;
        tracing::info!(root = %config.root.display(), python = %config.python.display(), "debugger configured");
        let debugger = Debugger::new(config);
        let sessions = debugger.sessions();
        Ok(builder.state(debugger).state(sessions))
    })
}
