use mcp_toolbelt::definition::CompletionRequest;
use mcp_toolbelt::ToolContext;

async fn cities(_request: CompletionRequest, _ctx: ToolContext) -> u32 {
    3
}

/// A completion fn returning the wrong type.
#[mcp_toolbelt::mcp_prompt(name = "weather", complete(city = cities))]
async fn weather(city: String) -> String {
    format!("Weather in {city}?")
}
fn main() {}
