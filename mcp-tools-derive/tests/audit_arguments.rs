//! `#[arg(audit = "keep")]`, and `audit_keep = [...]` for an `#[args]` struct: the
//! definition lists the argument (by its wire name) as one an audit log may record as it
//! is; the others are not listed.

use mcp_toolbelt::{ToolRegistry, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Deploy somewhere.
#[mcp_tool]
async fn audited_deploy(
    #[arg(audit = "keep")] region: String,
    #[arg(audit = "keep", rename = "prio")] priority: i64,
    password: String,
) -> String {
    format!("{region}|{priority}|{}", password.len())
}

#[test]
fn kept_arguments_are_listed_by_wire_name() {
    let registry = ToolRegistry::builder().build().unwrap();
    let def = registry.get(AUDITED_DEPLOY_TOOL).unwrap();
    assert_eq!(def.audit_kept().collect::<Vec<_>>(), ["region", "prio"]);
}

/// Where to deploy, and with what.
#[derive(Deserialize, JsonSchema)]
struct DeployArgs {
    /// The region
    region: String,
    /// The secret
    password: String,
}

/// Deploy somewhere, arguments in a struct.
#[mcp_tool(audit_keep = ["region"])]
async fn struct_deploy(#[args] args: DeployArgs) -> String {
    format!("{}|{}", args.region, args.password.len())
}

#[test]
fn an_args_struct_keeps_the_fields_audit_keep_names() {
    let registry = ToolRegistry::builder().build().unwrap();
    let def = registry.get(STRUCT_DEPLOY_TOOL).unwrap();
    assert_eq!(def.audit_kept().collect::<Vec<_>>(), ["region"]);
}
