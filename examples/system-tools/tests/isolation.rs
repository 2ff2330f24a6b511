//! The layers around every command together (namespaces built by bubblewrap, the launcher's
//! `noexec`, rlimits, capability drop, Landlock and seccomp), attacked with the argument
//! checks off (`confine_path_arguments = false`) so that only the kernel stands in the way.
//! Every attack is checked from the host side: the file it aimed at is unchanged, the file it
//! tried to create does not exist, the host process it signalled still runs, the listener it
//! tried to reach accepted nothing. The legitimate uses that the Landlock-only layout blocked
//! (`ls`, `grep -r`, `find`, `sort -o` in a directory holding a denied path) are tests too.
//!
//! An operator-allowed `python3` (with its C modules' directory in `command_exec_paths`) is
//! the attacker's tool: it can make any system call, so what stops it is the kernel.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{DENIED_SECRET, Fixture, OUTSIDE_SECRET, give_to_nobody};
use system_tools_mcp::sandbox::{Sandbox, SandboxConfig};
use system_tools_mcp::tools::{CommandOutput, execute_command};

fn python_c_modules() -> Option<PathBuf> {
    let dir = std::fs::read_dir("/usr/lib").ok()?;
    dir.flatten()
        .map(|e| e.path().join("lib-dynload"))
        .find(|p| p.is_dir() && p.to_string_lossy().contains("python3"))
}

fn config(fx: &Fixture) -> SandboxConfig {
    let mut c = fx.config();
    c.allowed_commands.extend(
        [
            "/usr/bin/python3",
            "ls",
            "grep",
            "find",
            "sort",
            "wc",
            "chmod",
            "touch",
            "id",
            "sh",
        ]
        .map(String::from),
    );
    c.command_timeouts.clear();
    c.command_timeout_secs = 20.0;
    c.confine_path_arguments = false;
    // Python's C modules, and the library `_ctypes` loads (outside the programs' closure).
    c.command_exec_paths = python_c_modules().into_iter().collect();
    c.command_exec_paths.extend(
        [
            "/usr/lib/x86_64-linux-gnu/libffi.so.8",
            "/usr/lib/aarch64-linux-gnu/libffi.so.8",
        ]
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists()),
    );
    c.command_pids_max = 64;
    c.command_memory_max_bytes = 512 * 1024 * 1024;
    c.command_cpu_secs = 2;
    c
}

fn sandbox(fx: &Fixture) -> Sandbox {
    Sandbox::from_config(config(fx)).unwrap()
}

async fn run(sb: &Sandbox, command: &str, args: &[&str]) -> CommandOutput {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    execute_command(sb, command, &args, None, None)
        .await
        .unwrap_or_else(|e| panic!("{command} {args:?}: {e}"))
}

/// Runs a Python attack written into the tree; its stdout is one line per attempt.
async fn python(sb: &Sandbox, fx: &Fixture, name: &str, code: &str) -> CommandOutput {
    let file = fx.root.join(name);
    std::fs::write(&file, code).unwrap();
    give_to_nobody(&file);
    run(sb, "/usr/bin/python3", &[name]).await
}

fn no_secret(out: &CommandOutput) {
    for s in [OUTSIDE_SECRET, DENIED_SECRET] {
        assert!(
            !out.stdout.contains(s) && !out.stderr.contains(s),
            "leaked: {out:?}"
        );
    }
}

#[tokio::test]
async fn commands_run_unprivileged_without_capabilities() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let out = python(
        &sb,
        &fx,
        "caps.py",
        r#"
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
print("uid", os.getuid(), os.geteuid())
print("nnp", libc.prctl(39, 0, 0, 0, 0))
print("bounding", sum(libc.prctl(23, c, 0, 0, 0) == 1 for c in range(41)))
print("sethostname", libc.sethostname(b"pwned", 5), ctypes.get_errno())
print("setuid0", libc.setuid(0), ctypes.get_errno())
open("made_by_command.txt", "w").write("x")
"#,
    )
    .await;
    assert!(out.success, "{out:?}");
    let uid = std::fs::metadata(&fx.root).unwrap().uid();
    let expect_uid = if uid == 0 {
        65534
    } else {
        // Not root: the server's own uid, or the tree's owner when the test runs as root.
        uid
    };
    assert!(
        out.stdout
            .contains(&format!("uid {expect_uid} {expect_uid}")),
        "{out:?}"
    );
    assert!(out.stdout.contains("nnp 1"), "{out:?}");
    assert!(out.stdout.contains("bounding 0"), "{out:?}");
    assert!(out.stdout.contains("sethostname -1 1"), "{out:?}");
    assert!(out.stdout.contains("setuid0 -1 "), "{out:?}");
    // Host side: the host name is unchanged, and a file the command made belongs to an
    // unprivileged host uid.
    assert_ne!(
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim(),
        "pwned"
    );
    let made = std::fs::metadata(fx.root.join("made_by_command.txt")).unwrap();
    assert_ne!(made.uid(), 0, "a command created a root-owned file");
}

