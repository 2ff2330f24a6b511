//! Where the generated code finds the runtime: the name the user's `Cargo.toml` gives the
//! `mcp-toolbelt` package (its own name, or a `package = "mcp-toolbelt"` rename), read once
//! per compilation with `proc-macro-crate`.
//!
//! Inside the runtime itself (its library, doctests and examples) the answer is
//! `::mcp_toolbelt`: the library declares `extern crate self as mcp_toolbelt;`, and its
//! doctests and examples link it under that name. When the manifest cannot be read or
//! does not name the runtime (a crate that reaches the macros some other way), the
//! package's own name is used, and an unresolved path names it in the error.

use std::cell::OnceCell;

use proc_macro_crate::{FoundCrate, crate_name};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// The runtime's package name on crates.io.
const PACKAGE: &str = "mcp-toolbelt";
/// The runtime's crate name when nothing renames it.
const CRATE: &str = "mcp_toolbelt";

thread_local! {
    // A proc-macro server runs one crate's expansions on one thread; the manifest is read
    // at the first expansion only.
    static NAME: OnceCell<String> = const { OnceCell::new() };
}

/// The crate name the runtime has in the crate being compiled (`mcp_toolbelt`, or the
/// user's rename).
pub fn name() -> String {
    NAME.with(|cell| cell.get_or_init(lookup).clone())
}

fn lookup() -> String {
    match crate_name(PACKAGE) {
        Ok(FoundCrate::Name(name)) => name,
        Ok(FoundCrate::Itself) | Err(_) => CRATE.to_owned(),
    }
}

/// The absolute path of the runtime, `::name`, for generated code.
pub fn path() -> TokenStream {
    let ident = Ident::new(&name(), Span::call_site());
    quote!(::#ident)
}
