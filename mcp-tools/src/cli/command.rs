//! The clap command tree: built-in commands, then one command per tool.

use std::collections::BTreeSet;

use clap::{Arg, ArgAction, Command};

use crate::definition::tool::ToolDef;
use crate::schema::provider::Provider;

use super::flags::{ToolFlags, json_arg};
use super::logging::{LEVELS, LOG_LEVEL};
use super::plan::{Leaf, Node, Plan};
use super::prescan::PERMISSIONS_FILE;
use super::serve;

/// Ids of the global arguments.
pub(crate) const PERMISSIONS_ARG: &str = "permissions_file";
pub(crate) const LOG_LEVEL_ARG: &str = "log_level";

/// The `--help` heading of the global flags.
const GLOBAL_HEADING: &str = "Global options";

/// What the root command is made of.
pub(crate) struct Root<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
    pub(crate) about: Option<&'a str>,
    /// Global arguments of [`App::setup`](super::App::setup).
    pub(crate) extra_globals: &'a [Arg],
    /// Every tool the caller may use (for `call` and `tools show`).
    pub(crate) tools: &'a [String],
    /// Every category of those tools (for `tools list --category`).
    pub(crate) categories: &'a [String],
    pub(crate) plan: &'a Plan,
}

/// The global arguments every generated command line has.
pub(crate) fn builtin_globals() -> Vec<Arg> {
    vec![
        Arg::new(PERMISSIONS_ARG)
            .long(PERMISSIONS_FILE)
            .value_name("FILE")
            .value_parser(clap::value_parser!(std::path::PathBuf))
            .global(true)
            .help_heading(GLOBAL_HEADING)
            .help("Serve (and offer commands for) only the tools this permissions file allows: one permission per line, # comments"),
        Arg::new(LOG_LEVEL_ARG)
            .long(LOG_LEVEL)
            .value_name("LEVEL")
            .value_parser(LEVELS)
            .global(true)
            .help_heading(GLOBAL_HEADING)
            .help("Log level on stderr [default: $RUST_LOG, else warn]"),
    ]
}

/// Long names a tool's flags may not use: the globals', `--help` and `--json`.
pub(crate) fn reserved_longs(globals: &[Arg]) -> BTreeSet<String> {
    let mut reserved: BTreeSet<String> = ["help", "json", "version"].map(String::from).into();
    for arg in globals {
        reserved.extend(arg.get_long().map(str::to_string));
        reserved.extend(
            arg.get_all_aliases()
                .into_iter()
                .flatten()
                .map(str::to_string),
        );
    }
    reserved
}

/// The root command with the global flags and `serve`, and no other command: what a
/// server's start-up parses (see `App::run_from`). `serve`'s arguments, the globals and
/// their errors are the same as in [`Root::command`]'s tree.
pub(crate) fn serve_root(
    name: &str,
    version: &str,
    about: Option<&str>,
    extra_globals: &[Arg],
) -> Command {
    let mut root = Command::new(name.to_string())
        .bin_name(name.to_string())
        .version(version.to_string())
        .subcommand_required(true)
        .arg_required_else_help(true)
        .args(builtin_globals())
        .args(
            extra_globals
                .iter()
                .cloned()
                .map(|a| a.global(true).help_heading(GLOBAL_HEADING)),
        )
        .subcommand(serve::command());
    if let Some(about) = about.filter(|a| !a.trim().is_empty()) {
        root = root.about(about.to_string());
    }
    root
}