#[tokio::test]
async fn the_loader_runs_nothing_but_the_allowed_programs() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    // A copy of a program written into the tree (as write_file could), and a system program
    // that is visible but not allowed (`mkdir`): neither runs, directly or through the loader.
    std::fs::copy("/usr/bin/touch", fx.root.join("mytouch")).unwrap();
    std::fs::set_permissions(fx.root.join("mytouch"), PermissionsExt::from_mode(0o755)).unwrap();
    give_to_nobody(&fx.root.join("mytouch"));
    let loader = std::fs::canonicalize("/lib64/ld-linux-x86-64.so.2")
        .unwrap_or_else(|_| PathBuf::from("/lib64/ld-linux-x86-64.so.2"));
    let loader = loader.to_str().unwrap();
    let attempts: Vec<Vec<&str>> = vec![
        vec![
            "find",
            ".",
            "-maxdepth",
            "0",
            "-exec",
            loader,
            "./mytouch",
            "pwned1",
            ";",
        ],
        vec![
            "find",
            ".",
            "-maxdepth",
            "0",
            "-exec",
            loader,
            "/usr/bin/mkdir",
            "pwned2",
            ";",
        ],
        vec![
            "find",
            ".",
            "-maxdepth",
            "0",
            "-exec",
            "./mytouch",
            "pwned3",
            ";",
        ],
        vec![
            "find",
            ".",
            "-maxdepth",
            "0",
            "-exec",
            "/usr/bin/mkdir",
            "pwned4",
            ";",
        ],
        vec![
            "sort",
            "--compress-program=./mytouch",
            "-S",
            "1k",
            "notes.txt",
        ],
    ];
    for a in &attempts {
        let out = run(&sb, a[0], &a[1..]).await;
        no_secret(&out);
    }
    let out = python(
        &sb,
        &fx,
        "loader.py",
        &format!(
            r#"
import os, subprocess
for argv in (["{loader}", "./mytouch", "pwned5"], ["./mytouch", "pwned6"],
             ["{loader}", "/usr/bin/mkdir", "pwned7"], ["/usr/bin/mkdir", "pwned8"]):
    try:
        r = subprocess.run(argv, capture_output=True)
        print(argv[-1], r.returncode, r.stderr[:80])
    except OSError as e:
        print(argv[-1], "refused", e.errno)
"#
        ),
    )
    .await;
    for i in 1..=8 {
        assert!(
            !fx.root.join(format!("pwned{i}")).exists(),
            "attempt {i} ran a program: {out:?}"
        );
    }
    // The allowed programs still run.
    let ok = run(&sb, "find", &[".", "-maxdepth", "1", "-name", "notes.txt"]).await;
    assert!(ok.success && ok.stdout.contains("notes.txt"), "{ok:?}");
}

