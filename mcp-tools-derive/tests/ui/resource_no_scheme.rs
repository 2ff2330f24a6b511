/// No scheme.
#[mcp_toolbelt::mcp_resource(uri = "motd.txt")]
async fn motd() -> String {
    "hello".into()
}
fn main() {}
