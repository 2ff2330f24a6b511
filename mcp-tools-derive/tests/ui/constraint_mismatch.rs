/// Constraints that do not fit the argument's type.
#[mcp_toolbelt::mcp_tool]
async fn search(
    #[arg(minimum = 3)] text: String,
    #[arg(max_length = 10)] count: u32,
    #[arg(pattern = "^[0-9]+$")] offset: Option<i64>,
    #[arg(min_items = 1, maximum = 5)] tags: Vec<String>,
    #[arg(min_length = 1)] exact: bool,
) -> String {
    format!("{text}{count}{offset:?}{tags:?}{exact}")
}
fn main() {}