#[tokio::test]
async fn metadata_outside_cannot_be_read_or_changed() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let secret = fx.outside.join("secret.txt");
    std::fs::set_permissions(&secret, PermissionsExt::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&secret).unwrap();
    let s = secret.to_str().unwrap();
    for a in [
        vec!["chmod", "666", s],
        vec!["touch", "-d", "2001-01-01", s],
        vec!["ls", "-l", s],
        vec!["cat", s],
    ] {
        let out = run(&sb, a[0], &a[1..]).await;
        assert!(!out.success, "{a:?}: {out:?}");
        no_secret(&out);
    }
    let out = python(
        &sb,
        &fx,
        "meta.py",
        &format!(
            r#"
import os
for f in (lambda: os.chmod("{s}", 0o666), lambda: os.chown("{s}", 65534, 65534),
          lambda: os.utime("{s}", (1, 1)), lambda: os.getxattr("{s}", "user.x"),
          lambda: os.setxattr("{s}", "user.x", b"1"), lambda: os.stat("{s}")):
    try:
        f(); print("DONE")
    except OSError as e:
        print("refused", e.errno)
"#
        ),
    )
    .await;
    assert!(!out.stdout.contains("DONE"), "{out:?}");
    let after = std::fs::metadata(&secret).unwrap();
    assert_eq!(before.mode(), after.mode());
    assert_eq!((before.uid(), before.gid()), (after.uid(), after.gid()));
    assert_eq!(before.mtime(), after.mtime());
    // An allowed program stored in the tree cannot be made unusable for everyone.
    let tool = fx.root.join("bin/tool.sh");
    std::fs::write(&tool, "#!/usr/bin/python3\nprint('tool ran')\n").unwrap();
    std::fs::set_permissions(&tool, PermissionsExt::from_mode(0o755)).unwrap();
    give_to_nobody(&tool);
    let mut c = config(&fx);
    c.allowed_commands.push("./bin/tool.sh".into());
    c.relative_to = Some(fx.root.clone());
    let sb = Sandbox::from_config(c).unwrap();
    let out = run(&sb, "chmod", &["000", "bin/tool.sh"]).await;
    assert!(!out.success, "{out:?}");
    assert_eq!(std::fs::metadata(&tool).unwrap().mode() & 0o777, 0o755);
    let out = run(&sb, "./bin/tool.sh", &[]).await;
    assert!(out.stdout.contains("tool ran"), "{out:?}");
}

#[tokio::test]
async fn network_and_kernel_interfaces_are_refused() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut victim = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    // Twice: the holder starts the first call's process when the request comes, and the
    // second in its spare, made ahead with the seccomp filters already applied.
    for _ in 0..2 {
        let out = python(
            &sb,
            &fx,
            "net.py",
            &format!(
                r#"
import ctypes, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, f):
    try:
        f(); print(name, "DONE")
    except OSError as e:
        print(name, "refused", e.errno)
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1))
attempt("packet", lambda: socket.socket(17, socket.SOCK_RAW, 0))
attempt("netlink", lambda: socket.socket(16, socket.SOCK_RAW, 0))
attempt("listen", lambda: socket.socket().listen())
attempt("kill", lambda: os.kill({victim}, signal.SIGKILL))
def sys(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "DONE" if r >= 0 else "refused", ctypes.get_errno())
sys("unshare", 272, 0x10000000)
sys("ptrace", 101, 16, 1, 0, 0)
sys("keyctl", 250, 0, 0, 0, 0)
sys("bpf", 321, 0, 0, 0)
sys("perf", 298, 0, 0, -1, -1, 0)
sys("mount", 165, b"none", b"/tmp", b"tmpfs", 0, 0)
sys("io_uring", 425, 1, 0)
sys("settime", 227, 0, 0)
"#,
                victim = victim.id()
            ),
        )
        .await;
        assert!(out.success, "{out:?}");
        assert!(
            !out.stdout.contains("DONE"),
            "an attempt got through: {out:?}"
        );
        for name in [
            "tcp", "mptcp", "udp", "raw", "packet", "netlink", "listen", "kill", "unshare",
            "ptrace", "keyctl", "bpf", "perf", "mount", "io_uring", "settime",
        ] {
            assert!(
                out.stdout.contains(&format!("{name} refused")),
                "{name}: {out:?}"
            );
        }
    }
    // Host side: the listener saw no connection, the victim still runs.
    assert!(
        listener.accept().is_err(),
        "the command reached a host port"
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process was killed"
    );
    victim.kill().unwrap();
    let _ = victim.wait();
}

