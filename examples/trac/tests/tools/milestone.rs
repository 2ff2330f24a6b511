//! The milestone lifecycle: create, get, list, update (describe, complete,
//! rename), delete.

use mcp_toolbelt::ErrorKind;
use serde_json::json;

use crate::Tools;
use crate::common::unique;

#[tokio::test]
async fn milestone_lifecycle() {
    let tools = Tools::anon().await;
    let name = unique("ms-");
    let created = tools
        .ok(
            "milestone_create",
            json!({"name": name, "description": "First cut", "due": "2031-06-30"}),
        )
        .await;
    assert_eq!(created["name"], name.as_str());
    assert_eq!(created["description"], "First cut");
    assert_eq!(created["due"], "2031-06-30T00:00:00Z");
    assert_eq!(created["completed"], serde_json::Value::Null);
    let taken = tools.fail("milestone_create", json!({"name": name})).await;
    assert_eq!(taken.kind, ErrorKind::Conflict, "{}", taken.text);
    assert!(
        taken.action().contains("milestone_update"),
        "{}",
        taken.text
    );

    let got = tools.ok("milestone_get", json!({"name": name})).await;
    assert_eq!(got, created);
    let open = tools.ok("milestone_list", json!({})).await;
    assert!(
        open["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == name.as_str())
    );

    // a ticket on the milestone, to see a rename carry it along
    let ticket = tools
        .ok(
            "ticket_create",
            json!({"summary": "planned", "milestone": name}),
        )
        .await["id"]
        .clone();

    let done = tools
        .ok(
            "milestone_update",
            json!({"name": name, "description": "Shipped", "completed": "2031-07-01T10:00:00Z", "due": ""}),
        )
        .await;
    assert_eq!(done["description"], "Shipped");
    assert_eq!(done["completed"], "2031-07-01T10:00:00Z");
    assert_eq!(done["due"], serde_json::Value::Null);
    let open = tools.ok("milestone_list", json!({})).await;
    assert!(
        !open["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == name.as_str()),
        "completed ones are left out by default"
    );
    let all = tools
        .ok("milestone_list", json!({"include_completed": true}))
        .await;
    assert!(
        all["milestones"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == name.as_str())
    );

    let renamed = format!("{name}-final");
    let moved = tools
        .ok(
            "milestone_update",
            json!({"name": name, "new_name": renamed, "completed": ""}),
        )
        .await;
    assert_eq!(
        (moved["name"].as_str(), &moved["completed"]),
        (Some(renamed.as_str()), &serde_json::Value::Null)
    );
    assert_eq!(
        tools
            .fail("milestone_get", json!({"name": name}))
            .await
            .kind,
        ErrorKind::NotFound
    );
    let t = tools.ok("ticket_get", json!({"id": ticket})).await;
    assert_eq!(t["fields"]["milestone"], renamed.as_str());

    let nothing = tools
        .fail("milestone_update", json!({"name": renamed}))
        .await;
    assert_eq!(nothing.kind, ErrorKind::Validation);
    let bad_date = tools
        .fail("milestone_update", json!({"name": renamed, "due": "soon"}))
        .await;
    assert_eq!(bad_date.kind, ErrorKind::Validation);
    assert!(bad_date.action().contains("YYYY-MM-DD"));

    let deleted = tools.ok("milestone_delete", json!({"name": renamed})).await;
    assert_eq!(deleted["name"], renamed.as_str());
    let gone = tools.fail("milestone_get", json!({"name": renamed})).await;
    assert_eq!(gone.kind, ErrorKind::NotFound);
    assert!(gone.action().contains("milestone_list"), "{}", gone.text);
    assert_eq!(
        tools
            .fail("milestone_delete", json!({"name": renamed}))
            .await
            .kind,
        ErrorKind::NotFound
    );
}
