//! ticket_batch_create, ticket_batch_update, ticket_batch_delete: one result
//! per item, bad items do not stop the others.

use mcp_toolbelt::ErrorKind;
use serde_json::{Value, json};
use trac_mcp::tools::MAX_BATCH_SIZE;

use crate::Tools;
use crate::common::unique;

fn item(report: &Value, index: usize) -> &Value {
    let item = &report["items"][index];
    assert_eq!(item["index"], index, "{report}");
    item
}

#[tokio::test]
async fn batch_create_with_one_bad_item_creates_the_others() {
    let tools = Tools::anon().await;
    let kw = unique("bc");
    let report = tools
        .ok(
            "ticket_batch_create",
            json!({"tickets": [
                {"summary": "batch a", "keywords": kw},
                {"summary": "   ", "keywords": kw},
                {"summary": "batch c", "keywords": kw, "priority": "minor"}
            ]}),
        )
        .await;
    assert_eq!(
        (
            report["total"].as_u64(),
            report["succeeded"].as_u64(),
            report["failed"].as_u64()
        ),
        (Some(3), Some(2), Some(1)),
        "{report}"
    );
    let bad = item(&report, 1);
    assert_eq!(bad["ok"], false);
    assert_eq!(bad["error"]["kind"], "validation_error");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("summary")
    );
    let (a, c) = (
        item(&report, 0)["result"]["id"].as_i64().unwrap(),
        item(&report, 2)["result"]["id"].as_i64().unwrap(),
    );
    // the effect in Trac: exactly the two good tickets exist
    let found = tools
        .ok(
            "ticket_search",
            json!({"query": format!("keywords~={kw}&order=id")}),
        )
        .await;
    let ids: Vec<i64> = found["data"]["tickets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [a, c]);
    assert_eq!(found["data"]["tickets"][1]["priority"], "minor");
}

#[tokio::test]
async fn batch_update_reports_missing_and_stale_items_and_applies_the_rest() {
    let tools = Tools::anon().await;
    let kw = unique("bu");
    let created = tools
        .ok(
            "ticket_batch_create",
            json!({"tickets": [{"summary": "bu one", "keywords": kw}, {"summary": "bu two", "keywords": kw}]}),
        )
        .await;
    let a = created["items"][0]["result"]["id"].as_i64().unwrap();
    let b = created["items"][1]["result"]["id"].as_i64().unwrap();
    let stale_ts = tools.ok("ticket_get", json!({"id": b})).await["ts"].clone();
    tools
        .ok("ticket_update", json!({"id": b, "comment": "moves ts on"}))
        .await;
    let report = tools
        .ok(
            "ticket_batch_update",
            json!({"updates": [
                {"id": a, "comment": "batch comment", "fields": {"priority": "critical"}},
                {"id": 999999, "comment": "nobody home"},
                {"id": b, "fields": {"priority": "trivial"}, "ts": stale_ts},
                {"id": a}
            ]}),
        )
        .await;
    assert_eq!(
        (report["succeeded"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(3)),
        "{report}"
    );
    assert_eq!(item(&report, 0)["result"]["priority"], "critical");
    assert_eq!(item(&report, 1)["error"]["kind"], "not_found");
    assert!(
        item(&report, 1)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("999999")
    );
    assert_eq!(item(&report, 2)["error"]["kind"], "conflict");
    assert_eq!(item(&report, 3)["error"]["kind"], "validation_error");
    // effects: a changed with its comment, b untouched by the stale change
    let log = tools.ok("ticket_changelog", json!({"id": a})).await;
    assert!(
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["field"] == "comment" && e["new_value"] == "batch comment")
    );
    let b_now = tools.ok("ticket_get", json!({"id": b})).await;
    assert_eq!(b_now["fields"]["priority"], "major");
}

#[tokio::test]
async fn batch_delete_with_a_missing_id_deletes_the_others() {
    let tools = Tools::anon().await;
    let created = tools
        .ok(
            "ticket_batch_create",
            json!({"tickets": [{"summary": "bd one"}, {"summary": "bd two"}]}),
        )
        .await;
    let a = created["items"][0]["result"]["id"].as_i64().unwrap();
    let b = created["items"][1]["result"]["id"].as_i64().unwrap();
    tools.guard_ticket_numbers().await;
    let report = tools
        .ok("ticket_batch_delete", json!({"ids": [a, 999998, b]}))
        .await;
    assert_eq!(
        (report["succeeded"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(1)),
        "{report}"
    );
    assert_eq!(item(&report, 1)["error"]["kind"], "not_found");
    assert_eq!(item(&report, 2)["result"]["id"], b);
    for id in [a, b] {
        let gone = tools.fail("ticket_get", json!({"id": id})).await;
        assert_eq!(gone.kind, ErrorKind::NotFound);
    }
}

#[tokio::test]
async fn batches_over_the_limit_or_empty_are_refused_whole() {
    let tools = Tools::anon().await;
    let ids: Vec<usize> = (1..=MAX_BATCH_SIZE + 1).collect();
    let over = tools.fail("ticket_batch_delete", json!({"ids": ids})).await;
    assert_eq!(over.kind, ErrorKind::Validation);
    assert!(over.text.contains("/ids"), "{}", over.text);
    let empty = tools
        .fail("ticket_batch_create", json!({"tickets": []}))
        .await;
    assert_eq!(empty.kind, ErrorKind::Validation);
}
