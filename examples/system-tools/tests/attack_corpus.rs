//! Attack corpus: every case runs against real files, symlinks and processes in a temp dir.
//! Each case must be refused (with the expected kind) or be inert; afterwards nothing outside the
//! sandbox root may have changed, no secret may appear in any result, and no marker file may exist.

mod common;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use common::{DENIED_SECRET, Fixture, OUTSIDE_SECRET, program};
use system_tools_mcp::sandbox::{ErrorKind, Sandbox, SandboxError};
use system_tools_mcp::tools::{
    ContentEncoding, execute_command, list_directory, read_file, search_files, write_file,
};

/// What a case must produce.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// An error of this kind.
    Refused(ErrorKind),
    /// Success with no effect outside the sandbox (checked by the case and the global checks).
    Inert,
}

type CaseFuture = Pin<Box<dyn Future<Output = Result<String, SandboxError>> + Send>>;

struct Case {
    name: String,
    expect: Expect,
    /// Substrings that must not appear in a successful result.
    forbidden: Vec<String>,
    run: CaseFuture,
}

fn debug_ok<T: Debug>(r: Result<T, SandboxError>) -> Result<String, SandboxError> {
    r.map(|v| format!("{v:?}"))
}

/// Strings that must never appear in any result or error.
const ALWAYS_FORBIDDEN: &[&str] = &[OUTSIDE_SECRET, DENIED_SECRET, "root:x:0:0"];

/// Marker files that injection attempts would create.
const MARKERS: &[&str] = &[
    "pwned_semicolon",
    "pwned_pipe",
    "pwned_subst",
    "pwned_backtick",
    "pwned_and",
    "pwned_newline",
    "pwned_cmdname",
    "pwned_notallowed",
    "pwned_fake_ls",
    "pwned_env",
];

struct Corpus {
    cases: Vec<Case>,
}

impl Corpus {
    fn add<F>(&mut self, name: impl Into<String>, expect: Expect, fut: F)
    where
        F: Future<Output = Result<String, SandboxError>> + Send + 'static,
    {
        self.add_forbidding(name, expect, &[], fut);
    }

    fn add_forbidding<F>(
        &mut self,
        name: impl Into<String>,
        expect: Expect,
        forbidden: &[&str],
        fut: F,
    ) where
        F: Future<Output = Result<String, SandboxError>> + Send + 'static,
    {
        self.cases.push(Case {
            name: name.into(),
            expect,
            forbidden: forbidden.iter().map(|s| s.to_string()).collect(),
            run: Box::pin(fut),
        });
    }
}

fn read(sb: &Sandbox, path: impl Into<String>) -> CaseFuture {
    let sb = sb.clone();
    let path = path.into();
    Box::pin(async move { debug_ok(read_file(&sb, &path, ContentEncoding::Utf8).await) })
}

fn write(sb: &Sandbox, path: impl Into<String>, create_dirs: bool) -> CaseFuture {
    let sb = sb.clone();
    let path = path.into();
    Box::pin(async move {
        debug_ok(write_file(&sb, &path, "ATTACK", ContentEncoding::Utf8, create_dirs).await)
    })
}

fn list(sb: &Sandbox, path: impl Into<String>, recursive: bool) -> CaseFuture {
    let sb = sb.clone();
    let path = path.into();
    Box::pin(async move { debug_ok(list_directory(&sb, &path, recursive, None).await) })
}

fn search(sb: &Sandbox, path: impl Into<String>, pattern: impl Into<String>) -> CaseFuture {
    let sb = sb.clone();
    let path = path.into();
    let pattern = pattern.into();
    Box::pin(async move { debug_ok(search_files(&sb, &path, &pattern, None).await) })
}

fn exec(sb: &Sandbox, command: impl Into<String>, args: &[&str]) -> CaseFuture {
    exec_in(sb, command, args, None, None)
}

fn exec_in(
    sb: &Sandbox,
    command: impl Into<String>,
    args: &[&str],
    cwd: Option<&str>,
    timeout: Option<f64>,
) -> CaseFuture {
    let sb = sb.clone();
    let command = command.into();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cwd = cwd.map(str::to_string);
    Box::pin(async move {
        debug_ok(execute_command(&sb, &command, &args, cwd.as_deref(), timeout).await)
    })
}

