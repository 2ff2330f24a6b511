/// `audit_keep` names fields of an #[args] struct; plain parameters are marked one by one.
#[mcp_toolbelt::mcp_tool(audit_keep = ["region"])]
async fn deploy(region: String) -> String {
    region
}

/// A resource has no arguments to keep.
#[mcp_toolbelt::mcp_resource(uri = "mem://notes", audit_keep = ["x"])]
async fn notes() -> String {
    String::new()
}

fn main() {}
