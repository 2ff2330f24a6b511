//! The Landlock ruleset applied to every command, tested with the argument checks turned off
//! (`confine_path_arguments = false`) so that only the kernel stands between the command and
//! the file system: each rule group is exercised by a real program trying to cross it.

mod common;

use std::io::Read;

use common::{DENIED_SECRET, Fixture, OUTSIDE_SECRET};
use system_tools_mcp::sandbox::NamespaceMode;
use system_tools_mcp::sandbox::{
    ErrorKind, KernelSandboxMode, ProcessContainment, REQUIRED_ABI, Sandbox, SandboxConfig,
    kernel_abi,
};
use system_tools_mcp::tools::{CommandOutput, execute_command};

/// Programs that can read, write, list, search, link, signal and connect.
const PROGRAMS: &[&str] = &[
    "cat", "ls", "grep", "sort", "cp", "tee", "ln", "find", "kill", "bash", "head", "echo",
];

fn config(fx: &Fixture) -> SandboxConfig {
    let mut c = fx.config();
    c.allowed_commands = PROGRAMS.iter().map(|s| s.to_string()).collect();
    c.command_timeouts.clear();
    c.command_timeout_secs = 10.0;
    c.confine_path_arguments = false;
    // Landlock alone: these tests check the second layer without the namespaces around it
    // (tests/isolation.rs checks the layers together).
    c.command_namespaces = NamespaceMode::Off;
    c
}

fn kernel_only(fx: &Fixture) -> Sandbox {
    Sandbox::from_config(config(fx)).unwrap()
}

async fn run(sb: &Sandbox, command: &str, args: &[&str]) -> CommandOutput {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    execute_command(sb, command, &args, None, None)
        .await
        .unwrap_or_else(|e| panic!("{command} {args:?}: {e}"))
}

/// The command failed, said why on stderr, and printed no secret.
fn assert_blocked(out: &CommandOutput, why: &str) {
    assert!(!out.success, "{why}: succeeded: {out:?}");
    for secret in [OUTSIDE_SECRET, DENIED_SECRET] {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{why}: leaked: {out:?}"
        );
    }
}

fn permission_denied(out: &CommandOutput) -> bool {
    out.stderr.contains("Permission denied")
}

#[test]
fn this_kernel_enforces_the_ruleset() {
    let fx = Fixture::new();
    let report = kernel_only(&fx).kernel_report();
    assert_eq!(report.kernel_abi, kernel_abi());
    assert!(
        report.kernel_abi >= REQUIRED_ABI,
        "these machines have Landlock ABI >= {REQUIRED_ABI}: {report:?}"
    );
    assert_eq!(report.status, "enforced");
    assert_eq!(report.rules.len(), 5, "{report:?}");
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        !text.contains(&fx.root.display().to_string()),
        "the report names no host path: {text}"
    );
}

#[tokio::test]
async fn reading_outside_the_allowed_paths_is_denied() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    let outside = fx.outside.join("secret.txt");
    for args in [
        vec![outside.to_str().unwrap()],
        vec!["../outside/secret.txt"],
        vec!["link_out"],
        vec!["dirlink_out/secret.txt"],
        vec!["/etc/passwd"],
    ] {
        let out = run(&sb, "cat", &args).await;
        assert_blocked(&out, &format!("cat {args:?}"));
        assert!(permission_denied(&out), "{out:?}");
    }
}

#[tokio::test]
async fn denied_paths_stay_denied_inside_the_allowed_tree() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    for (program, args) in [
        ("cat", vec!["secret/key.txt"]),
        ("cat", vec!["link_denied"]),
        ("grep", vec!["-r", "SECRET", "secret"]),
        ("ls", vec!["secret"]),
        ("tee", vec!["secret/planted.txt"]),
    ] {
        let out = run(&sb, program, &args).await;
        assert_blocked(&out, &format!("{program} {args:?}"));
    }
    assert!(!fx.root.join("secret/planted.txt").exists());
    // `sub` holds no denied path: it is granted whole.
    let out = run(&sb, "grep", &["-r", "inner", "sub"]).await;
    assert!(out.success, "{out:?}");
    // The root holds `secret`, so it is split: its children are granted one by one, the root
    // itself cannot be listed and new entries cannot be made in it.
    let out = run(&sb, "ls", &["."]).await;
    assert!(!out.success && permission_denied(&out), "{out:?}");
    let out = run(&sb, "cp", &["notes.txt", "made_in_root.txt"]).await;
    assert!(!out.success, "{out:?}");
    let out = run(&sb, "cp", &["notes.txt", "sub/copy.txt"]).await;
    assert!(out.success, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(fx.root.join("sub/copy.txt")).unwrap(),
        "hello notes\n"
    );
    let out = run(&sb, "cat", &["notes.txt"]).await;
    assert_eq!(out.stdout, "hello notes\n");
}