#[tokio::test]
async fn denied_paths_are_hidden_and_their_parent_works() {
    let fx = Fixture::new();
    // A denied file too: covered by an empty read-only file.
    std::fs::write(fx.root.join("sub/private.txt"), DENIED_SECRET).unwrap();
    give_to_nobody(&fx.root.join("sub"));
    let mut c = config(&fx);
    c.denied_paths.push(fx.root.join("sub/private.txt"));
    let sb = Sandbox::from_config(c).unwrap();
    let cases: &[&[&str]] = &[
        &["ls"],
        &["ls", "-la"],
        &["grep", "-r", ".", "."],
        &["find", "."],
        &["sort", "-o", "new.txt", "notes.txt"],
        &["sort", "-T", ".", "notes.txt"],
        &["ls", "-la", "secret"],
        &["cat", "secret/key.txt"],
        &["grep", "-r", "DENIED", "secret"],
    ];
    for (i, a) in cases.iter().enumerate() {
        let out = run(&sb, a[0], &a[1..]).await;
        no_secret(&out);
        if i < 6 {
            assert!(
                out.success,
                "{a:?} fails in a directory holding a denied path: {out:?}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "hello notes\n"
    );
    let found = run(&sb, "find", &["."]).await;
    assert!(found.stdout.contains("./sub/inner.txt"), "{found:?}");
    assert!(!found.stdout.contains("key.txt"), "{found:?}");
    let listed = run(&sb, "ls", &["-la", "sub"]).await;
    assert!(
        listed.success && listed.stdout.contains("private.txt"),
        "{listed:?}"
    );
    let out = python(
        &sb,
        &fx,
        "private.py",
        r#"
import os
print("content", repr(open("sub/private.txt").read()))
try:
    open("sub/private.txt", "w").write("x")
    print("write DONE")
except OSError as e:
    print("write refused", e.errno)
# Nothing past stdin, stdout and stderr is inherited (the ruleset, bubblewrap's /dev/null).
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
print("open fds", [fd for fd in range(3, 256) if is_open(fd)])
"#,
    )
    .await;
    assert!(out.stdout.contains("content ''"), "{out:?}");
    assert!(out.stdout.contains("write refused"), "{out:?}");
    assert!(out.stdout.contains("open fds []"), "{out:?}");
    no_secret(&out);
    // Host side: the denied files are untouched.
    assert_eq!(
        std::fs::read_to_string(fx.root.join("secret/key.txt")).unwrap(),
        DENIED_SECRET
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("sub/private.txt")).unwrap(),
        DENIED_SECRET
    );
}

#[tokio::test]
async fn a_fork_bomb_or_memory_hog_stops_at_its_limits_and_harms_no_other_call() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let bomb = {
        let sb = sb.clone();
        tokio::spawn(async move {
            let args = vec![
                "-c".to_string(),
                "n=0; while [ $n -lt 400 ]; do sleep 3 & n=$((n+1)); done; wait".to_string(),
            ];
            execute_command(&sb, "sh", &args, None, Some(8.0)).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another caller's command runs while the bomb holds its whole allowance.
    for _ in 0..3 {
        let out = run(&sb, "echo", &["still", "fine"]).await;
        assert!(out.success && out.stdout.contains("still fine"), "{out:?}");
    }
    let out = bomb.await.unwrap().unwrap();
    assert!(
        out.stderr.contains("fork") || out.stderr.contains("Resource temporarily unavailable"),
        "the bomb was not stopped at command_pids_max: {out:?}"
    );
    // A memory hog: one line that never ends.
    let started = Instant::now();
    let out = run(&sb, "sort", &["/dev/zero"]).await;
    assert!(!out.success, "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(15), "{out:?}");
    // A CPU hog: stopped at command_cpu_secs, with the limit named.
    let out = python(&sb, &fx, "spin.py", "while True: pass\n").await;
    assert!(!out.success, "{out:?}");
    assert!(
        out.notice
            .as_deref()
            .unwrap_or("")
            .contains("command_cpu_secs"),
        "{out:?}"
    );
    // Host side: nothing of the calls is left running as the command's uid.
    let uid = std::fs::metadata(&fx.root).unwrap().uid();
    let left = processes_of(if uid == 0 { 65534 } else { uid }, &fx.root);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Memory is limited per call, not only per process: four processes each under the
/// address-space limit together pass the call's `command_memory_max_bytes`, and the kernel's
/// memory controller ends them, with the limit named, while another call runs.
#[tokio::test]
async fn a_call_whose_processes_together_pass_its_memory_limit_is_stopped_there() {
    let fx = Fixture::new();
    let mut c = config(&fx);
    c.command_memory_max_bytes = 128 * 1024 * 1024;
    let sb = Sandbox::from_config(c).unwrap();
    let report = sb.report();
    if !sb.limits_call_memory() {
        // Only where the kernel offers no memory controller to this process.
        assert!(
            report.command_memory_limit.starts_with("none ("),
            "{report:?}"
        );
        eprintln!(
            "skipped: no memory controller here ({})",
            report.command_memory_limit
        );
        return;
    }
    assert!(
        report.command_memory_limit.contains("memory"),
        "{}",
        report.command_memory_limit
    );
    let hogs = {
        let sb = sb.clone();
        tokio::spawn(async move {
            let script = "for i in 1 2 3 4; do sort /dev/zero & done; wait";
            let args = vec!["-c".to_string(), script.to_string()];
            execute_command(&sb, "sh", &args, None, Some(15.0)).await
        })
    };
    // Host side, while the hogs run: the call's group, with the call's limit, in the memory
    // hierarchy this process is in (other tests' calls use other limits).
    let groups = || -> Vec<PathBuf> {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let Some(path) = own.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            (parts.nth(1) == Some("memory")).then(|| parts.next().unwrap().to_string())
        }) else {
            return Vec::new();
        };
        let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                std::fs::read_to_string(p.join("memory.limit_in_bytes"))
                    .is_ok_and(|l| l.trim() == "134217728")
            })
            .collect()
    };
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = groups();
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !seen.is_empty(),
        "no memory group with the call's limit was seen"
    );
    let out = run(&sb, "echo", &["unharmed"]).await;
    assert!(out.success && out.stdout.contains("unharmed"), "{out:?}");
    let out = hogs.await.unwrap().unwrap();
    let notice = out.notice.as_deref().unwrap_or("");
    assert!(
        notice.contains("memory limit of 134217728 bytes")
            && notice.contains("command_memory_max_bytes"),
        "{out:?}"
    );
    // ... and it is gone with the call.
    for dir in &seen {
        assert!(!dir.exists(), "{} was left behind", dir.display());
    }
}

