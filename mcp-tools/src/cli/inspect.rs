//! `tools list`, `tools show`, `tools check` and `tools matrix`.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;

use crate::definition::tool::ToolDef;
use crate::registry::library::EMPTY;
use crate::registry::report::{PermissionMatrix, Severity, ValidationReport};

use super::command::{hints, summary};
use super::plan::Plan;

/// `tools list`: one line per tool with its command, or the MCP descriptions as JSON.
pub(crate) fn list(
    defs: &[Arc<ToolDef>],
    plan: &Plan,
    category: Option<&str>,
    json: bool,
) -> String {
    let selected: Vec<&Arc<ToolDef>> = defs
        .iter()
        .filter(|d| category.is_none_or(|c| d.category() == Some(c)))
        .collect();
    if json {
        return pretty(&selected);
    }
    let rows: Vec<[String; 3]> = selected
        .iter()
        .map(|d| {
            let command = plan
                .command_of(d.name())
                .unwrap_or_else(|| format!("call {}", d.name()));
            [d.name().to_string(), command, summary(d)]
        })
        .collect();
    let name_width = rows.iter().map(|r| r[0].len()).max().unwrap_or(0).max(4);
    let command_width = rows.iter().map(|r| r[1].len()).max().unwrap_or(0).max(7);
    let mut out = format!(
        "{:name_width$}  {:command_width$}  DESCRIPTION\n",
        "NAME", "COMMAND"
    );
    for [name, command, about] in rows {
        let line = format!("{name:name_width$}  {command:command_width$}  {about}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `tools show NAME`: everything about one tool, or its MCP description as JSON.
pub(crate) fn show(def: &ToolDef, plan: &Plan, program: &str, json: bool) -> String {
    if json {
        return pretty(def);
    }
    let mut out = String::new();
    match def.title() {
        Some(title) => writeln!(out, "{} — {title}", def.name()),
        None => writeln!(out, "{}", def.name()),
    }
    .ok();
    writeln!(out, "\n{}\n", def.description().trim()).ok();
    let mut field = |label: &str, value: String| {
        writeln!(out, "{label:<13}{value}").ok();
    };
    field("Category:", def.category().unwrap_or("-").to_string());
    field(
        "Command:",
        plan.command_of(def.name()).map_or_else(
            || format!("{program} call {} --json '{{...}}'", def.name()),
            |c| format!("{program} {c}"),
        ),
    );
    let permissions: Vec<&str> = def.permissions().names().collect();
    field(
        "Permissions:",
        if permissions.is_empty() {
            "(none)".into()
        } else {
            permissions.join(", ")
        },
    );
    let hints = hints(def);
    if !hints.is_empty() {
        field("Hints:", hints.join(", "));
    }
    let tags: Vec<&str> = def.tags().collect();
    if !tags.is_empty() {
        field("Tags:", tags.join(", "));
    }
    if let Some(timeout) = def.timeout() {
        field("Timeout:", format!("{} ms", timeout.as_millis()));
    }
    if let Some(limit) = def.max_concurrency() {
        field("Concurrency:", format!("at most {limit} at once"));
    }
    writeln!(
        out,
        "\nInput schema:\n{}",
        pretty(&Value::Object((**def.input_schema()).clone()))
    )
    .ok();
    if let Some(output) = def.output_schema() {
        writeln!(
            out,
            "\nOutput schema:\n{}",
            pretty(&Value::Object((**output).clone()))
        )
        .ok();
    }
    out
}

/// `tools check`: the registry's report followed by the command line's own findings;
/// the flag is true when any finding is an error.
/// A registry serving nothing is an error here (`empty`: checked now, not at build), and
/// its build-time warning is not repeated.
pub(crate) fn check(report: &ValidationReport, plan: &Plan, empty: bool) -> (String, bool) {
    let mut out = String::new();
    let findings = report
        .findings()
        .iter()
        .chain(&plan.findings)
        .filter(|finding| finding.message != EMPTY);
    let mut count = [0usize; 2];
    if empty {
        writeln!(out, "error: {EMPTY}").ok();
        count[1] += 1;
    }
    for finding in findings {
        let level = match finding.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        count[usize::from(finding.severity == Severity::Error)] += 1;
        if finding.tool.is_empty() {
            writeln!(out, "{level}: {}", finding.message).ok();
        } else {
            writeln!(out, "{level}: {}: {}", finding.tool, finding.message).ok();
        }
    }
    let [warnings, errors] = count;
    writeln!(out, "{errors} error(s), {warnings} warning(s)").ok();
    (out, errors > 0)
}

/// `tools matrix`: which permission each tool needs.
pub(crate) fn matrix(defs: &[Arc<ToolDef>]) -> String {
    PermissionMatrix::of_defs(defs).to_string()
}

fn pretty<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Serializing plain data into a String cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
