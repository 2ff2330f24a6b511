//! Shared fixture: a temp dir holding a sandbox root, an "outside" directory with secrets, and
//! a directory of program symlinks used as the command search path.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use system_tools_mcp::sandbox::{Sandbox, SandboxConfig, resolve_program};

/// Text of the file outside the sandbox; must never appear in any result.
pub const OUTSIDE_SECRET: &str = "OUTSIDE-SECRET-7f3a";
/// Text of the file in the denied directory; must never appear in any result.
pub const DENIED_SECRET: &str = "DENIED-SECRET-91bc";

/// Temp-dir layout:
/// ```text
/// <tmp>/sandbox/            allowed root and base dir
///     notes.txt             "hello notes\n"
///     victim.txt            must survive every attack
///     sub/inner.txt
///     secret/key.txt        denied
///     link_in -> notes.txt
///     link_out -> <tmp>/outside/secret.txt
///     dirlink_out -> <tmp>/outside
///     link_denied -> secret/key.txt
///     dangling -> <tmp>/outside/created_by_attack.txt
///     loop1 -> loop2, loop2 -> loop1
///     bin/rmlink -> /usr/bin/rm (canonical rm)
///     fake/ls                a copy of `touch` named like an allowed program
/// <tmp>/outside/secret.txt, <tmp>/outside/dir/deep.txt
/// <tmp>/sandbox_evil/f.txt  a sibling sharing the root's name as a string prefix
/// <tmp>/pathbin/safe_tool -> rm (reached through the search path)
/// ```
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub pathbin: PathBuf,
}

/// Canonical program file for a bare name, from the test process's PATH.
pub fn program(name: &str) -> PathBuf {
    let path: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap()).collect();
    resolve_program(name, Path::new("/"), &path)
        .unwrap_or_else(|e| panic!("test needs program {name}: {e}"))
}

impl Fixture {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("sandbox");
        let outside = base.join("outside");
        let pathbin = base.join("pathbin");
        for d in [
            &root,
            &root.join("sub"),
            &root.join("secret"),
            &root.join("bin"),
            &root.join("fake"),
            &outside,
            &outside.join("dir"),
            &base.join("sandbox_evil"),
            &pathbin,
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(root.join("notes.txt"), "hello notes\n").unwrap();
        std::fs::write(root.join("victim.txt"), "still here\n").unwrap();
        std::fs::write(root.join("sub/inner.txt"), "inner\n").unwrap();
        std::fs::write(root.join("secret/key.txt"), DENIED_SECRET).unwrap();
        std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).unwrap();
        std::fs::write(outside.join("dir/deep.txt"), OUTSIDE_SECRET).unwrap();
        std::fs::write(base.join("sandbox_evil/f.txt"), OUTSIDE_SECRET).unwrap();
        symlink("notes.txt", root.join("link_in")).unwrap();
        symlink(outside.join("secret.txt"), root.join("link_out")).unwrap();
        symlink(&outside, root.join("dirlink_out")).unwrap();
        symlink("secret/key.txt", root.join("link_denied")).unwrap();
        symlink(outside.join("created_by_attack.txt"), root.join("dangling")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        symlink(program("rm"), root.join("bin/rmlink")).unwrap();
        std::fs::copy(program("touch"), root.join("fake/ls")).unwrap();
        symlink(program("rm"), pathbin.join("safe_tool")).unwrap();
        // A root test process runs commands as the owner of the base directory (else as
        // nobody, who could not write a root-owned tree): give the tree to nobody.
        give_to_nobody(&root);
        Fixture {
            tmp,
            root,
            outside,
            pathbin,
        }
    }

    /// The standard test policy: the sandbox root allowed, `secret` denied, a handful of
    /// harmless programs allowed, `rm` denied, `pathbin` searched first.
    pub fn config(&self) -> SandboxConfig {
        let mut search = vec![self.pathbin.clone()];
        search.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
        SandboxConfig {
            allowed_paths: Some(vec![self.root.clone()]),
            denied_paths: vec![self.root.join("secret")],
            allowed_commands: [
                "echo", "cat", "ls", "sleep", "yes", "head", "printenv", "pwd", "false",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            denied_commands: vec!["rm".to_string()],
            command_search_path: Some(search),
            command_timeout_secs: 20.0,
            command_timeouts: [("sleep".to_string(), 1.0)].into_iter().collect(),
            ..SandboxConfig::default()
        }
    }

    pub fn sandbox(&self) -> Sandbox {
        Sandbox::from_config(self.config()).unwrap()
    }

    pub fn sandbox_with(&self, edit: impl FnOnce(&mut SandboxConfig)) -> Sandbox {
        let mut c = self.config();
        edit(&mut c);
        Sandbox::from_config(c).unwrap()
    }

    /// Every file and directory under `dir` (symlinks not followed) with file contents.
    /// Snapshot of everything in the temp dir except the sandbox root itself.
    pub fn snapshot_outside_root(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut all = Self::snapshot(self.tmp.path());
        let root = self.root.clone();
        let tmp_canonical = std::fs::canonicalize(self.tmp.path()).unwrap();
        all.retain(|p, _| {
            let canonical = tmp_canonical.join(p.strip_prefix(self.tmp.path()).unwrap());
            !canonical.starts_with(&root)
        });
        all
    }

    pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let p = e.path();
                let ft = e.file_type().unwrap();
                if ft.is_dir() {
                    stack.push(p.clone());
                    out.insert(p, None);
                } else if ft.is_file() {
                    out.insert(p.clone(), Some(std::fs::read(&p).unwrap()));
                } else {
                    out.insert(p.clone(), None);
                }
            }
        }
        out
    }
}

/// When the tests run as root: hands `dir` and everything below it (symlinks themselves, not
/// their targets) to uid/gid 65534, as a project directory belongs to its user.
pub fn give_to_nobody(dir: &Path) {
    // SAFETY: geteuid never fails.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
        let is_dir = std::fs::symlink_metadata(&p)
            .map(|m| m.is_dir())
            .unwrap_or(false);
        if is_dir {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                stack.push(e.path());
            }
        }
    }
}
