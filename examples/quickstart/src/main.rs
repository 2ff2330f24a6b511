//! `quickstart-mcp`: the smallest real mcp-toolbelt server. See README.md.
//!
//! The command line is the one `mcp_toolbelt::cli` generates from the registry:
//! `quickstart-mcp serve [--stdio | --http ADDR | --tcp ADDR] …`, one command per tool,
//! `tools list`, `call` (see `quickstart-mcp --help`).

mod tools;

use std::process::ExitCode;
use std::sync::Arc;

use mcp_toolbelt::ToolRegistry;

use tools::{Counter, RegistryHandle, SlowRuns};

fn main() -> ExitCode {
    // `tool_toggle` reaches the registry it belongs to through this handle, filled in
    // once the command line has built the registry.
    let handle = Arc::new(RegistryHandle::default());
    let builder = ToolRegistry::builder()
        .state(Counter::default())
        .state(SlowRuns::default())
        .state_arc(handle.clone());
    mcp_toolbelt::cli_app!(builder)
        .on_built(move |registry| handle.set(registry.clone()))
        .run()
}
