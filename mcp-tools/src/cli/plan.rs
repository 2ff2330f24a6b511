//! Where each tool lives on the command line: `<category> <action>`, or a top-level
//! command for a one-word tool name; and why a tool has no command.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::definition::tool::ToolDef;
use crate::registry::report::{Finding, Severity};

use super::flags::ToolFlags;

/// Top-level names the command line itself uses.
pub(crate) const BUILTINS: [&str; 4] = ["serve", "tools", "call", "help"];

/// One tool's command.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    pub(crate) def: Arc<ToolDef>,
    /// The tool's own spelling when it differs from the kebab-case command name.
    pub(crate) alias: Option<String>,
    pub(crate) flags: ToolFlags,
}

/// A top-level command: a tool, or a category grouping tools.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Leaf(Leaf),
    Group {
        alias: Option<String>,
        /// The tool category's name, for the group's help text.
        category: String,
        children: BTreeMap<String, Leaf>,
    },
}

/// The command tree of every tool, and findings about tools left without a command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub(crate) tree: BTreeMap<String, Node>,
    /// Tool name → command words (without the program name).
    pub(crate) paths: HashMap<String, Vec<String>>,
    pub(crate) findings: Vec<Finding>,
}

/// Where a tool asks to be: `(Some(group), action)` or `(None, command)`.
fn placement(def: &ToolDef) -> (Option<String>, String) {
    let cli = def.cli();
    let name = def.name();
    let group = cli
        .category
        .as_deref()
        .or(def.category())
        .unwrap_or(name)
        .to_string();
    if let Some(action) = &cli.name {
        return (Some(group), action.to_string());
    }
    match name
        .strip_prefix(&group)
        .and_then(|rest| rest.strip_prefix('_'))
    {
        Some(action) if !action.is_empty() => (Some(group), action.to_string()),
        _ if name == group => (None, name.to_string()),
        _ => (Some(group), name.to_string()),
    }
}

/// `get_changelog` → `get-changelog`; `None` for a word clap cannot take as a command.
fn command_word(word: &str) -> Option<(String, Option<String>)> {
    let valid = !word.is_empty()
        && word.starts_with(|c: char| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return None;
    }
    let kebab = word.replace('_', "-");
    let alias = (kebab != word).then(|| word.to_string());
    Some((kebab, alias))
}

impl Plan {
    /// Place every tool of `defs`; `reserved` holds flag names tools may not use.
    pub(crate) fn new(defs: &[Arc<ToolDef>], reserved: &BTreeSet<String>) -> Plan {
        let mut plan = Plan::default();
        let mut singles = Vec::new();
        // Grouped tools first, so a one-word tool cannot take a whole category's name.
        for def in defs {
            if def.cli().hidden {
                continue;
            }
            match placement(def) {
                (Some(group), action) => plan.place_grouped(def, &group, &action, reserved),
                (None, command) => singles.push((def, command)),
            }
        }
        for (def, command) in singles {
            plan.place_single(def, &command, reserved);
        }
        plan.drop_clashing_aliases();
        plan
    }

    fn warn(&mut self, def: &ToolDef, message: String) {
        self.findings.push(Finding {
            severity: Severity::Warning,
            tool: def.name().to_string(),
            message,
        });
    }

    fn place_grouped(
        &mut self,
        def: &Arc<ToolDef>,
        group: &str,
        action: &str,
        reserved: &BTreeSet<String>,
    ) {
        let (Some((group_word, group_alias)), Some((action_word, action_alias))) =
            (command_word(group), command_word(action))
        else {
            return self.warn(def, format!(
                "has no command: {group:?} {action:?} is not a valid command name; set cli_category / cli_name (use `call {}`)",
                def.name()
            ));
        };
        if BUILTINS.contains(&group_word.as_str()) {
            return self.warn(def, format!(
                "has no command: category {group_word:?} clashes with the built-in `{group_word}` command; set cli_category (use `call {}`)",
                def.name()
            ));
        }
        if action_word == "help" {
            return self.warn(def, format!(
                "has no command: `{group_word} help` is clap's help command; set cli_name (use `call {}`)",
                def.name()
            ));
        }
        let node = self
            .tree
            .entry(group_word.clone())
            .or_insert_with(|| Node::Group {
                alias: group_alias,
                category: group.to_string(),
                children: BTreeMap::new(),
            });
        let Node::Group { children, .. } = node else {
            unreachable!("only groups are placed in this pass");
        };
        if let Some(other) = children.get(&action_word) {
            let other = other.def.name().to_string();
            return self.warn(def, format!(
                "has no command: `{group_word} {action_word}` is already the command of {other:?}; set cli_category / cli_name (use `call {}`)",
                def.name()
            ));
        }
        children.insert(
            action_word.clone(),
            Leaf {
                def: def.clone(),
                alias: action_alias,
                flags: ToolFlags::of(def, reserved),
            },
        );
        self.paths
            .insert(def.name().to_string(), vec![group_word, action_word]);
    }

