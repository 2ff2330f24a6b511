//! `tools explain`: which tools, resources and prompts a caller sees, and for each one it
//! does not, which permissions (and, for a token's scopes, which scopes) it lacks.
//!
//! The caller comes from what the server would read: a tokens file line
//! (`--token-line`), a tokens file and a subject (`--tokens-file --subject`), scopes and
//! the server's scope map (`--scopes`, `--scope-map`; feature `oauth`), or a permissions
//! file (`--permissions`). Every form becomes one [`PermissionSet`] by the server's own
//! parsers ([`TokenTable`], [`ScopeMap::permissions`], [`PermissionSet::from_file`]), and
//! what it sees is the registry's view for that set ([`ToolRegistry::view`]), the same
//! view `tools/list`, `resources/list` and `prompts/list` answer from.
//!
//! [`ScopeMap::permissions`]: crate::server::oauth::ScopeMap::permissions

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use serde::Serialize;

use crate::permissions::PermissionSet;
use crate::registry::ToolRegistry;
use crate::server::TokenResolver as _;
use crate::server::TokenTable;

/// The `tools explain` command.
pub(crate) fn command() -> Command {
    let command = Command::new("explain")
        .about("Explain which tools, resources and prompts a caller sees, and what it lacks for the others")
        .arg(
            Arg::new("token_line")
                .long("token-line")
                .value_name("LINE")
                .help("A line of a tokens file: `token [subject=NAME] PERM PERM…` (the token itself is never printed)"),
        )
        .arg(
            Arg::new("tokens_file")
                .long("tokens-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("subject")
                .help("The tokens file `serve --tokens-file` reads (mode 600); with --subject"),
        )
        .arg(
            Arg::new("subject")
                .long("subject")
                .value_name("S")
                .requires("tokens_file")
                .help("The subject (`subject=S`) of the tokens file's line to explain"),
        )
        .arg(
            Arg::new("permissions")
                .long("permissions")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("A permissions file: one permission per line, # comments"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print the explanation as JSON"),
        );
    #[cfg(feature = "oauth")]
    let command = command
        .arg(
            Arg::new("scopes")
                .long("scopes")
                .value_name("A,B")
                .value_delimiter(',')
                .num_args(1)
                .help("An OAuth token's scopes, comma-separated, mapped by --scope-map as `serve` maps them"),
        )
        .arg(
            Arg::new("scope_map")
                .long("scope-map")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("scopes")
                .help("The scope map `serve --scope-map` reads: `SCOPE = PERM PERM…` per line (default: each scope names the permission of the same name)"),
        );
    let forms: &[&str] = &[
        "token_line",
        "tokens_file",
        "permissions",
        #[cfg(feature = "oauth")]
        "scopes",
    ];
    command.group(ArgGroup::new("caller").args(forms).required(true))
}

/// Who is explained: the permissions the server would give them, and how it maps scopes.
struct Subject {
    /// How the caller was given, for the output.
    source: &'static str,
    name: Option<String>,
    permissions: PermissionSet,
    scopes: Vec<String>,
    /// The scope map when the caller was given by scopes.
    #[cfg(feature = "oauth")]
    scope_map: Option<crate::server::oauth::ScopeMap>,
}

impl Subject {
    /// The caller `args` describe.
    fn from_args(args: &ArgMatches) -> Result<Subject, String> {
        if let Some(line) = args.get_one::<String>("token_line") {
            let table = TokenTable::parse(line).map_err(|e| format!("--token-line: {e}"))?;
            let token = line.split_whitespace().next().unwrap_or_default();
            let caller = table
                .resolve(token)
                .ok_or("--token-line: the line holds no token")?;
            return Ok(Subject {
                source: "token line",
                name: caller.subject().map(str::to_string),
                permissions: caller
                    .permissions()
                    .cloned()
                    .unwrap_or_else(PermissionSet::empty),
                scopes: Vec::new(),
                #[cfg(feature = "oauth")]
                scope_map: None,
            });
        }
        if let Some(path) = args.get_one::<PathBuf>("tokens_file") {
            let subject = args
                .get_one::<String>("subject")
                .cloned()
                .unwrap_or_default();
            let table = TokenTable::from_file(path).map_err(|e| format!("--tokens-file: {e}"))?;
            let permissions = table
                .permissions_of_subject(&subject)
                .map_err(|problem| format!("--tokens-file {}: {problem}", path.display()))?;
            return Ok(Subject {
                source: "tokens file",
                name: Some(subject),
                permissions,
                scopes: Vec::new(),
                #[cfg(feature = "oauth")]
                scope_map: None,
            });
        }
        if let Some(path) = args.get_one::<PathBuf>("permissions") {
            let permissions =
                PermissionSet::from_file(path).map_err(|e| format!("--permissions: {e}"))?;
            return Ok(Subject {
                source: "permissions file",
                name: None,
                permissions,
                scopes: Vec::new(),
                #[cfg(feature = "oauth")]
                scope_map: None,
            });
        }
        #[cfg(feature = "oauth")]
        if let Some(scopes) = args.get_many::<String>("scopes") {
            use crate::server::oauth::ScopeMap;
            let scopes: Vec<String> = scopes
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let map = match args.get_one::<PathBuf>("scope_map") {
                Some(path) => ScopeMap::from_file(path).map_err(|e| format!("--scope-map: {e}"))?,
                None => ScopeMap::identity(),
            };
            let permissions = map.permissions(&scopes, &Default::default());
            return Ok(Subject {
                source: "scopes",
                name: None,
                permissions,
                scopes,
                scope_map: Some(map),
            });
        }
        Err("give --token-line, --tokens-file with --subject, --scopes or --permissions".into())
    }

    /// True when the caller was given by its scopes.
    fn by_scopes(&self) -> bool {
        #[cfg(feature = "oauth")]
        if self.scope_map.is_some() {
            return true;
        }
        false
    }

    /// The scopes that would grant `missing` (`None`: not given by scopes, or no scope
    /// the map lists grants them all).
    fn scopes_for(&self, missing: &[&str]) -> Option<Vec<String>> {
        #[cfg(feature = "oauth")]
        if let Some(map) = &self.scope_map {
            return map.scopes_granting(missing);
        }
        let _ = missing;
        None
    }
}

/// One thing the caller does not see.
#[derive(Serialize)]
struct Hidden {
    name: String,
    missing_permissions: Vec<String>,
    /// With `--scopes`: the scopes that would grant them (`null`: none the map lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    missing_scopes: Option<Option<Vec<String>>>,
}

/// What a caller sees of one kind (tools, resources, prompts) and what it does not.
#[derive(Serialize)]
struct Seen {
    visible: Vec<String>,
    hidden: Vec<Hidden>,
}

/// The whole answer.
#[derive(Serialize)]
struct Explanation {
    source: &'static str,
    subject: Option<String>,
    permissions: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes: Vec<String>,
    tools: Seen,
    resources: Seen,
    prompts: Seen,
}

/// Split `all` (the served items: name and required permissions) into what `view`
/// (the names the caller's view lists) holds and what it does not, with what is missing.
fn split<'a>(
    subject: &Subject,
    all: impl Iterator<Item = (String, &'a PermissionSet)>,
    view: &[String],
) -> Seen {
    let mut seen = Seen {
        visible: Vec::new(),
        hidden: Vec::new(),
    };
    for (name, required) in all {
        if view.contains(&name) {
            seen.visible.push(name);
            continue;
        }
        let missing: Vec<&str> = required
            .names()
            .filter(|p| !subject.permissions.contains(p))
            .collect();
        seen.hidden.push(Hidden {
            name,
            missing_scopes: subject.by_scopes().then(|| subject.scopes_for(&missing)),
            missing_permissions: missing.into_iter().map(str::to_string).collect(),
        });
    }
    seen
}

/// Explain `registry` (as `serve` would serve it) to the caller `args` describe: the text
/// (or JSON) to print, or what is wrong with the arguments.
pub(crate) fn explain(registry: &ToolRegistry, args: &ArgMatches) -> Result<String, String> {
    let subject = Subject::from_args(args)?;
    let view = registry.view(&subject.permissions);
    let all_tools = registry.list_tools();
    let visible_tools: Vec<String> = view
        .list_tools()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    let tools = split(
        &subject,
        all_tools
            .iter()
            .map(|d| (d.name().to_string(), d.permissions())),
        &visible_tools,
    );
    let address = |d: &Arc<crate::definition::ResourceDef>| d.address().to_string();
    let all_resources: Vec<Arc<crate::definition::ResourceDef>> = registry
        .list_resources()
        .iter()
        .chain(registry.list_resource_templates().iter())
        .cloned()
        .collect();
    let visible_resources: Vec<String> = view
        .list_resources()
        .iter()
        .chain(view.list_resource_templates().iter())
        .map(address)
        .collect();
    let resources = split(
        &subject,
        all_resources.iter().map(|d| (address(d), d.permissions())),
        &visible_resources,
    );
    let all_prompts = registry.list_prompts();
    let visible_prompts: Vec<String> = view
        .list_prompts()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    let prompts = split(
        &subject,
        all_prompts
            .iter()
            .map(|d| (d.name().to_string(), d.permissions())),
        &visible_prompts,
    );
    let explanation = Explanation {
        source: subject.source,
        subject: subject.name.clone(),
        permissions: subject.permissions.names().map(str::to_string).collect(),
        scopes: subject.scopes.clone(),
        tools,
        resources,
        prompts,
    };
    if args.get_flag("json") {
        let mut text = serde_json::to_string_pretty(&explanation).unwrap_or_default();
        text.push('\n');
        return Ok(text);
    }
    Ok(human(&explanation))
}

/// The explanation for people.
fn human(e: &Explanation) -> String {
    let mut out = String::new();
    let list = |items: &[String]| match items.is_empty() {
        true => "(none)".to_string(),
        false => items.join(", "),
    };
    writeln!(out, "Caller (from the {}):", e.source).ok();
    if let Some(subject) = &e.subject {
        writeln!(out, "  subject:     {subject}").ok();
    }
    if !e.scopes.is_empty() {
        writeln!(out, "  scopes:      {}", list(&e.scopes)).ok();
    }
    writeln!(out, "  permissions: {}", list(&e.permissions)).ok();
    for (kind, seen) in [
        ("tools", &e.tools),
        ("resources", &e.resources),
        ("prompts", &e.prompts),
    ] {
        let total = seen.visible.len() + seen.hidden.len();
        if total == 0 {
            continue;
        }
        writeln!(out, "\nSees {} of {total} {kind}:", seen.visible.len()).ok();
        for name in &seen.visible {
            writeln!(out, "  {name}").ok();
        }
        if seen.hidden.is_empty() {
            continue;
        }
        writeln!(out, "Does not see:").ok();
        let width = seen.hidden.iter().map(|h| h.name.len()).max().unwrap_or(0);
        for hidden in &seen.hidden {
            let mut why = format!(
                "missing permission {}",
                hidden.missing_permissions.join(", ")
            );
            match &hidden.missing_scopes {
                Some(Some(scopes)) => {
                    write!(why, " (scope {})", scopes.join(", ")).ok();
                }
                Some(None) => why.push_str(" (no scope the scope map lists grants it)"),
                None => {}
            }
            writeln!(out, "  {:width$}  {why}", hidden.name).ok();
        }
    }
    out
}
