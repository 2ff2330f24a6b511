//! Each tool doing its job inside the sandbox, plus the documented refusals of ordinary misuse.

mod common;

use common::Fixture;
use system_tools_mcp::sandbox::ErrorKind;
use system_tools_mcp::tools::{
    ContentEncoding, EntryKind, echo, execute_command, list_directory, read_file, search_files,
    system_info, write_file,
};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn echo_returns_the_message() {
    assert_eq!(echo("Hello").await.echo, "Echo: Hello");
    assert_eq!(echo("").await.echo, "Echo: ");
}

#[tokio::test]
async fn read_file_text_base64_and_inside_symlink() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let r = read_file(&sb, "notes.txt", ContentEncoding::Utf8)
        .await
        .unwrap();
    assert_eq!(r.content, "hello notes\n");
    assert_eq!(r.size, 12);
    // Replies show paths relative to the base directory, never the host path.
    assert_eq!(r.path, "notes.txt");

    let abs = fx.root.join("sub/inner.txt").display().to_string();
    assert_eq!(
        read_file(&sb, &abs, ContentEncoding::Utf8)
            .await
            .unwrap()
            .content,
        "inner\n"
    );

    // A symlink that stays inside is followed; the result names the real file.
    let r = read_file(&sb, "link_in", ContentEncoding::Utf8)
        .await
        .unwrap();
    assert_eq!(r.content, "hello notes\n");
    assert_eq!(r.path, "notes.txt");

    std::fs::write(fx.root.join("bin.dat"), [0u8, 159, 146, 150, 255]).unwrap();
    let e = read_file(&sb, "bin.dat", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(e.action().contains("base64"), "{}", e.action());
    let r = read_file(&sb, "bin.dat", ContentEncoding::Base64)
        .await
        .unwrap();
    assert_eq!(r.content, "AJ+Slv8=");
}

#[tokio::test]
async fn read_file_refusals_for_ordinary_misuse() {
    let fx = Fixture::new();
    let sb = fx.sandbox_with(|c| c.max_read_bytes = 10);
    let e = read_file(&sb, "notes.txt", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            system_tools_mcp::SandboxError::TooLarge {
                size: 12,
                limit: 10,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.action().contains("max_read_bytes"));

    let e = read_file(&sb, "missing.txt", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = read_file(&sb, "sub", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    assert!(e.action().contains("list_directory"));
    let e = read_file(&sb, "", ContentEncoding::Utf8).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
}

#[tokio::test]
async fn read_file_refuses_a_fifo_without_blocking() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let fifo = fx.root.join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let e = read_file(&sb, "pipe", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation, "{e}");
}

#[tokio::test]
async fn write_file_create_overwrite_and_create_dirs() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let w = write_file(&sb, "new.txt", "one", ContentEncoding::Utf8, false)
        .await
        .unwrap();
    assert!(w.created);
    assert_eq!(w.bytes_written, 3);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "one"
    );

    let w = write_file(&sb, "new.txt", "2", ContentEncoding::Utf8, false)
        .await
        .unwrap();
    assert!(!w.created);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new.txt")).unwrap(),
        "2"
    );

    let e = write_file(&sb, "a/b/c.txt", "x", ContentEncoding::Utf8, false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.action().contains("create_dirs"));
    assert!(!fx.root.join("a").exists());

    let w = write_file(&sb, "a/b/c.txt", "deep", ContentEncoding::Utf8, true)
        .await
        .unwrap();
    assert!(w.created);
    assert_eq!(w.created_dirs.len(), 2);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("a/b/c.txt")).unwrap(),
        "deep"
    );

    // Writing through a symlink that stays inside writes its target.
    write_file(&sb, "link_in", "via link", ContentEncoding::Utf8, false)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.root.join("notes.txt")).unwrap(),
        "via link"
    );

    let w = write_file(&sb, "b.bin", "AJ+Slv8=", ContentEncoding::Base64, false)
        .await
        .unwrap();
    assert_eq!(w.bytes_written, 5);
    assert_eq!(
        std::fs::read(fx.root.join("b.bin")).unwrap(),
        [0u8, 159, 146, 150, 255]
    );

    let e = write_file(&sb, "sub", "x", ContentEncoding::Utf8, false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    let e = write_file(&sb, "notes.txt/x", "x", ContentEncoding::Utf8, true)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation, "{e}");
    let e = write_file(&sb, "x.bin", "***", ContentEncoding::Base64, false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);

    let small = fx.sandbox_with(|c| c.max_write_bytes = 4);
    let e = write_file(&small, "big.txt", "12345", ContentEncoding::Utf8, false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
    assert!(!fx.root.join("big.txt").exists());
}

