//! What `tools check` prints: a registry's validation report, and the tool × permission
//! matrix for docs and tests.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::definition::tool::ToolDef;
use crate::names;
use crate::registry::ToolRegistry;
use crate::schema;
use crate::schema::provider::{self, Provider, ProviderFinding};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth a look; the tool works.
    Warning,
    /// The tool (or registry) is broken as defined.
    Error,
}

/// One finding about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How serious.
    pub severity: Severity,
    /// The tool's name (empty for registry-wide findings).
    pub tool: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Findings about a registry's tools (seed 003's registry validation).
///
/// ```
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// assert!(!registry.validation_report().has_errors());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationReport {
    findings: Vec<Finding>,
}

impl ValidationReport {
    pub(crate) fn push(&mut self, severity: Severity, tool: &str, message: &str) {
        self.findings.push(Finding {
            severity,
            tool: tool.to_string(),
            message: message.to_string(),
        });
    }

    /// Every finding.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// True when any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    pub(crate) fn check_tool(&mut self, def: &ToolDef) {
        let name = def.name();
        if !names::is_portable(name) {
            self.push(
                Severity::Warning,
                name,
                "name is outside ^[A-Za-z0-9_-]{1,64}$; Claude Desktop, Copilot CLI and OpenAI-style clients reject it and drop the whole tool list",
            );
        }
        if def.description().trim().len() < 10 {
            self.push(
                Severity::Warning,
                name,
                "description is under 10 characters; say what the tool does and when to use it",
            );
        }
        if schema::has_refs(def.input_schema()) {
            self.push(
                Severity::Warning,
                name,
                "input schema keeps $ref/$defs (recursive type); several clients reject such schemas",
            );
        }
        for property in cli_inexpressible(def) {
            self.push(
                Severity::Warning,
                name,
                &format!(
                    "argument {property:?} is an object or mixed type a command line cannot express as a flag; the CLI takes it through --json"
                ),
            );
        }
        let properties = def
            .input_schema()
            .get("properties")
            .and_then(Value::as_object);
        for (property, spec) in properties.into_iter().flatten() {
            if spec.get("description").is_none() {
                self.push(
                    Severity::Warning,
                    name,
                    &format!("argument {property:?} has no description; add a doc comment or #[arg(desc = \"...\")]"),
                );
            }
        }
    }
}

/// Input properties whose type a command-line flag cannot carry (objects, nested arrays,
/// unions other than `T | null`).
pub fn cli_inexpressible(def: &ToolDef) -> Vec<String> {
    let Some(properties) = def
        .input_schema()
        .get("properties")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, spec)| !flag_type_ok(spec, true))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The members of an enum written as a `oneOf` / `anyOf` of `const`s (what schemars
/// generates for an enum whose variants have doc comments), each with its description;
/// null members are dropped. `None` when `spec` is not such an enum.
pub(crate) fn const_members(spec: &Value) -> Option<Vec<(Value, Option<String>)>> {
    let variants = spec
        .get("oneOf")
        .or_else(|| spec.get("anyOf"))?
        .as_array()?;
    let mut members = Vec::new();
    for variant in variants {
        if variant.get("type").and_then(Value::as_str) == Some("null") {
            continue;
        }
        match variant.get("const")? {
            Value::Null => continue,
            Value::Array(_) | Value::Object(_) => return None,
            member => members.push((
                member.clone(),
                variant
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )),
        }
    }
    (!members.is_empty()).then_some(members)
}

fn flag_type_ok(spec: &Value, allow_array: bool) -> bool {
    let scalar = |t: &str| matches!(t, "string" | "integer" | "number" | "boolean");
    if spec.get("enum").is_some() || const_members(spec).is_some() {
        return true;
    }
    match spec.get("type") {
        Some(Value::String(t)) if scalar(t) => true,
        Some(Value::String(t)) if t == "array" && allow_array => spec
            .get("items")
            .is_some_and(|items| flag_type_ok(items, false)),
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            named.len() == 1 && {
                let mut single = spec.clone();
                single["type"] = Value::String(named[0].to_string());
                flag_type_ok(&single, allow_array)
            }
        }
        _ => spec
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|variants| {
                let non_null: Vec<&Value> = variants
                    .iter()
                    .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                    .collect();
                non_null.len() == 1 && flag_type_ok(non_null[0], allow_array)
            }),
    }
}

impl fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.findings.is_empty() {
            return writeln!(f, "no findings");
        }
        for finding in &self.findings {
            let level = match finding.severity {
                Severity::Warning => "warning",
                Severity::Error => "error",
            };
            if finding.tool.is_empty() {
                writeln!(f, "{level}: {}", finding.message)?;
            } else {
                writeln!(f, "{level}: {}: {}", finding.tool, finding.message)?;
            }
        }
        Ok(())
    }
}

