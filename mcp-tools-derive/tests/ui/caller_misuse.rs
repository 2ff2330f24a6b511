use mcp_tools::Caller;

/// A borrowed or optional caller is not the `Caller` extractor.
#[mcp_tools::mcp_tool]
async fn whoami(borrowed: &Caller, maybe: Option<Caller>, ctx: Option<mcp_tools::ToolContext>) -> String {
    let _ = (borrowed, maybe, ctx);
    String::new()
}

/// In a prompt too.
#[mcp_tools::mcp_prompt]
async fn greet(caller: Option<mcp_tools::Caller>) -> String {
    let _ = caller;
    String::new()
}
fn main() {}
