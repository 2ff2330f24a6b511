//! The README's code builds outside this repository with only the dependencies it lists:
//! its quickstart server, and its tools-library + server pair, in a fresh workspace in a
//! temporary directory (path dependency on this `mcp-toolbelt`, this build's target directory
//! and lock file so nothing is fetched or rebuilt needlessly, `--offline`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const README: &str = include_str!("../../README.md");

/// The fenced block whose first line is `marker` (the marker line is kept: it is a comment).
fn block(marker: &str) -> String {
    let start = README
        .find(&format!("\n{marker}\n"))
        .unwrap_or_else(|| panic!("README has a block starting {marker:?}"));
    let body = &README[start + 1..];
    body[..body.find("\n```").expect("the block ends")].to_string() + "\n"
}

/// A README `[dependencies]` block with `mcp-toolbelt` pointing at this repository.
fn manifest(name: &str, marker: &str, kind: &str) -> String {
    let mcp_toolbelt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-tools");
    let path = mcp_toolbelt.canonicalize().expect("mcp-toolbelt dir");
    let path = format!("path = {:?}", path.display().to_string());
    let dependencies = block(marker)
        .replace(
            "mcp-toolbelt = \"0.2\"",
            &format!("mcp-toolbelt = {{ {path} }}"),
        )
        .replace(
            "mcp-toolbelt = { version = \"0.2\"",
            &format!("mcp-toolbelt = {{ {path}"),
        )
        .replace(
            "package = \"mcp-toolbelt\", version = \"0.2\"",
            &format!("package = \"mcp-toolbelt\", {path}"),
        );
    assert!(dependencies.contains(&path), "{dependencies}");
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n{kind}\n{dependencies}"
    )
}

fn write(path: PathBuf, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Runs `program` with `args`, asserts it succeeded, and returns its standard output.
fn succeeds(program: &Path, args: &[&str]) -> String {
    let output = Command::new(program).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{} {args:?}: {}{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// This build's target directory (`target/debug/deps/<test>` -> `target`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

#[test]
fn the_readme_builds_in_a_fresh_workspace_with_only_its_dependencies() {
    let root = std::env::temp_dir().join(format!("mcp-toolbelt-fresh-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    write(
        root.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"quickstart\", \"my-tools\", \"server\", \"renamed\"]\n\n\
         [profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n",
    );
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    fs::copy(lock, root.join("Cargo.lock")).unwrap();

    let quickstart = README
        .split("```rust,no_run,standalone_crate\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the README opens with the quickstart");
    write(
        root.join("quickstart/Cargo.toml"),
        &manifest("quickstart", "# Cargo.toml of a server", ""),
    );
    write(root.join("quickstart/src/main.rs"), quickstart);
    write(
        root.join("my-tools/Cargo.toml"),
        &manifest("my-tools", "# Cargo.toml of a tools library", ""),
    );
    write(
        root.join("my-tools/src/lib.rs"),
        &block("// src/lib.rs of a tools library"),
    );
    let server_deps = block("# Cargo.toml of a server using it");
    assert!(server_deps.contains("my-tools = { path = \"../my-tools\" }"));
    write(
        root.join("server/Cargo.toml"),
        &manifest("server", "# Cargo.toml of a server using it", ""),
    );
    write(
        root.join("server/src/main.rs"),
        &block("// src/main.rs of a server using it"),
    );

    // The runtime under another name: the macros' generated code, the extractor rule
    // (`tb::State`, `tb::Caller`) and schemars' crate path all follow the rename.
    let renamed_deps = block("# Cargo.toml of a server that renames the dependency");
    assert!(renamed_deps.contains("tb = { package = \"mcp-toolbelt\""));
    write(
        root.join("renamed/Cargo.toml"),
        &manifest(
            "renamed",
            "# Cargo.toml of a server that renames the dependency",
            "",
        ),
    );
    write(
        root.join("renamed/src/main.rs"),
        &block("// src/main.rs of a server that renames the dependency"),
    );

    let target = target_dir().join("fresh-crates");
    let cargo = |args: &[&str]| {
        let output = Command::new(env!("CARGO"))
            .args(args)
            .current_dir(&root)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "cargo {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    };
    cargo(&["build", "--offline", "--quiet"]);
    // The tools library alone does not compile rmcp.
    let tree = cargo(&["tree", "--offline", "-p", "my-tools", "-e", "normal"]);
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(!tree.contains("rmcp"), "{tree}");

    // The pair works: the server lists the library's tool, and its check passes.
    let server = target.join("debug/server");
    assert!(succeeds(&server, &["tools", "list"]).contains("math_add"));
    succeeds(&server, &["tools", "check"]);
    assert!(succeeds(&server, &["math", "add", "--a", "2", "--b", "3"]).contains("\"total\": 5"));

    let renamed = target.join("debug/renamed");
    succeeds(&renamed, &["tools", "check"]);
    let greeted = succeeds(&renamed, &["greet", "--name", "Ann"]);
    assert!(greeted.contains("Hello, Ann, from here"), "{greeted}");
    let _ = fs::remove_dir_all(&root);
}
