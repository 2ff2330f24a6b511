//! Running the `cli-demo` fixture (tests/fixtures/cli-demo) as a process, and comparing
//! output with committed snapshots.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fixture's `main`, built by this package as `cli-demo-fixture`.
pub const BIN: &str = env!("CARGO_BIN_EXE_cli-demo-fixture");

/// A command for the fixture with a clean environment: no greeting, log filter or
/// forced colours from the caller's shell.
pub fn cli() -> Command {
    let mut command = Command::new(BIN);
    command
        .env_remove("CLI_DEMO_GREETING")
        .env_remove("RUST_LOG")
        .env_remove("CLICOLOR_FORCE")
        .env("NO_COLOR", "1");
    command
}

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("exited, not killed"),
            stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
        }
    }
}

/// Run the fixture with `args`.
pub fn run(args: &[&str]) -> Run {
    cli().args(args).output().expect("run cli-demo").into()
}

/// Run and expect exit status `code`.
pub fn run_expect(args: &[&str], code: i32) -> Run {
    let run = run(args);
    assert_eq!(run.code, code, "{args:?} exited {}: {run:#?}", run.code);
    run
}

/// A file of the fixture crate.
pub fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/cli-demo")
        .join(relative)
}

/// The read-only permissions file of the fixture (NOTES_READ only).
pub fn read_only() -> String {
    fixture("read-only.permissions")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// Compare `actual` with `tests/tests/cli_snapshots/<name>.txt`; with
/// `UPDATE_SNAPSHOTS=1` in the environment, write it instead.
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli_snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read snapshot {}: {err}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "snapshot {name} differs from line {}; run with UPDATE_SNAPSHOTS=1 to accept\n--- expected ({})\n{expected}\n--- actual\n{actual}",
            first + 1,
            path.display()
        );
    }
}
