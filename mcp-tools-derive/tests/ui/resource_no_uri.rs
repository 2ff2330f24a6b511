/// No address.
#[mcp_toolbelt::mcp_resource(name = "motd")]
async fn motd() -> String {
    "hello".into()
}
fn main() {}
