//! The `#[mcp_tool]` layer: the seven tools through a real `ToolRegistry`, as an MCP client
//! would reach them (schema validation, structured output, error kinds and actions).

mod common;

use mcp_toolbelt::{ErrorKind, ToolContext, ToolError, ToolRegistry, ToolResult};
use memo_mcp::MemoError;
use serde_json::{Value, json};

const NAMES: [&str; 7] = [
    "memo_create",
    "memo_delete",
    "memo_get",
    "memo_get_all_context",
    "memo_list",
    "memo_search",
    "memo_update",
];

async fn registry() -> (common::Fixture, ToolRegistry) {
    let fx = common::fixture().await;
    let registry = ToolRegistry::builder()
        .state(fx.store.clone())
        .build()
        .expect("registry builds");
    (fx, registry)
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolResult {
    registry
        .call_tool(name, args, ToolContext::default())
        .await
        .expect("tool exists")
}

fn ok(result: &ToolResult) -> &Value {
    assert!(!result.is_error(), "{}", result.text_content());
    result.structured_content().expect("structured content")
}

#[tokio::test]
async fn the_seven_tools_are_listed_with_schemas_and_hints() {
    let (_fx, registry) = registry().await;
    let tools = registry.list_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, NAMES);
    for tool in tools.iter() {
        let def = registry.get(tool.name()).unwrap();
        assert_eq!(def.category(), Some("memo"), "{}", tool.name());
        assert!(
            def.permissions().is_empty(),
            "{}: no permission",
            tool.name()
        );
        assert!(!tool.description().is_empty());
        // Every argument tells a model what to pass.
        let properties = tool.input_schema()["properties"].as_object().unwrap();
        for (arg, spec) in properties {
            assert!(
                spec["description"].as_str().is_some_and(|d| d.len() > 10),
                "{}.{arg} has no description",
                tool.name()
            );
        }
        let read_only = tool.annotations().read_only_hint.unwrap_or(false);
        let writes = matches!(tool.name(), "memo_create" | "memo_update" | "memo_delete");
        assert_eq!(read_only, !writes, "{}", tool.name());
        if tool.name() != "memo_get_all_context" {
            assert!(
                tool.output_schema().is_some(),
                "{} has an output schema",
                tool.name()
            );
        }
    }
    let create = tools.iter().find(|t| t.name() == "memo_create").unwrap();
    assert_eq!(
        create.input_schema()["required"],
        json!(["title", "content"])
    );
}

#[tokio::test]
async fn create_get_update_search_delete_through_the_registry() {
    let (_fx, registry) = registry().await;
    let created = call(
        &registry,
        "memo_create",
        json!({"title": "Groceries", "content": "milk, eggs"}),
    )
    .await;
    let memo = ok(&created).clone();
    let id = memo["id"].as_str().unwrap();
    // The text block is the same JSON, for clients that ignore structured content.
    let text: Value = serde_json::from_str(&created.text_content()).unwrap();
    assert_eq!(text, memo);

    let got = call(&registry, "memo_get", json!({"id": id.to_lowercase()})).await;
    assert_eq!(ok(&got)["title"], "Groceries");

    let updated = call(
        &registry,
        "memo_update",
        json!({"id": id, "content": "milk, eggs, bread"}),
    )
    .await;
    assert_eq!(ok(&updated)["content"], "milk, eggs, bread");
    assert_eq!(ok(&updated)["title"], "Groceries");

    let hits = call(&registry, "memo_search", json!({"query": "bread"})).await;
    assert_eq!(ok(&hits)["total_matches"], 1);
    assert_eq!(ok(&hits)["hits"][0]["id"], id);

    let list = call(&registry, "memo_list", json!({"limit": 10})).await;
    assert_eq!(ok(&list)["total"], 1);

    let context = call(&registry, "memo_get_all_context", json!({})).await;
    assert!(context.text_content().contains("## Groceries"));
    assert_eq!(ok(&context)["included"], 1);
    assert_eq!(ok(&context)["truncated"], false);

    let deleted = call(&registry, "memo_delete", json!({"id": id})).await;
    assert_eq!(ok(&deleted)["id"], id);
    let again = call(&registry, "memo_delete", json!({"id": id})).await;
    assert!(again.is_error());
    assert_eq!(again.error_kind(), Some(ErrorKind::NotFound));
}

#[tokio::test]
async fn errors_carry_their_kind_and_action_line() {
    let (_fx, registry) = registry().await;
    let missing = call(
        &registry,
        "memo_get",
        json!({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}),
    )
    .await;
    assert_eq!(
        missing.text_content(),
        "Error (not_found): memo 01ARZ3NDEKTSV4RRFFQ69G5FAV not found\n\nAction: Check the id, \
         or call memo_list or memo_search to find the memo you want."
    );

    let bad_id = call(&registry, "memo_get", json!({"id": "../etc/passwd"})).await;
    assert_eq!(bad_id.error_kind(), Some(ErrorKind::Validation));
    assert!(
        bad_id
            .text_content()
            .contains("Action: Pass a memo id exactly as returned"),
        "{}",
        bad_id.text_content()
    );

    let nothing = call(
        &registry,
        "memo_update",
        json!({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}),
    )
    .await;
    assert!(
        nothing
            .text_content()
            .starts_with("Error (validation_error): invalid title: neither"),
        "{}",
        nothing.text_content()
    );

    // Schema violations are refused before the store is reached.
    let wrong_type = call(&registry, "memo_list", json!({"limit": "ten"})).await;
    assert_eq!(wrong_type.error_kind(), Some(ErrorKind::Validation));
    let too_many = call(
        &registry,
        "memo_search",
        json!({"query": "x", "limit": 101}),
    )
    .await;
    assert_eq!(too_many.error_kind(), Some(ErrorKind::Validation));
    let unknown = call(
        &registry,
        "memo_create",
        json!({"title": "t", "content": "c", "tags": ["x"]}),
    )
    .await;
    assert_eq!(unknown.error_kind(), Some(ErrorKind::Validation));
}

#[test]
fn memo_errors_convert_kind_by_kind() {
    let cases = [
        (MemoError::NotFound { id: "X".into() }, ErrorKind::NotFound),
        (
            MemoError::InvalidId {
                id: "x".into(),
                reason: "too short".into(),
            },
            ErrorKind::Validation,
        ),
        (
            MemoError::Storage {
                message: "disk I/O error".into(),
                action: "Free disk space.".into(),
            },
            ErrorKind::Internal,
        ),
    ];
    for (err, kind) in cases {
        let action = err.action();
        let message = err.to_string();
        let converted = ToolError::from(err);
        assert_eq!(converted.kind(), kind);
        assert_eq!(converted.message(), message);
        assert_eq!(converted.action(), Some(action.as_str()));
    }
}
