/// Two variables touch.
#[mcp_toolbelt::mcp_resource(uri_template = "demo://{owner}{repo}")]
async fn repo(owner: String, repo: String) -> String {
    format!("{owner}{repo}")
}
fn main() {}
