//! Seed 001's built-in system tools (`echo`, `read_file`, `write_file`, `list_directory`,
//! `search_files`, `execute_command`, `system_info`) behind a sandbox.
//!
//! - [`sandbox`]: the policy (allowed/denied paths and commands, limits) loaded from TOML, and
//!   the checks that enforce it on canonical locations and resolved programs.
//! - [`tools`]: the tool logic as plain async functions returning typed outputs or
//!   [`SandboxError`]; [`tools::mcp`] wraps each as an `#[mcp_tool]`.
//! - [`cli`]: the command line of the `system-tools-mcp` binary (`serve`, one command per
//!   tool, `check-config`), with the sandbox built from `--config`.

#![warn(missing_docs)]

pub mod cli;
pub mod sandbox;
pub mod tools;

pub use sandbox::{ErrorKind, Sandbox, SandboxConfig, SandboxError};
