//! ticket_search, ticket_get, ticket_changelog, ticket_fields, ticket_actions,
//! ticket_create, ticket_update, ticket_delete.

use mcp_toolbelt::ErrorKind;
use serde_json::{Value, json};

use crate::Tools;
use crate::common::unique;

async fn create(tools: &Tools, args: Value) -> i64 {
    tools.ok("ticket_create", args).await["id"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn create_then_get_shows_every_given_field() {
    let tools = Tools::anon().await;
    let kw = unique("create");
    let id = create(
        &tools,
        json!({
            "summary": "Crash when saving",
            "description": "Steps:\n 1. save",
            "type": "enhancement",
            "priority": "minor",
            "keywords": kw,
            "fields": {"version": "2.0"}
        }),
    )
    .await;
    let ticket = tools.ok("ticket_get", json!({"id": id})).await;
    assert_eq!(ticket["id"], id);
    let fields = &ticket["fields"];
    assert_eq!(fields["summary"], "Crash when saving");
    assert_eq!(fields["description"], "Steps:\n 1. save");
    assert_eq!(fields["type"], "enhancement");
    assert_eq!(fields["priority"], "minor");
    assert_eq!(fields["keywords"], kw.as_str());
    assert_eq!(fields["version"], "2.0");
    assert_eq!(fields["status"], "new");
    assert!(!ticket["ts"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn update_then_changelog_shows_comment_and_field_change() {
    let tools = Tools::anon().await;
    let id = create(
        &tools,
        json!({"summary": "to be changed", "priority": "major"}),
    )
    .await;
    let updated = tools
        .ok(
            "ticket_update",
            json!({"id": id, "comment": "Lowering it.", "fields": {"priority": "trivial"}}),
        )
        .await;
    assert_eq!(updated["fields"]["priority"], "trivial");
    let log = tools.ok("ticket_changelog", json!({"id": id})).await;
    let entries = log["entries"].as_array().unwrap();
    let change = |field: &str| entries.iter().find(|e| e["field"] == field).cloned();
    let priority = change("priority").expect("a priority change");
    assert_eq!(
        (
            priority["old_value"].as_str(),
            priority["new_value"].as_str()
        ),
        (Some("major"), Some("trivial"))
    );
    assert_eq!(
        change("comment").expect("a comment")["new_value"],
        "Lowering it."
    );
}

#[tokio::test]
async fn workflow_actions_resolve_a_ticket() {
    let tools = Tools::anon().await;
    let id = create(&tools, json!({"summary": "to resolve"})).await;
    let actions = tools.ok("ticket_actions", json!({"id": id})).await;
    let resolve = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "resolve")
        .expect("anonymous admin may resolve")
        .clone();
    let input = resolve["inputs"][0]["name"].as_str().unwrap().to_string();
    let done = tools
        .ok(
            "ticket_update",
            json!({"id": id, "action": "resolve", "fields": {input: "fixed"}}),
        )
        .await;
    assert_eq!(done["fields"]["status"], "closed");
    assert_eq!(done["fields"]["resolution"], "fixed");
    // closed tickets drop out of a status!=closed search
    let open = tools
        .ok(
            "ticket_search",
            json!({"query": format!("id={id}&status!=closed")}),
        )
        .await;
    assert_eq!(open["data"]["count"], 0, "{open}");
    assert_eq!(open["next_steps"], json!([]), "{open}");
    let any = tools
        .ok("ticket_search", json!({"query": format!("id={id}")}))
        .await;
    assert_eq!(any["data"]["tickets"][0]["status"], "closed");
    assert_eq!(any["data"]["tickets"][0]["resolution"], "fixed");
}

#[tokio::test]
async fn stale_ts_is_a_conflict_and_changes_nothing() {
    let tools = Tools::anon().await;
    let id = create(&tools, json!({"summary": "contended"})).await;
    let first = tools.ok("ticket_get", json!({"id": id})).await;
    let ts = first["ts"].as_str().unwrap();
    tools
        .ok(
            "ticket_update",
            json!({"id": id, "comment": "first writer", "ts": ts}),
        )
        .await;
    let lost = tools
        .fail(
            "ticket_update",
            json!({"id": id, "fields": {"summary": "second writer"}, "ts": ts}),
        )
        .await;
    assert_eq!(lost.kind, ErrorKind::Conflict, "{}", lost.text);
    assert!(lost.action().contains("ticket_get"), "{}", lost.text);
    let now = tools.ok("ticket_get", json!({"id": id})).await;
    assert_eq!(now["fields"]["summary"], "contended");
}

#[tokio::test]
async fn search_filters_limits_and_reports_truncation() {
    let tools = Tools::anon().await;
    let kw = unique("search");
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(
            create(
                &tools,
                json!({"summary": format!("search {n}"), "keywords": kw}),
            )
            .await,
        );
    }
    let query = format!("keywords~={kw}&order=id");
    let all = tools.ok("ticket_search", json!({"query": query})).await;
    let found: Vec<i64> = all["data"]["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(found, ids);
    assert_eq!(all["data"]["truncated"], false);
    assert_eq!(all["ok"], true);
    assert!(
        all["next_steps"]
            .to_string()
            .contains(&format!("ticket_get id={}", ids[0])),
        "{all}"
    );
    let two = tools
        .ok("ticket_search", json!({"query": query, "max_results": 2}))
        .await;
    assert_eq!(
        (
            two["data"]["count"].as_u64(),
            two["data"]["truncated"].as_bool()
        ),
        (Some(2), Some(true))
    );
    assert_eq!(two["data"]["tickets"][1]["summary"], "search 1");
    assert!(
        two["next_steps"].to_string().contains("raise max_results"),
        "{two}"
    );
    // the tool pages by itself, and the bounds hold
    let paged = tools
        .fail("ticket_search", json!({"query": "status=new&max=3"}))
        .await;
    assert_eq!(paged.kind, ErrorKind::Validation);
    // The envelope's error form: code, message, the way out as a next step.
    assert!(
        paged
            .text
            .starts_with("Error (validation_error): the query sets \"max\"")
            && paged.text.contains(
                "Next steps:\n- Remove max=/page= from the query and set max_results instead."
            ),
        "{}",
        paged.text
    );
    let too_many = tools
        .fail("ticket_search", json!({"max_results": 101}))
        .await;
    assert_eq!(too_many.kind, ErrorKind::Validation);
}

#[tokio::test]
async fn fields_list_the_select_options() {
    let fields = Tools::anon().await.ok("ticket_fields", json!({})).await;
    let list = fields["fields"].as_array().unwrap();
    let priority = list.iter().find(|f| f["name"] == "priority").unwrap();
    assert_eq!(priority["type"], "select");
    assert!(
        priority["options"]
            .as_array()
            .unwrap()
            .contains(&json!("major"))
    );
    assert!(list.iter().any(|f| f["name"] == "summary"));
}

#[tokio::test]
async fn delete_then_get_is_not_found() {
    let tools = Tools::anon().await;
    let id = create(&tools, json!({"summary": "short-lived"})).await;
    tools.guard_ticket_numbers().await;
    let deleted = tools.ok("ticket_delete", json!({"id": id})).await;
    assert_eq!(deleted["id"], id);
    let gone = tools.fail("ticket_get", json!({"id": id})).await;
    assert_eq!(gone.kind, ErrorKind::NotFound);
    assert!(
        gone.text.contains(&format!("Ticket {id} does not exist")),
        "{}",
        gone.text
    );
    assert!(gone.action().contains("ticket_search"));
    let again = tools.fail("ticket_delete", json!({"id": id})).await;
    assert_eq!(again.kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn bad_arguments_are_refused_before_trac_is_asked() {
    let tools = Tools::anon().await;
    let nothing = tools.fail("ticket_update", json!({"id": 1})).await;
    assert_eq!(nothing.kind, ErrorKind::Validation);
    assert!(
        nothing.text.contains("nothing to change"),
        "{}",
        nothing.text
    );
    let blank = tools.fail("ticket_create", json!({"summary": "   "})).await;
    assert_eq!(blank.kind, ErrorKind::Validation);
    let unknown = tools
        .fail("ticket_create", json!({"summary": "x", "severity": "high"}))
        .await;
    assert_eq!(unknown.kind, ErrorKind::Validation);
    let zero = tools.fail("ticket_get", json!({"id": 0})).await;
    assert_eq!(zero.kind, ErrorKind::Validation);
}
