/// Unknown key.
#[mcp_toolbelt::mcp_tool(name = "ping", permision = ["X"])]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
