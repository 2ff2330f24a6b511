/// Not async.
#[mcp_toolbelt::mcp_tool]
fn ping() -> String {
    "pong".into()
}
fn main() {}
