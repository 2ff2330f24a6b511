//! Wiki pages as `trac://wiki/{+name}` resources, with page-name completion, read through
//! the protocol engine; the permission filter on the registry.

use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry};
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
    let tools = Tools::anon().await;
    let name = format!("{}/Install", unique("Guide"));
    tools
        .ok(
            "wiki_create",
            json!({"name": name, "content": "= Install =\n\nRun it.\n"}),
        )
        .await;
    let client = tools.client();
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0]["uriTemplate"], "trac://wiki/{+name}");
    assert_eq!(WIKI_PAGE_RESOURCE, "trac://wiki/{+name}");
    assert_eq!(templates[0]["mimeType"], "text/x-trac-wiki");

    let uri = format!("trac://wiki/{name}");
    let contents = client.read_resource(&uri).await.unwrap();
    assert_eq!(contents[0].uri(), Some(uri.as_str()));
    assert_eq!(contents[0].as_text(), Some("= Install =\n\nRun it.\n"));
    assert_eq!(contents[0].mime_type(), Some("text/x-trac-wiki"));

    // the resource follows the page
    tools
        .ok(
            "wiki_update",
            json!({"name": name, "content": "= Install =\n\nRun it twice.\n"}),
        )
        .await;
    let again = client.read_resource(&uri).await.unwrap();
    assert_eq!(again[0].as_text(), Some("= Install =\n\nRun it twice.\n"));

    // an unknown page is the protocol's "resource not found"
    let missing = client
        .read_resource(&format!("trac://wiki/{}", unique("NoSuch")))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some(-32002), "{missing}");

    let completion = client
        .complete(
            json!({"type": "ref/resource", "uri": WIKI_PAGE_RESOURCE}),
            "name",
            name.split('/').next().unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(completion, [name.as_str()]);
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