#[tokio::test]
async fn list_directory_flat_recursive_and_bounded() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let l = list_directory(&sb, ".", false, None).await.unwrap();
    let names: Vec<&str> = l.entries.iter().map(|e| e.name.as_str()).collect();
    assert!(
        names.contains(&"notes.txt") && names.contains(&"sub"),
        "{names:?}"
    );
    assert!(!names.contains(&"inner.txt"));
    assert!(!names.contains(&"secret"), "denied dir must be hidden");
    let notes = l.entries.iter().find(|e| e.name == "notes.txt").unwrap();
    assert_eq!((notes.kind, notes.size), (EntryKind::File, Some(12)));
    let sub = l.entries.iter().find(|e| e.name == "sub").unwrap();
    assert_eq!((sub.kind, sub.size), (EntryKind::Directory, None));
    let link = l.entries.iter().find(|e| e.name == "link_out").unwrap();
    assert_eq!(link.kind, EntryKind::Symlink);

    let l = list_directory(&sb, ".", true, None).await.unwrap();
    let paths: Vec<&str> = l.entries.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"sub/inner.txt"), "{paths:?}");
    let sub_pos = paths.iter().position(|p| *p == "sub").unwrap();
    let inner_pos = paths.iter().position(|p| *p == "sub/inner.txt").unwrap();
    assert!(sub_pos < inner_pos, "a directory comes before its contents");
    assert!(!l.truncated);
    assert!(l.notice.as_deref().unwrap().contains("denied"));

    let l = list_directory(&sb, ".", true, Some(3)).await.unwrap();
    assert_eq!(l.entries.len(), 3);
    assert!(l.truncated);
    assert!(l.notice.as_deref().unwrap().contains("stopped after 3"));

    std::fs::create_dir_all(fx.root.join("d1/d2/d3")).unwrap();
    let shallow = fx.sandbox_with(|c| c.max_walk_depth = 2);
    let l = list_directory(&shallow, "d1", true, None).await.unwrap();
    let paths: Vec<&str> = l.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["d2", "d2/d3"]);
    assert!(l.truncated);

    let e = list_directory(&sb, "notes.txt", false, None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    let e = list_directory(&sb, ".", false, Some(0)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
}

#[tokio::test]
async fn names_that_are_not_utf8_round_trip_through_list_read_write_and_search() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let fx = Fixture::new();
    let sb = fx.sandbox();
    // "café" in Latin-1, in a directory whose name is a cut UTF-8 sequence; and a UTF-8
    // name that holds the text \x41.
    let dir = fx.root.join(OsStr::from_bytes(b"d\xe2\x82"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join(OsStr::from_bytes(b"caf\xe9.txt")), "latin-1\n").unwrap();
    std::fs::write(fx.root.join("a\\x41"), "literal\n").unwrap();

    let listed = list_directory(&sb, ".", true, None).await.unwrap();
    let paths: Vec<&str> = listed.entries.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"d\\xe2\\x82/caf\\xe9.txt"), "{paths:?}");
    assert!(paths.contains(&"a\\\\x41"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.contains('\u{fffd}')), "{paths:?}");

    // Each listed path reads back the file it names, and the reply names it the same way.
    let read = read_file(&sb, "d\\xe2\\x82/caf\\xe9.txt", ContentEncoding::Utf8)
        .await
        .unwrap();
    assert_eq!(read.content, "latin-1\n");
    assert_eq!(read.path, "d\\xe2\\x82/caf\\xe9.txt");
    let literal = read_file(&sb, "a\\\\x41", ContentEncoding::Utf8)
        .await
        .unwrap();
    assert_eq!(literal.content, "literal\n");

    // A new name that is not UTF-8 is created with exactly those bytes (checked on the host).
    write_file(
        &sb,
        "d\\xe2\\x82/\\xff.bin",
        "new",
        ContentEncoding::Utf8,
        false,
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read(dir.join(OsStr::from_bytes(b"\xff.bin"))).unwrap(),
        b"new"
    );
    let found = search_files(&sb, ".", "*.bin", None).await.unwrap();
    let found: Vec<&str> = found.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(found, ["d\\xe2\\x82/\\xff.bin"]);

    // An escape that could spell a separator, a dot or NUL is refused, not unescaped.
    for bad in ["d\\x2f..", "\\x2e\\x2e/notes.txt", "a\\x00", "d\\xe2\\q"] {
        let e = read_file(&sb, bad, ContentEncoding::Utf8)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation, "{bad}");
        assert!(
            e.action().contains("Copy the path"),
            "{bad}: {}",
            e.action()
        );
    }
}

