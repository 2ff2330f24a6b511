/// An error type with no conversion into `ToolError`.
#[derive(Debug)]
struct Broken;

/// Fail.
#[mcp_toolbelt::mcp_tool]
async fn fail() -> Result<String, Broken> {
    Err(Broken)
}
fn main() {}
