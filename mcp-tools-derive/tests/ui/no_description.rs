#[mcp_toolbelt::mcp_tool(name = "ping")]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
