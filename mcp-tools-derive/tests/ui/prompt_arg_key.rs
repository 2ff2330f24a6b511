/// A schema bound on a prompt argument.
#[mcp_toolbelt::mcp_prompt(name = "count")]
async fn count(#[arg(minimum = 1)] n: u32) -> String {
    format!("Count to {n}.")
}
fn main() {}
