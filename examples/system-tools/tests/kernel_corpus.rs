//! The attack corpus against the kernel sandbox, one test per class of escape found in issue 14.
//!
//! The policy is the strict one a careful operator writes: harmless programs allowed (plus
//! `find`, `cp`, `ln` and a project script stored in the sandbox), shells, launchers and `rm`
//! denied, a denied directory inside the allowed tree. Every command case runs twice: with the
//! argument checks (the real configuration) and without them (`confine_path_arguments = false`,
//! the kernel alone). An *escape* is any of: a secret (outside file, denied file, the server's
//! environment) in a reply; a host path outside the sandbox in what the server itself writes
//! (errors, structured results — input echoed back excepted); a file outside the sandbox, the
//! victim file or the allowed script changed; a marker file created; a process outliving its
//! call. Each class asserts zero escapes; `the_corpus_has_150_cases` counts them all.

mod common;

use std::future::Future;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use common::{DENIED_SECRET, Fixture, OUTSIDE_SECRET};
use system_tools_mcp::sandbox::NamespaceMode;
use system_tools_mcp::sandbox::{Sandbox, SandboxConfig};
use system_tools_mcp::tools::{
    ContentEncoding, execute_command, list_directory, read_file, search_files, write_file,
};

/// A variable of the test process's (and so the server's) initial environment: what a leak of
/// `/proc/<pid>/environ` would show.
const ENV_SECRET: &str = "CARGO_PKG_NAME=system-tools-mcp";

const SCRIPT: &str = "#!/bin/sh\necho tool ran\n";

/// Files an attack may try to create; none may exist afterwards.
const MARKERS: &[&str] = &["pwned", "sub/pwned", "pwned_find", "sub/pwned_find"];

/// What a client would see, and the part of it the server wrote itself.
struct Reply {
    /// Everything: structured result, content blocks, error text.
    all: String,
    /// Errors and structured results only (program output excluded).
    server: String,
}

type CaseFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

struct Case {
    name: String,
    /// Inputs of the call: echoed back, they are not a disclosure.
    inputs: Vec<String>,
    run: CaseFuture,
}

/// The two sandboxes every command case runs in.
struct Beds {
    fx: Fixture,
    checked: Sandbox,
    kernel_only: Sandbox,
}

