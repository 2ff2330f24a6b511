//! Prompts: [`PromptDef`] (name, arguments, handler) and its [`PromptArgument`]s,
//! built by `#[mcp_prompt]` or by hand with [`PromptDef::builder`].

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::context::{StateRequirement, ToolContext};
use crate::definition::common::{
    DefCommon, DefError, SourceLocation, checked_handler, def_common_accessors,
    def_common_builder_methods,
};
use crate::definition::completion::{Completers, Completion, CompletionRequest};
use crate::definition::params::Params;
use crate::output::error::ToolError;
use crate::output::prompt_messages::PromptResult;
use crate::permissions::PermissionSet;

/// One declared argument of a prompt.
///
/// ```
/// let city = mcp_toolbelt::definition::PromptArgument::new("city").with_description("Where").with_required(true);
/// assert_eq!(city.name(), "city");
/// assert!(city.required());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptArgument {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    required: bool,
}

impl PromptArgument {
    /// An optional argument called `name`.
    pub fn new(name: impl Into<String>) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: false,
        }
    }

    /// Set the human-readable title.
    pub fn with_title(mut self, title: impl Into<String>) -> PromptArgument {
        self.title = Some(title.into());
        self
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> PromptArgument {
        self.description = Some(description.into());
        self
    }

    /// Whether the argument must be given.
    pub fn with_required(mut self, required: bool) -> PromptArgument {
        self.required = required;
        self
    }

    /// The argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The title, if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// True when the argument must be given.
    pub fn required(&self) -> bool {
        self.required
    }
}

/// Renders a prompt from its arguments. Any
/// `Fn(Params, ToolContext) -> impl Future<Output = Result<PromptResult, ToolError>>`
/// is a handler.
pub trait PromptHandler: Send + Sync + 'static {
    /// Render once.
    fn get(
        &self,
        arguments: Params,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<PromptResult, ToolError>>;
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(Params, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
{
    fn get(
        &self,
        arguments: Params,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<PromptResult, ToolError>> {
        Box::pin(self(arguments, ctx))
    }
}

/// Everything the registry knows about one prompt.
///
/// `#[mcp_prompt]` builds one per annotated fn; [`PromptDef::builder`] builds one at
/// runtime.
///
/// ```
/// use mcp_toolbelt::definition::{PromptArgument, PromptDef};
/// let def = PromptDef::builder("summarize")
///     .description("Summarize a text")
///     .argument(PromptArgument::new("text").with_description("What to summarize").with_required(true))
///     .handler(|args, _ctx| async move {
///         let text: String = args.required("text")?;
///         Ok(mcp_toolbelt::output::IntoPromptResult::into_prompt_result(format!("Summarize:\n{text}"))?)
///     })
///     .build()
///     .unwrap();
/// assert_eq!(def.arguments()[0].name(), "text");
/// assert_eq!(serde_json::to_value(&def).unwrap()["arguments"][0]["required"], true);
/// ```
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) name: Cow<'static, str>,
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) permissions: PermissionSet,
    pub(crate) handler: Arc<dyn PromptHandler>,
    pub(crate) requirements: Vec<StateRequirement>,
    pub(crate) completers: Completers,
    pub(crate) source: Option<SourceLocation>,
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef")
            .field("name", &self.name)
            .field("arguments", &self.arguments.len())
            .field("permissions", &self.permissions)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl PromptDef {
    /// Start a definition named `name`.
    pub fn builder(name: impl Into<Cow<'static, str>>) -> PromptDefBuilder {
        PromptDefBuilder {
            name: name.into(),
            common: DefCommon::default(),
            arguments: Vec::new(),
            handler: None,
            completers: Completers::default(),
        }
    }

    /// The prompt's unique name.
    pub fn name(&self) -> &str {
        &self.name
    }

    def_common_accessors!(
        description: "The description shown to clients.",
        requirements: "State types the handler's extractors need.",
        source: "Where the prompt was defined, for macro-built ones.",
    );

    /// The arguments, in declaration order.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }

    /// The arguments that have a completion fn.
    pub fn completable(&self) -> impl Iterator<Item = &str> {
        self.completers.names()
    }

    /// Check `arguments` against the declared ones: every required one present, no unknown
    /// ones. The message names them all.
    pub(crate) fn check_arguments(&self, arguments: &Params) -> Result<(), ToolError> {
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && arguments.get(&a.name).is_none())
            .map(|a| a.name.as_str())
            .collect();
        let unknown: Vec<&str> = arguments
            .iter()
            .map(|(name, _)| name)
            .filter(|name| !self.arguments.iter().any(|a| a.name == *name))
            .collect();
        if missing.is_empty() && unknown.is_empty() {
            return Ok(());
        }
        let mut problems = Vec::new();
        if !missing.is_empty() {
            problems.push(format!(
                "missing required arguments: {}",
                missing.join(", ")
            ));
        }
        if !unknown.is_empty() {
            problems.push(format!(
                "unknown arguments: {}",
                crate::output::error::echo(&unknown.join(", "))
            ));
        }
        let declared: Vec<&str> = self.arguments.iter().map(|a| a.name.as_str()).collect();
        Err(ToolError::validation(format!(
            "invalid arguments for prompt '{}': {}",
            self.name,
            problems.join("; ")
        ))
        .with_action(if declared.is_empty() {
            "This prompt takes no arguments; call it without any.".to_string()
        } else {
            format!("This prompt takes: {}.", declared.join(", "))
        }))
    }

    /// Run the handler directly (no checks, no middleware): mostly for tests.
    pub fn get_unchecked(
        &self,
        arguments: Params,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<PromptResult, ToolError>> {
        self.handler.get(arguments, ctx)
    }
}

/// A definition serializes to its `prompts/list` entry.
impl Serialize for PromptDef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &self.name)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("description", &self.description)?;
        if !self.arguments.is_empty() {
            map.serialize_entry("arguments", &self.arguments)?;
        }
        map.end()
    }
}

