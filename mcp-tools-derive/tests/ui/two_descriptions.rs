/// Doc.
#[mcp_toolbelt::mcp_tool(description = "one", description_file = "two.md")]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
