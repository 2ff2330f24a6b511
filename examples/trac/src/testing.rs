//! Real tracd servers for integration tests (feature `testing`).
//!
//! [`shared`] starts one pair of tracd servers per test process with the
//! project's `scripts/trac/` (the first call runs `setup.sh`, which builds the
//! Trac venv under `.cache/` once and is instant afterwards, then `start.sh`
//! on two free loopback ports with a run directory of its own). start.sh's
//! watchdog stops both servers as soon as the test process has exited,
//! however it ends.
//!
//! * the anonymous server grants `XML_RPC TICKET_ADMIN WIKI_ADMIN MILESTONE_ADMIN`
//!   to everybody (RPC at `/rpc`);
//! * the basic-auth server lets [`USER`] / [`PASSWORD`] in with only `XML_RPC`
//!   (RPC at `/login/rpc`), so every write there is refused by Trac.
//!
//! ```no_run
//! // in an integration test: `Path::new(env!("CARGO_TARGET_TMPDIR"))`
//! let servers = trac_mcp::testing::shared(&std::env::temp_dir());
//! let trac = servers.anon_client();
//! ```

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::client::{TracClient, TracConfig};

/// User with only XML_RPC on the basic-auth server.
pub const USER: &str = "bob";
/// Password of [`USER`].
pub const PASSWORD: &str = "bobpw";

/// A running pair of tracd servers (see the module docs).
#[derive(Debug)]
pub struct TracServers {
    /// Port of the anonymous-admin server.
    pub anon_port: u16,
    /// Port of the basic-auth server.
    pub auth_port: u16,
    /// Where envs, logs and pid files live.
    pub run_dir: PathBuf,
}

static SERVERS: OnceLock<TracServers> = OnceLock::new();

/// The servers of this process, started on first use with a run directory
/// under `parent` (tests pass `env!("CARGO_TARGET_TMPDIR")`). Later calls
/// return the same servers whatever `parent` they pass. Panics with the
/// scripts' output when the servers cannot be started.
pub fn shared(parent: &Path) -> &'static TracServers {
    SERVERS.get_or_init(|| TracServers::start(parent).unwrap_or_else(|e| panic!("{e}")))
}

/// The project's `scripts/trac` directory.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/trac")
}

/// Runs `scripts/trac/<name>` with extra environment; `Err` holds its output.
pub fn run_script(name: &str, envs: &[(&str, String)]) -> Result<String, String> {
    let mut cmd = Command::new("bash");
    cmd.arg(scripts_dir().join(name));
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{name} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Two distinct ports that were free a moment ago.
fn free_ports() -> Result<(u16, u16), String> {
    let bind = || {
        TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot bind a free loopback port: {e}"))
    };
    let port = |l: &TcpListener| {
        l.local_addr()
            .map(|a| a.port())
            .map_err(|e| format!("cannot read a bound port: {e}"))
    };
    // both listeners stay alive while the ports are read, so the ports differ
    let (a, b) = (bind()?, bind()?);
    Ok((port(&a)?, port(&b)?))
}

/// The running test binary's name without cargo's `-<hash>` suffix.
fn test_binary_name() -> String {
    let stem = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .unwrap_or_else(|| "tests".to_string());
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => stem,
    }
}

/// Removes run dirs of earlier runs of this binary whose process is gone.
fn remove_stale_run_dirs(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(prefix) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = run_script(
                "stop.sh",
                &[("TRAC_RUN_DIR", entry.path().display().to_string())],
            );
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl TracServers {
    /// Runs `setup.sh`, then `start.sh` on two free loopback ports with a run
    /// directory `trac-run-<test binary>-<pid>` under `parent`. Retries with
    /// new ports when one was taken in between.
    pub fn start(parent: &Path) -> Result<TracServers, String> {
        let setup = run_script("setup.sh", &[])?;
        eprintln!("trac venv: {}", setup.trim());
        let prefix = format!("trac-run-{}-", test_binary_name());
        remove_stale_run_dirs(parent, &prefix);
        let run_dir = parent.join(format!("{prefix}{}", std::process::id()));
        let mut last_error = String::new();
        for _ in 0..3 {
            let (anon_port, auth_port) = free_ports()?;
            let servers = TracServers {
                anon_port,
                auth_port,
                run_dir: run_dir.clone(),
            };
            match servers.run_start(false) {
                Ok(()) => return Ok(servers),
                // another process may have taken a port in between: try new ones
                Err(e) if e.contains("already in use") => last_error = e,
                Err(e) => return Err(e),
            }
        }
        Err(format!("could not start tracd: {last_error}"))
    }

    /// The environment `start.sh` / `stop.sh` get for these servers.
    pub fn script_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TRAC_RUN_DIR", self.run_dir.display().to_string()),
            ("TRAC_ANON_PORT", self.anon_port.to_string()),
            ("TRAC_AUTH_PORT", self.auth_port.to_string()),
            ("TRAC_AUTH_USER", USER.to_string()),
            ("TRAC_AUTH_PASSWORD", PASSWORD.to_string()),
            ("TRAC_WATCH_PID", std::process::id().to_string()),
        ]
    }

    fn run_start(&self, reuse_envs: bool) -> Result<(), String> {
        let mut env = self.script_env();
        if reuse_envs {
            env.push(("TRAC_REUSE_ENVS", "1".to_string()));
        }
        run_script("start.sh", &env).map(|out| eprint!("{out}"))
    }

    /// Base URL of the anonymous-admin server.
    pub fn anon_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.anon_port)
    }

    /// Base URL of the basic-auth server.
    pub fn auth_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.auth_port)
    }

    /// Anonymous client of the admin server.
    pub fn anon_client(&self) -> TracClient {
        TracClient::new(TracConfig::new(self.anon_url())).expect("client")
    }

    /// [`USER`] on the basic-auth server.
    pub fn auth_client(&self) -> TracClient {
        TracClient::new(TracConfig::new(self.auth_url()).with_credentials(USER, PASSWORD))
            .expect("client")
    }

    /// A client of `url` with the given credentials and timeout.
    pub fn client_with(
        &self,
        url: String,
        user: Option<(&str, &str)>,
        timeout: Duration,
    ) -> TracClient {
        let mut config = TracConfig::new(url).with_timeout(timeout);
        if let Some((u, p)) = user {
            config = config.with_credentials(u, p);
        }
        TracClient::new(config).expect("client")
    }

    /// Stops both servers (stop.sh); panics with its output if that fails.
    pub fn stop(&self) {
        run_script("stop.sh", &self.script_env()).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Starts both servers again on the same ports, keeping their data.
    pub fn restart(&self) {
        self.run_start(true).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Pid of the anonymous server's tracd.
    pub fn anon_pid(&self) -> u32 {
        let text = std::fs::read_to_string(self.run_dir.join("anon.pid")).expect("anon.pid");
        text.trim().parse().expect("pid")
    }
}

/// A name unique within this test process, for pages, milestones, keywords.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}{}x{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
