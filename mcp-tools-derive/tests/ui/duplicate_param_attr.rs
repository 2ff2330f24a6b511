/// A parameter attribute given twice.
#[mcp_toolbelt::mcp_tool]
async fn ping(#[arg(desc = "a")] #[arg(rename = "b")] text: String) -> String {
    text
}
fn main() {}
