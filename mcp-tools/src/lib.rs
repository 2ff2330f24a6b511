//! # mcp-tools
//!
//! Build MCP (Model Context Protocol) servers out of annotated async functions.
//!
//! `#[mcp_tool]` on an `async fn` generates the tool's JSON input schema, its metadata and
//! its registration; every annotated fn linked into the binary is collected at link time.
//! A [`ToolRegistry`] filters tools by permission, validates arguments against the schema
//! before the fn runs, dispatches through timeouts, concurrency limits and panic capture,
//! and turns every failure into a clear `Error (kind): …` result.
//!
//! ```
//! use mcp_tools::{mcp_tool, Json, State, ToolContext, ToolError, ToolRegistry};
//!
//! struct Greeter { greeting: String }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Greeting { text: String, length: usize }
//!
//! /// Greet someone by name.
//! #[mcp_tool(name = "greet", read_only)]
//! async fn greet(
//!     greeter: State<Greeter>,
//!     /// Who to greet
//!     name: String,
//! ) -> Result<Json<Greeting>, ToolError> {
//!     if name.is_empty() {
//!         return Err(ToolError::validation("name must not be empty"));
//!     }
//!     let text = format!("{}, {name}!", greeter.greeting);
//!     Ok(Json(Greeting { length: text.len(), text }))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::builder()
//!     .state(Greeter { greeting: "Hello".into() })
//!     .build()
//!     .unwrap();
//! let result = registry
//!     .call_tool(GREET_TOOL, serde_json::json!({"name": "Ada"}), ToolContext::default())
//!     .await
//!     .unwrap();
//! assert_eq!(result.structured_content().unwrap()["text"], "Hello, Ada!");
//! # });
//! ```
//!
//! The server layer (feature `server`, on by default) serves a registry over stdio,
//! streamable HTTP and TCP through `rmcp`. See `docs/architecture.md` for the path of one
//! call through the code.
//!
//! ## The `inventory` linker caveat
//! Tools are collected from every crate *linked* into the final binary. A library crate
//! whose items the binary never references may be dropped by the linker, and its tools with
//! it: reference something from it (for instance its tool name constants, or a
//! `pub fn link() {}` you call from `main`) to keep it linked.

#![warn(missing_docs)]

mod blocking;
mod context;
mod error;
mod middleware;
mod names;
mod permissions;
mod registry;
mod report;
mod result;
pub mod schema;
mod tool;
mod validate;

pub use blocking::run_blocking;
pub use context::{ClientPeer, FromContext, LogLevel, State, StateRequirement, ToolContext};
pub use error::{ErrorKind, ToolError};
pub use middleware::{Around, Next, ToolStats};
pub use permissions::{PermissionFileError, PermissionSet};
pub use registry::{
    BuildError, RegistryChange, ToolNotFound, ToolRegistry, ToolRegistryBuilder, ToolView,
};
pub use report::{Finding, PermissionMatrix, Severity, ValidationReport, cli_inexpressible};
pub use result::{IntoToolResult, Json, ToolResult};
pub use tool::{CliOptions, SourceLocation, ToolDef, ToolDefBuilder, ToolDefError, ToolHandler};

/// `#[mcp_tool(...)]`: turn an `async fn` into a registered MCP tool.
///
/// See the crate docs and `docs/macro.md` for every key.
pub use mcp_tools_derive::mcp_tool;

/// Protocol model types from `rmcp` used in this crate's API.
pub use rmcp::model::{ContentBlock, JsonObject, Tool, ToolAnnotations};

/// Items the macros' generated code refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use futures;
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::tool::ToolRegistration;

    use crate::error::ToolError;
    use rmcp::model::JsonObject;

    /// Deserialize validated arguments into the tool's args type.
    pub fn parse_args<T: serde::de::DeserializeOwned>(
        tool: &str,
        arguments: JsonObject,
    ) -> Result<T, ToolError> {
        serde_json::from_value(serde_json::Value::Object(arguments)).map_err(|err| {
            ToolError::validation(format!("invalid arguments for tool '{tool}': {err}"))
        })
    }
}
