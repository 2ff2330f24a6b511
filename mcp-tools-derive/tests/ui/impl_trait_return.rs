/// Returns impl Trait.
#[mcp_tools::mcp_tool]
async fn text() -> impl Into<String> {
    "x"
}
fn main() {}
