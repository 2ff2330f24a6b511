//! The `system-tools-mcp` command line: the command line `mcp_toolbelt::cli` generates from the
//! seven tools, with the sandbox built from the global `--config` flag, plus `check-config`.
//!
//! - `system-tools-mcp [--config FILE] serve [--http ADDR]` serves the tools over MCP;
//! - `system-tools-mcp [--config FILE] file read --path P`, `file list`, `system exec
//!   --command ls --args -l`, `utility echo --message hi`... call one tool;
//! - `system-tools-mcp check-config [--config FILE]` prints the effective sandbox as JSON
//!   (canonical paths, resolved programs, limits) without serving anything.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::cli::App;

use crate::sandbox::{Sandbox, SandboxError};

/// Environment variable naming the sandbox configuration file (the `--config` flag wins).
pub const CONFIG_ENV: &str = "SYSTEM_TOOLS_MCP_CONFIG";

/// The word of the extra command that prints the effective sandbox.
pub const CHECK_CONFIG: &str = "check-config";

/// Global flags of `system-tools-mcp`.
#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// Sandbox configuration (TOML). Without it: only the working directory, no commands
    #[arg(long, short = 'c', value_name = "FILE", env = CONFIG_ENV)]
    pub config: Option<PathBuf>,
}

/// Loads the sandbox the flags select (an empty path counts as none).
fn load(config: Option<&PathBuf>) -> Result<Sandbox, SandboxError> {
    let config = config.filter(|p| !p.as_os_str().is_empty());
    Sandbox::load(config.map(PathBuf::as_path))
}

/// The generated command line, with the sandbox loaded from `--config` once the command
/// line is parsed (only for commands that call tools: `serve`, a tool command, `call`,
/// `tools check`).
pub fn app() -> App {
    mcp_toolbelt::cli_app!(ToolRegistry::builder()).setup(|args: SandboxArgs, builder| {
        let sandbox = load(args.config.as_ref()).map_err(|err| {
            format!(
                "cannot set up the sandbox: {err}\n\nAction: {}",
                err.action()
            )
        })?;
        tracing::info!(
            allowed = ?sandbox.allowed_paths(),
            denied = ?sandbox.denied_paths(),
            base_dir = %sandbox.base_dir().display(),
            "sandbox ready"
        );
        Ok(builder.state(sandbox))
    })
}

/// Runs `check-config` when `args` (program name first) ask for it, and returns its exit
/// status; returns `None` for every other command line, which belongs to [`app`].
///
/// `check-config` is recognised as the first word after the program name and any leading
/// `--config FILE` / `-c FILE`.
pub fn check_config(args: impl IntoIterator<Item = OsString>) -> Option<ExitCode> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        match arg.to_str() {
            Some("--config" | "-c") => i += 2,
            Some(a) if a.starts_with("--config=") || (a.starts_with("-c") && a.len() > 2) => i += 1,
            _ => break,
        }
    }
    if args.get(i).and_then(|a| a.to_str()) != Some(CHECK_CONFIG) {
        return None;
    }
    Some(run_check_config(args))
}

/// Parses `[--config FILE] check-config [--config FILE]` and prints the effective sandbox.
fn run_check_config(args: Vec<OsString>) -> ExitCode {
    use mcp_toolbelt::cli::clap::{Arg, Command, value_parser};
    let config = Arg::new("config")
        .long("config")
        .short('c')
        .value_name("FILE")
        .env(CONFIG_ENV)
        .global(true)
        .value_parser(value_parser!(PathBuf))
        .help("Sandbox configuration (TOML). Without it: only the working directory, no commands");
    let command = Command::new(env!("CARGO_PKG_NAME")).arg(config).subcommand(
        Command::new(CHECK_CONFIG)
            .about("Load the sandbox configuration and print the effective sandbox as JSON"),
    );
    let matches = match command.try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    match load(matches.get_one::<PathBuf>("config")) {
        Ok(sandbox) => match serde_json::to_string_pretty(&sandbox.report()) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("error: cannot serialize the sandbox report: {err}");
                ExitCode::FAILURE
            }
        },
        Err(err) => {
            eprintln!("{}", err.to_tool_text());
            ExitCode::FAILURE
        }
    }
}
