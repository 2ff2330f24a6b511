//! Trac's refusals as tool errors: missing objects, a user lacking
//! TICKET_ADMIN on the basic-auth server, rejected credentials.

use std::time::Duration;

use mcp_toolbelt::ErrorKind;
use serde_json::json;

use crate::Tools;
use crate::common::{USER, servers, unique};

#[tokio::test]
async fn missing_tickets_are_not_found_for_every_ticket_read() {
    let tools = Tools::anon().await;
    for tool in [
        "ticket_get",
        "ticket_changelog",
        "ticket_actions",
        "ticket_delete",
    ] {
        let err = tools.fail(tool, json!({"id": 987654})).await;
        assert_eq!(err.kind, ErrorKind::NotFound, "{tool}: {}", err.text);
        assert!(
            err.text
                .starts_with("Error (not_found): Ticket 987654 does not exist"),
            "{}",
            err.text
        );
    }
    let err = tools
        .fail("ticket_update", json!({"id": 987654, "comment": "hi"}))
        .await;
    assert_eq!(err.kind, ErrorKind::NotFound, "{}", err.text);
    let err = tools
        .fail("wiki_get", json!({"name": unique("Missing")}))
        .await;
    assert_eq!(err.kind, ErrorKind::NotFound, "{}", err.text);
    let err = tools
        .fail("milestone_get", json!({"name": unique("missing")}))
        .await;
    assert_eq!(err.kind, ErrorKind::NotFound, "{}", err.text);
}

#[tokio::test]
async fn a_user_without_ticket_admin_gets_permission_denied_from_trac() {
    let bob = Tools::new(servers().auth_client()).await;
    // authenticated users may create tickets (a Trac default) ...
    let id = bob
        .ok("ticket_create", json!({"summary": "bob's ticket"}))
        .await["id"]
        .clone();
    let ticket = bob.ok("ticket_get", json!({"id": id})).await;
    assert_eq!(ticket["fields"]["reporter"], USER);
    // ... but not delete them: Trac refuses, although our filter let the call through
    let denied = bob.fail("ticket_delete", json!({"id": id})).await;
    assert_eq!(denied.kind, ErrorKind::PermissionDenied, "{}", denied.text);
    assert!(denied.text.contains("TICKET_ADMIN"), "{}", denied.text);
    assert!(
        denied
            .action()
            .contains("The caller may not do this ticket operation"),
        "the ticket category's action: {}",
        denied.text
    );
    bob.ok("ticket_get", json!({"id": id})).await;

    let batch = bob.ok("ticket_batch_delete", json!({"ids": [id]})).await;
    assert_eq!(
        batch["items"][0]["error"]["kind"], "permission_denied",
        "{batch}"
    );
    bob.ok("ticket_get", json!({"id": id})).await;

    let name = unique("bobs-");
    let milestone = bob.fail("milestone_create", json!({"name": name})).await;
    assert_eq!(
        milestone.kind,
        ErrorKind::PermissionDenied,
        "{}",
        milestone.text
    );
    assert!(
        milestone.action().contains("milestone"),
        "{}",
        milestone.text
    );
    let anon = Tools::anon().await;
    assert_eq!(
        anon.fail("milestone_get", json!({"name": name})).await.kind,
        ErrorKind::NotFound
    );
}

#[tokio::test]
async fn rejected_credentials_say_so() {
    let s = servers();
    let wrong = Tools::new(s.client_with(
        s.auth_url(),
        Some((USER, "not-the-password")),
        Duration::from_secs(30),
    ))
    .await;
    let err = wrong.fail("ping", json!({})).await;
    assert_eq!(err.kind, ErrorKind::PermissionDenied, "{}", err.text);
    assert!(err.text.contains("401"), "{}", err.text);
    assert!(err.action().contains("--password"), "{}", err.text);
}
