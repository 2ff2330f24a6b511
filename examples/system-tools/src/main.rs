//! `system-tools-mcp`: seed 001's system tools behind a sandbox, as an MCP server and a
//! command line. See README.md.

fn main() -> std::process::ExitCode {
    // Inside a command's namespaces, this binary is the launcher (it never returns then).
    system_tools_mcp::sandbox::launch::run_if_launcher();
    if let Some(status) = system_tools_mcp::cli::check_config(std::env::args_os()) {
        return status;
    }
    system_tools_mcp::cli::app().run()
}
