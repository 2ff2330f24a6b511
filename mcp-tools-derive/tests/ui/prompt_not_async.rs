/// Not async.
#[mcp_toolbelt::mcp_prompt(name = "greet")]
fn greet() -> String {
    "Say hello.".into()
}
fn main() {}
