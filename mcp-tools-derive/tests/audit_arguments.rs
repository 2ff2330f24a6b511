//! `#[arg(audit = "keep")]`: the definition lists the argument (by its wire name) as one
//! an audit log may record as it is; the others are not listed.

use mcp_toolbelt::{ToolRegistry, mcp_tool};

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
