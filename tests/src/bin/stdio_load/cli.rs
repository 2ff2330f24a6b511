//! Command-line options of `stdio-load` and their validation into a [`Plan`].

use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;

/// Options as typed on the command line.
#[derive(Debug, Parser)]
#[command(
    name = "stdio-load",
    about = "Pipelines MCP tools/call requests into stdio servers and reports req/s, errors and peak RSS",
    after_help = "Give the server either after `--` (one server, run directly) or as one or more \
                  --cmd LABEL=COMMAND (each a /bin/sh command line; peak RSS covers the whole process tree)."
)]
pub struct Cli {
    /// A server to measure, as LABEL=COMMAND; COMMAND is a shell command line run by
    /// `/bin/sh -c` (start it with `exec`, e.g. `FOO=1 exec ./server`, to keep the shell out
    /// of the RSS figure). Repeatable.
    #[arg(long = "cmd", value_name = "LABEL=COMMAND")]
    cmds: Vec<String>,

    /// Number of tools/call requests per run.
    #[arg(short = 'n', long, default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    requests: u64,

    /// Maximum number of requests in flight (sent, not yet answered).
    #[arg(short = 'w', long, default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    window: u64,

    /// Hard limit in seconds for one run (spawn, handshake and all requests); the server is
    /// killed when it expires and the run counts as timed out.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    deadline: f64,

    /// Rounds to run; every server runs once per round, in the order given.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    runs: u32,

    /// What each request is: a `tools/call` of --tool, or a `tools/list` page request of
    /// a walk (first page, then every `nextCursor`, then over again; --window walks at once).
    #[arg(long, value_enum, default_value_t = Method::Call)]
    method: Method,

    /// With --method list: a walk is correct only if it lists exactly N distinct tools.
    #[arg(long, value_name = "N")]
    expect_tools: Option<u64>,

    /// With --method list: before timing, K whole walks one after the other, one page at a
    /// time, so the server has served every page once (as a server that has been listed
    /// before); a wrong page in them fails the run.
    #[arg(long, value_name = "K", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000))]
    warm_up_walks: u64,

    /// Name of the tool to call.
    #[arg(long, default_value = "echo")]
    tool: String,

    /// Arguments of each call, as a JSON object.
    #[arg(
        long = "args",
        default_value = r#"{"message":"hello"}"#,
        value_name = "JSON"
    )]
    arguments: String,

    /// When set, a reply counts as correct only if its first content block is text equal to this.
    #[arg(long, value_name = "TEXT")]
    expect_text: Option<String>,

    /// Protocol version sent in `initialize`.
    #[arg(long, default_value = "2025-11-25")]
    protocol_version: String,

    /// Label of the server the ratios are computed against (default: the first one).
    #[arg(long)]
    baseline: Option<String>,

    /// Pass the servers' stderr through instead of keeping only its tail for error reports.
    #[arg(long)]
    server_stderr: bool,

    /// One server command and its arguments, run directly (label: the program's file name).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// What the harness sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// `tools/call` requests.
    Call,
    /// Full `tools/list` walks, following `nextCursor`.
    List,
}

/// One server to measure.
#[derive(Debug, Clone)]
pub struct Target {
    /// Short name used in the report.
    pub label: String,
    /// Program to execute.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The command as the user gave it, for the report.
    pub display: String,
}

/// Settings shared by every run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// What each request is.
    pub method: Method,
    /// With [`Method::List`]: the number of distinct tools a correct walk lists.
    pub expect_tools: Option<u64>,
    /// With [`Method::List`]: whole walks before timing.
    pub warm_up_walks: u64,
    /// Requests per run.
    pub requests: u64,
    /// In-flight bound.
    pub window: u64,
    /// Hard limit for one run.
    pub deadline: Duration,
    /// Tool name, already encoded as a JSON string.
    pub tool_json: String,
    /// Arguments, already encoded as a JSON object.
    pub arguments_json: String,
    /// Expected text of the first content block, if checked.
    pub expect_text: Option<String>,
    /// Protocol version for `initialize`.
    pub protocol_version: String,
    /// Whether the server's stderr is passed through.
    pub server_stderr: bool,
}

/// The validated plan: what to run and how.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Servers, in the order given; runs alternate between them.
    pub targets: Vec<Target>,
    /// Rounds.
    pub runs: u32,
    /// Index into `targets` of the baseline for ratios.
    pub baseline: usize,
    /// Settings of every run.
    pub config: RunConfig,
}

