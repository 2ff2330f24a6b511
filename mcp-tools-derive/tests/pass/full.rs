use mcp_toolbelt::{Json, State, ToolContext, ToolError, mcp_tool};

struct Db;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Row {
    id: u32,
}

const VIEW: &str = "ROW_VIEW";

/// Every key at once.
#[mcp_tool(
    name = "row_get",
    title = "Get a row",
    permissions = [VIEW, "ROW_READ"],
    category = "rows",
    tags = ["db", "read"],
    read_only,
    idempotent,
    open_world,
    timeout_ms = 5000,
    max_concurrency = 4,
    cli_category = "row",
    cli_name = "get",
)]
async fn row_get(
    _db: State<Db>,
    ctx: ToolContext,
    /// Row id
    #[arg(minimum = 1)]
    id: u32,
    #[arg(default = 10, desc = "Limit", rename = "max")] limit: u32,
    mut note: Option<String>,
) -> Result<Json<Row>, ToolError> {
    let _ = (ctx, limit, note.take());
    Ok(Json(Row { id }))
}

/// Dotted names are allowed with the opt-in.
#[mcp_tool(name = "rows.count", nonportable_name, hidden_from_cli, destructive = false, read_only = false)]
async fn rows_count() {}

fn main() {
    let _ = (ROW_GET_TOOL, ROWS_COUNT_TOOL);
}
