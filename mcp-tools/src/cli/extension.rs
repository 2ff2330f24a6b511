//! A server's own subcommands ([`App::command`](super::App::command)): their clap
//! commands, their handlers, and the check that they clash with no other command.

use std::future::Future;
use std::process::{ExitCode, Termination};

use clap::{ArgMatches, Command};
use futures::future::BoxFuture;

use crate::registry::ToolRegistry;

/// The commands every generated command line has (`help` is clap's).
const BUILT_IN: [&str; 4] = ["serve", "tools", "call", "help"];

type Handler = Box<dyn FnOnce(ArgMatches, ToolRegistry) -> BoxFuture<'static, ExitCode> + Send>;

/// One subcommand added with `App::command`.
pub(crate) struct Extension {
    pub(crate) command: Command,
    handler: Handler,
}

impl Extension {
    pub(crate) fn new<F, Fut>(command: Command, handler: F) -> Extension
    where
        F: FnOnce(ArgMatches, ToolRegistry) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: Termination,
    {
        Extension {
            command,
            handler: Box::new(move |matches, registry| {
                let run = handler(matches, registry);
                Box::pin(async move { run.await.report() })
            }),
        }
    }

    /// The command's name.
    pub(crate) fn name(&self) -> &str {
        self.command.get_name()
    }

    /// Run the handler with the command's own matches and the built registry.
    pub(crate) async fn run(self, matches: ArgMatches, registry: ToolRegistry) -> ExitCode {
        (self.handler)(matches, registry).await
    }
}

/// The names and aliases a command answers to.
fn words(command: &Command) -> impl Iterator<Item = &str> {
    std::iter::once(command.get_name()).chain(command.get_all_aliases())
}

/// Check the added commands against the built-in ones and each other (before anything
/// is parsed, without the tools' commands): an error naming both commands.
pub(crate) fn check_built_in(extensions: &[Extension]) -> Result<(), String> {
    for (i, extension) in extensions.iter().enumerate() {
        for word in words(&extension.command) {
            if BUILT_IN.contains(&word) {
                return Err(format!(
                    "App::command `{}` clashes with the built-in command `{word}`",
                    extension.name()
                ));
            }
            if let Some(other) = extensions[..i]
                .iter()
                .find(|other| words(&other.command).any(|w| w == word))
            {
                return Err(format!(
                    "App::command `{}` clashes with the App::command `{}` (both answer to `{word}`)",
                    extension.name(),
                    other.name()
                ));
            }
        }
    }
    Ok(())
}

/// `root` (the generated tree) with the added commands, or an error naming an added
/// command and the tool command it clashes with.
pub(crate) fn attach(root: Command, extensions: &[Extension]) -> Result<Command, String> {
    for extension in extensions {
        for word in words(&extension.command) {
            if let Some(generated) = root
                .get_subcommands()
                .find(|generated| words(generated).any(|w| w == word))
            {
                return Err(format!(
                    "App::command `{}` clashes with the tools' command `{}` (rename one: the tool's with `cli_category`/`cli_name`)",
                    extension.name(),
                    generated.get_name()
                ));
            }
        }
    }
    Ok(root.subcommands(extensions.iter().map(|e| e.command.clone())))
}
