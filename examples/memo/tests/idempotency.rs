//! `memo_create` with an idempotency key: a retried creation (the client's own, or a
//! balancer's after a replica died mid-call, both at-least-once) makes one memo, across
//! processes sharing the database too.

mod common;

use mcp_toolbelt::{ToolContext, ToolRegistry};
use memo_mcp::{MAX_IDEMPOTENCY_KEY_CHARS, MemoError};
use serde_json::json;

#[tokio::test]
async fn the_same_key_and_memo_create_once() {
    let fx = common::fixture().await;
    let first = fx
        .store
        .create_once("Plan", "steps", Some("ada"), Some("k-1"))
        .await
        .unwrap();
    let again = fx
        .store
        .create_once("Plan", "steps", Some("ada"), Some("k-1"))
        .await
        .unwrap();
    assert_eq!(again, first, "the retry returns the first memo");
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 1);

    // Without a key every call creates.
    fx.store
        .create_once("Plan", "steps", Some("ada"), None)
        .await
        .unwrap();
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 2);
}

#[tokio::test]
async fn a_retry_returns_the_memo_as_it_is_now() {
    let fx = common::fixture().await;
    let first = fx
        .store
        .create_once("Plan", "steps", None, Some("k-2"))
        .await
        .unwrap();
    let updated = fx
        .store
        .update(&first.id, None, Some("steps, revised"))
        .await
        .unwrap();
    let again = fx
        .store
        .create_once("Plan", "steps", None, Some("k-2"))
        .await
        .unwrap();
    assert_eq!(again, updated);
    fx.store.delete(&first.id).await.unwrap();
    let gone = fx
        .store
        .create_once("Plan", "steps", None, Some("k-2"))
        .await;
    assert!(
        matches!(&gone, Err(MemoError::NotFound { id }) if *id == first.id),
        "{gone:?}"
    );
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 0);
}

#[tokio::test]
async fn a_key_reused_for_another_memo_is_refused_and_keys_are_per_creator() {
    let fx = common::fixture().await;
    fx.store
        .create_once("Plan", "steps", Some("ada"), Some("k-3"))
        .await
        .unwrap();
    common::assert_validation(
        fx.store
            .create_once("Plan", "other steps", Some("ada"), Some("k-3"))
            .await,
        "idempotency_key",
    );
    common::assert_validation(
        fx.store
            .create_once("Other plan", "steps", Some("ada"), Some("k-3"))
            .await,
        "idempotency_key",
    );
    // Another caller's key is another key; the local caller is a creator of its own.
    let grace = fx
        .store
        .create_once("Plan", "steps", Some("grace"), Some("k-3"))
        .await
        .unwrap();
    let local = fx
        .store
        .create_once("Plan", "steps", None, Some("k-3"))
        .await
        .unwrap();
    assert_ne!(grace.id, local.id);
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 3);
}

#[tokio::test]
async fn malformed_keys_are_refused() {
    let fx = common::fixture().await;
    let long = "k".repeat(MAX_IDEMPOTENCY_KEY_CHARS + 1);
    for key in ["", "line\nbreak", long.as_str()] {
        common::assert_validation(
            fx.store.create_once("Plan", "steps", None, Some(key)).await,
            "idempotency_key",
        );
    }
    let longest = "k".repeat(MAX_IDEMPOTENCY_KEY_CHARS);
    fx.store
        .create_once("Plan", "steps", None, Some(&longest))
        .await
        .unwrap();
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 1);
}

#[tokio::test]
async fn replicas_on_one_database_create_once_when_they_race() {
    // Four stores on one file stand for four replicas (each its own connection); each
    // gets the same keyed creation at once, as balancer retries would send it.
    let fx = common::fixture().await;
    let mut replicas = vec![fx.store.clone()];
    for _ in 0..3 {
        replicas.push(fx.reopen().await);
    }
    let calls = replicas.iter().map(|store| {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .create_once("Race", "once", Some("ada"), Some("k-race"))
                .await
        })
    });
    let memos: Vec<_> = futures_join(calls).await;
    let id = &memos[0].id;
    assert!(memos.iter().all(|memo| &memo.id == id), "{memos:?}");
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 1);
}

async fn futures_join(
    calls: impl Iterator<Item = tokio::task::JoinHandle<Result<memo_mcp::Memo, MemoError>>>,
) -> Vec<memo_mcp::Memo> {
    let mut memos = Vec::new();
    for call in calls {
        memos.push(call.await.unwrap().unwrap());
    }
    memos
}

#[tokio::test]
async fn the_tool_takes_the_key_as_an_optional_argument() {
    let fx = common::fixture().await;
    let registry = ToolRegistry::builder()
        .state(fx.store.clone())
        .build()
        .unwrap();
    let schema = serde_json::to_value(registry.get("memo_create").unwrap().input_schema()).unwrap();
    assert!(
        schema["properties"]["idempotency_key"].is_object(),
        "{schema}"
    );
    assert!(
        !schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("idempotency_key")),
        "{schema}"
    );
    let arguments = json!({"title": "Plan", "content": "steps", "idempotency_key": "k-tool"});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let result = registry
            .call_tool("memo_create", arguments.clone(), ToolContext::default())
            .await
            .unwrap();
        assert!(!result.is_error(), "{}", result.text_content());
        ids.push(result.structured_content().unwrap()["id"].clone());
    }
    assert_eq!(ids[0], ids[1]);
    assert_eq!(fx.store.list(None, None).await.unwrap().total, 1);
}
