/// Renders the report.
#[mcp_toolbelt::mcp_tool(name = "render", task = "sometimes")]
async fn render() -> String {
    String::new()
}
fn main() {}
