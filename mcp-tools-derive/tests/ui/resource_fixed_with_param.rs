/// A fixed URI with an argument.
#[mcp_toolbelt::mcp_resource(uri = "demo://motd")]
async fn motd(lang: String) -> String {
    lang
}
fn main() {}
