//! Permission and authentication faults on the basic-auth server.

use std::time::Duration;

use trac_mcp::client::{ErrorKind, MilestoneChanges, NewTicket, TracError};

use crate::common::{PASSWORD, USER, servers};

#[tokio::test]
async fn user_without_ticket_admin_gets_permission_denied() {
    let s = servers();
    let bob = s.auth_client();
    let info = bob.ping().await.unwrap();
    assert_eq!(
        (info.user.as_deref(), info.endpoint),
        (Some(USER), format!("{}/login/rpc", s.auth_url()))
    );

    // authenticated users may create tickets (Trac default), not delete them
    let id = bob
        .create_ticket(&NewTicket::new("bob's ticket", ""))
        .await
        .unwrap();
    assert_eq!(
        bob.get_ticket(id).await.unwrap().field("reporter"),
        Some(USER)
    );
    let err = bob.delete_ticket(id).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::PermissionDenied, Some(403)),
        "{err}"
    );
    assert!(err.to_string().contains("TICKET_ADMIN"), "{err}");
    assert!(
        bob.get_ticket(id).await.is_ok(),
        "the ticket must survive the refused delete"
    );

    let err = bob
        .create_milestone("bobs-milestone", &MilestoneChanges::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    assert_eq!(
        bob.get_ticket(999_999).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );

    // the same refusal inside a batch is per item
    let results = bob.delete_tickets(&[id]).await.unwrap();
    assert_eq!(
        results[0].as_ref().unwrap_err().kind(),
        ErrorKind::PermissionDenied
    );
}

#[tokio::test]
async fn anonymous_without_xml_rpc_is_refused() {
    let s = servers();
    let anon = s.client_with(s.auth_url(), None, Duration::from_secs(30));
    let err = anon.api_version().await.unwrap_err();
    assert_eq!(
        (err.kind(), err.fault_code()),
        (ErrorKind::PermissionDenied, Some(403)),
        "{err}"
    );
    assert!(err.to_string().contains("XML_RPC"), "{err}");
}

#[tokio::test]
async fn wrong_password_is_http_401_every_time() {
    let s = servers();
    let bad = s.client_with(s.auth_url(), Some((USER, "WRONG")), Duration::from_secs(30));
    // a large body makes a reused half-read connection fail loudly
    let big = NewTicket::new("x", "y".repeat(200_000));
    for _ in 0..3 {
        let err = bad.create_ticket(&big).await.unwrap_err();
        match &err {
            TracError::Http {
                status: 401,
                url,
                message,
            } => {
                assert_eq!(url, &format!("{}/login/rpc", s.auth_url()));
                assert!(message.contains("TRAC_PASSWORD"), "{message}");
            }
            other => panic!("expected HTTP 401, got {other:?}"),
        }
        assert_eq!(err.kind(), ErrorKind::AuthenticationFailed);
    }
    // the right password on the same server still works
    let good = s.client_with(
        s.auth_url(),
        Some((USER, PASSWORD)),
        Duration::from_secs(30),
    );
    assert!(good.ping().await.is_ok());
}

#[tokio::test]
async fn wrong_project_path_is_http_404() {
    let s = servers();
    let lost = s.client_with(
        format!("{}/no/such/project", s.anon_url()),
        None,
        Duration::from_secs(30),
    );
    let err = lost.ping().await.unwrap_err();
    assert!(
        matches!(&err, TracError::Http { status: 404, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("/no/such/project/rpc"), "{err}");
}
