/// Returns a number.
#[mcp_toolbelt::mcp_resource(uri = "demo://count")]
async fn count() -> u64 {
    7
}
fn main() {}
