//! `#[arg(header = "Name")]` (SEP-2243): the argument's schema carries
//! `"x-mcp-header": "Name"`; an `Option` argument's type loses `null` (clients refuse a
//! nullable annotated property) and stays optional; the tool is called as usual.

use mcp_toolbelt::{ToolContext, ToolRegistry, mcp_tool};
use serde_json::{Value, json};

/// Where to deploy.
#[derive(serde::Deserialize, schemars::JsonSchema, Debug)]
enum Tier {
    Gold,
    Silver,
}

/// Deploy somewhere.
#[mcp_tool]
async fn headers_deploy(
    #[arg(header = "Region")] region: String,
    #[arg(header = "Priority", rename = "prio")] priority: i64,
    #[arg(header = "Dry-Run")] dry_run: bool,
    #[arg(header = "Zone")] zone: Option<String>,
    #[arg(header = "Tier")] tier: Option<Tier>,
    #[arg(header = "Team", default = "core".to_string())] team: String,
    note: Option<String>,
) -> String {
    format!("{region}|{priority}|{dry_run}|{zone:?}|{tier:?}|{team}|{note:?}")
}

#[tokio::test]
async fn header_arguments_are_annotated_and_called_as_usual() {
    let registry = ToolRegistry::builder().build().unwrap();
    let def = registry.get(HEADERS_DEPLOY_TOOL).unwrap();
    let schema = Value::Object((**def.input_schema()).clone());
    let properties = &schema["properties"];
    assert_eq!(schema["required"], json!(["region", "prio"]), "{schema}");
    assert_eq!(properties["region"]["x-mcp-header"], "Region", "{schema}");
    assert_eq!(properties["region"]["type"], "string");
    assert_eq!(properties["prio"]["x-mcp-header"], "Priority");
    assert_eq!(properties["prio"]["type"], "integer");
    assert_eq!(properties["dry_run"]["x-mcp-header"], "Dry-Run");
    assert_eq!(properties["dry_run"]["type"], "boolean");
    assert_eq!(properties["zone"]["x-mcp-header"], "Zone");
    assert_eq!(
        properties["zone"]["type"], "string",
        "not nullable: {schema}"
    );
    assert_eq!(properties["tier"]["x-mcp-header"], "Tier");
    assert_eq!(
        properties["tier"]["type"], "string",
        "not nullable: {schema}"
    );
    assert_eq!(
        properties["tier"]["enum"],
        json!(["Gold", "Silver"]),
        "{schema}"
    );
    assert_eq!(properties["team"]["x-mcp-header"], "Team");
    assert_eq!(properties["team"]["default"], "core");
    assert!(properties["note"].get("x-mcp-header").is_none());
    assert_eq!(properties["note"]["type"], json!(["string", "null"]));

    let result = registry
        .call_tool(
            HEADERS_DEPLOY_TOOL,
            json!({"region": "eu", "prio": 2, "zone": "a", "tier": "Gold"}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        result.text_content(),
        "eu|2|false|Some(\"a\")|Some(Gold)|core|None"
    );
    // The argument is optional, and a value or absent: `null` is refused.
    let result = registry
        .call_tool(
            HEADERS_DEPLOY_TOOL,
            json!({"region": "eu", "prio": 2, "zone": null}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert!(result.is_error(), "{}", result.text_content());
}
