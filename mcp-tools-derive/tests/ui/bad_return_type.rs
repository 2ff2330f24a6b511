/// Returns a type that is not a tool result.
#[mcp_toolbelt::mcp_tool]
async fn count() -> u64 {
    3
}
fn main() {}
