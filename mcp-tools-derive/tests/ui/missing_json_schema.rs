/// An argument type without `JsonSchema`.
#[derive(serde::Deserialize)]
struct Filter {
    text: String,
}

/// Search.
#[mcp_toolbelt::mcp_tool]
async fn search(filter: Filter) -> String {
    filter.text
}
fn main() {
    let _ = SEARCH_TOOL;
}