/// `check-config`'s reach report says what a command can reach, and it agrees with what a
/// command finds: the hidden path is empty inside, a program's libraries are listed.
#[tokio::test]
async fn the_reach_report_lists_what_each_program_runs_and_what_is_hidden() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let reach = sb
        .report()
        .command_reach
        .expect("commands run in namespaces");
    let root = std::fs::canonicalize(&fx.root).unwrap();
    assert_eq!(reach.read_write, [root.display().to_string()], "{reach:#?}");
    assert!(
        reach
            .hidden
            .contains(&root.join("secret").display().to_string()),
        "{reach:#?}"
    );
    let sort = std::fs::canonicalize("/usr/bin/sort").unwrap();
    let entry = reach
        .programs
        .iter()
        .find(|p| p.program == sort.display().to_string())
        .expect("sort is listed");
    assert!(
        entry.runs.iter().any(|f| f.contains("libc.so"))
            && entry.runs.iter().any(|f| f.contains("ld-linux")),
        "{entry:#?}"
    );
    for f in &entry.runs {
        assert!(
            reach.executable.contains(f),
            "{f} runs but is not listed as executable"
        );
    }
    assert!(reach.network.starts_with("none"), "{}", reach.network);
    assert!(
        reach.runs_as.contains("no capabilities"),
        "{}",
        reach.runs_as
    );
    // What a command finds agrees: the hidden directory is there, empty.
    let out = run(&sb, "ls", &["-A", "secret"]).await;
    assert!(out.success && out.stdout.is_empty(), "{out:?}");
}

/// Host pids of the processes for which `wanted` (given `/proc/PID`) holds.
fn pids_where(wanted: impl Fn(&Path) -> bool) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
            wanted(&e.path()).then_some(pid)
        })
        .collect()
}

/// Processes of `uid` whose working directory is inside `root` (so other users of uid 65534
/// on the machine are not counted).
fn processes_of(uid: u32, root: &Path) -> Vec<i32> {
    pids_where(|proc| {
        std::fs::metadata(proc).is_ok_and(|m| m.uid() == uid)
            && std::fs::read_link(proc.join("cwd")).is_ok_and(|c| c.starts_with(root))
    })
}

#[tokio::test]
async fn many_files_beside_a_denied_path_slow_no_command_down() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let before = Instant::now();
    run(&sb, "ls", &[]).await;
    let one = before.elapsed();
    // What a client can do with write_file: 25,000 entries next to the denied path (more than
    // the Landlock-only layout's 20,000-rule ceiling).
    for i in 0..25_000 {
        std::fs::File::create(fx.root.join(format!("f{i}"))).unwrap();
    }
    let started = Instant::now();
    let out = run(&sb, "echo", &["works"]).await;
    let took = started.elapsed();
    assert!(out.success, "{out:?}");
    assert!(
        took < one * 5 + Duration::from_millis(200),
        "a command took {took:?} after the files were written (before: {one:?})"
    );
}

