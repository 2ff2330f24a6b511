//! Procedural macros for [`mcp-toolbelt`](https://docs.rs/mcp-toolbelt). Use them through the
//! `mcp-toolbelt` crate, which re-exports them; generated code refers only to absolute
//! paths into it, under the name the user's `Cargo.toml` gives it (`runtime.rs`).
//!
//! Layout (thiserror-impl's): `attr.rs` parses attribute keys (one table row per key),
//! `ast.rs` builds the parsed model of the fn, `valid.rs` checks it (errors point at the
//! offending span; `template.rs` checks resource URIs and URI templates), `expand.rs`
//! generates code. Every problem goes to one collector (`ctxt.rs`), so one compile reports
//! all of them; on error the fn and its name constant are still emitted, so a mistake is
//! reported once and not again at every use. The three macros share all of it;
//! `attr::Kind` says which one is running.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod runtime;
mod template;
mod valid;

use proc_macro::TokenStream;

use attr::Kind;

/// Turn an `async fn` into a registered MCP tool. See `mcp_toolbelt::mcp_tool`.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Tool, args, input)
}

/// Turn an `async fn` into a registered MCP resource or resource template. See
/// `mcp_toolbelt::mcp_resource`.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Resource, args, input)
}

/// Turn an `async fn` into a registered MCP prompt. See `mcp_toolbelt::mcp_prompt`.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Prompt, args, input)
}

fn annotate(kind: Kind, args: TokenStream, input: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(input as syn::ItemFn);
    let cx = ctxt::Ctxt::new();
    let attr = attr::ItemAttr::parse(&cx, kind, args.into());
    let parsed = ast::AnnotatedFn::parse(&cx, attr, item);
    valid::check(&cx, &parsed);
    match cx.check() {
        Ok(()) => expand::expand(&parsed),
        Err(errors) => expand::fallback(&parsed, errors),
    }
    .into()
}
