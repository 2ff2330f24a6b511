//! Output types: what a tool, resource, prompt or completion fn returns and how a failure
//! reads — [`ToolResult`], [`Json`], [`ContentBlock`], [`ToolError`], resource contents,
//! prompt messages — each serializing to its MCP wire form. The bottom layer:
//! it depends on no other part of the crate.

pub(crate) mod content;
pub(crate) mod error;
pub(crate) mod json;
pub(crate) mod prompt_messages;
pub(crate) mod resource_content;
pub(crate) mod result;

pub use content::ContentBlock;
pub use error::{ErrorKind, ToolError};
pub use json::Json;
pub use prompt_messages::{IntoPromptResult, PromptMessage, PromptResult, Role};
pub use resource_content::{IntoResourceContents, ResourceContent};
pub use result::{IntoToolResult, ToolResult};