/// A script whose `#!` interpreter is not allowed is refused at start-up, and stays the
/// operator's file: neither `write_file` nor a command (with the kernel alone in the way) can
/// rewrite, replace or `chmod` it, so a new `#!` line cannot make it start on the next run.
#[tokio::test]
async fn a_script_whose_interpreter_is_not_allowed_is_refused_at_start_and_stays_unwritable() {
    let fx = Fixture::new();
    let script = fx.root.join("bin/run.sh");
    let text = "#!/usr/bin/perl\nprint \"hi\\n\";\n";
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, PermissionsExt::from_mode(0o755)).unwrap();
    give_to_nobody(&script);
    give_to_nobody(&fx.root.join("bin"));
    let mut c = config(&fx);
    c.allowed_commands.push("./bin/run.sh".into());
    c.relative_to = Some(fx.root.clone());
    let sb = Sandbox::from_config(c).unwrap();
    let report = sb.report();
    assert!(
        report
            .unresolved_commands
            .iter()
            .any(|u| u.contains("run.sh") && u.contains("#!")),
        "{report:?}"
    );
    assert!(
        !report.allowed_commands.iter().any(|a| a.contains("run.sh")),
        "{report:?}"
    );
    let err = system_tools_mcp::tools::write_file(
        &sb,
        "bin/run.sh",
        "#!/usr/bin/python3\nprint('pwned')\n",
        system_tools_mcp::tools::ContentEncoding::Utf8,
        false,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("program"), "{err}");
    let out = python(
        &sb,
        &fx,
        "rewrite.py",
        r##"
import os
def attempt(name, f):
    try:
        f()
        print(name, "DONE")
    except OSError as e:
        print(name, "refused", e.errno)
attempt("write", lambda: open("bin/run.sh", "w").write("#!/usr/bin/python3\n"))
attempt("chmod", lambda: os.chmod("bin/run.sh", 0o777))
attempt("utime", lambda: os.utime("bin/run.sh", (0, 0)))
attempt("rename", lambda: os.rename("bin/run.sh", "bin/moved"))
attempt("unlink", lambda: os.unlink("bin/run.sh"))
open("bin/new", "w").write("#!/usr/bin/python3\n")
attempt("replace", lambda: os.replace("bin/new", "bin/run.sh"))
"##,
    )
    .await;
    // The attack itself ran (it could write beside the script), and every change was refused.
    assert!(out.success && fx.root.join("bin/new").exists(), "{out:?}");
    for name in ["write", "chmod", "utime", "rename", "unlink", "replace"] {
        assert!(
            out.stdout.contains(&format!("{name} refused")),
            "{name}: {out:?}"
        );
    }
    for (program, args) in [("chmod", ["000", "bin/run.sh"]), ("touch", ["-d", "@0"])] {
        let mut args = args.to_vec();
        if program == "touch" {
            args.push("bin/run.sh");
        }
        let out = run(&sb, program, &args).await;
        assert!(!out.success, "{program} {args:?}: {out:?}");
    }
    assert_eq!(std::fs::read_to_string(&script).unwrap(), text);
    assert_eq!(std::fs::metadata(&script).unwrap().mode() & 0o777, 0o755);
    assert!(!fx.root.join("bin/moved").exists());
}

/// The sandbox holders (`--sandbox-holder`) whose view holds `root`, by host pid: not their
/// spare call processes (forked from a holder, so with its command line too), whose parent
/// is a holder where a holder's is bubblewrap.
fn holders_of(root: &Path) -> Vec<i32> {
    holder_processes(root, false)
}

/// The spare call processes of the holders whose view holds `root` (see [`holders_of`]).
fn spares_of(root: &Path) -> Vec<i32> {
    holder_processes(root, true)
}

fn holder_processes(root: &Path, spares: bool) -> Vec<i32> {
    let runs_holder = |proc: &Path| {
        std::fs::read(proc.join("cmdline")).is_ok_and(|cmdline| {
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.get(1) == Some(&&b"--sandbox-holder"[..])
                && args.contains(&root.as_os_str().as_encoded_bytes())
        })
    };
    pids_where(|proc| {
        runs_holder(proc)
            && parent_of(proc)
                .is_some_and(|ppid| runs_holder(&Path::new("/proc").join(ppid.to_string())))
                == spares
    })
}

