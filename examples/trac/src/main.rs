//! `trac-mcp`: an MCP server (and command line) for Trac. See README.md.

fn main() -> std::process::ExitCode {
    mcp_tools::cli::run(trac_mcp::cli::app())
}
