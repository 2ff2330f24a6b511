/// Headers that cannot be: not a token, empty, twice (ignoring case), on a float, on a list.
#[mcp_toolbelt::mcp_tool]
async fn deploy(
    #[arg(header = "Re gion")] region: String,
    #[arg(header = "")] zone: String,
    #[arg(header = "Tenant")] tenant: String,
    #[arg(header = "TENANT")] owner: String,
    #[arg(header = "Weight")] weight: f64,
    #[arg(header = "Tags")] tags: Vec<String>,
) -> String {
    format!("{region}{zone}{tenant}{owner}{weight}{tags:?}")
}

/// A prompt's arguments have no headers.
#[mcp_toolbelt::mcp_prompt]
async fn greet(#[arg(header = "Who")] who: String) -> String {
    who
}
fn main() {}