/// `echo` with a hostile argument must print it literally (no shell ran).
fn inert_echo(sb: &Sandbox, arg: &'static str) -> CaseFuture {
    let sb = sb.clone();
    Box::pin(async move {
        let out = execute_command(&sb, "echo", &[arg.to_string()], None, None).await?;
        assert_eq!(
            out.stdout,
            format!("{arg}\n"),
            "argument was not passed literally"
        );
        assert!(out.success);
        Ok(format!("{out:?}"))
    })
}

use ErrorKind::{NotFound, PermissionDenied, Timeout, Validation};
use Expect::{Inert, Refused};

fn build_corpus(fx: &Fixture, sb: &Sandbox) -> Corpus {
    let mut c = Corpus { cases: Vec::new() };
    let out = fx.outside.display().to_string();
    let root = fx.root.display().to_string();
    let long = "a/".repeat(2600);
    let long_component = "x".repeat(300);

    // --- read_file: traversal, absolute, symlinks, NUL, length ---
    c.add(
        "read ../ traversal",
        Refused(PermissionDenied),
        read(sb, "../outside/secret.txt"),
    );
    c.add(
        "read deep ../ to /etc/passwd",
        Refused(PermissionDenied),
        read(sb, "../../../../../../../../etc/passwd"),
    );
    c.add(
        "read absolute /etc/passwd",
        Refused(PermissionDenied),
        read(sb, "/etc/passwd"),
    );
    c.add(
        "read absolute outside file",
        Refused(PermissionDenied),
        read(sb, format!("{out}/secret.txt")),
    );
    c.add(
        "read sub/../../ escape",
        Refused(PermissionDenied),
        read(sb, "sub/../../outside/secret.txt"),
    );
    c.add(
        "read root-absolute then ..",
        Refused(PermissionDenied),
        read(sb, format!("{root}/../outside/secret.txt")),
    );
    c.add(
        "read sibling with root name as prefix",
        Refused(PermissionDenied),
        read(sb, "../sandbox_evil/f.txt"),
    );
    c.add(
        "read symlink to outside file",
        Refused(PermissionDenied),
        read(sb, "link_out"),
    );
    c.add(
        "read through symlinked parent dir",
        Refused(PermissionDenied),
        read(sb, "dirlink_out/secret.txt"),
    );
    c.add(
        "read through symlinked parent, deeper",
        Refused(PermissionDenied),
        read(sb, "dirlink_out/dir/deep.txt"),
    );
    c.add(
        "read denied file",
        Refused(PermissionDenied),
        read(sb, "secret/key.txt"),
    );
    c.add(
        "read denied via sub/..",
        Refused(PermissionDenied),
        read(sb, "sub/../secret/key.txt"),
    );
    c.add(
        "read denied via ./secret/../secret",
        Refused(PermissionDenied),
        read(sb, "./secret/../secret/key.txt"),
    );
    c.add(
        "read symlink into denied dir",
        Refused(PermissionDenied),
        read(sb, "link_denied"),
    );
    c.add(
        "read NUL byte truncation trick",
        Refused(Validation),
        read(sb, "notes.txt\0../../etc/passwd"),
    );
    c.add(
        "read very long path",
        Refused(Validation),
        read(sb, long.clone()),
    );
    c.add(
        "read over-long component",
        Refused(Validation),
        read(sb, long_component.clone()),
    );
    c.add(
        "read symlink loop",
        Refused(PermissionDenied),
        read(sb, "loop1"),
    );
    c.add(
        "read dangling symlink to outside",
        Refused(PermissionDenied),
        read(sb, "dangling"),
    );
    c.add(
        "read ~ home expansion",
        Refused(Validation),
        read(sb, "~/.bashrc"),
    );
    c.add(
        "read /proc/self/root magic link",
        Refused(PermissionDenied),
        read(sb, format!("/proc/self/root{out}/secret.txt")),
    );
    c.add(
        "read ../ after missing component",
        Refused(PermissionDenied),
        read(sb, "nonexistent/../../outside/secret.txt"),
    );
    c.add(
        "read /dev/zero device",
        Refused(PermissionDenied),
        read(sb, "/dev/zero"),
    );

    // --- write_file ---
    c.add(
        "write ../ traversal",
        Refused(PermissionDenied),
        write(sb, "../outside/new.txt", false),
    );
    c.add(
        "write absolute outside",
        Refused(PermissionDenied),
        write(sb, format!("{out}/abs_new.txt"), false),
    );
    c.add(
        "write through symlink to outside file",
        Refused(PermissionDenied),
        write(sb, "link_out", false),
    );
    c.add(
        "write through symlinked parent",
        Refused(PermissionDenied),
        write(sb, "dirlink_out/new.txt", false),
    );
    c.add(
        "write through dangling symlink",
        Refused(PermissionDenied),
        write(sb, "dangling", true),
    );
    c.add(
        "write create_dirs with .. after missing",
        Refused(PermissionDenied),
        write(sb, "newdir/../../outside/new.txt", true),
    );
    c.add(
        "write create_dirs through symlinked parent",
        Refused(PermissionDenied),
        write(sb, "dirlink_out/deep/new.txt", true),
    );
    c.add(
        "write into denied dir",
        Refused(PermissionDenied),
        write(sb, "secret/new.txt", false),
    );
    c.add(
        "write create_dirs inside denied dir",
        Refused(PermissionDenied),
        write(sb, "secret/more/new.txt", true),
    );
    c.add(
        "write symlink into denied",
        Refused(PermissionDenied),
        write(sb, "link_denied", false),
    );
    c.add(
        "write NUL byte path",
        Refused(Validation),
        write(sb, "ok.txt\0/etc/passwd", false),
    );
    c.add(
        "write very long path",
        Refused(Validation),
        write(sb, long.clone(), true),
    );
    c.add(
        "write to /etc",
        Refused(PermissionDenied),
        write(sb, "/etc/pwned_by_test", false),
    );

    // --- list_directory ---
    c.add("list ..", Refused(PermissionDenied), list(sb, "..", false));
    c.add("list /", Refused(PermissionDenied), list(sb, "/", false));
    c.add(
        "list symlinked dir to outside",
        Refused(PermissionDenied),
        list(sb, "dirlink_out", true),
    );
    c.add(
        "list denied dir",
        Refused(PermissionDenied),
        list(sb, "secret", false),
    );
    c.add(
        "list absolute outside",
        Refused(PermissionDenied),
        list(sb, out.clone(), false),
    );
    c.add_forbidding(
        "list . recursive does not follow symlinks or show denied",
        Inert,
        &["deep.txt", "key.txt", "\"secret.txt\""],
        list(sb, ".", true),
    );

    // --- search_files ---
    c.add(
        "search from ..",
        Refused(PermissionDenied),
        search(sb, "..", "*"),
    );
    c.add(
        "search in symlinked dir",
        Refused(PermissionDenied),
        search(sb, "dirlink_out", "*"),
    );
    c.add(
        "search pattern with ..",
        Refused(Validation),
        search(sb, ".", "../*"),
    );
    c.add(
        "search absolute pattern",
        Refused(Validation),
        search(sb, ".", "/etc/*"),
    );
    c.add(
        "search denied dir",
        Refused(PermissionDenied),
        search(sb, "secret", "*"),
    );
    c.add_forbidding(
        "search ** from root stays inside",
        Inert,
        &["deep.txt", "key.txt", "\"secret.txt\""],
        search(sb, ".", "**/*"),
    );

    // --- commands: denied programs by every route ---
    c.add(
        "exec denied rm by name",
        Refused(PermissionDenied),
        exec(sb, "rm", &["victim.txt"]),
    );
    c.add(
        "exec denied rm by absolute path",
        Refused(PermissionDenied),
        exec(sb, program("rm").display().to_string(), &["victim.txt"]),
    );
    c.add(
        "exec denied rm via /bin symlinked dir",
        Refused(PermissionDenied),
        exec(sb, "/bin/rm", &["victim.txt"]),
    );
    c.add(
        "exec denied rm via PATH symlink",
        Refused(PermissionDenied),
        exec(sb, "safe_tool", &["victim.txt"]),
    );
    c.add(
        "exec denied rm via relative symlink",
        Refused(PermissionDenied),
        exec(sb, "./bin/rmlink", &["victim.txt"]),
    );
    c.add(
        "exec denied rm via ../ relative path",
        Refused(PermissionDenied),
        exec(
            sb,
            format!("../../../../../../..{}", program("rm").display()),
            &["victim.txt"],
        ),
    );
    c.add(
        "exec program not allowed",
        Refused(PermissionDenied),
        exec(sb, "touch", &["pwned_notallowed"]),
    );
    c.add(
        "exec copy named like allowed program",
        Refused(PermissionDenied),
        exec(sb, "./fake/ls", &["pwned_fake_ls"]),
    );
    c.add(
        "exec shell-style command string",
        Refused(Validation),
        exec(sb, "echo hi; touch pwned_cmdname", &[]),
    );
    c.add(
        "exec command name with ;",
        Refused(NotFound),
        exec(sb, "echo;touch", &["pwned_cmdname"]),
    );
    c.add(
        "exec NUL in command",
        Refused(Validation),
        exec(sb, "echo\0", &[]),
    );
    c.add(
        "exec NUL in argument",
        Refused(Validation),
        exec(sb, "echo", &["a\0b"]),
    );
    c.add(
        "exec env-passthrough shell",
        Refused(PermissionDenied),
        exec(sb, "env", &["touch", "pwned_env"]),
    );

    // --- commands: injection in arguments is inert ---
    c.add(
        "inject ;",
        Inert,
        inert_echo(sb, "hi; touch pwned_semicolon"),
    );
    c.add("inject |", Inert, inert_echo(sb, "hi | touch pwned_pipe"));
    c.add("inject $()", Inert, inert_echo(sb, "$(touch pwned_subst)"));
    c.add(
        "inject backticks",
        Inert,
        inert_echo(sb, "`touch pwned_backtick`"),
    );
    c.add("inject &&", Inert, inert_echo(sb, "x && touch pwned_and"));
    c.add(
        "inject newline",
        Inert,
        inert_echo(sb, "x\ntouch pwned_newline"),
    );
    c.add("inject $HOME expansion", Inert, inert_echo(sb, "$HOME"));

    // --- commands: path arguments and working directory ---
    c.add(
        "cat /etc/passwd argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["/etc/passwd"]),
    );
    c.add(
        "cat ../ argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["../outside/secret.txt"]),
    );
    c.add(
        "cat symlink-out argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["link_out"]),
    );
    c.add(
        "cat denied argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["secret/key.txt"]),
    );
    c.add(
        "cat --opt=/path argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["--file=/etc/passwd"]),
    );
    c.add(
        "cat key=/path argument",
        Refused(PermissionDenied),
        exec(sb, "cat", &["if=/etc/passwd"]),
    );
    c.add(
        "head -X/path attached argument",
        Refused(PermissionDenied),
        exec(sb, "head", &["-n1", "-q/etc/passwd"]),
    );
    c.add(
        "ls symlinked dir argument",
        Refused(PermissionDenied),
        exec(sb, "ls", &["-la", "dirlink_out/"]),
    );
    c.add(
        "exec cwd ..",
        Refused(PermissionDenied),
        exec_in(sb, "ls", &[], Some(".."), None),
    );
    c.add(
        "exec cwd symlinked dir",
        Refused(PermissionDenied),
        exec_in(sb, "ls", &[], Some("dirlink_out"), None),
    );
    c.add(
        "exec cwd denied dir",
        Refused(PermissionDenied),
        exec_in(sb, "ls", &[], Some("secret"), None),
    );

    // --- commands: time and output limits ---
    c.add(
        "sleep 30 hits the per-command timeout",
        Refused(Timeout),
        exec(sb, "sleep", &["30"]),
    );
    c.add(
        "caller timeout lowers the limit",
        Refused(Timeout),
        exec_in(sb, "sleep", &["30"], None, Some(0.2)),
    );
    c.add("endless output is capped", Inert, {
        let sb = sb.clone();
        async move {
            let out = execute_command(&sb, "yes", &[], None, None).await?;
            let cap = sb.limits().max_output_bytes;
            assert!(out.stdout_truncated, "stdout should be truncated");
            assert_eq!(out.stdout.len(), cap);
            assert!(out.notice.as_deref().unwrap_or("").contains("truncated"));
            assert_eq!(out.signal, Some(9), "yes should have been killed");
            Ok(format!("{} bytes kept", out.stdout.len()))
        }
    });
    c.add("huge stderr is capped", Inert, {
        let sb = sb.clone();
        async move {
            let args: Vec<String> = (0..1000).map(|i| format!("missing_file_{i:04}")).collect();
            let out = execute_command(&sb, "cat", &args, None, None).await?;
            assert!(out.stderr_truncated, "stderr should be truncated");
            // The cap applies to the encoded size: newlines count twice on the wire.
            let wire = serde_json::to_string(&out.stderr).unwrap().len() - 2;
            let cap = sb.limits().max_output_bytes;
            assert!(
                wire <= cap && wire + 8 > cap,
                "{wire} bytes on the wire, cap {cap}"
            );
            Ok(format!("{} stderr bytes kept", out.stderr.len()))
        }
    });
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_corpus_has_zero_escapes() {
    let fx = Fixture::new();
    let sb = fx.sandbox_with(|c| c.max_output_bytes = 16 * 1024);
    let before = fx.snapshot_outside_root();
    let corpus = build_corpus(&fx, &sb);
    let total = corpus.cases.len();
    let mut failures = Vec::new();
    let mut refused = 0;
    let mut inert = 0;
    for case in corpus.cases {
        let result = case.run.await;
        let text = match &result {
            Ok(s) => s.clone(),
            Err(e) => e.to_tool_text(),
        };
        for f in ALWAYS_FORBIDDEN {
            if text.contains(f) {
                failures.push(format!("{}: result leaks {f:?}: {text}", case.name));
            }
        }
        match (case.expect, &result) {
            (Refused(kind), Err(e)) if e.kind() == kind => {
                refused += 1;
                let msg = e.to_tool_text();
                let prefix = format!("Error ({}): ", kind.as_str());
                if !msg.starts_with(&prefix)
                    || !msg.contains("\n\nAction: ")
                    || e.action().is_empty()
                {
                    failures.push(format!("{}: badly formed refusal: {msg}", case.name));
                }
            }
            (Inert, Ok(s)) => {
                inert += 1;
                for f in &case.forbidden {
                    if s.contains(f.as_str()) {
                        failures.push(format!("{}: result contains {f:?}: {s}", case.name));
                    }
                }
            }
            (expect, _) => failures.push(format!("{}: expected {expect:?}, got {text}", case.name)),
        }
        eprintln!(
            "case {:<55} {}",
            case.name,
            text.lines().next().unwrap_or("")
        );
    }

    let after = fx.snapshot_outside_root();
    if before != after {
        failures.push(format!(
            "files outside the sandbox root changed: before {:?} after {:?}",
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>()
        ));
    }
    for m in MARKERS {
        for dir in [&fx.root, &fx.outside] {
            if dir.join(m).exists() {
                failures.push(format!("marker {m} was created in {}", dir.display()));
            }
        }
    }
    if std::fs::read_to_string(fx.root.join("victim.txt")).unwrap() != "still here\n" {
        failures.push("victim.txt was modified or removed".to_string());
    }
    if std::path::Path::new("/etc/pwned_by_test").exists() {
        failures.push("/etc/pwned_by_test was created".to_string());
    }
    eprintln!(
        "attack corpus: {total} cases, {refused} refused, {inert} inert, {} failures",
        failures.len()
    );
    assert!(total >= 40, "corpus too small: {total}");
    assert!(
        failures.is_empty(),
        "{} escapes/failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `denied_paths` wins even when the denied directory is also listed as allowed.
#[tokio::test]
async fn denied_wins_over_allowed() {
    let fx = Fixture::new();
    let sb = fx.sandbox_with(|c| {
        c.allowed_paths
            .as_mut()
            .unwrap()
            .push(fx.root.join("secret"));
    });
    let err = read_file(
        &sb,
        &format!("{}/secret/key.txt", fx.root.display()),
        ContentEncoding::Utf8,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("denied path"), "{err}");
}

/// An allowed program that is also denied (same canonical file) is refused.
#[tokio::test]
async fn denied_command_wins_over_allowed() {
    let fx = Fixture::new();
    let sb = fx.sandbox_with(|c| {
        c.allowed_commands.push(program("rm").display().to_string());
    });
    let err = execute_command(&sb, "rm", &["victim.txt".to_string()], None, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(fx.root.join("victim.txt").exists());
    // Through a symlink whose own name is not denied.
    let err = execute_command(&sb, "./bin/rmlink", &["victim.txt".to_string()], None, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    assert!(err.to_string().contains("denied"), "{err}");
    assert!(fx.root.join("victim.txt").exists());
}
