//! The protocol boundary: this crate's model types to rmcp's, and back where a request
//! carries them. Lists convert once per page; results once per call, moving their strings.

use rmcp::model as wire;

use crate::definition::prompt::{PromptArgument, PromptDef};
use crate::definition::resource::{ResourceAddress, ResourceDef};
use crate::definition::tool::{ToolAnnotations, ToolDef};
use crate::output::content::{Content, ContentBlock};
use crate::output::prompt_messages::{PromptMessage, PromptResult, Role};
use crate::output::resource_content::ResourceContent;
use crate::output::result::ToolResult;

/// The `tools/list` entry of a definition (names, schemas and descriptions are shared, not
/// copied: `Cow` and `Arc` clones).
pub(crate) fn tool(def: &ToolDef) -> wire::Tool {
    let mut tool = wire::Tool::new_with_raw(
        def.name.clone(),
        Some(def.description.clone()),
        def.input_schema.clone(),
    );
    tool.title = def.title.as_ref().map(|t| t.to_string());
    tool.output_schema = def.output_schema.clone();
    if def.annotations != ToolAnnotations::default() {
        let a = def.annotations;
        tool.annotations = Some(wire::ToolAnnotations::from_raw(
            None,
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ));
    }
    tool
}

/// The `tools/call` result.
pub(crate) fn call_result(result: ToolResult) -> wire::CallToolResult {
    let (content, structured, is_error) = result.into_parts();
    let content = content.into_iter().map(content_block).collect();
    let mut call = if is_error {
        wire::CallToolResult::error(content)
    } else {
        wire::CallToolResult::success(content)
    };
    call.structured_content = structured;
    call
}

pub(crate) fn content_block(block: ContentBlock) -> wire::ContentBlock {
    match block.body {
        Content::Text(text) => wire::ContentBlock::text(text),
        Content::Image { data, mime_type } => wire::ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => wire::ContentBlock::audio(data, mime_type),
        Content::Resource(contents) => wire::ContentBlock::resource(resource_contents(contents)),
        Content::ResourceLink(link) => {
            wire::ContentBlock::resource_link(wire::Resource::new(link.uri, link.name))
        }
    }
}

/// Contents as `resources/read` (or an embedded resource) carries them.
pub(crate) fn resource_contents(contents: ResourceContent) -> wire::ResourceContents {
    let blob = contents.blob_base64();
    let mime = contents.mime_type().map(str::to_string);
    let uri = contents.uri().unwrap_or_default().to_string();
    let wire = match blob {
        Some(blob) => wire::ResourceContents::blob(blob, uri),
        None => wire::ResourceContents::text(contents.as_text().unwrap_or_default(), uri),
    };
    match mime {
        Some(mime) => wire.with_mime_type(mime),
        None => wire,
    }
}

/// The `resources/list` entry of a fixed-URI resource.
pub(crate) fn resource(def: &ResourceDef) -> Option<wire::Resource> {
    let ResourceAddress::Fixed(uri) = def.address() else {
        return None;
    };
    let mut resource =
        wire::Resource::new(uri.clone(), def.name()).with_description(def.description());
    resource.title = def.title().map(str::to_string);
    resource.mime_type = def.mime_type().map(str::to_string);
    Some(resource)
}

/// The `resources/templates/list` entry of a resource template.
pub(crate) fn resource_template(def: &ResourceDef) -> Option<wire::ResourceTemplate> {
    let ResourceAddress::Template(template) = def.address() else {
        return None;
    };
    let mut entry = wire::ResourceTemplate::new(template.as_str(), def.name())
        .with_description(def.description());
    entry.title = def.title().map(str::to_string);
    entry.mime_type = def.mime_type().map(str::to_string);
    Some(entry)
}

/// The `prompts/list` entry.
pub(crate) fn prompt(def: &PromptDef) -> wire::Prompt {
    let arguments = (!def.arguments().is_empty())
        .then(|| def.arguments().iter().map(prompt_argument).collect());
    let mut prompt = wire::Prompt::new(def.name(), Some(def.description()), arguments);
    prompt.title = def.title().map(str::to_string);
    prompt
}

fn prompt_argument(argument: &PromptArgument) -> wire::PromptArgument {
    let mut wire = wire::PromptArgument::new(argument.name()).with_required(argument.required());
    if let Some(title) = argument.title() {
        wire = wire.with_title(title);
    }
    if let Some(description) = argument.description() {
        wire = wire.with_description(description);
    }
    wire
}

/// The `prompts/get` result.
pub(crate) fn prompt_result(result: PromptResult) -> wire::GetPromptResult {
    let (description, messages) = result.into_parts();
    let messages = messages.into_iter().map(prompt_message).collect();
    let result = wire::GetPromptResult::new(messages);
    match description {
        Some(description) => result.with_description(description),
        None => result,
    }
}

fn prompt_message(message: PromptMessage) -> wire::PromptMessage {
    let (role, content) = message.into_parts();
    let role = match role {
        Role::User => wire::Role::User,
        Role::Assistant => wire::Role::Assistant,
    };
    wire::PromptMessage::new(role, content_block(content))
}
