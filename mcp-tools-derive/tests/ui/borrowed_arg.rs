#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    text: String,
}

/// Borrowed arguments cannot be filled from a request.
#[mcp_toolbelt::mcp_tool]
async fn search(text: &str, filter: &Filter, ids: &[u32]) -> String {
    format!("{text}{}{ids:?}", filter.text)
}
fn main() {}
