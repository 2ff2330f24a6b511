/// Returns a number.
#[mcp_tools::mcp_resource(uri = "demo://count")]
async fn count() -> u64 {
    7
}
fn main() {}
