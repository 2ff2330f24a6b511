/// Not async.
#[mcp_tools::mcp_tool]
fn ping() -> String {
    "pong".into()
}
fn main() {}
