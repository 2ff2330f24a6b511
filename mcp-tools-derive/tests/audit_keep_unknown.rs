//! `audit_keep` naming a field the `#[args]` struct does not have: the registry refuses to
//! build, naming the tool and the key (its own test binary, as every tool of a binary
//! registers at link time).

use mcp_toolbelt::{ToolRegistry, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Where to deploy.
#[derive(Deserialize, JsonSchema)]
struct DeployArgs {
    /// The region
    region: String,
}

/// Deploy somewhere.
#[mcp_tool(audit_keep = ["regoin"])]
async fn misspelt_deploy(#[args] args: DeployArgs) -> String {
    args.region
}

#[test]
fn a_name_the_schema_lacks_fails_the_build() {
    let problem = ToolRegistry::builder().build().unwrap_err().to_string();
    assert!(problem.contains(MISSPELT_DEPLOY_TOOL), "{problem}");
    assert!(problem.contains("audit_keep"), "{problem}");
    assert!(problem.contains("regoin"), "{problem}");
}
