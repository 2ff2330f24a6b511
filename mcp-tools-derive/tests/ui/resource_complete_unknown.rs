use mcp_tools::definition::CompletionRequest;
use mcp_tools::ToolContext;

async fn names(_request: CompletionRequest, _ctx: ToolContext) -> Vec<String> {
    Vec::new()
}

/// Completes a variable the template lacks.
#[mcp_tools::mcp_resource(uri_template = "demo://pages/{name}", complete(title = names))]
async fn page(name: String) -> String {
    name
}
fn main() {}