#[tokio::test]
async fn recursive_programs_do_not_follow_symlinks_out() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    for args in [
        vec!["-R", "SECRET", "sub", "dirlink_out", "link_out"],
        vec!["-r", "SECRET", "sub", "link_denied"],
    ] {
        let out = run(&sb, "grep", &args).await;
        assert_blocked(&out, &format!("grep {args:?}"));
    }
    let out = run(&sb, "ls", &["-RL", "dirlink_out"]).await;
    assert_blocked(&out, "ls -RL");
    assert!(!out.stdout.contains("deep.txt"), "{out:?}");
}

#[tokio::test]
async fn writing_outside_is_denied() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    let target = fx.outside.join("planted.txt");
    let target = target.to_str().unwrap();
    for (program, args) in [
        ("cp", vec!["notes.txt", target]),
        ("tee", vec![target]),
        ("sort", vec!["-o", target, "notes.txt"]),
        ("sort", vec![&format!("-o{target}"), "notes.txt"]),
        ("ln", vec!["-s", "/etc/passwd", target]),
        ("cp", vec!["notes.txt", "/tmp/"]),
    ] {
        let out = run(&sb, program, &args).await;
        assert_blocked(&out, &format!("{program} {args:?}"));
    }
    assert!(!fx.outside.join("planted.txt").exists());
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_cannot_be_made() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    let outside = fx.outside.join("secret.txt");
    let out = run(&sb, "ln", &[outside.to_str().unwrap(), "sub/hard"]).await;
    assert_blocked(&out, "ln outside sub/hard");
    assert!(!fx.root.join("sub/hard").exists());
}

#[tokio::test]
async fn only_allowed_programs_and_their_interpreters_execute() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    std::fs::write(fx.root.join("sub/data"), "b\na\n").unwrap();
    // An allowed program starting another through its own options.
    let out = run(
        &sb,
        "sort",
        &[
            "--compress-program=touch",
            "-S",
            "1",
            "-T",
            "sub",
            "sub/data",
        ],
    )
    .await;
    assert!(!out.stdout.contains("pwned"));
    for (program, args) in [
        ("find", vec!["sub", "-exec", "touch", "sub/pwned_find", ";"]),
        ("find", vec!["sub", "-execdir", "touch", "pwned_find", ";"]),
        ("bash", vec!["-c", "touch sub/pwned_bash"]),
        ("bash", vec!["-c", "/usr/bin/env touch sub/pwned_env"]),
    ] {
        let out = run(&sb, program, &args).await;
        assert!(
            out.stderr.contains("Permission denied"),
            "{program} {args:?}: {out:?}"
        );
    }
    for m in ["pwned_find", "pwned_bash", "pwned_env"] {
        assert!(!fx.root.join("sub").join(m).exists(), "{m} was created");
    }
    // The allowed ones still run each other (`find -exec cat` reads inside the sandbox).
    let out = run(
        &sb,
        "find",
        &["sub", "-name", "inner.txt", "-exec", "cat", "{}", ";"],
    )
    .await;
    assert_eq!(out.stdout, "inner\n", "{out:?}");
}

#[tokio::test]
async fn no_proc_at_all() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    let environ = format!("/proc/{}/environ", std::process::id());
    std::os::unix::fs::symlink(&environ, fx.root.join("sub/env_link")).unwrap();
    for args in [
        vec![environ.as_str()],
        vec!["sub/env_link"],
        vec!["/proc/self/environ"],
        vec!["/proc/1/cmdline"],
        vec!["/proc/self/root/etc/passwd"],
    ] {
        let out = run(&sb, "cat", &args).await;
        assert_blocked(&out, &format!("cat {args:?}"));
        assert!(!out.stdout.contains("PATH="), "{out:?}");
    }
    let out = run(&sb, "ls", &["/proc"]).await;
    assert_blocked(&out, "ls /proc");
}

#[tokio::test]
async fn tcp_connect_and_bind_are_denied_unless_configured() {
    let fx = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("echo hello > /dev/tcp/127.0.0.1/{port}");
    let sb = kernel_only(&fx);
    let out = run(&sb, "bash", &["-c", &connect]).await;
    assert!(!out.success && permission_denied(&out), "{out:?}");
    assert!(listener.accept().is_err(), "a connection got through");

    // With the port configured, the same command connects.
    let mut c = config(&fx);
    c.command_tcp_connect = vec![port];
    let sb = Sandbox::from_config(c).unwrap();
    let out = run(&sb, "bash", &["-c", &connect]).await;
    assert!(out.success, "{out:?}");
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello\n");
}

