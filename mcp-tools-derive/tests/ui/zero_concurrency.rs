/// Zero concurrency.
#[mcp_toolbelt::mcp_tool(max_concurrency = 0)]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
