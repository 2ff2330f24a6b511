/// Returns impl Trait.
#[mcp_toolbelt::mcp_tool]
async fn text() -> impl Into<String> {
    "x"
}
fn main() {}
