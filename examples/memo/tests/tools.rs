//! The `#[mcp_tool]` layer: the seven tools as an MCP client reaches them, through the
//! protocol engine (`mcp_toolbelt::testing`): schema validation, structured output, error
//! kinds and actions.

mod common;

use mcp_toolbelt::server::Server;
use mcp_toolbelt::testing::{TestClient, ToolResultExt};
use mcp_toolbelt::{ErrorKind, ToolError, ToolRegistry};
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

/// A client of the memo server, connected through the protocol engine.
async fn client() -> (common::Fixture, TestClient) {
    let (fx, registry) = registry().await;
    (fx, TestClient::connect(Server::new(registry)).await)
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
async fn create_get_update_search_delete_through_the_protocol() {
    let (_fx, client) = client().await;
    let created = client
        .call(
            "memo_create",
            json!({"title": "Groceries", "content": "milk, eggs"}),
        )
        .await;
    let memo = created.ok().clone();
    let id = memo["id"].as_str().unwrap();
    // The text block is the same JSON, for clients that ignore structured content.
    let text: Value = serde_json::from_str(&created.text_content()).unwrap();
    assert_eq!(text, memo);

    let got = client
        .call("memo_get", json!({"id": id.to_lowercase()}))
        .await;
    assert_eq!(got.ok()["title"], "Groceries");

    let updated = client
        .call(
            "memo_update",
            json!({"id": id, "content": "milk, eggs, bread"}),
        )
        .await;
    assert_eq!(updated.ok()["content"], "milk, eggs, bread");
    assert_eq!(updated.ok()["title"], "Groceries");

    let hits = client.call("memo_search", json!({"query": "bread"})).await;
    assert_eq!(hits.ok()["total_matches"], 1);
    assert_eq!(hits.ok()["hits"][0]["id"], id);

    let list = client.call("memo_list", json!({"limit": 10})).await;
    assert_eq!(list.ok()["total"], 1);

    let context = client.call("memo_get_all_context", json!({})).await;
    assert!(context.text_content().contains("## Groceries"));
    assert_eq!(context.ok()["included"], 1);
    assert_eq!(context.ok()["truncated"], false);

    let deleted = client.call("memo_delete", json!({"id": id})).await;
    assert_eq!(deleted.ok()["id"], id);
    let again = client.call("memo_delete", json!({"id": id})).await;
    assert!(again.is_error());
    assert_eq!(again.error_kind(), Some(ErrorKind::NotFound));
}

#[tokio::test]
async fn errors_carry_their_kind_and_action_line() {
    let (_fx, client) = client().await;
    let missing = client
        .call("memo_get", json!({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}))
        .await;
    assert_eq!(
        missing.text_content(),
        "Error (not_found): memo 01ARZ3NDEKTSV4RRFFQ69G5FAV not found\n\nAction: Check the id, \
         or call memo_list or memo_search to find the memo you want."
    );

    let bad_id = client
        .call("memo_get", json!({"id": "../etc/passwd"}))
        .await;
    assert_eq!(bad_id.error_kind(), Some(ErrorKind::Validation));
    assert!(
        bad_id
            .text_content()
            .contains("Action: Pass a memo id exactly as returned"),
        "{}",
        bad_id.text_content()
    );

    let nothing = client
        .call("memo_update", json!({"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}))
        .await;
    assert!(
        nothing
            .text_content()
            .starts_with("Error (validation_error): invalid title: neither"),
        "{}",
        nothing.text_content()
    );

    // Schema violations are refused before the store is reached.
    let wrong_type = client.call("memo_list", json!({"limit": "ten"})).await;
    assert_eq!(wrong_type.error_kind(), Some(ErrorKind::Validation));
    let too_many = client
        .call("memo_search", json!({"query": "x", "limit": 101}))
        .await;
    assert_eq!(too_many.error_kind(), Some(ErrorKind::Validation));
    let unknown = client
        .call(
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