/// What a model provider refuses in the tools a registry lists (`tools check --provider`):
/// each tool's [`ProviderFinding`]s, the rewritable ones included.
///
/// ```
/// use mcp_toolbelt::definition::ToolDef;
/// use mcp_toolbelt::schema::provider::Provider;
/// use mcp_toolbelt::{ToolRegistry, ToolResult};
/// let def = ToolDef::builder("notes_search")
///     .description("Search the notes.")
///     .input_schema(serde_json::json!({"type": "object",
///         "properties": {"limit": {"type": ["integer", "null"]}}}))
///     .handler(|_args, _ctx| async { Ok(ToolResult::text("none")) })
///     .build()
///     .unwrap();
/// let registry = ToolRegistry::builder().include_linked(false).tool(def).build().unwrap();
/// let report = registry.provider_report(Provider::Gemini);
/// assert!(report.is_acceptable());
/// assert_eq!(report.rewritten(), 1);
/// assert!(registry.provider_report(Provider::Anthropic).findings().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderReport {
    provider: Provider,
    findings: Vec<(String, ProviderFinding)>,
}

impl ProviderReport {
    /// The findings of `provider`'s rules on `defs`, in their order.
    pub(crate) fn of(provider: Provider, defs: &[Arc<ToolDef>]) -> ProviderReport {
        let findings = defs
            .iter()
            .flat_map(|def| {
                let name = def.name().to_string();
                provider::name_findings(provider, def.name())
                    .into_iter()
                    .chain(provider::adapt(provider, def.input_schema()).findings)
                    .map(move |finding| (name.clone(), finding))
            })
            .collect();
        ProviderReport { provider, findings }
    }

    /// The provider checked.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Every finding with its tool's name.
    pub fn findings(&self) -> &[(String, ProviderFinding)] {
        &self.findings
    }

    /// True when the provider takes every tool once rewritten (no finding needs the author).
    pub fn is_acceptable(&self) -> bool {
        self.findings.iter().all(|(_, f)| f.rewritable)
    }

    /// How many tools a rewrite changes.
    pub fn rewritten(&self) -> usize {
        self.tools(true)
    }

    /// How many tools the author must change.
    pub fn unacceptable(&self) -> usize {
        self.tools(false)
    }

    fn tools(&self, rewritable: bool) -> usize {
        self.findings
            .iter()
            .filter(|(_, f)| f.rewritable == rewritable)
            .map(|(tool, _)| tool.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// One line a finding (`provider: tool: pointer: rule (…): detail`), then a summary line.
impl fmt::Display for ProviderReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let provider = self.provider;
        for (tool, finding) in &self.findings {
            writeln!(f, "{provider}: {tool}: {finding}")?;
        }
        let variant = match provider {
            Provider::OpenAi => "OpenAi",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Gemini",
        };
        writeln!(
            f,
            "{provider}: {} tool(s) with rewritable findings (listed rewritten by a registry built with .schemas_for(Provider::{variant})); {} tool(s) to change in the code",
            self.rewritten(),
            self.unacceptable()
        )
    }
}

/// The tool × permission matrix of a registry: one row per tool, one column per
/// permission, `x` where the tool needs it. Renders as a Markdown table.
///
/// ```
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let matrix = mcp_toolbelt::registry::PermissionMatrix::of(&registry);
/// assert!(matrix.to_string().starts_with("| tool |"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionMatrix {
    /// The permissions (columns), sorted.
    pub permissions: Vec<String>,
    /// Each tool's name and, per column, whether it needs that permission.
    pub rows: Vec<(String, Vec<bool>)>,
}

impl PermissionMatrix {
    /// The matrix of every tool the registry serves.
    pub fn of(registry: &ToolRegistry) -> PermissionMatrix {
        PermissionMatrix::of_defs(&registry.list_tools())
    }

    /// The matrix of these tool definitions, in their order.
    pub(crate) fn of_defs(defs: &[Arc<ToolDef>]) -> PermissionMatrix {
        let permissions: Vec<String> = defs
            .iter()
            .flat_map(|d| {
                d.permissions()
                    .names()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let rows = defs
            .iter()
            .map(|d| {
                let marks = permissions
                    .iter()
                    .map(|p| d.permissions().contains(p))
                    .collect();
                (d.name().to_string(), marks)
            })
            .collect();
        PermissionMatrix { permissions, rows }
    }
}

impl fmt::Display for PermissionMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "| tool |")?;
        for p in &self.permissions {
            write!(f, " {p} |")?;
        }
        writeln!(f)?;
        write!(f, "|---|")?;
        for _ in &self.permissions {
            write!(f, ":-:|")?;
        }
        writeln!(f)?;
        for (tool, marks) in &self.rows {
            write!(f, "| {tool} |")?;
            for mark in marks {
                write!(f, " {} |", if *mark { "x" } else { "" })?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
