//! `trac-mcp`: an MCP server (and command line) for Trac. See README.md.

fn main() -> std::process::ExitCode {
    trac_mcp::cli::app().run()
}
