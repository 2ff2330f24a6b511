//! The one-line JSON summary of all runs.

use serde::Serialize;

use crate::cli::{Method, Plan};
use crate::run::RunResult;

/// Per-server aggregate over its runs.
#[derive(Debug, Serialize)]
struct ServerSummary {
    label: String,
    command: String,
    runs: usize,
    clean_runs: usize,
    median_rps: f64,
    min_rps: f64,
    max_rps: f64,
    errors: u64,
    unanswered: u64,
    unexpected: u64,
    timed_out_runs: usize,
    median_peak_rss_kb: Option<u64>,
    max_peak_rss_kb: Option<u64>,
    /// median_rps / baseline's median_rps.
    rps_ratio_vs_baseline: Option<f64>,
    /// median_peak_rss_kb / baseline's.
    rss_ratio_vs_baseline: Option<f64>,
    failures: Vec<String>,
}

/// Everything the harness reports at the end.
#[derive(Debug, Serialize)]
pub struct Summary {
    method: Method,
    tool: String,
    requests: u64,
    window: u64,
    deadline_s: f64,
    rounds: u32,
    baseline: String,
    servers: Vec<ServerSummary>,
    #[serde(skip)]
    clean: bool,
}

impl Summary {
    /// Aggregates `results` per target of `plan`.
    pub fn new(plan: &Plan, results: Vec<RunResult>) -> Self {
        let clean = results.iter().all(RunResult::is_clean);
        let mut servers: Vec<ServerSummary> = plan
            .targets
            .iter()
            .enumerate()
            .map(|(index, target)| {
                let mine: Vec<&RunResult> = results.iter().filter(|r| r.target == index).collect();
                let rps: Vec<f64> = mine.iter().map(|r| r.rps).collect();
                let rss: Vec<u64> = mine.iter().filter_map(|r| r.peak_rss_kb).collect();
                ServerSummary {
                    label: target.label.clone(),
                    command: target.display.clone(),
                    runs: mine.len(),
                    clean_runs: mine.iter().filter(|r| r.is_clean()).count(),
                    median_rps: round2(median_f64(&rps)),
                    min_rps: round2(rps.iter().copied().fold(f64::INFINITY, f64::min)),
                    max_rps: round2(rps.iter().copied().fold(0.0, f64::max)),
                    errors: mine.iter().map(|r| r.errors).sum(),
                    unanswered: mine.iter().map(|r| r.unanswered).sum(),
                    unexpected: mine.iter().map(|r| r.unexpected).sum(),
                    timed_out_runs: mine.iter().filter(|r| r.timed_out).count(),
                    median_peak_rss_kb: median_u64(&rss),
                    max_peak_rss_kb: rss.iter().copied().max(),
                    rps_ratio_vs_baseline: None,
                    rss_ratio_vs_baseline: None,
                    failures: mine.iter().filter_map(|r| r.failure.clone()).collect(),
                }
            })
            .collect();
        let base_rps = servers[plan.baseline].median_rps;
        let base_rss = servers[plan.baseline].median_peak_rss_kb;
        for server in &mut servers {
            server.rps_ratio_vs_baseline =
                (base_rps > 0.0).then(|| round3(server.median_rps / base_rps));
            server.rss_ratio_vs_baseline = match (server.median_peak_rss_kb, base_rss) {
                (Some(a), Some(b)) if b > 0 => Some(round3(a as f64 / b as f64)),
                _ => None,
            };
        }
        Summary {
            method: plan.config.method,
            tool: serde_json::from_str(&plan.config.tool_json).unwrap_or_default(),
            requests: plan.config.requests,
            window: plan.config.window,
            deadline_s: plan.config.deadline.as_secs_f64(),
            rounds: plan.runs,
            baseline: plan.targets[plan.baseline].label.clone(),
            servers,
            clean,
        }
    }

    /// True when every run of every server was clean.
    pub fn all_clean(&self) -> bool {
        self.clean
    }

    /// The summary as one JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

fn median_f64(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}

fn median_u64(values: &[u64]) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2
    } else {
        sorted[mid]
    })
}

fn round2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median_f64(&[]), 0.0);
        assert_eq!(median_f64(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_f64(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median_u64(&[]), None);
        assert_eq!(median_u64(&[10, 30, 20]), Some(20));
        assert_eq!(median_u64(&[10, 20]), Some(15));
    }
}
