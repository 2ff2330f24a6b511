/// Not async.
#[mcp_tools::mcp_prompt(name = "greet")]
fn greet() -> String {
    "Say hello.".into()
}
fn main() {}
