//! Tools defined in another crate of the workspace (`tests/fixtures/tool-lib`) are
//! collected by this test binary, which links that crate, with no central list.

use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry};
use serde_json::json;

// Referencing an item keeps the library linked (the `inventory` linker caveat).
use tool_lib::TEXT_REVERSE_TOOL;

#[tokio::test]
async fn tools_from_a_library_crate_are_collected_and_callable() {
    let registry = ToolRegistry::builder().build().unwrap();
    let names: Vec<String> = registry
        .list_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert!(names.contains(&"text_reverse".to_string()), "{names:?}");
    assert!(names.contains(&"text_word_count".to_string()), "{names:?}");

    let reversed = registry
        .call_tool(
            TEXT_REVERSE_TOOL,
            json!({"text": "abc"}),
            ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(reversed.text_content(), "cba");

    let def = registry.get("text_reverse").unwrap();
    let source = def.source().unwrap();
    assert!(source.file.contains("tool-lib"), "{source}");
}

#[tokio::test]
async fn a_hook_from_the_library_wraps_every_call() {
    let counter = tool_lib::CallCounter::default();
    let registry = ToolRegistry::builder()
        .around(counter.clone())
        .build()
        .unwrap();
    for text in ["ab", "cd"] {
        let reversed = registry
            .call_tool(
                TEXT_REVERSE_TOOL,
                json!({ "text": text }),
                ToolContext::default(),
            )
            .await
            .unwrap();
        assert_eq!(reversed.text_content().len(), 2);
    }
    assert_eq!(counter.calls(), 2);
}

#[tokio::test]
async fn permissions_of_library_tools_apply_in_the_binary() {
    let registry = ToolRegistry::builder()
        .allowed_permissions(PermissionSet::empty())
        .build()
        .unwrap();
    assert!(registry.get("text_reverse").is_some());
    assert!(registry.get("text_word_count").is_none());
    let hidden = registry
        .call_tool(
            "text_word_count",
            json!({"text": "a b"}),
            ToolContext::default(),
        )
        .await;
    assert_eq!(hidden.unwrap_err().name(), "text_word_count");
}

#[test]
fn a_library_given_to_the_builder_is_linked_and_checked() {
    let registry = ToolRegistry::builder()
        .library(tool_lib::mcp_toolbelt_library())
        .build()
        .unwrap();
    assert_eq!(tool_lib::mcp_toolbelt_library().name(), "tool-lib");
    assert!(
        !registry.validation_report().has_errors(),
        "{:?}",
        registry.validation_report()
    );
    // A library none of whose files defined a tool is an error, naming it.
    let ghost =
        mcp_toolbelt::registry::Library::new("ghost-tools", "tests/fixtures/ghost/src/lib.rs");
    let registry = ToolRegistry::builder().library(ghost).build().unwrap();
    let report = registry.validation_report();
    assert!(report.has_errors());
    assert!(
        report.findings().iter().any(|f| f
            .message
            .starts_with("library `ghost-tools` is linked but contributed no tools")),
        "{report:?}"
    );
}