    fn place_single(&mut self, def: &Arc<ToolDef>, command: &str, reserved: &BTreeSet<String>) {
        let Some((word, alias)) = command_word(command) else {
            return self.warn(
                def,
                format!(
                    "has no command: {command:?} is not a valid command name; set cli_name (use `call {}`)",
                    def.name()
                ),
            );
        };
        if BUILTINS.contains(&word.as_str()) || self.tree.contains_key(&word) {
            return self.warn(
                def,
                format!(
                    "has no command: `{word}` is already a command; set cli_category / cli_name (use `call {}`)",
                    def.name()
                ),
            );
        }
        self.tree.insert(
            word.clone(),
            Node::Leaf(Leaf {
                def: def.clone(),
                alias,
                flags: ToolFlags::of(def, reserved),
            }),
        );
        self.paths.insert(def.name().to_string(), vec![word]);
    }

    /// An alias (the tool's own `snake_case` spelling) must not shadow another command.
    fn drop_clashing_aliases(&mut self) {
        let mut top: BTreeSet<String> = self.tree.keys().cloned().collect();
        top.extend(BUILTINS.map(String::from));
        for node in self.tree.values_mut() {
            let alias = match node {
                Node::Leaf(leaf) => &mut leaf.alias,
                Node::Group {
                    alias, children, ..
                } => {
                    let mut words: BTreeSet<String> = children.keys().cloned().collect();
                    words.insert("help".into());
                    for leaf in children.values_mut() {
                        if let Some(a) = &leaf.alias
                            && !words.insert(a.clone())
                        {
                            leaf.alias = None;
                        }
                    }
                    alias
                }
            };
            if let Some(a) = alias.as_ref()
                && !top.insert(a.clone())
            {
                *alias = None;
            }
        }
    }

    /// The command of `tool` as typed after the program name, e.g. `ticket get`.
    pub(crate) fn command_of(&self, tool: &str) -> Option<String> {
        self.paths.get(tool).map(|words| words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::tool::CliOptions;
    use crate::output::result::ToolResult;

    fn def(name: &str, category: Option<&str>, cli: CliOptions) -> Arc<ToolDef> {
        let mut builder = ToolDef::builder(name.to_string())
            .description("A tool for plan tests.")
            .handler(|_args, _ctx| async { Ok(ToolResult::empty()) })
            .cli(cli);
        if let Some(category) = category {
            builder = builder.category(category.to_string());
        }
        Arc::new(builder.build().unwrap())
    }

    fn plan(defs: Vec<Arc<ToolDef>>) -> Plan {
        Plan::new(&defs, &BTreeSet::new())
    }

    #[test]
    fn names_split_at_the_first_underscore() {
        let p = plan(vec![
            def("ticket_get_changelog", None, CliOptions::default()),
            def("ticket_search", None, CliOptions::default()),
            def("echo", None, CliOptions::default()),
            def("search_all", Some("wiki"), CliOptions::default()),
        ]);
        assert_eq!(
            p.command_of("ticket_get_changelog").unwrap(),
            "ticket get-changelog"
        );
        assert_eq!(p.command_of("ticket_search").unwrap(), "ticket search");
        assert_eq!(p.command_of("echo").unwrap(), "echo");
        assert_eq!(p.command_of("search_all").unwrap(), "wiki search-all");
        assert!(p.findings.is_empty(), "{:?}", p.findings);
    }

    #[test]
    fn cli_options_override_and_hide() {
        let p = plan(vec![
            def(
                "ticket_get",
                None,
                CliOptions {
                    category: Some("tickets".into()),
                    name: Some("show".into()),
                    hidden: false,
                },
            ),
            def(
                "ticket_secret",
                None,
                CliOptions {
                    hidden: true,
                    ..CliOptions::default()
                },
            ),
        ]);
        assert_eq!(p.command_of("ticket_get").unwrap(), "tickets show");
        assert_eq!(p.command_of("ticket_secret"), None);
        assert!(p.findings.is_empty());
    }

    #[test]
    fn clashes_leave_the_later_tool_without_a_command() {
        let p = plan(vec![
            def("tools_list", None, CliOptions::default()),
            def("demo_run", None, CliOptions::default()),
            def(
                "other_run",
                None,
                CliOptions {
                    category: Some("demo".into()),
                    ..CliOptions::default()
                },
            ),
            def("demo", None, CliOptions::default()),
        ]);
        assert_eq!(p.command_of("demo_run").unwrap(), "demo run");
        assert_eq!(p.command_of("other_run").unwrap(), "demo other-run");
        assert_eq!(p.command_of("tools_list"), None);
        assert_eq!(p.command_of("demo"), None);
        let tools: Vec<&str> = p.findings.iter().map(|f| f.tool.as_str()).collect();
        assert_eq!(tools, ["tools_list", "demo"]);
        assert!(p.findings[0].message.contains("built-in `tools`"));
    }
}
