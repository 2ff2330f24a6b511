/// An argument type without `Deserialize`.
#[derive(schemars::JsonSchema)]
struct Filter {
    text: String,
}

/// Search.
#[mcp_toolbelt::mcp_tool]
async fn search(filter: Filter) -> String {
    filter.text
}
fn main() {}
