struct Server;
impl Server {
    /// Takes self.
    #[mcp_toolbelt::mcp_tool]
    async fn ping(&self) -> String {
        "pong".into()
    }
}
fn main() {}
