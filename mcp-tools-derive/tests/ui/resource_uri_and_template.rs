/// Both addresses.
#[mcp_toolbelt::mcp_resource(uri = "demo://a", uri_template = "demo://{id}")]
async fn page(id: String) -> String {
    id
}
fn main() {}
