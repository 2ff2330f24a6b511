//! File tools: hard-linked files are refused, a trailing slash on a file is an error, and the
//! allowed programs stored in the sandbox cannot be rewritten (and are refused once changed).

mod common;

use common::{Fixture, OUTSIDE_SECRET};
use system_tools_mcp::sandbox::{ErrorKind, Sandbox};
use system_tools_mcp::tools::{ContentEncoding, execute_command, read_file, write_file};

const SCRIPT: &str = "#!/bin/sh\necho tool ran\n";

/// The fixture's policy plus an allowed script `bin/tool.sh` inside the sandbox.
fn with_script(fx: &Fixture) -> Sandbox {
    let script = fx.root.join("bin/tool.sh");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    // Its `#!` interpreter must be allowed too, or the script is refused at start-up.
    fx.sandbox_with(|c| {
        c.allowed_commands.push(script.display().to_string());
        c.allowed_commands.push("sh".to_string());
    })
}

#[tokio::test]
async fn hard_linked_files_are_neither_read_nor_written() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    std::fs::hard_link(fx.outside.join("secret.txt"), fx.root.join("sub/hard_out")).unwrap();
    std::fs::hard_link(fx.root.join("notes.txt"), fx.root.join("sub/hard_in")).unwrap();
    for name in ["sub/hard_out", "sub/hard_in", "notes.txt"] {
        let err = read_file(&sb, name, ContentEncoding::Utf8)
            .await
            .expect_err(name);
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
        assert!(err.to_string().contains("2 hard links"), "{err}");
        assert!(!err.to_tool_text().contains(OUTSIDE_SECRET));
        let err = write_file(&sb, name, "ATTACK", ContentEncoding::Utf8, false)
            .await
            .expect_err(name);
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        OUTSIDE_SECRET
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("notes.txt")).unwrap(),
        "hello notes\n"
    );
    // A single-name file reads as before.
    let out = read_file(&sb, "sub/inner.txt", ContentEncoding::Utf8)
        .await
        .unwrap();
    assert_eq!(out.content, "inner\n");
}

#[tokio::test]
async fn a_trailing_slash_on_a_file_is_an_error() {
    let fx = Fixture::new();
    let sb = fx.sandbox();
    let err = read_file(&sb, "notes.txt/", ContentEncoding::Utf8)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation, "{err}");
    let err = write_file(&sb, "sub/new.txt/", "x", ContentEncoding::Utf8, false)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Validation, "{err}");
    assert!(!fx.root.join("sub/new.txt").exists());
}

#[tokio::test]
async fn an_allowed_script_cannot_be_rewritten_and_is_refused_once_changed() {
    let fx = Fixture::new();
    let sb = with_script(&fx);
    let out = execute_command(&sb, "./bin/tool.sh", &[], None, None)
        .await
        .unwrap();
    assert_eq!(out.stdout, "tool ran\n");

    // write_file refuses it, whatever the path looks like.
    for path in ["bin/tool.sh", "./bin/../bin/tool.sh"] {
        let err = write_file(
            &sb,
            path,
            "#!/bin/sh\ncat /etc/passwd\n",
            ContentEncoding::Utf8,
            false,
        )
        .await
        .expect_err(path);
        assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    }
    // A command cannot rewrite it either: the kernel keeps allowed programs read-only.
    let sb_cp = {
        let mut c = fx.config();
        c.allowed_commands
            .push(fx.root.join("bin/tool.sh").display().to_string());
        c.allowed_commands.push("cp".to_string());
        c.confine_path_arguments = false;
        Sandbox::from_config(c).unwrap()
    };
    let args = vec!["notes.txt".to_string(), "bin/tool.sh".to_string()];
    let out = execute_command(&sb_cp, "cp", &args, None, None)
        .await
        .unwrap();
    assert!(!out.success, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(fx.root.join("bin/tool.sh")).unwrap(),
        SCRIPT
    );

    // Changed behind the server's back (by the operator or anyone else): refused.
    std::fs::write(fx.root.join("bin/tool.sh"), "#!/bin/sh\necho other\n").unwrap();
    let err = execute_command(&sb, "./bin/tool.sh", &[], None, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied, "{err}");
    assert!(err.to_string().contains("modified"), "{err}");
}
