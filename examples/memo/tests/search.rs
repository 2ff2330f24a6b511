//! Full-text search: ranking, snippets, index upkeep and hostile or unusual queries.

mod common;

use common::{assert_validation, fixture};
use memo_mcp::{MemoError, MemoStore};

/// Ids of the hits, best first.
async fn hit_ids(store: &MemoStore, query: &str) -> Vec<String> {
    store
        .search(query, None)
        .await
        .unwrap_or_else(|e| panic!("{query:?}: {e}"))
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

#[tokio::test]
async fn title_matches_rank_above_frequent_content_matches_above_rare_ones() {
    let fx = fixture().await;
    let s = &fx.store;
    for i in 0..10 {
        s.create(&format!("filler {i}"), "nothing relevant here at all")
            .await
            .unwrap();
    }
    let rare = s
        .create("Weekly notes", "Long text about many things, and once about sqlite, then much more filler text to make it longer.")
        .await
        .unwrap();
    let frequent = s
        .create("Database notes", "sqlite sqlite sqlite: sqlite is embedded")
        .await
        .unwrap();
    let titled = s.create("SQLite tips", "use WAL mode").await.unwrap();

    let results = s.search("sqlite", None).await.unwrap();
    let ids: Vec<&str> = results.hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        ids,
        [titled.id.as_str(), frequent.id.as_str(), rare.id.as_str()]
    );
    assert_eq!(results.total_matches, 3);
    assert!(
        results.hits.windows(2).all(|w| w[0].score >= w[1].score),
        "scores descend"
    );
    assert!(
        results
            .hits
            .iter()
            .all(|h| h.snippet.to_lowercase().contains("**sqlite**"))
    );
    assert_eq!(results.interpreted_as, "\"sqlite\"");
}

#[tokio::test]
async fn limit_caps_hits_but_not_the_match_count() {
    let fx = fixture().await;
    for i in 0..30 {
        fx.store
            .create(&format!("kiwi {i}"), "fruit")
            .await
            .unwrap();
    }
    let r = fx.store.search("kiwi", Some(5)).await.unwrap();
    assert_eq!(r.hits.len(), 5);
    assert_eq!(r.total_matches, 30);
    assert_validation(fx.store.search("kiwi", Some(0)).await, "limit");
    assert_validation(
        fx.store
            .search("kiwi", Some(memo_mcp::MAX_SEARCH_LIMIT + 1))
            .await,
        "limit",
    );
}

#[tokio::test]
async fn index_follows_updates_and_deletes() {
    let fx = fixture().await;
    let s = &fx.store;
    let memo = s.create("Plans", "visit the aquarium").await.unwrap();
    assert_eq!(hit_ids(s, "aquarium").await, vec![memo.id.clone()]);
    s.update(&memo.id, None, Some("visit the planetarium"))
        .await
        .unwrap();
    assert!(hit_ids(s, "aquarium").await.is_empty());
    assert_eq!(hit_ids(s, "planetarium").await, vec![memo.id.clone()]);
    s.update(&memo.id, Some("Trips"), None).await.unwrap();
    assert!(hit_ids(s, "plans").await.is_empty());
    assert_eq!(hit_ids(s, "trips planetarium").await, vec![memo.id.clone()]);
    s.delete(&memo.id).await.unwrap();
    assert!(hit_ids(s, "planetarium").await.is_empty());
}

#[tokio::test]
async fn query_syntax_phrases_prefixes_or_not() {
    let fx = fixture().await;
    let s = &fx.store;
    let a = s.create("Alpha", "the quick brown fox").await.unwrap();
    let b = s.create("Beta", "brown quick dogs").await.unwrap();
    let c = s.create("Gamma", "quickly jumping").await.unwrap();

    let mut both = hit_ids(s, "quick brown").await;
    both.sort();
    let mut expected = vec![a.id.clone(), b.id.clone()];
    expected.sort();
    assert_eq!(both, expected, "implicit AND, any order");
    assert_eq!(
        hit_ids(s, "\"quick brown\"").await,
        vec![a.id.clone()],
        "phrase keeps order"
    );
    assert_eq!(
        hit_ids(s, "quick* jump*").await,
        vec![c.id.clone()],
        "prefix"
    );
    assert_eq!(hit_ids(s, "fox OR dogs").await.len(), 2);
    assert_eq!(hit_ids(s, "quick NOT fox").await, vec![b.id.clone()]);
    assert_eq!(hit_ids(s, "quick AND fox").await, vec![a.id.clone()]);
    assert!(
        hit_ids(s, "quick fox dogs").await.is_empty(),
        "all words required"
    );
}

