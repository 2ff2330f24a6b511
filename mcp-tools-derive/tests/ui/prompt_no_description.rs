#[mcp_toolbelt::mcp_prompt(name = "greet")]
async fn greet() -> String {
    "Say hello.".into()
}
fn main() {}
