/// No address.
#[mcp_tools::mcp_resource(name = "motd")]
async fn motd() -> String {
    "hello".into()
}
fn main() {}