/// The parent pid in `/proc/PID/stat` (the field after the command name's closing paren).
fn parent_of(proc: &Path) -> Option<i32> {
    let stat = std::fs::read_to_string(proc.join("stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Two calls running at once through the same holder: the second sees only its own pid
/// namespace (pid 1 and itself), cannot signal the first call's processes by their host pids
/// and cannot open the first call's System V shared memory; host side, the first call's
/// processes survive and it finishes normally.
#[tokio::test]
async fn two_concurrent_calls_through_the_holder_see_only_their_own_processes_and_ipc() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let first = {
        let (sb, file) = (sb.clone(), fx.root.join("first.py"));
        std::fs::write(
            &file,
            r#"
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
print("shm", libc.shmget(0x5157, 4096, 0o1600) >= 0, flush=True)
open("first-running", "w").write("x")
time.sleep(4)
print("first done")
"#,
        )
        .unwrap();
        give_to_nobody(&file);
        tokio::spawn(async move {
            execute_command(&sb, "/usr/bin/python3", &["first.py".into()], None, None).await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !fx.root.join("first-running").exists() {
        assert!(Instant::now() < deadline, "the first call never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let uid = std::fs::metadata(&fx.root).unwrap().uid();
    let first_pids = processes_of(if uid == 0 { 65534 } else { uid }, &fx.root);
    assert!(!first_pids.is_empty(), "no process of the first call found");
    let pids: Vec<String> = first_pids.iter().map(i32::to_string).collect();
    let out = python(
        &sb,
        &fx,
        "second.py",
        &format!(
            r#"
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
seen = []
for p in range(1, 4097):
    try:
        os.kill(p, 0)
        seen.append(p)
    except ProcessLookupError:
        pass
    except PermissionError:
        seen.append(p)
print("seen", seen, "me", os.getpid())
for p in [{pids}]:
    try:
        os.kill(p, signal.SIGKILL)
        print("killed", p)
    except OSError as e:
        print("refused", p, e.errno)
print("shm", libc.shmget(0x5157, 0, 0), ctypes.get_errno())
"#,
            pids = pids.join(", ")
        ),
    )
    .await;
    assert!(out.success, "{out:?}");
    assert!(out.stdout.contains("seen [1, 2] me 2"), "{out:?}");
    assert!(!out.stdout.contains("killed"), "{out:?}");
    assert!(
        out.stdout.contains(&format!("shm -1 {}", libc::ENOENT)),
        "{out:?}"
    );
    // Host side: the first call's processes still run, and it ends normally.
    for p in &first_pids {
        assert!(
            std::path::Path::new(&format!("/proc/{p}")).exists(),
            "process {p} of the first call is gone"
        );
    }
    let first = first.await.unwrap().unwrap();
    assert!(first.success, "{first:?}");
    assert!(first.stdout.contains("shm True"), "{first:?}");
    assert!(first.stdout.contains("first done"), "{first:?}");
}

/// The holder's view is built once; a denied path that appears after it started is hidden
/// from the next call all the same (the holder is rebuilt when the set of existing denied
/// paths changes), and Landlock still refuses what the view does not cover.
#[tokio::test]
async fn a_denied_path_created_after_the_holder_started_is_hidden_from_the_next_call() {
    let fx = Fixture::new();
    let mut c = config(&fx);
    c.denied_paths.push(fx.root.join("later"));
    let sb = Sandbox::from_config(c).unwrap();
    let out = run(&sb, "ls", &[]).await;
    assert!(out.success, "{out:?}");
    let before = holders_of(&fx.root);
    assert_eq!(before.len(), 1, "one holder expected: {before:?}");
    std::fs::create_dir(fx.root.join("later")).unwrap();
    std::fs::write(fx.root.join("later/key.txt"), DENIED_SECRET).unwrap();
    give_to_nobody(&fx.root.join("later"));
    for a in [
        &["ls", "-A", "later"][..],
        &["cat", "later/key.txt"],
        &["grep", "-r", "DENIED", "."],
    ] {
        let out = run(&sb, a[0], &a[1..]).await;
        no_secret(&out);
        if a[0] == "ls" {
            assert!(out.success && out.stdout.trim().is_empty(), "{out:?}");
        }
    }
    let after = holders_of(&fx.root);
    assert!(
        after.len() == 1 && after != before,
        "the view was not rebuilt: {before:?} -> {after:?}"
    );
}

/// A holder that died is replaced by the next call, which runs normally.
#[tokio::test]
async fn a_holder_that_died_is_replaced_by_the_next_call() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let out = run(&sb, "echo", &["one"]).await;
    assert!(out.success, "{out:?}");
    let holders = holders_of(&fx.root);
    assert_eq!(holders.len(), 1, "{holders:?}");
    // SAFETY: kill(2) of the test's own sandbox holder.
    unsafe { libc::kill(holders[0], libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while holders_of(&fx.root).contains(&holders[0]) {
        assert!(Instant::now() < deadline, "the holder did not die");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let out = run(&sb, "echo", &["two"]).await;
    assert!(out.success && out.stdout.contains("two"), "{out:?}");
    let now = holders_of(&fx.root);
    assert!(now.len() == 1 && now != holders, "{holders:?} -> {now:?}");
}

/// A spare (the next call's first process, made ahead) that died is not the call's end: the
/// holder starts the call's process afresh, and makes a new spare after it.
#[tokio::test]
async fn a_spare_that_died_is_replaced_by_a_fresh_call_process() {
    let fx = Fixture::new();
    let sb = sandbox(&fx);
    let out = run(&sb, "echo", &["one"]).await;
    assert!(out.success, "{out:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    let spare = loop {
        if let [spare] = spares_of(&fx.root)[..] {
            break spare;
        }
        assert!(Instant::now() < deadline, "no spare was made");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // SAFETY: kill(2) of the test's own holder's spare.
    unsafe { libc::kill(spare, libc::SIGKILL) };
    while spares_of(&fx.root).contains(&spare) {
        assert!(Instant::now() < deadline, "the spare did not die");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let holders = holders_of(&fx.root);
    for word in ["two", "three"] {
        let out = run(&sb, "echo", &[word]).await;
        assert!(out.success && out.stdout.contains(word), "{out:?}");
    }
    assert_eq!(holders_of(&fx.root), holders, "the holder was replaced");
    let now = spares_of(&fx.root);
    assert!(now.len() == 1 && now[0] != spare, "{spare} -> {now:?}");
}

/// With `command_holder = false` each call gets a bubblewrap of its own, with the same
/// guarantees: unprivileged, its own pid namespace, denied paths hidden; no holder runs.
#[tokio::test]
async fn one_bubblewrap_per_call_keeps_the_same_guarantees() {
    let fx = Fixture::new();
    let mut c = config(&fx);
    c.command_holder = false;
    let sb = Sandbox::from_config(c).unwrap();
    let out = python(
        &sb,
        &fx,
        "percall.py",
        r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("bounding", sum(libc.prctl(23, c, 0, 0, 0) == 1 for c in range(41)))
seen = []
for p in range(1, 4097):
    try:
        os.kill(p, 0)
        seen.append(p)
    except ProcessLookupError:
        pass
    except PermissionError:
        seen.append(p)
print("seen", seen, "me", os.getpid())
"#,
    )
    .await;
    assert!(out.success, "{out:?}");
    assert!(out.stdout.contains("bounding 0"), "{out:?}");
    assert!(out.stdout.contains("seen [1, 2] me 2"), "{out:?}");
    let out = run(&sb, "ls", &["-A", "secret"]).await;
    assert!(out.success && out.stdout.trim().is_empty(), "{out:?}");
    no_secret(&out);
    assert!(holders_of(&fx.root).is_empty());
}

/// Commands start with SIGPIPE at its default, on both paths (the server's Rust runtime
/// ignores it, and an ignored signal stays ignored across `execve`): `yes | head -n 1` ends
/// quietly, where `yes` with SIGPIPE ignored says "Broken pipe" and exits 1.
#[tokio::test]
async fn commands_start_with_sigpipe_at_its_default() {
    for holder in [true, false] {
        let fx = Fixture::new();
        let mut c = config(&fx);
        c.allowed_commands.extend(["yes", "head"].map(String::from));
        c.command_holder = holder;
        let sb = Sandbox::from_config(c).unwrap();
        let out = run(&sb, "sh", &["-c", "yes | head -n 1"]).await;
        assert!(out.success, "holder {holder}: {out:?}");
        assert_eq!(out.stdout, "y\n", "holder {holder}: {out:?}");
        assert_eq!(out.stderr, "", "holder {holder}: {out:?}");
    }
}
