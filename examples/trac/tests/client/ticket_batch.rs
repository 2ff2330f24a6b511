use trac_mcp::client::{ErrorKind, NewTicket, TicketUpdate};

use crate::common::{servers, unique};

#[tokio::test]
async fn batch_create_update_delete_with_one_bad_item_each() {
    let trac = servers().anon_client();
    let kw = unique("batch");
    let created = trac
        .create_tickets(&[
            NewTicket::new("batch one", "").field("keywords", kw.as_str()),
            NewTicket::new("", "no summary: Trac refuses this one"),
            NewTicket::new("batch three", "").field("keywords", kw.as_str()),
        ])
        .await
        .unwrap();
    assert_eq!(created.len(), 3);
    let bad = created[1].as_ref().unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    assert!(bad.trac_message().contains("summary"), "{bad}");
    let (a, c) = (*created[0].as_ref().unwrap(), *created[2].as_ref().unwrap());
    let mut found = trac
        .query_tickets(&format!("keywords~={kw}"))
        .await
        .unwrap();
    found.sort();
    assert_eq!(found, vec![a, c]);

    // batch get: two real, one missing
    let got = trac.get_tickets(&[a, 999_999, c]).await.unwrap();
    assert_eq!(got[0].as_ref().unwrap().summary(), "batch one");
    assert_eq!(got[1].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(got[2].as_ref().unwrap().summary(), "batch three");
    let ts_a = got[0].as_ref().unwrap().ts.clone();

    // batch update: a good one, a stale one, a missing one
    let updated = trac
        .update_tickets(&[
            (
                a,
                TicketUpdate::new("batch comment")
                    .based_on(&ts_a)
                    .field("priority", "blocker"),
            ),
            (
                c,
                TicketUpdate::new("stale")
                    .based_on("1")
                    .field("priority", "trivial"),
            ),
            (999_999, TicketUpdate::new("nobody")),
        ])
        .await
        .unwrap();
    assert_eq!(
        updated[0].as_ref().unwrap().field("priority"),
        Some("blocker")
    );
    assert_eq!(updated[1].as_ref().unwrap_err().kind(), ErrorKind::Conflict);
    assert_eq!(updated[2].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(
        trac.get_ticket(c).await.unwrap().field("priority"),
        Some("major")
    );

    // batch delete: one missing id in the middle does not stop the others
    // (a newer ticket first, so the deleted numbers are not reused meanwhile)
    trac.create_ticket(&NewTicket::new("guard", ""))
        .await
        .unwrap();
    let deleted = trac.delete_tickets(&[a, 999_999, c]).await.unwrap();
    assert!(deleted[0].is_ok() && deleted[2].is_ok(), "{deleted:?}");
    assert_eq!(deleted[1].as_ref().unwrap_err().kind(), ErrorKind::NotFound);
    for id in [a, c] {
        assert_eq!(
            trac.get_ticket(id).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
    assert!(trac.create_tickets(&[]).await.unwrap().is_empty());
}
