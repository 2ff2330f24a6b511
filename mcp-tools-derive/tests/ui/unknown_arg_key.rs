/// Unknown arg key.
#[mcp_toolbelt::mcp_tool]
async fn echo(#[arg(descr = "text")] text: String) -> String {
    text
}
fn main() {}
