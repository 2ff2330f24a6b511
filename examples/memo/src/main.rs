//! `memo-mcp`: persistent memos as an MCP server and a command line. See README.md.

fn main() -> std::process::ExitCode {
    mcp_tools::cli::run(memo_mcp::cli::app())
}
