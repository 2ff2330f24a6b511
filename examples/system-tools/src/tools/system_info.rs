//! `system_info`: OS, architecture, hostname, CPU count and memory, and what the kernel
//! enforces on commands.

use serde::Serialize;

use crate::sandbox::{KernelSandboxReport, ProcessContainment, Sandbox};

/// Result of [`system_info`]. Fields the platform cannot provide are `null`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SystemInfo {
    /// Operating system family as Rust names it (`linux`, `macos`, ...).
    pub os: String,
    /// Distribution name from `/etc/os-release` (`PRETTY_NAME`), when available.
    pub os_name: Option<String>,
    /// Kernel name (`uname -s`).
    pub kernel: String,
    /// Kernel release (`uname -r`).
    pub kernel_release: String,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// Host name.
    pub hostname: String,
    /// Logical CPUs available to this process.
    pub cpu_count: usize,
    /// Total memory in bytes (`MemTotal` in `/proc/meminfo`).
    pub memory_total_bytes: Option<u64>,
    /// Memory available for new work in bytes (`MemAvailable`).
    pub memory_available_bytes: Option<u64>,
    /// Seconds since boot (`/proc/uptime`).
    pub uptime_secs: Option<f64>,
    /// What the kernel enforces on `execute_command` (Landlock ABI, status, rules).
    pub kernel_sandbox: KernelSandboxReport,
    /// How a command's process tree is made to die with its call.
    pub process_containment: ProcessContainment,
}

/// Gathers system information from `uname`, `/proc` and `/etc/os-release`, and the command
/// sandbox's kernel report.
pub async fn system_info(sandbox: &Sandbox) -> SystemInfo {
    let uname = rustix::system::uname();
    let text = |s: &std::ffi::CStr| s.to_string_lossy().into_owned();
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let mem = |key: &str| meminfo.as_deref().and_then(|m| meminfo_bytes(m, key));
    SystemInfo {
        os: std::env::consts::OS.to_string(),
        os_name: std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| os_release_value(&t, "PRETTY_NAME")),
        kernel: text(uname.sysname()),
        kernel_release: text(uname.release()),
        arch: std::env::consts::ARCH.to_string(),
        hostname: text(uname.nodename()),
        cpu_count: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        memory_total_bytes: mem("MemTotal"),
        memory_available_bytes: mem("MemAvailable"),
        uptime_secs: std::fs::read_to_string("/proc/uptime")
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse().ok()),
        kernel_sandbox: sandbox.kernel_report(),
        process_containment: sandbox.process_containment(),
    }
}

/// `MemTotal:  16318412 kB` -> bytes.
fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.split(':').next() == Some(key))?;
    let mut parts = line.split(':').nth(1)?.split_whitespace();
    let value: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") => value.checked_mul(1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// `KEY="value"` from an os-release file.
fn os_release_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo_and_os_release() {
        let m = "MemTotal:       16318412 kB\nMemFree:  1 kB\nHugePages_Total:       0\n";
        assert_eq!(meminfo_bytes(m, "MemTotal"), Some(16318412 * 1024));
        assert_eq!(meminfo_bytes(m, "HugePages_Total"), Some(0));
        assert_eq!(meminfo_bytes(m, "MemAvailable"), None);
        let o = "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_release_value(o, "PRETTY_NAME").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
    }
}
