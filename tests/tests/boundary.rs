//! The rmcp boundary: a tools-only library (`mcp-toolbelt` with `default-features = false`)
//! does not depend on rmcp at all, so an rmcp major is not a major of every tool library.

use std::path::Path;
use std::process::Command;

/// The normal (non-dev, non-build) dependency tree of `mcp-toolbelt` with `features`.
fn tree(features: &[&str]) -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "mcp-toolbelt",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(features)
        .arg("--offline")
        .current_dir(workspace)
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 tree")
}

fn has_crate(tree: &str, name: &str) -> bool {
    tree.lines()
        .any(|line| line.split_whitespace().next() == Some(name))
}

#[test]
fn a_tools_only_build_does_not_compile_rmcp() {
    let tools_only = tree(&["--no-default-features"]);
    assert!(
        has_crate(&tools_only, "serde"),
        "the tree is listed:\n{tools_only}"
    );
    assert!(
        !has_crate(&tools_only, "rmcp"),
        "rmcp must come only with the `server` feature:\n{tools_only}"
    );
    let served = tree(&[]);
    assert!(
        has_crate(&served, "rmcp"),
        "the default build serves through rmcp"
    );
}