#[tokio::test]
async fn search_files_by_name_and_by_path() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    std::fs::write(fx.root.join("sub/other.rs"), "fn main() {}").unwrap();
    std::fs::write(fx.root.join("top.rs"), "").unwrap();

    let r = search_files(&sb, ".", "*.txt", None).await.unwrap();
    let paths: Vec<&str> = r.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["notes.txt", "sub/inner.txt", "victim.txt"]);

    let r = search_files(&sb, ".", "sub/*.rs", None).await.unwrap();
    let paths: Vec<&str> = r.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["sub/other.rs"]);

    let r = search_files(&sb, ".", "**/*.rs", None).await.unwrap();
    assert_eq!(r.matches.len(), 2);

    let r = search_files(&sb, "sub", "*", None).await.unwrap();
    assert_eq!(r.matches.len(), 2);

    let r = search_files(&sb, ".", "*.txt", Some(1)).await.unwrap();
    assert_eq!(r.matches.len(), 1);
    assert!(r.truncated);

    let e = search_files(&sb, ".", "[", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
    let e = search_files(&sb, ".", "", None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Validation);
}

#[tokio::test]
async fn execute_command_runs_allowed_programs() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let out = execute_command(&sb, "echo", &strings(&["a b", "c"]), None, None)
        .await
        .unwrap();
    assert_eq!(out.stdout, "a b c\n");
    assert_eq!(out.exit_code, Some(0));
    assert!(out.success && out.notice.is_none());

    let out = execute_command(&sb, "pwd", &[], Some("sub"), None)
        .await
        .unwrap();
    assert_eq!(
        out.stdout.trim_end(),
        fx.root.join("sub").display().to_string()
    );

    let out = execute_command(&sb, "cat", &strings(&["notes.txt"]), None, None)
        .await
        .unwrap();
    assert_eq!(out.stdout, "hello notes\n");

    let out = execute_command(&sb, "false", &[], None, None)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(1));
    assert!(!out.success);

    let out = execute_command(&sb, "cat", &strings(&["missing"]), None, None)
        .await
        .unwrap();
    assert!(!out.success);
    assert!(out.stderr.contains("missing"));

    // Absolute path of an allowed program works too.
    let echo_path = common::program("echo").display().to_string();
    let out = execute_command(&sb, &echo_path, &strings(&["x"]), None, None)
        .await
        .unwrap();
    assert_eq!(out.stdout, "x\n");
}

#[tokio::test]
async fn execute_command_clears_the_environment() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let out = execute_command(&sb, "printenv", &[], None, None)
        .await
        .unwrap();
    let allowed = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"];
    for line in out.stdout.lines() {
        let name = line.split('=').next().unwrap();
        assert!(
            allowed.contains(&name),
            "unexpected variable passed: {name}"
        );
    }
    let path_line = out.stdout.lines().find(|l| l.starts_with("PATH=")).unwrap();
    assert!(path_line.starts_with(&format!("PATH={}", fx.pathbin.display())));
}

#[tokio::test]
async fn execute_command_invalid_timeout() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    for t in [0.0, -1.0, f64::NAN] {
        let e = execute_command(&sb, "echo", &[], None, Some(t))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Validation);
    }
}

#[tokio::test]
async fn system_info_reports_this_machine() {
    let fx = Fixture::new();
    let info = system_info(&fx.sandbox()).await;
    // What the kernel enforces on commands: this machine's Landlock ABI, all rules in force.
    assert_eq!(
        info.kernel_sandbox.kernel_abi,
        system_tools_mcp::sandbox::kernel_abi()
    );
    assert_eq!(info.kernel_sandbox.status, "enforced", "{info:?}");
    assert_eq!(info.arch, std::env::consts::ARCH);
    assert_eq!(info.os, std::env::consts::OS);
    assert!(info.cpu_count >= 1);
    assert!(!info.hostname.is_empty());
    assert!(!info.kernel_release.is_empty());
    if cfg!(target_os = "linux") {
        let total = info.memory_total_bytes.expect("MemTotal on Linux");
        let available = info.memory_available_bytes.expect("MemAvailable on Linux");
        assert!(total > 0 && available <= total);
        assert_eq!(info.kernel, "Linux");
    }
    let json = serde_json::to_value(&info).unwrap();
    assert!(json.get("hostname").is_some());
}

#[test]
fn output_types_have_json_schemas() {
    use system_tools_mcp::tools::*;
    let schemas = [
        schemars::schema_for!(EchoOutput),
        schemars::schema_for!(ReadFileOutput),
        schemars::schema_for!(WriteFileOutput),
        schemars::schema_for!(DirectoryListing),
        schemars::schema_for!(SearchResult),
        schemars::schema_for!(CommandOutput),
        schemars::schema_for!(SystemInfo),
        schemars::schema_for!(ContentEncoding),
    ];
    for s in &schemas {
        let v = serde_json::to_value(s).unwrap();
        assert!(
            v.get("type").is_some() || v.get("oneOf").is_some() || v.get("enum").is_some(),
            "{v}"
        );
    }
    let enc = serde_json::to_value(schemars::schema_for!(ContentEncoding)).unwrap();
    assert!(
        enc.to_string().contains("utf-8") && enc.to_string().contains("base64"),
        "{enc}"
    );
    assert_eq!(TOOLS.len(), 7);
}
