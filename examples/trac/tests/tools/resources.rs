//! Wiki pages as `trac://wiki/{+name}` resources, with page-name completion.

use mcp_toolbelt::definition::{CompletionRef, CompletionRequest};
use mcp_toolbelt::{ErrorKind, PermissionSet, ToolContext, ToolRegistry};
use serde_json::json;
use trac_mcp::resources::WIKI_PAGE_RESOURCE;

use crate::Tools;
use crate::common::{servers, unique};

fn registry(allowed: Option<PermissionSet>) -> ToolRegistry {
    ToolRegistry::builder()
        .state(servers().anon_client())
        .allowed_permissions(allowed)
        .build()
        .unwrap()
}

#[tokio::test]
async fn wiki_pages_read_as_resources_including_names_with_slashes() {
    let tools = Tools::anon();
    let name = format!("{}/Install", unique("Guide"));
    tools
        .ok(
            "wiki_create",
            json!({"name": name, "content": "= Install =\n\nRun it.\n"}),
        )
        .await;
    let registry = registry(None);
    let templates = registry.list_resource_templates();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].address().to_string(), "trac://wiki/{+name}");
    assert_eq!(WIKI_PAGE_RESOURCE, "trac://wiki/{+name}");
    assert_eq!(templates[0].mime_type(), Some("text/x-trac-wiki"));

    let uri = format!("trac://wiki/{name}");
    let contents = registry
        .read_resource(&uri, ToolContext::default())
        .await
        .unwrap();
    let read = serde_json::to_value(&contents[0]).unwrap();
    assert_eq!(read["uri"], uri.as_str());
    assert_eq!(read["text"], "= Install =\n\nRun it.\n");
    assert_eq!(read["mimeType"], "text/x-trac-wiki");

    // the resource follows the page
    tools
        .ok(
            "wiki_update",
            json!({"name": name, "content": "= Install =\n\nRun it twice.\n"}),
        )
        .await;
    let again = registry
        .read_resource(&uri, ToolContext::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&again[0]).unwrap()["text"],
        "= Install =\n\nRun it twice.\n"
    );

    let missing = registry
        .read_resource(
            &format!("trac://wiki/{}", unique("NoSuch")),
            ToolContext::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);

    let completion = registry
        .complete(
            &CompletionRef::ResourceTemplate(WIKI_PAGE_RESOURCE.to_string()),
            CompletionRequest::new("name", name.split('/').next().unwrap()),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(completion.values(), [name.as_str()]);
}

#[tokio::test]
async fn the_wiki_resource_needs_wiki_view() {
    let hidden = registry(Some(PermissionSet::new(["TICKET_VIEW"])));
    assert!(hidden.list_resource_templates().is_empty());
    let err = hidden
        .read_resource("trac://wiki/WikiStart", ToolContext::default())
        .await
        .unwrap_err();
    assert!(err.message().contains("unknown resource"), "{err:?}");
    let allowed = registry(Some(PermissionSet::new(["WIKI_VIEW"])));
    let start = allowed
        .read_resource("trac://wiki/WikiStart", ToolContext::default())
        .await
        .unwrap();
    assert!(
        serde_json::to_value(&start[0]).unwrap()["text"]
            .as_str()
            .unwrap()
            .contains("Trac")
    );
}
