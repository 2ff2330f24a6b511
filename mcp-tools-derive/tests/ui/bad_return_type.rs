/// Returns a type that is not a tool result.
#[mcp_tools::mcp_tool]
async fn count() -> u64 {
    3
}
fn main() {}
