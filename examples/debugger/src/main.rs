//! `debugger-mcp`: debug Python programs over MCP and on the command line. See README.md.

fn main() -> std::process::ExitCode {
    debugger_mcp::cli::app().run()
}
