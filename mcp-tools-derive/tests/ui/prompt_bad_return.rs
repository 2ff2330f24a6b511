/// Returns a number.
#[mcp_toolbelt::mcp_prompt(name = "answer")]
async fn answer() -> u64 {
    42
}
fn main() {}
