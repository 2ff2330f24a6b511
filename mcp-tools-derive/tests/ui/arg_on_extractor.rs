/// Arg attribute on an extractor.
#[mcp_tools::mcp_tool]
async fn ping(#[arg(desc = "ctx")] ctx: mcp_tools::ToolContext) -> String {
    let _ = ctx;
    "pong".into()
}
fn main() {}
