use mcp_tools::{Json, State, ToolContext, ToolError, ToolRegistry, mcp_tool};

struct Counter(u32);

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: i64,
}

/// Add two numbers.
#[mcp_tool(name = "math_add", read_only, tags = ["math"])]
async fn add(
    /// First addend
    a: i64,
    #[arg(desc = "Second addend", minimum = -100, maximum = 100)] b: i64,
    #[arg(default = 1)] times: i64,
    counter: State<Counter>,
) -> Result<Json<Sum>, ToolError> {
    Ok(Json(Sum {
        total: (a + b) * times + counter.0.0 as i64,
    }))
}

#[tokio::test]
async fn smoke() {
    let registry = ToolRegistry::builder().state(Counter(0)).build().unwrap();
    let tools = registry.list_tools();
    let tool = tools.iter().find(|t| t.name == "math_add").unwrap();
    println!("{}", serde_json::to_string_pretty(&tool).unwrap());
    let r = registry
        .call_tool(
            ADD_TOOL,
            serde_json::json!({"a": 2, "b": 3}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    println!("{r:?}");
    let r = registry
        .call_tool(
            "math_add",
            serde_json::json!({"a": "x", "b": 300, "zz": 1}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    println!("{}", r.text_content());
}
