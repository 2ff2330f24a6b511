/// Searches.
#[mcp_toolbelt::mcp_tool(name = "search", rate = "10 per second")]
async fn search() -> String {
    String::new()
}

/// Exports.
#[mcp_toolbelt::mcp_tool(name = "export", rate = "0/min")]
async fn export() -> String {
    String::new()
}

/// Imports.
#[mcp_toolbelt::mcp_tool(name = "import", rate = "5/s burst 0")]
async fn import() -> String {
    String::new()
}

/// Syncs.
#[mcp_toolbelt::mcp_tool(name = "sync", rate = 10)]
async fn sync() -> String {
    String::new()
}
fn main() {}
