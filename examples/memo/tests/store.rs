//! CRUD, ids, validation, listing and the context document.

mod common;

use common::{assert_validation, fixture};
use memo_mcp::{MAX_TITLE_CHARS, Memo, MemoError, SearchResults};

#[tokio::test]
async fn create_get_update_delete_roundtrip() {
    let fx = fixture().await;
    let s = &fx.store;
    let memo = s.create("  Shopping  ", "- milk\n- eggs\n").await.unwrap();
    assert_eq!(memo.title, "Shopping", "title is trimmed");
    assert_eq!(memo.content, "- milk\n- eggs\n", "content is kept verbatim");
    assert_eq!(memo.id.len(), 26);
    assert_eq!(memo.created_at, memo.updated_at);
    assert_eq!(s.get(&memo.id).await.unwrap(), memo);
    assert_eq!(
        s.get(&memo.id.to_lowercase()).await.unwrap(),
        memo,
        "ids are case-insensitive"
    );

    let renamed = s.update(&memo.id, Some("Groceries"), None).await.unwrap();
    assert_eq!(renamed.title, "Groceries");
    assert_eq!(renamed.content, memo.content, "content untouched");
    let rewritten = s.update(&memo.id, None, Some("bread")).await.unwrap();
    assert_eq!(rewritten.title, "Groceries", "title untouched");
    assert_eq!(rewritten.content, "bread");
    assert_eq!(s.get(&memo.id).await.unwrap(), rewritten);

    let deleted = s.delete(&memo.id).await.unwrap();
    assert_eq!(deleted, rewritten);
    assert_eq!(s.count().await.unwrap(), 0);
}

#[tokio::test]
async fn missing_ids_are_not_found_with_an_action() {
    let fx = fixture().await;
    let s = &fx.store;
    let memo = s.create("t", "c").await.unwrap();
    s.delete(&memo.id).await.unwrap();
    let missing = [
        s.get(&memo.id).await.unwrap_err(),
        s.update(&memo.id, Some("x"), None).await.unwrap_err(),
        s.delete(&memo.id).await.unwrap_err(),
        s.get("01ARZ3NDEKTSV4RRFFQ69G5FAV").await.unwrap_err(),
    ];
    for err in missing {
        assert!(matches!(err, MemoError::NotFound { .. }), "{err:?}");
        assert_eq!(err.kind(), "not_found");
        assert!(err.to_string().contains("not found"));
        assert!(err.action().contains("memo_list"));
    }
}

#[tokio::test]
async fn invalid_ids_are_rejected_before_touching_the_database() {
    let fx = fixture().await;
    let s = &fx.store;
    for bad in [
        "",
        "42",
        "not-a-ulid",
        "01ARZ3NDEKTSV4RRFFQ69G5FAV0",
        "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
        "' OR 1=1 --               ",
    ] {
        for err in [
            s.get(bad).await.unwrap_err(),
            s.update(bad, Some("x"), None).await.unwrap_err(),
            s.delete(bad).await.unwrap_err(),
        ] {
            assert!(
                matches!(err, MemoError::InvalidId { .. }),
                "{bad:?}: {err:?}"
            );
            assert_eq!(err.kind(), "validation");
            assert!(err.action().contains("ULID"));
        }
    }
}

#[tokio::test]
async fn bad_titles_contents_and_updates_are_validation_errors() {
    let fx = fixture().await;
    let s = &fx.store;
    assert_validation(s.create("", "c").await, "title");
    assert_validation(s.create(" \n ", "c").await, "title");
    assert_validation(s.create("line\nbreak", "c").await, "title");
    assert_validation(
        s.create(&"x".repeat(MAX_TITLE_CHARS + 1), "c").await,
        "title",
    );
    assert_validation(s.create("t", "nul\0byte").await, "content");
    assert_validation(
        s.create("t", &"x".repeat(memo_mcp::MAX_CONTENT_BYTES + 1))
            .await,
        "content",
    );
    let memo = s.create("ok", "").await.unwrap();
    assert_validation(s.update(&memo.id, None, None).await, "title");
    assert_validation(s.update(&memo.id, Some(""), None).await, "title");
    assert_validation(s.list(Some(0), None).await, "limit");
    assert_validation(
        s.list(Some(memo_mcp::MAX_LIST_LIMIT + 1), None).await,
        "limit",
    );
    assert_validation(s.get_all_context(Some(10)).await, "max_bytes");
    assert_eq!(s.count().await.unwrap(), 1, "failed creates stored nothing");
    assert_eq!(
        s.get(&memo.id).await.unwrap(),
        memo,
        "failed updates changed nothing"
    );
}

#[tokio::test]
async fn updates_strictly_bump_updated_at_and_keep_created_at() {
    let fx = fixture().await;
    let s = &fx.store;
    let memo = s.create("clock", "v0").await.unwrap();
    let mut last = memo.updated_at;
    // Back-to-back updates usually land in the same millisecond; each must still move forward.
    for i in 1..=20 {
        let next = s
            .update(&memo.id, None, Some(&format!("v{i}")))
            .await
            .unwrap();
        assert!(
            next.updated_at > last,
            "update {i}: {} <= {last}",
            next.updated_at
        );
        assert_eq!(next.created_at, memo.created_at);
        last = next.updated_at;
    }
    assert_eq!(s.get(&memo.id).await.unwrap().updated_at, last);
}

