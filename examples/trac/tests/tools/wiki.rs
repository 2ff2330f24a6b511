//! wiki_get, wiki_search, wiki_recent_changes, wiki_create, wiki_update, wiki_delete.

use mcp_toolbelt::ErrorKind;
use serde_json::json;

use crate::Tools;
use crate::common::unique;

#[tokio::test]
async fn create_update_get_and_delete_a_page() {
    let tools = Tools::anon().await;
    let name = unique("Page");
    let created = tools
        .ok(
            "wiki_create",
            json!({"name": name, "content": "= Notes =\n\nFirst '''draft'''.\n", "comment": "start"}),
        )
        .await;
    assert_eq!(
        (created["version"].as_i64(), created["created"].as_bool()),
        (Some(1), Some(true))
    );
    assert_eq!(created["converted"], false);
    let page = tools.ok("wiki_get", json!({"name": name})).await;
    assert_eq!(page["text"], "= Notes =\n\nFirst '''draft'''.\n");
    assert_eq!(
        (page["version"].as_i64(), page["comment"].as_str()),
        (Some(1), Some("start"))
    );
    assert_eq!(page["author"], "anonymous");

    let taken = tools
        .fail("wiki_create", json!({"name": name, "content": "again"}))
        .await;
    assert_eq!(taken.kind, ErrorKind::Conflict);
    assert!(taken.action().contains("wiki_update"), "{}", taken.text);

    let updated = tools
        .ok(
            "wiki_update",
            json!({"name": name, "content": "= Notes =\n\nSecond draft.\n", "expected_version": 1}),
        )
        .await;
    assert_eq!(
        (updated["version"].as_i64(), updated["changed"].as_bool()),
        (Some(2), Some(true))
    );
    // the same text again saves nothing
    let same = tools
        .ok(
            "wiki_update",
            json!({"name": name, "content": "= Notes =\n\nSecond draft.\n"}),
        )
        .await;
    assert_eq!(
        (same["version"].as_i64(), same["changed"].as_bool()),
        (Some(2), Some(false))
    );
    // based on an old version: conflict, nothing saved
    let stale = tools
        .fail(
            "wiki_update",
            json!({"name": name, "content": "lost", "expected_version": 1}),
        )
        .await;
    assert_eq!(stale.kind, ErrorKind::Conflict);
    let old = tools
        .ok("wiki_get", json!({"name": name, "page_version": 1}))
        .await;
    assert_eq!(old["text"], "= Notes =\n\nFirst '''draft'''.\n");

    // deleting the newest version leaves the one before
    let dropped = tools
        .ok("wiki_delete", json!({"name": name, "page_version": 2}))
        .await;
    assert_eq!(dropped["version"], 2);
    let back = tools.ok("wiki_get", json!({"name": name})).await;
    assert_eq!(back["version"], 1);
    assert_eq!(back["text"], "= Notes =\n\nFirst '''draft'''.\n");

    let deleted = tools.ok("wiki_delete", json!({"name": name})).await;
    assert_eq!(deleted["name"], name.as_str());
    let gone = tools.fail("wiki_get", json!({"name": name})).await;
    assert_eq!(gone.kind, ErrorKind::NotFound);
    assert!(gone.action().contains("wiki_search"), "{}", gone.text);
    assert_eq!(
        tools.fail("wiki_delete", json!({"name": name})).await.kind,
        ErrorKind::NotFound
    );
    assert_eq!(
        tools
            .fail("wiki_update", json!({"name": name, "content": "x"}))
            .await
            .kind,
        ErrorKind::NotFound
    );
}

#[tokio::test]
async fn markdown_content_is_saved_as_tracwiki_and_read_back_as_markdown() {
    let tools = Tools::anon().await;
    let name = unique("Md");
    let markdown =
        "# Install\n\n1. Run `make`\n2. See [the docs](https://example.org/docs)\n\n**Done**.\n";
    let saved = tools
        .ok("wiki_create", json!({"name": name, "content": markdown}))
        .await;
    assert_eq!(
        (
            saved["source_format"].as_str(),
            saved["converted"].as_bool()
        ),
        (Some("markdown"), Some(true))
    );
    let stored = tools.ok("wiki_get", json!({"name": name})).await;
    let text = stored["text"].as_str().unwrap();
    assert!(text.starts_with("= Install ="), "{text}");
    assert!(
        text.contains("{{{make}}}") || text.contains("`make`"),
        "{text}"
    );
    assert!(
        text.contains("[https://example.org/docs the docs]"),
        "{text}"
    );
    assert!(text.contains("'''Done'''"), "{text}");
    let back = tools
        .ok("wiki_get", json!({"name": name, "format": "markdown"}))
        .await;
    assert_eq!(back["format"], "markdown");
    let md = back["text"].as_str().unwrap();
    assert!(md.starts_with("# Install"), "{md}");
    assert!(md.contains("[the docs](https://example.org/docs)"), "{md}");
    // forcing tracwiki keeps the text as given
    let raw = tools
        .ok(
            "wiki_update",
            json!({"name": name, "content": "# not a heading", "format": "tracwiki"}),
        )
        .await;
    assert_eq!(raw["converted"], false);
    let now = tools.ok("wiki_get", json!({"name": name})).await;
    assert_eq!(now["text"], "# not a heading");
}

#[tokio::test]
async fn search_and_recent_changes_find_a_new_page() {
    let tools = Tools::anon().await;
    let name = unique("Findable");
    let word = unique("zebrafish");
    tools
        .ok(
            "wiki_create",
            json!({"name": name, "content": format!("All about {word} here.")}),
        )
        .await;
    let found = tools.ok("wiki_search", json!({"query": word})).await;
    let hits = found["data"]["hits"]["items"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{found}");
    assert_eq!(hits[0]["name"], name.as_str());
    let recent = tools
        .ok("wiki_recent_changes", json!({"days": 1, "limit": 100}))
        .await;
    let pages = recent["data"]["pages"]["items"].as_array().unwrap();
    assert!(pages.iter().any(|p| p["name"] == name.as_str()), "{recent}");
    // most recent first
    let times: Vec<&str> = pages
        .iter()
        .map(|p| p["last_modified"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
    let one = tools.ok("wiki_recent_changes", json!({"limit": 1})).await;
    let one_page = &one["data"]["pages"];
    assert_eq!(one_page["showing"], 1);
    // The new page and the default ones changed today: one shown, the rest counted.
    assert!(one_page["total"].as_u64().unwrap() >= 2, "{one}");
    assert_eq!(one_page["truncated"], true, "{one}");
    assert_eq!(one_page["next_offset"], 1, "{one}");
    assert!(
        one["next_steps"]
            .to_string()
            .contains("call wiki_recent_changes with offset=1"),
        "{one}"
    );
    assert_eq!(found["data"]["hits"]["total"], 1, "{found}");
    assert_eq!(found["data"]["hits"]["truncated"], false, "{found}");
    assert!(
        found["next_steps"]
            .to_string()
            .contains(&format!("wiki_get name={name}")),
        "{found}"
    );
    let short = tools.fail("wiki_search", json!({"query": "ab"})).await;
    assert_eq!(short.kind, ErrorKind::Validation);
}
