//! Definitions: what the registry knows about each tool, resource and prompt — metadata,
//! schemas, handlers — whether `#[mcp_tool]`, `#[mcp_resource]`, `#[mcp_prompt]` built it or
//! you did with a builder. Depends on [`output`](crate::output) and [`context`](crate::context)
//! (handlers return outputs and take a context); nothing here knows the registry.

pub(crate) mod arguments;
pub(crate) mod common;
pub(crate) mod completion;
pub(crate) mod param_headers;
pub(crate) mod params;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod tool;
pub(crate) mod uri_template;

pub use common::{DefError, SourceLocation};
pub use completion::{
    Completion, CompletionHandler, CompletionRef, CompletionRequest, IntoCompletion,
    MAX_COMPLETION_VALUES,
};
pub use params::Params;
pub use prompt::{PromptArgument, PromptDef, PromptDefBuilder, PromptHandler};
pub use resource::{
    ResourceAddress, ResourceDef, ResourceDefBuilder, ResourceHandler, ResourceRequest,
};
pub use tool::{CliOptions, TaskSupport, ToolAnnotations, ToolDef, ToolDefBuilder, ToolHandler};
pub use uri_template::{UriTemplate, UriTemplateError};
