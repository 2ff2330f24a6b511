/// `audit` takes "keep" and nothing else.
#[mcp_toolbelt::mcp_tool]
async fn deploy(
    #[arg(audit = "keep")] region: String,
    #[arg(audit = "drop")] token: String,
    #[arg(audit = "Keep")] zone: String,
) -> String {
    format!("{region}{token}{zone}")
}

/// A prompt's arguments are not audited field by field.
#[mcp_toolbelt::mcp_prompt]
async fn greet(#[arg(audit = "keep")] who: String) -> String {
    who
}
fn main() {}
