//! Memory figures of a process tree, read from `/proc` (Linux).
//!
//! A server command may be a wrapper (`sh -c`, a launcher script), so the figures cover the
//! spawned process and all its descendants.

use std::collections::HashMap;
use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};
use std::time::Duration;

/// Reads one `kB` field (such as `VmHWM` or `VmRSS`) of `/proc/PID/status`.
/// `None` when the process is gone or the field is missing.
pub fn status_kb(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

/// The parent pid from `/proc/PID/stat` (the field after the parenthesised command name).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// `root` and all its living descendants (empty when `root` is gone).
pub fn process_tree(root: u32) -> Vec<u32> {
    if !std::path::Path::new(&format!("/proc/{root}")).exists() {
        return Vec::new();
    }
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(parent) = parent_of(pid) {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut tree = vec![root];
    let mut next = 0;
    while next < tree.len() {
        if let Some(kids) = children.get(&tree[next]) {
            tree.extend(kids.iter().copied().filter(|k| *k != root));
        }
        next += 1;
    }
    tree
}

/// Sums one `kB` field over the process tree of `root`; `None` when `root` is gone.
/// Also returns how many processes were summed.
pub fn tree_kb(root: u32, field: &str) -> Option<(u64, usize)> {
    let tree = process_tree(root);
    let values: Vec<u64> = tree
        .iter()
        .filter_map(|pid| status_kb(*pid, field))
        .collect();
    (!values.is_empty()).then(|| (values.iter().sum(), values.len()))
}

/// Polls the summed `VmRSS` of a process tree and keeps the largest value seen, so a peak is
/// known even when the process exits before `VmHWM` can be read.
pub struct RssPoller {
    max_kb: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl RssPoller {
    /// Starts polling the tree of `pid` every `every`; stops by itself once `pid` is gone.
    pub fn start(pid: u32, every: Duration) -> Self {
        let max_kb = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&max_kb);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                match tree_kb(pid, "VmRSS") {
                    Some((kb, _)) => {
                        seen.fetch_max(kb, Ordering::Relaxed);
                    }
                    None => break,
                }
            }
        });
        Self { max_kb, task }
    }

    /// Stops polling and returns the largest summed `VmRSS` seen (`None` if never read).
    pub fn stop(self) -> Option<u64> {
        self.task.abort();
        match self.max_kb.load(Ordering::Relaxed) {
            0 => None,
            kb => Some(kb),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(status_kb(me, "VmRSS").is_some_and(|kb| kb > 0));
        assert!(status_kb(me, "VmHWM").is_some_and(|kb| kb > 0));
        assert_eq!(status_kb(me, "NoSuchField"), None);
        assert_eq!(process_tree(me).first(), Some(&me));
    }

    #[test]
    fn the_tree_includes_children() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("spawn sleep");
        let tree = process_tree(std::process::id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(tree.contains(&child.id()), "{tree:?}");
    }

    #[test]
    fn a_gone_process_has_no_figures() {
        assert_eq!(status_kb(u32::MAX - 1, "VmRSS"), None);
        assert!(process_tree(u32::MAX - 1).is_empty());
        assert_eq!(tree_kb(u32::MAX - 1, "VmHWM"), None);
    }
}
