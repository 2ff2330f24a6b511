/// Arg attribute on an extractor.
#[mcp_toolbelt::mcp_tool]
async fn ping(#[arg(desc = "ctx")] ctx: mcp_toolbelt::ToolContext) -> String {
    let _ = ctx;
    "pong".into()
}
fn main() {}
