//! Trac example for `mcp-tools`: a typed async client for Trac's XML-RPC API
//! ([`client`]) and Markdown/TracWiki format handling ([`wiki_format`]).
#![warn(missing_docs)]

pub mod client;
pub mod wiki_format;