impl Cli {
    /// Checks the options and turns them into a [`Plan`].
    pub fn into_plan(self) -> anyhow::Result<Plan> {
        let mut targets = Vec::new();
        if !self.command.is_empty() {
            let program = self.command[0].clone();
            let label = std::path::Path::new(&program)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| program.clone());
            targets.push(Target {
                label,
                display: self.command.join(" "),
                program,
                args: self.command[1..].to_vec(),
            });
        }
        for spec in &self.cmds {
            let Some((label, command)) = spec.split_once('=') else {
                bail!("--cmd wants LABEL=COMMAND, got {spec:?}");
            };
            let (label, command) = (label.trim(), command.trim());
            if label.is_empty() || command.is_empty() {
                bail!("--cmd wants a non-empty LABEL and COMMAND, got {spec:?}");
            }
            targets.push(Target {
                label: label.to_string(),
                program: "/bin/sh".to_string(),
                args: vec!["-c".to_string(), command.to_string()],
                display: command.to_string(),
            });
        }
        if targets.is_empty() {
            bail!("no server given: use `-- COMMAND [ARGS...]` or `--cmd LABEL=COMMAND`");
        }
        for (i, t) in targets.iter().enumerate() {
            if targets[..i].iter().any(|o| o.label == t.label) {
                bail!(
                    "two servers share the label {:?}; give distinct labels",
                    t.label
                );
            }
        }
        let baseline = match &self.baseline {
            None => 0,
            Some(name) => targets
                .iter()
                .position(|t| &t.label == name)
                .with_context(|| format!("--baseline {name:?} names no server"))?,
        };
        if !(self.deadline.is_finite() && self.deadline > 0.0 && self.deadline <= 3_600.0) {
            bail!(
                "--deadline must be in (0, 3600] seconds, got {}",
                self.deadline
            );
        }
        let arguments: serde_json::Value = serde_json::from_str(&self.arguments)
            .with_context(|| format!("--args is not valid JSON: {:?}", self.arguments))?;
        if !arguments.is_object() {
            bail!("--args must be a JSON object, got {}", self.arguments);
        }
        if self.tool.is_empty() {
            bail!("--tool must not be empty");
        }
        if self.expect_tools.is_some() && self.method != Method::List {
            bail!("--expect-tools goes with --method list");
        }
        if self.warm_up_walks > 0 && self.method != Method::List {
            bail!("--warm-up-walks goes with --method list");
        }
        Ok(Plan {
            targets,
            runs: self.runs,
            baseline,
            config: RunConfig {
                method: self.method,
                expect_tools: self.expect_tools,
                warm_up_walks: self.warm_up_walks,
                requests: self.requests,
                window: self.window,
                deadline: Duration::from_secs_f64(self.deadline),
                tool_json: serde_json::Value::String(self.tool).to_string(),
                arguments_json: arguments.to_string(),
                expect_text: self.expect_text,
                protocol_version: self.protocol_version,
                server_stderr: self.server_stderr,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> anyhow::Result<Plan> {
        let mut argv = vec!["stdio-load"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv)?.into_plan()
    }

    #[test]
    fn builds_targets_from_both_forms() {
        let p = plan(&["--cmd", "a=exec ./x --y", "--", "/bin/srv", "--stdio"]).unwrap();
        assert_eq!(p.targets.len(), 2);
        assert_eq!(p.targets[0].label, "srv");
        assert_eq!(p.targets[0].args, ["--stdio"]);
        assert_eq!(p.targets[1].program, "/bin/sh");
        assert_eq!(p.targets[1].args, ["-c", "exec ./x --y"]);
        assert_eq!(p.config.requests, 20_000);
        assert_eq!(p.config.arguments_json, r#"{"message":"hello"}"#);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(plan(&[]).is_err());
        assert!(plan(&["--cmd", "noequals"]).is_err());
        assert!(plan(&["--cmd", "=cmd"]).is_err());
        assert!(plan(&["--cmd", "a=x", "--cmd", "a=y"]).is_err());
        assert!(plan(&["--args", "[1]", "--", "x"]).is_err());
        assert!(plan(&["--args", "{", "--", "x"]).is_err());
        assert!(plan(&["--deadline", "0", "--", "x"]).is_err());
        assert!(plan(&["--deadline", "NaN", "--", "x"]).is_err());
        assert!(plan(&["-w", "0", "--", "x"]).is_err());
        assert!(plan(&["--baseline", "zz", "--cmd", "a=x"]).is_err());
        assert!(plan(&["--expect-tools", "3", "--", "x"]).is_err());
        assert!(plan(&["--method", "lists", "--", "x"]).is_err());
        assert!(plan(&["--warm-up-walks", "1", "--", "x"]).is_err());
    }

    #[test]
    fn list_walks() {
        let p = plan(&["--method", "list", "--expect-tools", "1000", "--", "x"]).unwrap();
        assert_eq!(p.config.method, Method::List);
        assert_eq!(p.config.expect_tools, Some(1000));
        assert_eq!(p.config.warm_up_walks, 0);
        let warm = plan(&["--method", "list", "--warm-up-walks", "2", "--", "x"]).unwrap();
        assert_eq!(warm.config.warm_up_walks, 2);
        assert_eq!(plan(&["--", "x"]).unwrap().config.method, Method::Call);
    }

    #[test]
    fn baseline_by_label() {
        let p = plan(&["--baseline", "b", "--cmd", "a=x", "--cmd", "b=y"]).unwrap();
        assert_eq!(p.baseline, 1);
    }
}
