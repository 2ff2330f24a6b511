/// A flag key takes no value; a key's value of the wrong kind says how to write it.
#[mcp_toolbelt::mcp_tool(hidden_from_cli = true, title = 5)]
async fn ping() -> String {
    "pong".into()
}
fn main() {}