#[tokio::test]
async fn tricky_queries_never_fail_with_a_storage_error() {
    let fx = fixture().await;
    let s = &fx.store;
    let and_memo = s
        .create("Rock AND roll", "bread and butter; it's \"quoted\"")
        .await
        .unwrap();
    s.create("Other", "title:fake column NEAR(x y) ^start")
        .await
        .unwrap();
    let queries = [
        "\"",
        "\"\"",
        "\"unterminated phrase",
        "it's",
        "say \"hi",
        "a\"b\"c",
        "*",
        "**",
        "*foo",
        "foo*bar",
        "a * b",
        "AND",
        "OR",
        "NOT",
        "AND OR NOT",
        "foo AND",
        "OR foo",
        "NOT NOT foo",
        "foo OR OR bar",
        "NEAR(a b)",
        "NEAR/3",
        "title:fake",
        "content:bread",
        "^start",
        "(",
        ")",
        "((a)",
        "{a b}",
        "a:b:c",
        "-foo",
        "+foo",
        "'; DROP TABLE memos; --",
        "\\",
        "%",
        "_",
        "\u{0}",
        "\t\n",
        "🦀",
        "a🦀b",
        "ünïcödé",
        "日本語",
        "x".repeat(200).as_str(),
        "\u{202e}rtl",
    ]
    .map(|q| q.to_string());
    for q in &queries {
        match s.search(q, None).await {
            Ok(_) => {}
            Err(MemoError::Validation { field: "query", .. }) => {}
            Err(other) => panic!("{q:?} gave {other:?}"),
        }
    }
    assert_eq!(
        s.count().await.unwrap(),
        2,
        "the injection attempt was inert"
    );
    // Operators alone are searched literally; `and` occurs in the first memo.
    assert_eq!(hit_ids(s, "AND").await, vec![and_memo.id.clone()]);
    assert_eq!(hit_ids(s, "\"quoted\"").await, vec![and_memo.id.clone()]);
    assert_eq!(hit_ids(s, "it's").await, vec![and_memo.id.clone()]);
    assert_eq!(
        hit_ids(s, "title:fake").await.len(),
        1,
        "column filter syntax is inert"
    );
    assert_validation(s.search("🦀 !!!", None).await, "query");
    assert_validation(s.search("   ", None).await, "query");
    assert_validation(s.search(&"x ".repeat(600), None).await, "query");
}

#[tokio::test]
async fn unicode_text_is_searchable_with_case_and_accent_folding() {
    let fx = fixture().await;
    let s = &fx.store;
    let fr = s
        .create("Café crème", "Rendez-vous à la brasserie")
        .await
        .unwrap();
    let ru = s.create("Привет мир", "Москва весной").await.unwrap();
    let de = s.create("Straße", "Größe und Übermaß").await.unwrap();
    let jp = s.create("日本 メモ", "東京 タワー").await.unwrap();
    let emoji = s.create("Crab 🦀 party", "rust 🦀 meetup").await.unwrap();

    assert_eq!(
        hit_ids(s, "cafe").await,
        vec![fr.id.clone()],
        "accents folded"
    );
    assert_eq!(hit_ids(s, "CAFÉ CRÈME").await, vec![fr.id.clone()]);
    assert_eq!(hit_ids(s, "brass*").await, vec![fr.id.clone()]);
    assert_eq!(
        hit_ids(s, "привет").await,
        vec![ru.id.clone()],
        "Cyrillic case folding"
    );
    assert_eq!(hit_ids(s, "МОСКВА").await, vec![ru.id.clone()]);
    assert_eq!(hit_ids(s, "übermaß").await, vec![de.id.clone()]);
    assert_eq!(
        hit_ids(s, "groesse").await,
        Vec::<String>::new(),
        "no transliteration"
    );
    assert_eq!(hit_ids(s, "東京").await, vec![jp.id.clone()]);
    assert_eq!(
        hit_ids(s, "🦀 meetup").await,
        vec![emoji.id.clone()],
        "emoji ignored, words kept"
    );
    let snippet = &s.search("москва", None).await.unwrap().hits[0].snippet;
    assert!(snippet.contains("**Москва**"), "{snippet}");
}
