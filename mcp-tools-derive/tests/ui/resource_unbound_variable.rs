/// A variable without a parameter.
#[mcp_toolbelt::mcp_resource(uri_template = "demo://{owner}/{repo}")]
async fn repo(owner: String) -> String {
    owner
}
fn main() {}
