/// A structured result type without `JsonSchema`.
#[derive(serde::Serialize)]
struct Summary {
    count: u32,
}

/// Summarize.
#[mcp_toolbelt::mcp_tool]
async fn summarize() -> mcp_toolbelt::Json<Summary> {
    mcp_toolbelt::Json(Summary { count: 1 })
}
fn main() {}
