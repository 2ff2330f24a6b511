use chrono::Utc;
use trac_mcp::client::{ApiVersion, ErrorKind, RpcCall, TracError, Value};

use crate::common::servers;

#[tokio::test]
async fn ping_reports_version_time_and_endpoint() {
    let s = servers();
    let trac = s.anon_client();
    let info = trac.ping().await.unwrap();
    assert_eq!(
        info.api_version,
        ApiVersion {
            epoch: 1,
            major: 1,
            minor: 9
        }
    );
    assert_eq!(info.endpoint, format!("{}/rpc", s.anon_url()));
    assert_eq!(info.user, None);
    let server_time = trac.server_time().await.unwrap();
    // same machine: the server clock is today's clock, not a stored timestamp
    assert!(
        (server_time - Utc::now()).num_minutes().abs() < 10,
        "{server_time}"
    );
    assert_eq!(trac.api_version().await.unwrap().to_string(), "1.1.9");
}

#[tokio::test]
async fn list_methods_names_what_the_tools_need() {
    let methods = servers().anon_client().list_methods().await.unwrap();
    for m in [
        "ticket.query",
        "ticket.get",
        "ticket.changeLog",
        "ticket.getTicketFields",
        "ticket.getActions",
        "ticket.create",
        "ticket.update",
        "ticket.delete",
        "wiki.getPage",
        "wiki.getPageInfo",
        "wiki.getRecentChanges",
        "wiki.putPage",
        "wiki.deletePage",
        "search.performSearch",
        "ticket.milestone.getAll",
        "ticket.milestone.create",
        "system.multicall",
    ] {
        assert!(
            methods.iter().any(|x| x == m),
            "{m} missing from {methods:?}"
        );
    }
}

#[tokio::test]
async fn raw_multicall_gives_a_result_per_item() {
    let trac = servers().anon_client();
    let results = trac
        .multicall(vec![
            RpcCall::new("system.getAPIVersion", vec![]),
            RpcCall::new("ticket.get", vec![Value::Integer(987_654)]),
            RpcCall::new("no.such.method", vec![]),
            RpcCall::new("wiki.getPage", vec![Value::String("WikiStart".into())]),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(
        results[0].as_ref().unwrap(),
        &Value::Array(vec![
            Value::Integer(1),
            Value::Integer(1),
            Value::Integer(9)
        ])
    );
    let e = results[1].as_ref().unwrap_err();
    assert_eq!((e.kind(), e.fault_code()), (ErrorKind::NotFound, Some(404)));
    assert!(
        matches!(e, TracError::Fault { method, .. } if method == "ticket.get"),
        "{e:?}"
    );
    let e = results[2].as_ref().unwrap_err();
    assert_eq!(
        (e.kind(), e.fault_code()),
        (ErrorKind::Upstream, Some(-32601))
    );
    assert!(
        matches!(&results[3], Ok(Value::String(text)) if text.contains("Trac")),
        "{:?}",
        results[3]
    );
    assert!(trac.multicall(vec![]).await.unwrap().is_empty());
}

#[tokio::test]
async fn unknown_method_is_an_upstream_fault() {
    let err = servers()
        .anon_client()
        .call("no.such.method", vec![])
        .await
        .unwrap_err();
    assert_eq!(err.fault_code(), Some(-32601));
    assert_eq!(err.kind(), ErrorKind::Upstream);
}
