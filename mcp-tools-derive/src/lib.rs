//! Procedural macros for [`mcp-tools`](https://docs.rs/mcp-tools). Use them through the
//! `mcp-tools` crate, which re-exports them; generated code refers only to
//! `::mcp_tools::…` paths.
//!
//! Layout: `attr.rs` parses attribute keys, `ast.rs` builds the parsed model of the fn,
//! `valid.rs` checks it (errors point at the offending span; `template.rs` checks resource
//! URIs and URI templates), `expand.rs` generates code. The three macros share all of it;
//! [`attr::Kind`] says which one is running.

mod ast;
mod attr;
mod expand;
mod template;
mod valid;

use proc_macro::TokenStream;

use attr::Kind;

/// Turn an `async fn` into a registered MCP tool. See `mcp_tools::mcp_tool`.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Tool, args, input)
}

/// Turn an `async fn` into a registered MCP resource or resource template. See
/// `mcp_tools::mcp_resource`.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Resource, args, input)
}

/// Turn an `async fn` into a registered MCP prompt. See `mcp_tools::mcp_prompt`.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Prompt, args, input)
}

fn annotate(kind: Kind, args: TokenStream, input: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(input as syn::ItemFn);
    match expand_item(kind, args.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(err) => {
            // Keep the user's fn so its own errors and uses still resolve.
            let mut item = item;
            strip_param_attrs(&mut item);
            let err = err.to_compile_error();
            quote::quote! { #item #err }.into()
        }
    }
}

fn expand_item(
    kind: Kind,
    args: proc_macro2::TokenStream,
    item: syn::ItemFn,
) -> syn::Result<proc_macro2::TokenStream> {
    let attr = attr::ItemAttr::parse(kind, args)?;
    let parsed = ast::AnnotatedFn::parse(attr, item)?;
    valid::check(&parsed)?;
    Ok(expand::expand(&parsed))
}

/// Remove our parameter attributes so the fallback fn compiles.
fn strip_param_attrs(item: &mut syn::ItemFn) {
    for input in item.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| {
                !(a.path().is_ident("arg")
                    || a.path().is_ident("args")
                    || a.path().is_ident("extract")
                    || a.path().is_ident("doc"))
            });
        }
    }
}
