//! `debugger-mcp`: an MCP server that debugs Python programs through the Debug Adapter
//! Protocol, with debugpy as the adapter (seed 004).
//!
//! - [`dap`]: a thin DAP client (`Content-Length` framed JSON over the adapter's stdio),
//!   every wait bounded;
//! - [`session`]: one session — the adapter and the program as child process groups,
//!   breakpoints, execution, inspection — answering where the program stopped and why;
//! - [`tools`]: the `debug_*` tools over [`mcp_toolbelt::sessions::Sessions`] (each session
//!   belongs to its caller and is locked per call), answering in
//!   [`mcp_toolbelt::envelope::Envelope`]s;
//! - [`cli::app`]: the command line (`serve`, and a command per tool).
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_toolbelt::envelope::Failure> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use debugger_mcp::{DebugSession, DebuggerConfig};
//! let config = Arc::new(DebuggerConfig::new("/srv/programs", "/opt/venv/bin/python"));
//! let (mut session, at) =
//!     DebugSession::start(config, "loop.py", &[], None, true, &[], Duration::from_secs(5)).await?;
//! assert_eq!(at.state, "stopped");
//! let frames = session.stack(10).await?;
//! println!("{} at {}", frames.describe("frames"), at.summary());
//! session.stop().await;
//! # Ok(()) }
//! ```

pub mod cli;
pub mod config;
pub mod dap;
pub mod session;
pub mod tools;

pub use config::DebuggerConfig;
pub use session::{DebugSession, Where};
pub use tools::Debugger;
