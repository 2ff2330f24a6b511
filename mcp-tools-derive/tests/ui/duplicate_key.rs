/// Duplicate key.
#[mcp_toolbelt::mcp_tool(name = "ping", name = "pong")]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
