/// A tool key on a prompt.
#[mcp_toolbelt::mcp_prompt(name = "greet", read_only)]
async fn greet() -> String {
    "Say hello.".into()
}
fn main() {}
