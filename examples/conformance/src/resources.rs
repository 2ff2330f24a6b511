//! The resources of the `resources-*` scenarios.

use mcp_toolbelt::definition::{Completion, CompletionRequest};
use mcp_toolbelt::{Json, ToolContext, mcp_resource};
use serde::Serialize;

use crate::media;

/// A fixed text resource.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A fixed binary resource: a 1x1 red PNG image.
#[mcp_resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
async fn static_binary() -> Vec<u8> {
    media::PNG.to_vec()
}

/// The data of one template instance.
#[derive(Serialize)]
struct TemplateData {
    id: String,
    #[serde(rename = "templateTest")]
    template_test: bool,
    data: String,
}

async fn known_ids(request: CompletionRequest, _ctx: ToolContext) -> Completion {
    Completion::matching(["123", "456", "789"], &request.value)
}

/// Data for one id: the template variable `{id}` is substituted into the contents.
#[mcp_resource(
    uri_template = "test://template/{id}/data",
    name = "template-data",
    mime_type = "application/json",
    complete(id = known_ids)
)]
async fn template_data(id: String) -> Json<TemplateData> {
    Json(TemplateData {
        data: format!("Data for ID: {id}"),
        template_test: true,
        id,
    })
}

/// A resource clients subscribe to; the `test_update_watched_resource` tool announces a
/// change of it.
#[mcp_resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    mime_type = "text/plain"
)]
async fn watched_resource(watched: mcp_toolbelt::State<crate::tools::Watched>) -> String {
    format!("Watched resource, version {}", watched.version())
}
