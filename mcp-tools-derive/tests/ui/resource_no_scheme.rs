/// No scheme.
#[mcp_tools::mcp_resource(uri = "motd.txt")]
async fn motd() -> String {
    "hello".into()
}
fn main() {}
