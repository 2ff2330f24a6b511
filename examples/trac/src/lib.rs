//! An MCP server for Trac, built with `mcp-toolbelt`: the 27 tools of seed 000
//! ([`tools`]) and wiki pages as resources ([`resources`]) over a typed async
//! client for Trac's XML-RPC API ([`client`]),
//! with Markdown/TracWiki handling ([`wiki_format`]), fault translation
//! ([`errors`]) and the generated command line ([`cli`]).
//!
//! ```no_run
//! use mcp_toolbelt::{PermissionSet, ToolRegistry};
//! use trac_mcp::client::TracClient;
//!
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::builder()
//!     .state(TracClient::from_env()?)
//!     .allowed_permissions(PermissionSet::from_file("read-only.permissions")?)
//!     .build()?;
//! assert_eq!(registry.list_tools().len(), 14);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod cli;
pub mod client;
pub mod errors;
pub mod resources;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tools;
pub mod wiki_format;
