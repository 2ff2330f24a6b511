//! Argument completion (`completion/complete`): suggestions for a prompt argument or a
//! resource template variable, computed by a completion fn named in the attribute:
//! `#[mcp_prompt(complete(city = city_names))]`,
//! `#[mcp_resource(uri_template = "trac://wiki/{+name}", complete(name = page_names))]`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::context::ToolContext;
use crate::output::error::ToolError;

/// The most values one completion answer carries (the protocol's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What the client asks to complete: one argument's partial value, and the values of the
/// other arguments it has already filled in.
///
/// ```
/// let request = mcp_toolbelt::definition::CompletionRequest::new("city", "par");
/// assert_eq!(request.argument, "city");
/// assert_eq!(request.value, "par");
/// assert!(request.context.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// Arguments already resolved, by name.
    pub context: HashMap<String, String>,
}

impl CompletionRequest {
    /// A request to complete `argument` from `value`, with no context.
    pub fn new(argument: impl Into<String>, value: impl Into<String>) -> CompletionRequest {
        CompletionRequest {
            argument: argument.into(),
            value: value.into(),
            context: HashMap::new(),
        }
    }

    /// Add an already-resolved argument.
    pub fn with_context(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.context.insert(name.into(), value.into());
        self
    }
}

/// Completion suggestions: at most [`MAX_COMPLETION_VALUES`] values, with the total number
/// known and whether more exist.
///
/// ```
/// use mcp_toolbelt::definition::Completion;
/// let c = Completion::matching(["paris", "park", "party", "rome"], "par");
/// assert_eq!(c.values(), ["paris", "park", "party"]);
/// assert_eq!(c.total(), Some(3));
/// assert!(!c.has_more());
///
/// let many = Completion::new((0..250).map(|i| i.to_string()));
/// assert_eq!(many.values().len(), 100);
/// assert_eq!(many.total(), Some(250));
/// assert!(many.has_more());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    values: Vec<String>,
    total: Option<u32>,
    has_more: bool,
}

impl Completion {
    /// These values, in order of relevance; beyond the first 100 they are counted in
    /// `total` and `has_more` is set.
    pub fn new<I, S>(values: I) -> Completion
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut values: Vec<String> = values.into_iter().map(Into::into).collect();
        let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
        let has_more = values.len() > MAX_COMPLETION_VALUES;
        values.truncate(MAX_COMPLETION_VALUES);
        Completion {
            values,
            total: Some(total),
            has_more,
        }
    }

    /// The candidates that start with `prefix` (case-insensitively), in their order.
    pub fn matching<I, S>(candidates: I, prefix: &str) -> Completion
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let prefix = prefix.to_lowercase();
        Completion::new(
            candidates
                .into_iter()
                .map(Into::into)
                .filter(|c: &String| c.to_lowercase().starts_with(&prefix)),
        )
    }

    /// No suggestions.
    pub fn empty() -> Completion {
        Completion::new(Vec::<String>::new())
    }

    /// Values that are only the first page of a larger set: `total` known or not,
    /// `has_more` as given. Values beyond 100 are dropped and `has_more` set.
    pub fn page(values: Vec<String>, total: Option<u32>, has_more: bool) -> Completion {
        let mut completion = Completion::new(values);
        completion.has_more |= has_more;
        completion.total = total;
        completion
    }

    /// The suggested values.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// How many values exist in all, when known.
    pub fn total(&self) -> Option<u32> {
        self.total
    }

    /// True when more values exist than were sent.
    pub fn has_more(&self) -> bool {
        self.has_more
    }
}

/// Conversion of a completion fn's return value into a [`Completion`]: implemented for
/// `Completion`, `Vec<String>`, `Vec<&'static str>` and `Result<T, E: Into<ToolError>>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a completion fn",
    label = "not a completion",
    note = "return Vec<String>, Vec<&'static str>, Completion, or Result<T, E> of these"
)]
pub trait IntoCompletion {
    /// Convert.
    fn into_completion(self) -> Result<Completion, ToolError>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(Completion::new(self))
    }
}

impl IntoCompletion for Vec<&'static str> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        Ok(Completion::new(self))
    }
}

impl<T: IntoCompletion, E: Into<ToolError>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, ToolError> {
        self.map_err(Into::into)?.into_completion()
    }
}

/// Computes completions for one argument. Any
/// `Fn(CompletionRequest, ToolContext) -> impl Future<Output = Result<Completion, ToolError>>`
/// is one; the attribute's `complete(arg = f)` wraps an `async fn f(CompletionRequest,
/// ToolContext) -> impl IntoCompletion`.
pub trait CompletionHandler: Send + Sync + 'static {
    /// Complete once.
    fn complete(
        &self,
        request: CompletionRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Completion, ToolError>>;
}

impl<F, Fut> CompletionHandler for F
where
    F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ToolError>> + Send + 'static,
{
    fn complete(
        &self,
        request: CompletionRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Completion, ToolError>> {
        Box::pin(self(request, ctx))
    }
}

/// The completion fns of one prompt or resource template, by argument name.
#[derive(Clone, Default)]
pub(crate) struct Completers(pub(crate) Vec<(String, Arc<dyn CompletionHandler>)>);

impl Completers {
    pub(crate) fn add(&mut self, argument: String, handler: Arc<dyn CompletionHandler>) {
        self.0.retain(|(name, _)| *name != argument);
        self.0.push((argument, handler));
    }

    pub(crate) fn get(&self, argument: &str) -> Option<&Arc<dyn CompletionHandler>> {
        self.0
            .iter()
            .find(|(name, _)| name == argument)
            .map(|(_, handler)| handler)
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| name.as_str())
    }
}

/// What a completion request refers to.
///
/// ```
/// let r = mcp_toolbelt::definition::CompletionRef::Prompt("greet".into());
/// assert_eq!(r, mcp_toolbelt::definition::CompletionRef::Prompt("greet".to_string()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by name (`ref/prompt`).
    Prompt(String),
    /// A resource template, by its template text (`ref/resource`).
    ResourceTemplate(String),
}
