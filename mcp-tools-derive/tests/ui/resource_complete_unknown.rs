use mcp_toolbelt::definition::CompletionRequest;
use mcp_toolbelt::ToolContext;

async fn names(_request: CompletionRequest, _ctx: ToolContext) -> Vec<String> {
    Vec::new()
}

/// Completes a variable the template lacks.
#[mcp_toolbelt::mcp_resource(uri_template = "demo://pages/{name}", complete(title = names))]
async fn page(name: String) -> String {
    name
}
fn main() {}
