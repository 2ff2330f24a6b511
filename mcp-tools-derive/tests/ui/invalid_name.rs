/// Space in name.
#[mcp_toolbelt::mcp_tool(name = "ticket get")]
async fn ticket_get() -> String {
    String::new()
}
fn main() {}