impl Root<'_> {
    /// The whole command line.
    pub(crate) fn command(&self) -> Command {
        let mut root = serve_root(self.name, self.version, self.about, self.extra_globals)
            .subcommand(self.tools_command())
            .subcommand(self.call_command());
        for (word, node) in &self.plan.tree {
            root = root.subcommand(match node {
                Node::Leaf(leaf) => leaf_command(word, leaf),
                Node::Group {
                    alias,
                    category,
                    children,
                } => {
                    let mut group = Command::new(word.clone())
                        .about(format!("Tools of the {category} category"))
                        .subcommand_required(true)
                        .arg_required_else_help(true);
                    if let Some(alias) = alias {
                        group = group.alias(alias.clone());
                    }
                    for (action, leaf) in children {
                        group = group.subcommand(leaf_command(action, leaf));
                    }
                    group
                }
            });
        }
        root
    }

    fn tool_name_arg(&self) -> Arg {
        Arg::new("name")
            .value_name("NAME")
            .required(true)
            .value_parser(clap::builder::PossibleValuesParser::new(
                self.tools.iter().cloned(),
            ))
            .hide_possible_values(true)
            .help("The tool's name (see `tools list`)")
    }

    fn tools_command(&self) -> Command {
        let json_flag = |help: &'static str| {
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help(help)
        };
        Command::new("tools")
            .about("Inspect the tools without serving them")
            .subcommand_required(true)
            .arg_required_else_help(true)
            .subcommand(
                Command::new("list")
                    .about("List the tools: name, command, description")
                    .arg(
                        Arg::new("category")
                            .long("category")
                            .value_name("C")
                            .value_parser(clap::builder::PossibleValuesParser::new(
                                self.categories.iter().cloned(),
                            ))
                            .help("Only tools of this category"),
                    )
                    .arg(json_flag(
                        "Print the MCP tool descriptions (tools/list) as JSON",
                    )),
            )
            .subcommand(
                Command::new("show")
                    .about("Show one tool: description, permissions, command and schemas")
                    .arg(self.tool_name_arg())
                    .arg(json_flag("Print the MCP tool description as JSON")),
            )
            .subcommand(
                Command::new("check")
                    .about(
                        "Validate the tools (names, schemas, descriptions, command line); exit 1 on errors",
                    )
                    .arg(
                        Arg::new("provider")
                            .long("provider")
                            .value_name("P")
                            .action(ArgAction::Append)
                            .value_parser(clap::builder::PossibleValuesParser::new(
                                Provider::ALL.map(Provider::name),
                            ))
                            .help("Also check the tools against a model provider's schema rules; exit 1 when one cannot be rewritten to fit (repeatable)"),
                    ),
            )
            .subcommand(
                Command::new("matrix")
                    .about("Print the tool × permission matrix as a Markdown table"),
            )
            .subcommand(super::explain::command())
    }

    fn call_command(&self) -> Command {
        Command::new("call")
            .about("Call any tool by name with JSON arguments")
            .arg(self.tool_name_arg())
            .arg(json_arg())
    }
}

/// One tool's command: its flags, `--json`, and its description as help.
fn leaf_command(word: &str, leaf: &Leaf) -> Command {
    let def = &leaf.def;
    let json_only = json_only_notes(&leaf.flags);
    let mut command = Command::new(word.to_string())
        .about(summary(def))
        .long_about(def.description().trim().to_string())
        .args(leaf.flags.args())
        .after_long_help(details(def, &json_only));
    if !json_only.is_empty() {
        command = command.after_help(json_only.join("\n"));
    }
    if let Some(alias) = &leaf.alias {
        command = command.alias(alias.clone());
    }
    command
}

/// The first line of the title or description.
pub(crate) fn summary(def: &ToolDef) -> String {
    def.title()
        .unwrap_or(def.description())
        .trim()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// One line per argument that has no flag.
fn json_only_notes(flags: &ToolFlags) -> Vec<String> {
    flags
        .json_only
        .iter()
        .map(|j| {
            format!(
                "Argument {:?} has no flag: {}; pass it with --json '{{\"{}\": ...}}'",
                j.property, j.reason, j.property
            )
        })
        .collect()
}

/// `--help` footer: the MCP name, permissions, behaviour hints, `--json`-only arguments.
fn details(def: &ToolDef, json_only: &[String]) -> String {
    let mut lines = vec![format!("MCP tool: {}", def.name())];
    let permissions: Vec<&str> = def.permissions().names().collect();
    if !permissions.is_empty() {
        lines.push(format!("Permissions: {}", permissions.join(", ")));
    }
    let hints = hints(def);
    if !hints.is_empty() {
        lines.push(format!("Hints: {}", hints.join(", ")));
    }
    lines.extend(json_only.iter().cloned());
    lines.join("\n")
}

/// The behaviour hints set on a tool, as words.
pub(crate) fn hints(def: &ToolDef) -> Vec<&'static str> {
    let a = def.annotations();
    [
        (a.read_only_hint, "read-only"),
        (a.destructive_hint, "destructive"),
        (a.idempotent_hint, "idempotent"),
        (a.open_world_hint, "open-world"),
    ]
    .into_iter()
    .filter(|(hint, _)| *hint == Some(true))
    .map(|(_, word)| word)
    .collect()
}
