use mcp_tools::definition::CompletionRequest;
use mcp_tools::ToolContext;

async fn cities(_request: CompletionRequest, _ctx: ToolContext) -> u32 {
    3
}

/// A completion fn returning the wrong type.
#[mcp_tools::mcp_prompt(name = "weather", complete(city = cities))]
async fn weather(city: String) -> String {
    format!("Weather in {city}?")
}
fn main() {}
