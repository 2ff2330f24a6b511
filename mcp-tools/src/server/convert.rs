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

/// The `tools/list` entry of a definition (schemas and descriptions are shared, not
/// copied: `Cow` and `Arc` clones; the name is copied into rmcp's `Cow`). A page is
/// converted once per registry version and view, then served from the page cache.
pub(crate) fn tool(def: &ToolDef) -> wire::Tool {
    let mut tool = wire::Tool::new_with_raw(
        def.name.to_string(),
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

/// Contents as `resources/read` (or an embedded resource) carries them: the MIME type as
/// the contents have it (rmcp's `ResourceContents::text` would add `text/plain`).
pub(crate) fn resource_contents(contents: ResourceContent) -> wire::ResourceContents {
    let mime_type = contents.mime_type().map(str::to_string);
    let uri = contents.uri().unwrap_or_default().to_string();
    match contents.blob_base64() {
        Some(blob) => wire::ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            meta: None,
        },
        None => wire::ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: contents.as_text().unwrap_or_default().to_string(),
            meta: None,
        },
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

/// Back from the wire: what a client receives, as the crate's model types (the in-process
/// test client, `crate::testing`). A tool's error result gets its kind back from the
/// `Error (kind): …` text the server wrote.
#[cfg(feature = "testing")]
pub(crate) mod received {
    use base64::Engine as _;
    use rmcp::model as wire;

    use crate::output::content::{Content, ContentBlock, ResourceLink};
    use crate::output::error::ErrorKind;
    use crate::output::prompt_messages::{PromptMessage, PromptResult, Role};
    use crate::output::resource_content::ResourceContent;
    use crate::output::result::ToolResult;

    /// A `tools/call` result. An error result whose text names no kind is `internal_error`.
    pub(crate) fn call_result(call: wire::CallToolResult) -> Result<ToolResult, String> {
        let content = call
            .content
            .into_iter()
            .map(content_block)
            .collect::<Result<Vec<_>, _>>()?;
        let error_kind = call.is_error.unwrap_or(false).then(|| {
            content
                .iter()
                .find_map(ContentBlock::as_text)
                .and_then(ErrorKind::of_rendered)
                .unwrap_or(ErrorKind::Internal)
        });
        Ok(ToolResult::from_parts(
            content,
            call.structured_content,
            error_kind,
        ))
    }

    /// One content block of a result or a prompt message.
    pub(crate) fn content_block(block: wire::ContentBlock) -> Result<ContentBlock, String> {
        let body = match block {
            wire::ContentBlock::Text(text) => Content::Text(text.text),
            wire::ContentBlock::Image(image) => Content::Image {
                data: image.data,
                mime_type: image.mime_type,
            },
            wire::ContentBlock::Audio(audio) => Content::Audio {
                data: audio.data,
                mime_type: audio.mime_type,
            },
            wire::ContentBlock::Resource(embedded) => {
                Content::Resource(resource_contents(embedded.resource)?)
            }
            wire::ContentBlock::ResourceLink(link) => Content::ResourceLink(ResourceLink {
                uri: link.uri,
                name: link.name,
            }),
            other => return Err(format!("a content block of an unknown kind: {other:?}")),
        };
        Ok(ContentBlock { body })
    }

    /// Contents as `resources/read` or an embedded resource carries them.
    pub(crate) fn resource_contents(
        contents: wire::ResourceContents,
    ) -> Result<ResourceContent, String> {
        let (uri, mime_type, contents) = match contents {
            wire::ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => (uri, mime_type, ResourceContent::text(text)),
            wire::ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|e| format!("the blob of {uri} is not base64: {e}"))?;
                (uri, mime_type, ResourceContent::blob(bytes))
            }
            other => return Err(format!("resource contents of an unknown kind: {other:?}")),
        };
        let contents = contents.with_uri(uri);
        Ok(match mime_type {
            Some(mime_type) => contents.with_mime_type(mime_type),
            None => contents,
        })
    }

    /// A `prompts/get` result.
    pub(crate) fn prompt_result(result: wire::GetPromptResult) -> Result<PromptResult, String> {
        let messages = result
            .messages
            .into_iter()
            .map(|message| {
                let role = match message.role {
                    wire::Role::User => Role::User,
                    wire::Role::Assistant => Role::Assistant,
                };
                Ok(PromptMessage::new(role, content_block(message.content)?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let prompt = PromptResult::new(messages);
        Ok(match result.description {
            Some(description) => prompt.with_description(description),
            None => prompt,
        })
    }
}

/// The crate's model types serialize to their MCP wire form themselves (for the command
/// line, logs and users' own transports); the server sends rmcp's types made here. The
/// two must be the same JSON, for every type and every optional part.
#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::output::error::ToolError;

    /// `ours` and `wire` serialize alike, but for the result's `resultType`, which rmcp
    /// adds to every result it sends (the 2026-07-28 envelope) and which is the
    /// protocol's, not the model's.
    fn same(ours: &impl Serialize, wire: &impl Serialize) {
        let ours = serde_json::to_value(ours).unwrap();
        let mut wire = serde_json::to_value(wire).unwrap();
        if let Some(wire) = wire.as_object_mut() {
            wire.remove("resultType");
        }
        assert_eq!(
            ours, wire,
            "our serialization differs from the one the server sends"
        );
    }

    fn tool_def(
        build: impl FnOnce(
            crate::definition::tool::ToolDefBuilder,
        ) -> crate::definition::tool::ToolDefBuilder,
    ) -> ToolDef {
        let builder = ToolDef::builder("ticket_make")
            .description("Make a ticket")
            .input_schema(json!({"type": "object", "properties": {"title": {"type": "string"}}}))
            .handler(|_args, _ctx| async { Ok(ToolResult::text("made")) });
        build(builder).build().unwrap()
    }

    #[test]
    fn tool_definitions() {
        let output = json!({"type": "object", "properties": {"id": {"type": "integer"}}});
        let Value::Object(output) = output else {
            unreachable!()
        };
        for def in [
            tool_def(|b| b),
            tool_def(|b| b.title("Make").output_schema(Some(output.clone()))),
            tool_def(|b| b.read_only(true).open_world(false)),
            tool_def(|b| b.destructive(true).idempotent(true).title("All")),
        ] {
            same(&def, &tool(&def));
        }
    }

    #[test]
    fn tool_results_and_content() {
        let error = ToolError::not_found("no ticket 7").with_action("List tickets first.");
        for result in [
            ToolResult::text("hello"),
            ToolResult::json(&json!({"id": 7})).unwrap(),
            ToolResult::error(&error, Some("ticket")),
            ToolResult::empty(),
            ToolResult::image("aGk=", "image/png")
                .with(ContentBlock::audio("aGk=", "audio/wav"))
                .with(ContentBlock::resource_link("demo://a", "a"))
                .with(ContentBlock::embedded_text("demo://b", "bee"))
                .with(ContentBlock::resource(
                    ResourceContent::blob(vec![0, 1, 2])
                        .with_uri("demo://c")
                        .with_mime_type("application/octet-stream"),
                ))
                .with_structured(json!({"n": 1})),
        ] {
            same(&result, &call_result(result.clone()));
            #[cfg(feature = "testing")]
            {
                // What a client receives reads back as what the tool returned.
                let received = received::call_result(call_result(result.clone())).unwrap();
                assert_eq!(
                    serde_json::to_value(&received).unwrap(),
                    serde_json::to_value(&result).unwrap()
                );
                assert_eq!(received.error_kind(), result.error_kind());
            }
        }
    }

    #[test]
    fn resource_contents_and_definitions() {
        for contents in [
            ResourceContent::text("hi").with_uri("demo://t"),
            ResourceContent::text("hi")
                .with_uri("demo://t")
                .with_mime_type("text/plain"),
            ResourceContent::blob(b"bytes".to_vec()).with_uri("demo://b"),
        ] {
            same(&contents, &resource_contents(contents.clone()));
        }
        let fixed = ResourceDef::fixed("demo://motd")
            .name("motd")
            .description("Message of the day")
            .handler(|_request, _ctx| async { Ok(vec![ResourceContent::text("Hello")]) })
            .build()
            .unwrap();
        same(&fixed, &resource(&fixed).unwrap());
        let template = ResourceDef::template("demo://items/{id}")
            .name("item")
            .title("Item")
            .mime_type("application/json")
            .description("One item")
            .handler(|_request, _ctx| async { Ok(vec![ResourceContent::text("{}")]) })
            .build()
            .unwrap();
        same(&template, &resource_template(&template).unwrap());
    }

    #[test]
    fn prompts() {
        let def = PromptDef::builder("greet")
            .title("Greet")
            .description("Greet someone")
            .argument(
                PromptArgument::new("name")
                    .with_required(true)
                    .with_title("Name")
                    .with_description("Who"),
            )
            .argument(PromptArgument::new("tone"))
            .handler(|_args, _ctx| async { Ok(PromptResult::new(vec![])) })
            .build()
            .unwrap();
        same(&def, &prompt(&def));
        let bare = PromptDef::builder("bare")
            .description("No arguments")
            .handler(|_args, _ctx| async { Ok(PromptResult::new(vec![])) })
            .build()
            .unwrap();
        same(&bare, &prompt(&bare));
        let result = PromptResult::new(vec![
            PromptMessage::new_text(Role::User, "Hello"),
            PromptMessage::new(Role::Assistant, ContentBlock::image("aGk=", "image/png")),
        ])
        .with_description("A greeting");
        same(&result, &prompt_result(result.clone()));
    }
}