/// The fixture's policy written as an operator would: paths relative to the configuration
/// file's directory (so replies show `sandbox/...`, never the host path).
fn config(fx: &Fixture) -> SandboxConfig {
    let mut c = fx.config();
    c.relative_to = Some(fx.root.parent().unwrap().to_path_buf());
    c.allowed_paths = Some(vec![PathBuf::from("sandbox")]);
    c.denied_paths = vec![PathBuf::from("sandbox/secret")];
    c.allowed_commands = [
        "ls", "cat", "echo", "grep", "head", "tail", "wc", "sort", "date", "printenv", "find",
        "cp", "ln",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    c.allowed_commands.push("sandbox/bin/tool.sh".to_string());
    // Issue 14's corpus checks Landlock and the argument checks as they stand alone (the
    // base directory then takes no new entry, its files cannot be removed, and the script's
    // interpreter is executable); tests/isolation.rs attacks the namespaced layout, in which
    // writes anywhere in the tree are allowed and a script needs its interpreter allowed.
    c.command_namespaces = NamespaceMode::Off;
    c.denied_commands = [
        "sh", "bash", "dash", "env", "xargs", "python3", "perl", "setsid", "nohup", "rm",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    c.command_timeouts.clear();
    c.command_timeout_secs = 10.0;
    c.max_output_bytes = 64 * 1024;
    c
}

/// The test beds; `hard_link` plants `sub/hard_out`, a hard link to the outside secret (as
/// someone with access to both places could; the client cannot, see [`hard_links`]).
fn beds_with(hard_link: bool) -> Beds {
    let fx = Fixture::new();
    let script = fx.root.join("bin/tool.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    std::fs::write(fx.root.join("sub/data"), "b\na\nc\n").unwrap();
    // Big enough for `sort -S 1` to spill into compressed temporary files: a compressor that
    // is a shell would run these lines.
    std::fs::write(fx.root.join("sub/big"), "touch sub/pwned\n".repeat(8000)).unwrap();
    symlink(
        format!("/proc/{}/environ", std::process::id()),
        fx.root.join("sub/env_link"),
    )
    .unwrap();
    symlink(&fx.outside, fx.root.join("sub/out_dir")).unwrap();
    symlink("../bin/tool.sh", fx.root.join("sub/tool_link")).unwrap();
    if hard_link {
        std::fs::hard_link(fx.outside.join("secret.txt"), fx.root.join("sub/hard_out")).unwrap();
    }
    let checked = Sandbox::from_config(config(&fx)).unwrap();
    let mut c = config(&fx);
    c.confine_path_arguments = false;
    let kernel_only = Sandbox::from_config(c).unwrap();
    Beds {
        fx,
        checked,
        kernel_only,
    }
}

fn beds() -> Beds {
    beds_with(false)
}

impl Beds {
    fn out(&self, rel: &str) -> String {
        self.fx.outside.join(rel).display().to_string()
    }

    /// The command in both sandboxes.
    fn exec(&self, cases: &mut Vec<Case>, command: &str, args: &[&str]) {
        for (mode, sb) in [("checked", &self.checked), ("kernel", &self.kernel_only)] {
            cases.push(exec_case(sb, mode, command, args));
        }
    }

    /// The command with the argument checks only (a case the kernel cannot judge alone).
    fn exec_checked(&self, cases: &mut Vec<Case>, command: &str, args: &[&str]) {
        cases.push(exec_case(&self.checked, "checked", command, args));
    }
}

fn exec_case(sb: &Sandbox, mode: &str, command: &str, args: &[&str]) -> Case {
    let sb = sb.clone();
    let command = command.to_string();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut inputs = args.clone();
    inputs.push(command.clone());
    Case {
        name: format!("[{mode}] {command} {args:?}"),
        inputs,
        run: Box::pin(async move {
            match execute_command(&sb, &command, &args, None, None).await {
                Ok(out) => {
                    let server = serde_json::to_string(&out).unwrap();
                    Reply {
                        all: format!("{server}\n{}\n{}", out.stdout, out.stderr),
                        server,
                    }
                }
                Err(e) => error_reply(e),
            }
        }),
    }
}

fn error_reply(e: system_tools_mcp::SandboxError) -> Reply {
    let text = e.to_tool_text();
    Reply {
        all: text.clone(),
        server: text,
    }
}

fn file_case<F, Fut, T>(name: &str, input: &str, f: F) -> Case
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, system_tools_mcp::SandboxError>> + Send,
    T: serde::Serialize + std::fmt::Debug,
{
    Case {
        name: name.to_string(),
        inputs: vec![input.to_string()],
        run: Box::pin(async move {
            match f().await {
                Ok(v) => Reply {
                    all: format!("{v:?}"),
                    server: serde_json::to_string(&v).unwrap(),
                },
                Err(e) => error_reply(e),
            }
        }),
    }
}

fn read_case(sb: &Sandbox, path: &str) -> Case {
    let (sb, p) = (sb.clone(), path.to_string());
    file_case(&format!("read_file {path}"), path, move || async move {
        read_file(&sb, &p, ContentEncoding::Utf8).await
    })
}

fn write_case(sb: &Sandbox, path: &str, content: &str) -> Case {
    let (sb, p, content) = (sb.clone(), path.to_string(), content.to_string());
    file_case(&format!("write_file {path}"), path, move || async move {
        write_file(&sb, &p, &content, ContentEncoding::Utf8, true).await
    })
}

/// Runs `cases` and every global check; returns the escapes.
async fn run_cases(beds: &Beds, cases: Vec<Case>) -> Vec<String> {
    let before = beds.fx.snapshot_outside_root();
    let host_prefix = beds.fx.root.parent().unwrap().display().to_string();
    let mut escapes = Vec::new();
    let total = cases.len();
    for case in cases {
        let reply = case.run.await;
        for secret in [OUTSIDE_SECRET, DENIED_SECRET, ENV_SECRET, "root:x:0:0"] {
            if reply.all.contains(secret) {
                escapes.push(format!("{}: leaks {secret:?}: {}", case.name, reply.all));
            }
        }
        // Inputs (and any tail of one, such as the path part of `-o/path`) may be echoed.
        let mut server = reply.server.clone();
        let mut tails: Vec<&str> = case
            .inputs
            .iter()
            .flat_map(|i| i.char_indices().map(move |(n, _)| &i[n..]))
            .filter(|t| t.len() > 1)
            .collect();
        tails.sort_by_key(|t| std::cmp::Reverse(t.len()));
        for tail in tails {
            server = server.replace(tail, "<input>");
        }
        if server.contains(&host_prefix) {
            escapes.push(format!("{}: names a host path: {server}", case.name));
        }
        eprintln!(
            "case {:<70} {}",
            case.name,
            reply
                .all
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("")
                .chars()
                .take(100)
                .collect::<String>()
        );
    }
    if beds.fx.snapshot_outside_root() != before {
        escapes.push("files outside the sandbox changed".to_string());
    }
    for m in MARKERS {
        if beds.fx.root.join(m).exists() || beds.fx.outside.join(m).exists() {
            escapes.push(format!("marker {m} was created"));
        }
    }
    if std::fs::read_to_string(beds.fx.root.join("victim.txt")).unwrap() != "still here\n" {
        escapes.push("victim.txt was changed".to_string());
    }
    if std::fs::read_to_string(beds.fx.root.join("bin/tool.sh")).unwrap() != SCRIPT {
        escapes.push("the allowed script was rewritten".to_string());
    }
    eprintln!("{total} cases, {} escapes", escapes.len());
    escapes
}

async fn assert_no_escape(beds: Beds, cases: Vec<Case>, at_least: usize) {
    assert!(cases.len() >= at_least, "only {} cases", cases.len());
    let escapes = run_cases(&beds, cases).await;
    assert!(
        escapes.is_empty(),
        "{} escapes:\n{}",
        escapes.len(),
        escapes.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The classes.

/// An allowed program runs another one through its own options.
fn option_launch(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    for program in [
        "sh",
        "bash",
        "rm",
        "touch",
        "python3",
        "perl",
        "env",
        "/usr/bin/dash",
    ] {
        let opt = format!("--compress-program={program}");
        b.exec(&mut c, "sort", &[&opt, "-S", "1", "-T", "sub", "sub/big"]);
    }
    b.exec(
        &mut c,
        "sort",
        &[
            "--compress-program",
            "sh",
            "-S",
            "1",
            "-T",
            "sub",
            "sub/big",
        ],
    );
    b.exec(&mut c, "tail", &["--pid=1", "-s", "0", "sub/data"]);
    c
}

/// The operator's script in the sandbox is rewritten (by `write_file` or by a command), then
/// run. Its `#!/bin/sh` names an interpreter this policy denies, so since issue 30 the script
/// is refused at start-up (the last case is refused by the policy); it must still stay as
/// unwritable as an allowed program, or a new `#!` line would make it start on the next run.
/// tests/file_hardening.rs covers a script whose interpreter is allowed.
fn script_rewrite(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    let evil = "#!/bin/sh\ntouch sub/pwned\n";
    let script = b.fx.root.join("bin/tool.sh").display().to_string();
    for path in [
        "bin/tool.sh",
        "./bin/../bin/tool.sh",
        "sub/tool_link",
        script.as_str(),
        "bin//tool.sh",
    ] {
        c.push(write_case(&b.checked, path, evil));
    }
    b.exec(&mut c, "sort", &["-o", "bin/tool.sh", "sub/data"]);
    b.exec(&mut c, "cp", &["sub/data", "bin/tool.sh"]);
    b.exec(&mut c, "cp", &["-f", "sub/data", "sub/tool_link"]);
    b.exec(&mut c, "ln", &["-sf", "/usr/bin/touch", "bin/tool.sh"]);
    b.exec(
        &mut c,
        "find",
        &["bin", "-name", "tool.sh", "-fprint", "bin/tool.sh"],
    );
    b.exec(&mut c, &script, &["sub/pwned"]);
    c
}

/// Paths attached to short options, combined flags and `--opt=value`.
fn attached_options(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    let secret = b.out("secret.txt");
    let planted = b.out("planted.txt");
    for (program, args) in [
        ("sort", vec![format!("-o{planted}"), "sub/data".into()]),
        (
            "sort",
            vec!["-o../outside/planted.txt".into(), "sub/data".into()],
        ),
        ("sort", vec![format!("-mo{planted}"), "sub/data".into()]),
        (
            "sort",
            vec![format!("--output={planted}"), "sub/data".into()],
        ),
        ("grep", vec![format!("-f{secret}"), "sub/data".into()]),
        (
            "grep",
            vec!["-f../outside/secret.txt".into(), "sub/data".into()],
        ),
        ("grep", vec!["-fsecret/key.txt".into(), "sub/data".into()]),
        ("grep", vec![format!("-rf{secret}"), "sub".into()]),
        ("grep", vec!["-rnfsecret/key.txt".into(), "sub".into()]),
        ("date", vec![format!("-f{secret}")]),
        ("date", vec!["-fsecret/key.txt".into()]),
        ("date", vec![format!("--file={secret}")]),
        ("wc", vec![format!("--files0-from={secret}")]),
        (
            "sort",
            vec!["-S1".into(), "-T/tmp".into(), "sub/data".into()],
        ),
        ("head", vec![format!("-c100{secret}")]),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        b.exec(&mut c, program, &args);
    }
    c
}

/// Recursive and direct reads of the denied directory inside the allowed tree.
fn denied_inside(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    for (program, args) in [
        ("grep", vec!["-r", "SECRET", "."]),
        ("grep", vec!["-r", "SECRET", "secret"]),
        ("grep", vec!["-R", "-a", ".", "."]),
        ("grep", vec!["-rl", "DENIED", "."]),
        ("grep", vec!["-r", "--include=key.txt", "SECRET", "."]),
        ("ls", vec!["-R", "."]),
        ("ls", vec!["-la", "secret"]),
        (
            "find",
            vec![".", "-name", "key.txt", "-exec", "cat", "{}", ";"],
        ),
        ("find", vec!["secret", "-type", "f"]),
        ("cat", vec!["secret/key.txt"]),
        ("cat", vec!["link_denied"]),
        ("head", vec!["-c", "100", "secret/key.txt"]),
        ("tail", vec!["secret/key.txt"]),
        ("sort", vec!["secret/key.txt"]),
        ("cp", vec!["secret/key.txt", "sub/copied"]),
        ("ln", vec!["secret/key.txt", "sub/linked"]),
    ] {
        b.exec(&mut c, program, &args);
    }
    for path in ["secret/key.txt", "link_denied", "sub/../secret/key.txt"] {
        c.push(read_case(&b.checked, path));
    }
    c
}

/// Symlinks out of the tree, the server's own `/proc/<pid>/environ` included.
fn symlinks_out(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    let environ = format!("/proc/{}/environ", std::process::id());
    for (program, args) in [
        ("grep", vec!["-R", "SECRET", "dirlink_out"]),
        ("grep", vec!["-R", "SECRET", "sub"]),
        ("grep", vec!["-a", "CARGO", "sub/env_link"]),
        ("ls", vec!["-RL", "dirlink_out"]),
        ("ls", vec!["-L", "sub/out_dir"]),
        ("cat", vec!["link_out"]),
        ("cat", vec!["dirlink_out/secret.txt"]),
        ("cat", vec!["sub/out_dir/dir/deep.txt"]),
        ("cat", vec!["sub/env_link"]),
        ("cat", vec![environ.as_str()]),
        ("cat", vec!["/proc/self/environ"]),
        ("cat", vec!["/proc/self/root/etc/passwd"]),
        ("head", vec!["sub/env_link"]),
        ("sort", vec!["link_out"]),
        (
            "find",
            vec!["-L", "sub", "-name", "*.txt", "-exec", "cat", "{}", ";"],
        ),
        ("cp", vec!["-L", "link_out", "sub/copied"]),
    ] {
        b.exec(&mut c, program, &args);
    }
    for path in [
        "link_out",
        "sub/env_link",
        "sub/out_dir/secret.txt",
        environ.as_str(),
    ] {
        c.push(read_case(&b.checked, path));
    }
    let sb = b.checked.clone();
    c.push(file_case(
        "list_directory sub/out_dir",
        "sub/out_dir",
        move || async move { list_directory(&sb, "sub/out_dir", true, None).await },
    ));
    let sb = b.checked.clone();
    c.push(file_case(
        "search_files sub **",
        "sub",
        move || async move { search_files(&sb, "sub", "**/*", None).await },
    ));
    c
}

/// Hard links: pre-existing ones are refused by the file tools and the argument checks; new
/// ones to outside files cannot be made (the kernel's link rules). Run on beds with a planted
/// hard link. Not covered (README): a recursive program (`grep -r sub`) reads a planted hard
/// link, since the kernel grants by path and the file is also inside the tree.
fn hard_links(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    c.push(read_case(&b.checked, "sub/hard_out"));
    c.push(write_case(&b.checked, "sub/hard_out", "ATTACK"));
    b.exec_checked(&mut c, "cat", &["sub/hard_out"]);
    b.exec_checked(&mut c, "sort", &["-o", "sub/hard_out", "sub/data"]);
    b.exec_checked(&mut c, "head", &["-c100", "sub/hard_out"]);
    let secret = b.out("secret.txt");
    b.exec(&mut c, "ln", &[&secret, "sub/hl"]);
    b.exec(&mut c, "ln", &["-f", &secret, "sub/data"]);
    b.exec(&mut c, "cp", &["-l", &secret, "sub/hl2"]);
    c
}

/// Writes outside the tree by any program option.
fn writes_outside(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    let planted = b.out("planted.txt");
    for (program, args) in [
        ("cp", vec!["sub/data", planted.as_str()]),
        ("cp", vec!["sub/data", "../outside/"]),
        ("cp", vec!["-r", "sub", "/tmp/"]),
        ("ln", vec!["-s", "/etc/passwd", planted.as_str()]),
        ("sort", vec!["-o", planted.as_str(), "sub/data"]),
        ("find", vec!["sub", "-fprint", planted.as_str()]),
        ("cp", vec!["sub/data", "secret/planted"]),
        ("cp", vec!["sub/data", "pwned"]),
    ] {
        b.exec(&mut c, program, &args);
    }
    c.push(write_case(&b.checked, &planted, "ATTACK"));
    c.push(write_case(&b.checked, "../outside/planted.txt", "ATTACK"));
    c
}

/// `find -exec` and friends.
fn find_exec(b: &Beds) -> Vec<Case> {
    let mut c = Vec::new();
    let secret = b.out("secret.txt");
    for args in [
        vec!["sub", "-exec", "touch", "sub/pwned_find", ";"],
        vec!["sub", "-execdir", "touch", "pwned_find", ";"],
        vec!["sub", "-exec", "sh", "-c", "touch sub/pwned_find", ";"],
        vec!["sub", "-exec", "rm", "victim.txt", ";"],
        vec!["sub", "-exec", "cat", &secret, ";"],
        vec!["sub", "-exec", "./bin/tool.sh", ";"],
        vec![
            "sub",
            "-exec",
            "/usr/bin/env",
            "touch",
            "sub/pwned_find",
            ";",
        ],
        vec!["sub", "-fls", "../outside/planted.txt"],
        vec!["sub", "-fprintf", &secret, "%p"],
        vec![".", "-maxdepth", "1", "-name", "victim.txt", "-delete"],
    ] {
        b.exec(&mut c, "find", &args);
    }
    c
}

// ---------------------------------------------------------------------------------------
// One test per class.

#[tokio::test]
async fn option_launch_class() {
    let b = beds();
    let cases = option_launch(&b);
    assert_no_escape(b, cases, 20).await;
}

#[tokio::test]
async fn script_rewrite_class() {
    let b = beds();
    let cases = script_rewrite(&b);
    assert_no_escape(b, cases, 15).await;
}

#[tokio::test]
async fn attached_options_class() {
    let b = beds();
    let cases = attached_options(&b);
    assert_no_escape(b, cases, 30).await;
}

#[tokio::test]
async fn denied_inside_the_tree_class() {
    let b = beds();
    let cases = denied_inside(&b);
    assert_no_escape(b, cases, 30).await;
}

#[tokio::test]
async fn symlinks_out_class() {
    let b = beds();
    let cases = symlinks_out(&b);
    assert_no_escape(b, cases, 30).await;
}

#[tokio::test]
async fn hard_links_class() {
    let b = beds_with(true);
    let cases = hard_links(&b);
    assert_no_escape(b, cases, 10).await;
}

#[tokio::test]
async fn writes_outside_class() {
    let b = beds();
    let cases = writes_outside(&b);
    assert_no_escape(b, cases, 16).await;
}

#[tokio::test]
async fn find_exec_class() {
    let b = beds();
    let cases = find_exec(&b);
    assert_no_escape(b, cases, 20).await;
}

/// Symlink swaps between the checks and the program's (or the file tool's) open: a thread
/// flips `sub/swap` between a plain file and a symlink to the outside secret while `cat` and
/// `read_file` read it, 200 times each; the outside content must never come back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlink_swap_race_class() {
    let b = beds();
    let swap = b.fx.root.join("sub/swap");
    std::fs::write(&swap, "plain\n").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (swap, target, stop) = (swap.clone(), b.fx.outside.join("secret.txt"), stop.clone());
        std::thread::spawn(move || flip(&swap, &target, &stop))
    };
    let mut cases = Vec::new();
    for i in 0..200 {
        let sb = if i % 2 == 0 {
            &b.checked
        } else {
            &b.kernel_only
        };
        let mode = if i % 2 == 0 { "checked" } else { "kernel" };
        cases.push(exec_case(sb, mode, "cat", &["sub/swap"]));
        cases.push(read_case(&b.checked, "sub/swap"));
    }
    let escapes = run_cases(&b, cases).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(escapes.is_empty(), "{}", escapes.join("\n"));
}

fn flip(swap: &Path, target: &Path, stop: &std::sync::atomic::AtomicBool) {
    let tmp_link = swap.with_extension("link");
    let tmp_file = swap.with_extension("file");
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let _ = std::fs::remove_file(&tmp_link);
        let _ = symlink(target, &tmp_link);
        let _ = std::fs::rename(&tmp_link, swap);
        std::fs::write(&tmp_file, "plain\n").unwrap();
        let _ = std::fs::rename(&tmp_file, swap);
    }
}

/// Grandchildren do not survive their call: detached (`setsid`) and double-forked children
/// of an allowed shell, on time-out, on normal exit and on cancellation.
#[tokio::test]
async fn grandchildren_class() {
    let b = beds();
    let mut c = config(&b.fx);
    c.denied_commands.clear();
    c.allowed_commands
        .extend(["sh", "setsid", "sleep"].map(String::from));
    c.command_timeout_secs = 1.5;
    // Pids as the host sees them: the containment without the pid namespace.
    c.command_namespaces = NamespaceMode::Off;
    let sb = Sandbox::from_config(c).unwrap();
    let scripts = [
        "setsid sleep 300 & echo $! > sub/pid; wait",
        "nohup setsid sleep 300 >/dev/null 2>&1 & echo $! > sub/pid; wait",
        "(setsid sh -c 'echo $$ > sub/pid; exec sleep 300' &); sleep 300",
        "(setsid sh -c 'echo $$ > sub/pid; exec sleep 300' &); \
         while ! kill -0 $(cat sub/pid 2>/dev/null) 2>/dev/null; do sleep 0.05; done",
        "sleep 300 & echo $! > sub/pid; exit 0",
    ];
    let mut survivors = Vec::new();
    for (i, script) in scripts.iter().enumerate() {
        for cancel in [false, true] {
            let pid_file = b.fx.root.join("sub/pid");
            let _ = std::fs::remove_file(&pid_file);
            let args = vec!["-c".to_string(), script.to_string()];
            let sb2 = sb.clone();
            let call =
                tokio::spawn(async move { execute_command(&sb2, "sh", &args, None, None).await });
            let pid = wait_pid(&pid_file).await;
            if cancel {
                call.abort();
                let _ = call.await;
            } else {
                let _ = call.await.unwrap();
            }
            if !gone(pid).await {
                survivors.push(format!("script {i} (cancel {cancel}): {pid} survived"));
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
    assert!(survivors.is_empty(), "{}", survivors.join("\n"));
}

async fn wait_pid(file: &PathBuf) -> u32 {
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no pid in {}", file.display());
}

async fn gone(pid: u32) -> bool {
    for _ in 0..300 {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
            !matches!(state, Some("Z") | Some("X"))
        });
        if !alive {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// Case counts of the classes above (the race and grandchildren classes count their calls).
#[test]
fn the_corpus_has_150_cases() {
    let b = beds();
    let listed = option_launch(&b).len()
        + script_rewrite(&b).len()
        + attached_options(&b).len()
        + denied_inside(&b).len()
        + symlinks_out(&b).len()
        + hard_links(&b).len()
        + writes_outside(&b).len()
        + find_exec(&b).len();
    // 400 race calls and 10 grandchildren calls come on top.
    eprintln!("{listed} listed cases, + 400 race calls + 10 process-tree calls");
    assert!(listed >= 150, "{listed}");
}
