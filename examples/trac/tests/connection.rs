//! Connection handling against a real tracd: reuse, outage and recovery,
//! timeout. These tests stop and freeze the servers, so they run one at a
//! time and have a test binary (and tracd pair) of their own.

mod common;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use tokio::sync::Mutex;
use trac_mcp::client::{ErrorKind, NewTicket, TracError};

use common::servers;

static SERIAL: Mutex<()> = Mutex::const_new(());

/// Local ports of this machine's established TCP connections to `port` on
/// 127.0.0.1 (from /proc/net/tcp).
fn client_ports_to(port: u16) -> BTreeSet<u16> {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let hex_port = |addr: &str| u16::from_str_radix(addr.rsplit(':').next().unwrap_or(""), 16).ok();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (local, remote, state) = (cols.get(1)?, cols.get(2)?, cols.get(3)?);
            (*state == "01" && hex_port(remote) == Some(port))
                .then(|| hex_port(local))
                .flatten()
        })
        .collect()
}

#[tokio::test]
async fn sequential_calls_reuse_one_connection() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let trac = s.anon_client();
    let mut seen = BTreeSet::new();
    for _ in 0..5 {
        trac.ping().await.unwrap();
        seen.extend(client_ports_to(s.anon_port));
    }
    assert_eq!(
        seen.len(),
        1,
        "expected one pooled connection, saw local ports {seen:?}"
    );
    // a clone shares the pool
    trac.clone().ping().await.unwrap();
    seen.extend(client_ports_to(s.anon_port));
    assert_eq!(seen.len(), 1, "{seen:?}");
}

#[tokio::test]
async fn stopped_tracd_is_a_connection_error_naming_the_url_then_recovers() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let trac = s.anon_client();
    let id = trac
        .create_ticket(&NewTicket::new("survives a restart", ""))
        .await
        .unwrap();

    s.stop();
    let err = trac.get_ticket(id).await.unwrap_err();
    let expected_url = format!("{}/rpc", s.anon_url());
    match &err {
        TracError::Connect { url, reason } => {
            assert_eq!(url, &expected_url);
            assert!(reason.to_lowercase().contains("refused"), "{reason}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.to_string().contains(&expected_url), "{err}");
    assert_eq!(err.url(), Some(expected_url.as_str()));

    s.restart();
    // same client, same pool: the dead connection is not a problem
    let ticket = trac.get_ticket(id).await.unwrap();
    assert_eq!(ticket.summary(), "survives a restart");
    assert!(s.auth_client().ping().await.is_ok());

    // Restart behind an idle pooled connection, then write. A write is never
    // retried: if it went out on the dead connection it fails as Unavailable
    // and was not applied; either way the following call works.
    s.stop();
    s.restart();
    let kw = common::unique("restart");
    match trac
        .create_ticket(&NewTicket::new("written after restart", "").field("keywords", kw.as_str()))
        .await
    {
        Ok(new_id) => {
            eprintln!("write after restart: applied (the pool had noticed the closed connection)");
            assert_eq!(
                trac.get_ticket(new_id).await.unwrap().field("keywords"),
                Some(kw.as_str())
            );
        }
        Err(e) => {
            eprintln!("write after restart: refused on the stale connection: {e}");
            assert!(matches!(e, TracError::Transport { .. }), "{e:?}");
            assert_eq!(e.kind(), ErrorKind::Unavailable);
            assert!(
                trac.query_tickets(&format!("keywords~={kw}"))
                    .await
                    .unwrap()
                    .is_empty()
            );
        }
    }
    assert!(trac.ping().await.is_ok());
}

#[tokio::test]
async fn frozen_tracd_is_a_timeout_naming_the_url_then_recovers() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let trac = s.client_with(s.anon_url(), None, Duration::from_millis(1500));
    trac.ping().await.unwrap();

    let pid = s.anon_pid().to_string();
    let signal = |sig: &str| {
        let status = Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    let result = trac.ping().await;
    signal("-CONT");
    let err = result.unwrap_err();
    match &err {
        TracError::Timeout { url, timeout } => {
            assert_eq!(url, &format!("{}/rpc", s.anon_url()));
            assert_eq!(*timeout, Duration::from_millis(1500));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(
        trac.ping().await.is_ok(),
        "tracd answers again after SIGCONT"
    );
}

#[tokio::test]
async fn start_script_refuses_taken_or_bad_ports_clearly() {
    let _serial = SERIAL.lock().await;
    let s = servers();
    let blocker = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = blocker.local_addr().unwrap().port();
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run_dir = s.run_dir.with_extension("ports");
    let env = |anon: String, auth: String| {
        vec![
            ("TRAC_RUN_DIR", run_dir.display().to_string()),
            ("TRAC_ANON_PORT", anon),
            ("TRAC_AUTH_PORT", auth),
        ]
    };
    let err =
        common::run_script("start.sh", &env(taken.to_string(), free.to_string())).unwrap_err();
    assert!(
        err.contains(&format!("port {taken} on 127.0.0.1 is already in use")),
        "{err}"
    );
    assert!(!run_dir.join("anon.pid").exists() && !run_dir.join("auth.pid").exists());

    let err = common::run_script("start.sh", &env("http".into(), free.to_string())).unwrap_err();
    assert!(err.contains("invalid port 'http'"), "{err}");
    let err = common::run_script("start.sh", &env(free.to_string(), free.to_string())).unwrap_err();
    assert!(err.contains("are both"), "{err}");
    // the fixture's servers were not disturbed
    assert!(s.anon_client().ping().await.is_ok());
    drop(blocker);
    let _ = std::fs::remove_dir_all(&run_dir);
}
