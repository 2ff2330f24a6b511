//! A command's whole process tree dies with its call — on exit, time-out and cancellation —
//! including descendants that start their own session (`setsid`) or double-fork away from
//! their parent, under both containments (a per-call cgroup v2 and the child subreaper).

mod common;

use std::path::Path;
use std::time::Duration;

use common::Fixture;
use system_tools_mcp::sandbox::NamespaceMode;
use system_tools_mcp::sandbox::{ErrorKind, ProcessContainment, Sandbox};
use system_tools_mcp::tools::execute_command;

/// `sh`, `setsid` and `sleep` allowed; the pid of the detached `sleep` lands in `sub/pid`.
/// `None` (with a note) when this machine cannot give the server a cgroup.
fn sandbox(fx: &Fixture, containment: ProcessContainment) -> Option<Sandbox> {
    let mut c = fx.config();
    for p in ["sh", "setsid"] {
        c.allowed_commands.push(p.to_string());
    }
    c.command_timeouts.insert("sh".to_string(), 2.0);
    c.process_containment = containment;
    // The containment alone, pids as the host sees them (tests/isolation.rs covers the pid
    // namespace).
    c.command_namespaces = NamespaceMode::Off;
    match Sandbox::from_config(c) {
        Ok(sb) => Some(sb),
        Err(e) if containment == ProcessContainment::Cgroup => {
            eprintln!("skipped: no cgroup can be made here: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Whether `pid` is still a running (not zombie) process.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(s) => {
            let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z") | Some("X"))
        }
    }
}

async fn wait_for_pid(file: &Path) -> u32 {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} was never written", file.display());
}

/// Gone within a bounded wait (the kill is asynchronous in the kernel).
async fn assert_gone(pid: u32, what: &str) {
    for _ in 0..200 {
        if !running(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Do not leave it behind for the other tests.
    let _ = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
    panic!("{what}: detached process {pid} survived its call");
}

fn sh(script: &str) -> Vec<String> {
    vec!["-c".to_string(), script.to_string()]
}

/// A `setsid` child started in the background, then waited for: the time-out kills it.
const WAIT_FOR_DETACHED: &str = "setsid sleep 300 & echo $! > sub/pid; wait";
/// A double fork: the intermediate shell exits at once, leaving an orphan in its own session.
/// It prints `alive` once the orphan is seen running, so the test knows there was something
/// to kill.
const DOUBLE_FORK: &str = "(setsid sh -c 'echo $$ > sub/pid; exec sleep 300' &); \
                           while ! kill -0 $(cat sub/pid 2>/dev/null) 2>/dev/null; do sleep 0.05; done; \
                           echo alive";

async fn timeout_kills_a_setsid_descendant(containment: ProcessContainment) {
    let fx = Fixture::new();
    let Some(sb) = sandbox(&fx, containment) else {
        return;
    };
    let err = execute_command(&sb, "sh", &sh(WAIT_FOR_DETACHED), None, None)
        .await
        .expect_err("sh must time out");
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    let pid = wait_for_pid(&fx.root.join("sub/pid")).await;
    assert_gone(pid, "time-out").await;
}

async fn exit_kills_a_double_forked_orphan(containment: ProcessContainment) {
    let fx = Fixture::new();
    let Some(sb) = sandbox(&fx, containment) else {
        return;
    };
    let out = execute_command(&sb, "sh", &sh(DOUBLE_FORK), None, None)
        .await
        .expect("the shell exits by itself");
    assert_eq!(out.stdout, "alive\n", "{out:?}");
    let pid = wait_for_pid(&fx.root.join("sub/pid")).await;
    assert_gone(pid, "normal exit").await;
}

async fn cancellation_kills_the_tree(containment: ProcessContainment) {
    let fx = Fixture::new();
    let Some(sb) = sandbox(&fx, containment) else {
        return;
    };
    let pid_file = fx.root.join("sub/pid");
    let call = tokio::spawn(async move {
        execute_command(&sb, "sh", &sh(WAIT_FOR_DETACHED), None, None).await
    });
    let pid = wait_for_pid(&pid_file).await;
    assert!(
        running(pid),
        "the detached process runs while the call does"
    );
    // Aborting the task drops the call's future: that is what a cancelled MCP request does.
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    assert_gone(pid, "cancellation").await;
}

#[tokio::test]
async fn cgroup_timeout_kills_a_setsid_descendant() {
    timeout_kills_a_setsid_descendant(ProcessContainment::Cgroup).await;
}

#[tokio::test]
async fn cgroup_exit_kills_a_double_forked_orphan() {
    exit_kills_a_double_forked_orphan(ProcessContainment::Cgroup).await;
}

#[tokio::test]
async fn cgroup_cancellation_kills_the_tree() {
    cancellation_kills_the_tree(ProcessContainment::Cgroup).await;
}

#[tokio::test]
async fn subreaper_timeout_kills_a_setsid_descendant() {
    timeout_kills_a_setsid_descendant(ProcessContainment::Subreaper).await;
}

#[tokio::test]
async fn subreaper_exit_kills_a_double_forked_orphan() {
    exit_kills_a_double_forked_orphan(ProcessContainment::Subreaper).await;
}

#[tokio::test]
async fn subreaper_cancellation_kills_the_tree() {
    cancellation_kills_the_tree(ProcessContainment::Subreaper).await;
}

/// Background children that outlive the command itself are killed when it exits, so the call
/// returns instead of waiting for them to close the output pipes.
#[tokio::test]
async fn background_children_do_not_hold_the_call() {
    let fx = Fixture::new();
    let sb = sandbox(&fx, ProcessContainment::Auto).unwrap();
    let out = execute_command(&sb, "sh", &sh("sleep 300 & echo started"), None, None)
        .await
        .expect("returns once the tree is killed");
    assert_eq!(out.stdout, "started\n");
}