/// Builder for a [`PromptDef`]; `#[mcp_prompt]` expands to calls of it.
#[must_use]
pub struct PromptDefBuilder {
    name: Cow<'static, str>,
    common: DefCommon,
    arguments: Vec<PromptArgument>,
    handler: Option<Arc<dyn PromptHandler>>,
    completers: Completers,
}

impl PromptDefBuilder {
    def_common_builder_methods!(
        description: "The description shown to clients (required, non-empty).",
        permissions: "Permissions a caller needs to list and get it.",
        source: "Where the prompt is defined.",
    );

    /// Declare an argument (name, description, whether required).
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// The handler: an `async` closure or fn of the arguments and the context.
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Params, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PromptResult, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The completion fn of the argument `argument`.
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, handler: F) -> Self
    where
        F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ToolError>> + Send + 'static,
    {
        self.completers.add(argument.into(), Arc::new(handler));
        self
    }

    /// Check and build. Fails on an invalid name (1–128 of `A-Za-z0-9_.-`), a missing
    /// description or handler, a repeated argument, or a completion fn for an argument the
    /// prompt lacks.
    pub fn build(self) -> Result<PromptDef, DefError> {
        let fail = |problem: String| DefError::new("prompt", &self.name, problem);
        if let Some(problem) = crate::names::check_name(&self.name, true) {
            return Err(fail(problem));
        }
        let description = self.common.checked_description().map_err(&fail)?;
        let handler = checked_handler(self.handler.clone()).map_err(&fail)?;
        for (i, argument) in self.arguments.iter().enumerate() {
            if argument.name.is_empty() {
                return Err(fail("has an argument with an empty name".into()));
            }
            if self.arguments[..i].iter().any(|a| a.name == argument.name) {
                return Err(fail(format!(
                    "declares the argument `{}` twice",
                    argument.name
                )));
            }
        }
        if let Some(unknown) = self
            .completers
            .names()
            .find(|n| !self.arguments.iter().any(|a| a.name == *n))
        {
            return Err(fail(format!(
                "has a completion fn for `{unknown}`, which is not one of its arguments"
            )));
        }
        Ok(PromptDef {
            permissions: PermissionSet::new(self.common.permissions.iter()),
            name: self.name,
            title: self.common.title,
            description,
            arguments: self.arguments,
            handler,
            requirements: self.common.requirements,
            completers: self.completers,
            source: self.common.source,
        })
    }
}
