//! A command line generated from the tool registry (feature `cli`).
//!
//! One call in a server's `main` gives the whole command line:
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! fn main() -> ExitCode {
//!     mcp_toolbelt::cli_app!(mcp_toolbelt::ToolRegistry::builder()).run()
//! }
//! ```
//!
//! The program then has:
//! - `serve [--stdio | --http ADDR | --tcp ADDR | --unix PATH] [--tokens-file F] [--stateless]
//!   [--page-size N] [--max-in-flight N]` (and with the `oauth` feature `--oauth-issuer URL
//!   --resource URL [--scope-map F]`): serve the tools over MCP (stdio by default; logs go to
//!   stderr);
//! - `tools list [--category C] [--json]`, `tools show NAME [--json]`, `tools check`,
//!   `tools matrix`: look at the tools without serving them;
//! - one command per tool, `<category> <action>` (the tool name split at the first `_`,
//!   unless the tool sets `cli_category` / `cli_name`, or `hidden_from_cli` to have none),
//!   with one flag per argument of its input schema;
//! - `call NAME --json '{...}'`: call any tool with JSON arguments;
//! - the server's own commands, added with [`App::command`];
//! - global flags `--permissions-file F` (only tools the file allows are served *and* get
//!   commands) and `--log-level L`, plus the flags of [`App::setup`].
//!
//! Flag values are converted by the schema's types (a bad integer is a usage error, exit
//! status 2) and the call goes through [`ToolRegistry::call_tool`](crate::ToolRegistry::call_tool),
//! so the registry validates the arguments exactly as it does for MCP clients. A result's
//! text goes to stdout (exit status 0); an error result's text goes to stderr (exit
//! status 1); `--json` prints the whole `CallToolResult` instead.
//!
//! See `docs/cli.md` for the mapping from JSON schema to flags.

mod app;
mod command;
mod explain;
mod extension;
mod flags;
mod inspect;
mod invoke;
mod logging;
mod plan;
mod prescan;
mod serve;
#[cfg(feature = "http")]
mod serve_http;

pub use app::{App, SetupError};
#[doc(hidden)]
pub use flags::command_line_arguments;

/// The `clap` version this module builds its commands with (features `derive` and `env`),
/// for [`App::setup`]'s flag types: with `use mcp_toolbelt::cli::clap;` in scope,
/// `#[derive(clap::Args)]` works without `clap` in your own `Cargo.toml`.
///
/// ```
/// use mcp_toolbelt::cli::clap;
///
/// #[derive(clap::Args)]
/// struct Flags {
///     /// The service's URL.
///     #[arg(long, env = "DEMO_URL")]
///     url: Option<String>,
/// }
/// let arg = clap::Arg::new("url").long("url");
/// assert_eq!(arg.get_long(), Some("url"));
/// ```
pub use clap;

/// An [`App`] named after the calling crate: `CARGO_PKG_NAME`, `CARGO_PKG_VERSION` and
/// `CARGO_PKG_DESCRIPTION` (as `about`), read where the macro is written.
///
/// ```
/// let app = mcp_toolbelt::cli_app!(mcp_toolbelt::ToolRegistry::builder());
/// assert_eq!(app.name(), env!("CARGO_PKG_NAME"));
/// assert_eq!(app.version(), env!("CARGO_PKG_VERSION"));
/// ```
#[macro_export]
macro_rules! cli_app {
    ($builder:expr $(,)?) => {
        $crate::cli::App::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"), $builder)
            .about(env!("CARGO_PKG_DESCRIPTION"))
    };
}
