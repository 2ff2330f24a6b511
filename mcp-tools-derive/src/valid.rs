//! Checks that point at the offending span with a message saying how to fix it.

use syn::spanned::Spanned;

use crate::ast::{ParamKind, ToolFn};

/// Every problem of `tool`, combined into one error.
pub fn check(tool: &ToolFn) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let sig = &tool.item.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span(),
            "#[mcp_tool] requires an `async fn`; add `async` before `fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[mcp_tool] fns cannot be generic; the schema must be known at compile time — use concrete types",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            "#[mcp_tool] fns cannot be variadic",
        ));
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && contains_impl_trait(ty)
    {
        errors.push(syn::Error::new_spanned(
            ty,
            "#[mcp_tool] fns cannot return `impl Trait`; return a concrete type such as String, Json<T>, ToolResult or Result<T, E>",
        ));
    }
    let name_span = tool
        .attr
        .name
        .as_ref()
        .map(|n| n.span())
        .unwrap_or_else(|| sig.ident.span());
    if let Some(problem) = name_problem(&tool.name(), tool.attr.nonportable_name.is_some()) {
        errors.push(syn::Error::new(name_span, problem));
    }
    if let (Some(d), Some(_)) = (&tool.attr.description, &tool.attr.description_file) {
        errors.push(syn::Error::new(
            d.span(),
            "give either `description` or `description_file`, not both",
        ));
    }
    let has_description = tool
        .attr
        .description
        .as_ref()
        .is_some_and(|d| !d.value().trim().is_empty())
        || tool.attr.description_file.is_some()
        || tool.doc.is_some();
    if !has_description {
        errors.push(syn::Error::new(
            sig.ident.span(),
            "this tool has no description; add a `/// doc comment` to the fn, or `description = \"...\"` / `description_file = \"path.md\"` to #[mcp_tool]",
        ));
    }
    let args_structs: Vec<_> = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Args))
        .collect();
    let plain_args = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Arg { .. }))
        .count();
    if args_structs.len() > 1 {
        errors.push(syn::Error::new_spanned(
            &args_structs[1].ident,
            "only one parameter can be #[args]; merge the structs",
        ));
    }
    if !args_structs.is_empty() && plain_args > 0 {
        errors.push(syn::Error::new_spanned(
            &args_structs[0].ident,
            "an #[args] struct is the whole input schema; move the other arguments into it as fields",
        ));
    }
    for param in &tool.params {
        if let ParamKind::Arg { attr, .. } = &param.kind
            && let Some(name) = &attr.rename
            && name.value().is_empty()
        {
            errors.push(syn::Error::new(
                name.span(),
                "rename needs a non-empty name",
            ));
        }
    }
    if let Some(limit) = &tool.attr.max_concurrency
        && limit.base10_parse::<usize>().is_ok_and(|n| n == 0)
    {
        errors.push(syn::Error::new(
            limit.span(),
            "max_concurrency must be at least 1 (1 serializes the tool)",
        ));
    }
    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            for e in errors {
                first.combine(e);
            }
            Err(first)
        }
    }
}

fn contains_impl_trait(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::ImplTrait(_))
        || quote::ToTokens::to_token_stream(ty)
            .into_iter()
            .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "impl"))
}

/// The spec's rule (1–128 of `[A-Za-z0-9_.-]`) and the portable subset.
fn name_problem(name: &str, nonportable: bool) -> Option<String> {
    if name.is_empty() || name.len() > 128 {
        return Some(format!(
            "tool name must be 1 to 128 characters (this one has {})",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Some(format!(
            "tool name {name:?} contains {bad:?}; use only ASCII letters, digits, '_', '-' and '.'"
        ));
    }
    let portable = name.len() <= 64 && !name.contains('.');
    if !portable && !nonportable {
        return Some(format!(
            "tool name {name:?} has a '.' or is over 64 characters; Claude Desktop, Copilot CLI and OpenAI-style clients reject such names (and the whole tool list). Rename it, or add `nonportable_name` to opt in"
        ));
    }
    None
}