#[tokio::test]
async fn list_is_newest_first_and_pages() {
    let fx = fixture().await;
    let s = &fx.store;
    let mut created = Vec::new();
    for i in 0..25 {
        created.push(
            s.create(
                &format!("memo {i}"),
                &format!("body {i}\n\nsecond paragraph"),
            )
            .await
            .unwrap(),
        );
    }
    let newest_first: Vec<String> = created.iter().rev().map(|m| m.id.clone()).collect();

    let page1 = s.list(Some(10), None).await.unwrap();
    assert_eq!(page1.total, 25);
    assert!(page1.has_more);
    assert_eq!(page1.limit, 10);
    let ids1: Vec<String> = page1.memos.iter().map(|m| m.id.clone()).collect();
    assert_eq!(ids1, newest_first[..10]);
    assert_eq!(page1.memos[0].title, "memo 24");
    assert_eq!(page1.memos[0].preview, "body 24 second paragraph");

    let page3 = s.list(Some(10), Some(20)).await.unwrap();
    assert!(!page3.has_more);
    let ids3: Vec<String> = page3.memos.iter().map(|m| m.id.clone()).collect();
    assert_eq!(ids3, newest_first[20..]);

    let beyond = s.list(None, Some(1000)).await.unwrap();
    assert!(beyond.memos.is_empty());
    assert!(!beyond.has_more);
    assert_eq!(s.list(None, None).await.unwrap().memos.len(), 25);
}

#[tokio::test]
async fn long_content_previews_are_cut() {
    let fx = fixture().await;
    let long = "word ".repeat(500);
    fx.store.create("long", &long).await.unwrap();
    let list = fx.store.list(None, None).await.unwrap();
    let summary = &list.memos[0];
    assert_eq!(summary.content_chars, long.chars().count() as u64);
    assert!(summary.preview.ends_with('…'));
    assert!(summary.preview.chars().count() <= 161);
}

#[tokio::test]
async fn context_lists_all_memos_newest_first() {
    let fx = fixture().await;
    let s = &fx.store;
    let empty = s.get_all_context(None).await.unwrap();
    assert_eq!(empty.total, 0);
    assert!(empty.markdown.contains("No memos yet."));

    let first = s.create("First memo", "alpha content").await.unwrap();
    let second = s.create("Second memo", "beta content").await.unwrap();
    let ctx = s.get_all_context(None).await.unwrap();
    assert_eq!((ctx.included, ctx.total, ctx.truncated), (2, 2, false));
    let md = &ctx.markdown;
    assert!(md.contains(&first.id) && md.contains(&second.id));
    assert!(md.contains("alpha content") && md.contains("beta content"));
    assert!(md.find("## Second memo").unwrap() < md.find("## First memo").unwrap());
}

#[tokio::test]
async fn context_respects_its_size_bound() {
    let fx = fixture().await;
    let s = &fx.store;
    for i in 0..200 {
        s.create(
            &format!("note {i}"),
            &format!("{i} {}", "lorem ipsum ".repeat(40)),
        )
        .await
        .unwrap();
    }
    for max in [1024u32, 10_000, 64 * 1024] {
        let ctx = s.get_all_context(Some(max)).await.unwrap();
        assert!(
            ctx.markdown.len() <= max as usize,
            "{max}: {}",
            ctx.markdown.len()
        );
        assert!(ctx.truncated);
        assert_eq!(ctx.total, 200);
        assert!(ctx.included >= 1 && ctx.included < 200);
        assert!(
            ctx.markdown.contains("## note 199"),
            "newest memo comes first"
        );
        assert!(
            ctx.markdown
                .contains(&format!("{} of 200 memos shown", ctx.included))
        );
    }
    let all = s
        .get_all_context(Some(memo_mcp::MAX_CONTEXT_BYTES))
        .await
        .unwrap();
    assert!(!all.truncated);
    assert_eq!(all.included, 200);
}

#[test]
fn output_types_have_json_schemas_and_roundtrip() {
    let schema = serde_json::to_value(schemars::schema_for!(Memo)).unwrap();
    let props = &schema["properties"];
    for field in ["id", "title", "content", "created_at", "updated_at"] {
        assert!(props.get(field).is_some(), "{field} missing from {schema}");
    }
    assert_eq!(props["created_at"]["format"], "date-time");
    let results = serde_json::to_value(schemars::schema_for!(SearchResults)).unwrap();
    assert_eq!(results["type"], "object");

    let memo: Memo = serde_json::from_value(serde_json::json!({
        "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "title": "t", "content": "c",
        "created_at": "2024-01-02T03:04:05.678Z", "updated_at": "2024-01-02T03:04:05.678Z"
    }))
    .unwrap();
    let back: Memo = serde_json::from_str(&serde_json::to_string(&memo).unwrap()).unwrap();
    assert_eq!(back, memo);
}

#[tokio::test]
async fn the_author_is_kept_through_reads_lists_updates_and_deletes() {
    let fx = fixture().await;
    let s = &fx.store;
    let local = s.create("Mine", "no author").await.unwrap();
    assert_eq!(local.created_by, None);
    let memo = s.create_by("Alice's", "text", Some("alice")).await.unwrap();
    assert_eq!(memo.created_by.as_deref(), Some("alice"));
    assert_eq!(s.get(&memo.id).await.unwrap(), memo);
    let updated = s.update(&memo.id, Some("Renamed"), None).await.unwrap();
    assert_eq!(
        updated.created_by.as_deref(),
        Some("alice"),
        "an edit keeps the author"
    );
    let list = s.list(None, None).await.unwrap();
    let authors: Vec<Option<&str>> = list.memos.iter().map(|m| m.created_by.as_deref()).collect();
    assert_eq!(authors, [Some("alice"), None], "newest first");
    assert_eq!(
        s.delete(&memo.id).await.unwrap().created_by.as_deref(),
        Some("alice")
    );
    let json = serde_json::to_value(&local).unwrap();
    assert!(
        json["created_by"].is_null(),
        "the local author is an explicit null: {json}"
    );
}
