/// A parameter the template lacks.
#[mcp_toolbelt::mcp_resource(uri_template = "demo://pages/{name}")]
async fn page(name: String, version: u32) -> String {
    format!("{name}@{version}")
}
fn main() {}
