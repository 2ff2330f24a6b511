//! `memo-mcp`: persistent memos as an MCP server and a command line. See README.md.

fn main() -> std::process::ExitCode {
    memo_mcp::cli::app().run()
}
