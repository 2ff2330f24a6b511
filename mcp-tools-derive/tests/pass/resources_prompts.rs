use mcp_toolbelt::definition::{Completion, CompletionRequest};
use mcp_toolbelt::output::{PromptMessage, ResourceContent, Role};
use mcp_toolbelt::{Json, State, ToolContext, ToolError, mcp_prompt, mcp_resource};

struct Wiki;

const WIKI_VIEW: &str = "WIKI_VIEW";

async fn page_names(request: CompletionRequest, _ctx: ToolContext) -> Completion {
    Completion::matching(["WikiStart", "Guide"], &request.value)
}

async fn cities(_request: CompletionRequest, _ctx: ToolContext) -> Result<Vec<String>, ToolError> {
    Ok(vec!["Paris".to_string()])
}

/// A fixed URI with every key.
#[mcp_resource(
    uri = "demo://motd",
    name = "motd",
    title = "Message of the day",
    mime_type = "text/plain",
    permissions = [WIKI_VIEW],
)]
async fn motd(_wiki: State<Wiki>, _ctx: ToolContext) -> &'static str {
    "hello"
}

/// A template with a reserved variable, a typed variable and a completion fn.
#[mcp_resource(
    uri_template = "demo://wiki/{version}/{+name}",
    description = "A wiki page at a version",
    complete(name = page_names),
)]
async fn page(
    _wiki: State<Wiki>,
    version: u32,
    #[arg(rename = "name")] page_name: String,
) -> Result<Vec<ResourceContent>, ToolError> {
    Ok(vec![ResourceContent::text(format!("{page_name}@{version}"))])
}

/// Binary and JSON returns.
#[mcp_resource(uri = "demo://logo")]
async fn logo() -> Vec<u8> {
    vec![1, 2, 3]
}

/// JSON.
#[mcp_resource(uri_template = "demo://items/{id}")]
async fn item(id: String) -> Json<Vec<String>> {
    Json(vec![id])
}

/// A prompt with every key and argument form.
#[mcp_prompt(
    name = "weather",
    title = "Weather",
    permissions = ["WEATHER"],
    complete(city = cities),
)]
async fn weather(
    _ctx: ToolContext,
    /// The city
    city: String,
    #[arg(desc = "Days ahead", default = 1)] days: u8,
    #[arg(rename = "unitSystem")] unit_system: Option<String>,
    #[arg(default = "short")] style: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new_text(
            Role::User,
            format!("{city} in {days} days ({unit_system:?}, {style})"),
        ),
        PromptMessage::new_text(Role::Assistant, "Checking."),
    ]
}

/// A dotted prompt name is fine (prompts are not function-calling names).
#[mcp_prompt(name = "review.diff", description = "Review a diff")]
async fn review() -> Result<String, ToolError> {
    Ok("Review this.".into())
}

fn main() {
    let _ = (MOTD_RESOURCE, PAGE_RESOURCE, LOGO_RESOURCE, ITEM_RESOURCE);
    let _ = (WEATHER_PROMPT, REVIEW_DIFF_PROMPT);
    assert_eq!(PAGE_RESOURCE, "demo://wiki/{version}/{+name}");
}
