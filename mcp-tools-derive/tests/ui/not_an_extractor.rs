/// A user's own generic `State<T>` written bare is taken as `mcp_toolbelt::State`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct State<T> {
    value: T,
}

/// Show.
#[mcp_toolbelt::mcp_tool]
async fn show(state: State<u32>) -> String {
    state.value.to_string()
}
fn main() {}
