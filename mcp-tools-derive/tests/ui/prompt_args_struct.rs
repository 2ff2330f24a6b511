#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    topic: String,
}

/// An #[args] struct on a prompt.
#[mcp_toolbelt::mcp_prompt(name = "essay")]
async fn essay(#[args] args: Args) -> String {
    args.topic
}
fn main() {}
