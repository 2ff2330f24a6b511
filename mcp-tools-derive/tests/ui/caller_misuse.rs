use mcp_toolbelt::Caller;

/// A borrowed or optional caller is not the `Caller` extractor.
#[mcp_toolbelt::mcp_tool]
async fn whoami(borrowed: &Caller, maybe: Option<Caller>, ctx: Option<mcp_toolbelt::ToolContext>) -> String {
    let _ = (borrowed, maybe, ctx);
    String::new()
}

/// In a prompt too.
#[mcp_toolbelt::mcp_prompt]
async fn greet(caller: Option<mcp_toolbelt::Caller>) -> String {
    let _ = caller;
    String::new()
}
fn main() {}
