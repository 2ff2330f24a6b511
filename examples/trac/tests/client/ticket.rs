use trac_mcp::client::{ErrorKind, NewTicket, TicketUpdate, TracError};

use crate::common::{servers, unique};

#[tokio::test]
async fn create_get_update_changelog_resolve() {
    let trac = servers().anon_client();
    let kw = unique("kw");
    let new = NewTicket::new("Crash on start ü€", "line1\nline2")
        .field("keywords", kw.as_str())
        .field("priority", "minor")
        .field("milestone", "milestone2");
    let id = trac.create_ticket(&new).await.unwrap();
    assert!(id > 0);

    let t = trac.get_ticket(id).await.unwrap();
    assert_eq!(t.id, id);
    assert_eq!(t.summary(), "Crash on start ü€");
    assert_eq!(
        t.field("description")
            .map(|d| d.replace("\r\n", "\n"))
            .as_deref(),
        Some("line1\nline2")
    );
    assert_eq!(
        (t.status(), t.field("priority"), t.field("milestone")),
        ("new", Some("minor"), Some("milestone2"))
    );
    assert_eq!(t.field("keywords"), Some(kw.as_str()));
    assert!(!t.ts.is_empty());

    // query finds it by its unique keyword
    assert_eq!(
        trac.query_tickets(&format!("keywords~={kw}"))
            .await
            .unwrap(),
        vec![id]
    );
    assert!(
        trac.query_tickets("status!=closed&max=0")
            .await
            .unwrap()
            .contains(&id)
    );

    // update based on the current _ts
    let updated = trac
        .update_ticket(
            id,
            &TicketUpdate::new("first comment")
                .based_on(&t.ts)
                .field("priority", "critical"),
        )
        .await
        .unwrap();
    assert_eq!(updated.field("priority"), Some("critical"));
    assert_ne!(updated.ts, t.ts);

    // the old _ts is now stale: conflict, and nothing changes
    let err = trac
        .update_ticket(
            id,
            &TicketUpdate::new("late")
                .based_on(&t.ts)
                .field("priority", "trivial"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    assert!(
        err.trac_message()
            .contains("modified since you started editing"),
        "{err}"
    );
    assert_eq!(
        trac.get_ticket(id).await.unwrap().field("priority"),
        Some("critical")
    );

    // workflow: resolve needs the resolution input that getActions describes
    let actions = trac.ticket_actions(id).await.unwrap();
    let resolve = actions
        .iter()
        .find(|a| a.name == "resolve")
        .expect("resolve action");
    let input = &resolve.inputs[0];
    assert!(input.options.iter().any(|o| o == "fixed"), "{input:?}");
    assert!(actions.iter().any(|a| a.name == "leave"));
    let closed = trac
        .update_ticket(
            id,
            &TicketUpdate::new("done")
                .action("resolve")
                .based_on(&updated.ts)
                .field(&input.name, "fixed"),
        )
        .await
        .unwrap();
    assert_eq!(
        (closed.status(), closed.field("resolution")),
        ("closed", Some("fixed"))
    );

    let log = trac.ticket_changelog(id).await.unwrap();
    let has = |field: &str, new: &str| log.iter().any(|e| e.field == field && e.new_value == new);
    assert!(has("comment", "first comment"), "{log:?}");
    assert!(
        has("priority", "critical") && has("status", "closed") && has("resolution", "fixed"),
        "{log:?}"
    );
    assert!(log.iter().all(|e| e.author == "anonymous" && e.permanent));
    assert!(log.windows(2).all(|w| w[0].time <= w[1].time));
}

#[tokio::test]
async fn fields_describe_standard_fields() {
    let fields = servers().anon_client().ticket_fields().await.unwrap();
    let milestone = fields
        .iter()
        .find(|f| f.name == "milestone")
        .expect("milestone field");
    assert_eq!(milestone.kind, "select");
    assert!(
        milestone.options.iter().any(|o| o == "milestone1"),
        "{milestone:?}"
    );
    let priority = fields.iter().find(|f| f.name == "priority").unwrap();
    assert!(priority.options.contains(&"major".to_string()));
    assert!(
        fields
            .iter()
            .any(|f| f.name == "summary" && f.label == "Summary")
    );
    assert!(fields.iter().all(|f| !f.custom));
}

#[tokio::test]
async fn delete_then_get_is_not_found() {
    let trac = servers().anon_client();
    let id = trac
        .create_ticket(&NewTicket::new("to delete", ""))
        .await
        .unwrap();
    // Trac on SQLite numbers a new ticket max + 1: a newer ticket keeps this
    // number from being reused by a concurrent test once it is deleted
    trac.create_ticket(&NewTicket::new("guard", ""))
        .await
        .unwrap();
    trac.delete_ticket(id).await.unwrap();
    let err = trac.get_ticket(id).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::NotFound, Some(404))
    );
    let err = trac.delete_ticket(id).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    for result in [
        trac.ticket_changelog(id).await.map(drop),
        trac.ticket_actions(id).await.map(drop),
        trac.update_ticket(id, &TicketUpdate::new("x"))
            .await
            .map(drop),
    ] {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::NotFound);
    }
}

#[tokio::test]
async fn bad_input_is_reported() {
    let trac = servers().anon_client();
    let err = trac
        .create_ticket(&NewTicket::new("  ", "d"))
        .await
        .unwrap_err();
    assert!(matches!(err, TracError::InvalidArgument(_)), "{err:?}");
    let err = trac
        .update_ticket(1, &TicketUpdate::new("c").action(""))
        .await
        .unwrap_err();
    assert!(matches!(err, TracError::InvalidArgument(_)), "{err:?}");

    let id = trac
        .create_ticket(&NewTicket::new("action test", ""))
        .await
        .unwrap();
    let err = trac
        .update_ticket(id, &TicketUpdate::new("c").action("fly"))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::InvalidInput, Some(1))
    );
    assert!(err.trac_message().contains("invalid action 'fly'"), "{err}");
}
