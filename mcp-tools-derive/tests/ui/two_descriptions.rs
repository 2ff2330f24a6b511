/// Doc.
#[mcp_tools::mcp_tool(description = "one", description_file = "two.md")]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
