//! The prompts of the `prompts-*` and `completion-complete` scenarios.

use mcp_toolbelt::definition::{Completion, CompletionRequest};
use mcp_toolbelt::output::{PromptMessage, ResourceContent, Role};
use mcp_toolbelt::{ContentBlock, ToolContext, mcp_prompt};

use crate::media;

/// A simple prompt without arguments.
#[mcp_prompt(name = "test_simple_prompt")]
async fn simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// Suggestions for `arg1`: the words starting with what was typed.
async fn complete_arg1(request: CompletionRequest, _ctx: ToolContext) -> Completion {
    Completion::matching(["paris", "park", "party"], &request.value)
}

/// A prompt with two required arguments, substituted into its text.
#[mcp_prompt(name = "test_prompt_with_arguments", complete(arg1 = complete_arg1))]
async fn prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt embedding the resource it is given.
#[mcp_prompt(name = "test_prompt_with_embedded_resource")]
async fn prompt_with_embedded_resource(
    #[arg(rename = "resourceUri", desc = "URI of the resource to embed")] resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            ContentBlock::resource(
                ResourceContent::text("Embedded resource content for testing.")
                    .with_uri(resource_uri),
            ),
        ),
        PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[mcp_prompt(name = "test_prompt_with_image")]
async fn prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            ContentBlock::image(media::base64(media::PNG), "image/png"),
        ),
        PromptMessage::new_text(Role::User, "Please analyze the image above."),
    ]
}