/// `kill` failed because the kernel refused the signal (Landlock's signal scope), not
/// because there was no such process.
fn assert_signal_refused(out: &CommandOutput, what: &str) {
    assert!(!out.success, "{what}: {out:?}");
    assert!(
        out.stderr.contains("Operation not permitted"),
        "{what}: {out:?}"
    );
}

#[tokio::test]
async fn signals_to_processes_outside_the_command_are_denied() {
    let fx = Fixture::new();
    let sb = kernel_only(&fx);
    // The server itself: alive whatever else runs, and a harmless signal.
    let server = std::process::id().to_string();
    let out = run(&sb, "kill", &["-0", &server]).await;
    assert_signal_refused(&out, "kill -0 of the server");
    // A process of the server's that is no command. Under the subreaper containment every
    // call's end kills the server's children that are no live command (this test's own
    // included, at any moment, from the other tests' calls), so it is only a stable target
    // under cgroups.
    if sb.process_containment() == ProcessContainment::Cgroup {
        let mut victim = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = victim.id().to_string();
        for signal in ["-TERM", "-KILL", "-0"] {
            let out = run(&sb, "kill", &[signal, &pid]).await;
            assert_signal_refused(&out, &format!("kill {signal}"));
        }
        assert!(
            victim.try_wait().unwrap().is_none(),
            "the victim was killed"
        );
        victim.kill().unwrap();
        victim.wait().unwrap();
    }
    // Within its own domain a command still signals its children.
    let out = run(
        &sb,
        "bash",
        &["-c", "sleep 5 & kill -TERM $! && wait; echo done"],
    )
    .await;
    assert!(out.stdout.ends_with("done\n"), "{out:?}");
}

#[tokio::test]
async fn abstract_unix_sockets_outside_are_out_of_reach() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("system-tools-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let fx = Fixture::new();
    let mut c = config(&fx);
    c.allowed_commands.push("perl".to_string());
    let sb = Sandbox::from_config(c).unwrap();
    let script = format!(
        "use Socket; socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_un(\"\\0{name}\")) or die \"connect: $!\\n\"; print \"connected\\n\";"
    );
    let out = run(&sb, "perl", &["-e", &script]).await;
    assert!(!out.success, "{out:?}");
    assert!(
        out.stderr.contains("connect: Operation not permitted"),
        "{out:?}"
    );
    assert!(listener.accept().is_err(), "a connection got through");
    // Abstract sockets made inside the command's own domain still work.
    let inside = "use Socket; socket(my $l, PF_UNIX, SOCK_STREAM, 0) or die; \
                  bind($l, pack_sockaddr_un(\"\\0st-inside\")) or die \"bind: $!\"; listen($l, 1); \
                  socket(my $c, PF_UNIX, SOCK_STREAM, 0) or die; \
                  connect($c, pack_sockaddr_un(\"\\0st-inside\")) or die \"connect: $!\"; print \"ok\\n\";";
    let out = run(&sb, "perl", &["-e", inside]).await;
    assert_eq!(out.stdout, "ok\n", "{out:?}");
}

#[tokio::test]
async fn commands_are_refused_without_the_needed_abi_unless_best_effort() {
    let fx = Fixture::new();
    let mut c = config(&fx);
    c.landlock_abi = Some(0);
    let sb = Sandbox::from_config(c.clone()).unwrap();
    let err = execute_command(&sb, "echo", &["hi".to_string()], None, None)
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    let text = err.to_tool_text();
    assert!(text.contains("no Landlock support"), "{text}");
    assert!(text.contains("best_effort"), "{text}");
    assert_eq!(sb.kernel_report().status, "commands_refused");

    c.landlock_abi = Some(REQUIRED_ABI - 1);
    let sb = Sandbox::from_config(c.clone()).unwrap();
    let err = execute_command(&sb, "echo", &[], None, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ABI is 5"), "{err}");

    c.landlock_abi = Some(0);
    c.kernel_sandbox = KernelSandboxMode::BestEffort;
    let sb = Sandbox::from_config(c).unwrap();
    assert_eq!(sb.kernel_report().status, "none");
    let out = run(&sb, "echo", &["hi"]).await;
    assert_eq!(out.stdout, "hi\n");
}
