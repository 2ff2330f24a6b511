//! Checks that point at the offending span with a message saying how to fix it.

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::ast::{AnnotatedFn, ParamKind};
use crate::attr::Kind;
use crate::template;

/// Every problem of `item`, combined into one error.
pub fn check(item: &AnnotatedFn) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    common(item, &mut errors);
    match item.attr.kind {
        Kind::Tool => tool(item, &mut errors),
        Kind::Resource => resource(item, &mut errors),
        Kind::Prompt => prompt(item, &mut errors),
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

/// The checks every macro shares: signature shape, name, description, parameters.
fn common(item: &AnnotatedFn, errors: &mut Vec<syn::Error>) {
    let kind = item.attr.kind;
    let attr_name = kind.attr();
    let sig = &item.item.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span(),
            format!("{attr_name} requires an `async fn`; add `async` before `fn`"),
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let why = match kind {
            Kind::Tool => "the schema must be known at compile time",
            Kind::Resource | Kind::Prompt => "its metadata must be known at compile time",
        };
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!("{attr_name} fns cannot be generic; {why} — use concrete types"),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            format!("{attr_name} fns cannot be variadic"),
        ));
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && contains_impl_trait(ty)
    {
        let examples = match kind {
            Kind::Tool => "String, Json<T>, ToolResult or Result<T, E>",
            Kind::Resource => "String, Vec<u8>, Json<T>, ResourceContent or Result<T, E>",
            Kind::Prompt => "String, PromptMessage, Vec<PromptMessage> or Result<T, E>",
        };
        errors.push(syn::Error::new_spanned(
            ty,
            format!("{attr_name} fns cannot return `impl Trait`; return a concrete type such as {examples}"),
        ));
    }
    let name_span = item
        .attr
        .name
        .as_ref()
        .map(|n| n.span())
        .unwrap_or_else(|| sig.ident.span());
    if let Some(problem) = name_problem(kind, &item.name(), item.attr.nonportable_name.is_some()) {
        errors.push(syn::Error::new(name_span, problem));
    }
    if let (Some(d), Some(_)) = (&item.attr.description, &item.attr.description_file) {
        errors.push(syn::Error::new(
            d.span(),
            "give either `description` or `description_file`, not both",
        ));
    }
    let has_description = item
        .attr
        .description
        .as_ref()
        .is_some_and(|d| !d.value().trim().is_empty())
        || item.attr.description_file.is_some()
        || item.doc.is_some();
    if !has_description {
        errors.push(syn::Error::new(
            sig.ident.span(),
            format!(
                "this {} has no description; add a `/// doc comment` to the fn, or `description = \"...\"` / `description_file = \"path.md\"` to {attr_name}",
                kind.noun()
            ),
        ));
    }
    for param in &item.params {
        if let ParamKind::Arg { attr, .. } = &param.kind
            && let Some(name) = &attr.rename
            && name.value().is_empty()
        {
            errors.push(syn::Error::new(
                name.span(),
                "rename needs a non-empty name",
            ));
        }
        if matches!(param.kind, ParamKind::Args) && kind != Kind::Tool {
            errors.push(syn::Error::new_spanned(
                &param.ident,
                format!(
                    "#[args] structs are for tools; give each {} as its own parameter",
                    match kind {
                        Kind::Prompt => "prompt argument",
                        _ => "URI template variable",
                    }
                ),
            ));
        }
    }
}

fn tool(item: &AnnotatedFn, errors: &mut Vec<syn::Error>) {
    let args_structs: Vec<_> = item
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Args))
        .collect();
    let plain_args = item
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
    if let Some(limit) = &item.attr.max_concurrency
        && limit.base10_parse::<usize>().is_ok_and(|n| n == 0)
    {
        errors.push(syn::Error::new(
            limit.span(),
            "max_concurrency must be at least 1 (1 serializes the tool)",
        ));
    }
}

fn resource(item: &AnnotatedFn, errors: &mut Vec<syn::Error>) {
    let attr = &item.attr;
    let variables = match (&attr.uri, &attr.uri_template) {
        (None, None) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                "#[mcp_resource] needs `uri = \"scheme://path\"` (one resource) or `uri_template = \"scheme://path/{var}\"` (a family of resources)",
            ));
            return;
        }
        (Some(uri), Some(_)) => {
            errors.push(syn::Error::new(
                uri.span(),
                "give either `uri` or `uri_template`, not both",
            ));
            return;
        }
        (Some(uri), None) => {
            if let Some(problem) = template::uri_problem(&uri.value()) {
                errors.push(syn::Error::new(uri.span(), problem));
            }
            if let Some((arg, _)) = attr.complete.iter().flatten().next() {
                errors.push(syn::Error::new_spanned(
                    arg,
                    "a resource with a fixed `uri` has no variables to complete; use `uri_template`",
                ));
            }
            Vec::new()
        }
        (None, Some(template)) => match template::variables(&template.value()) {
            Ok(variables) => variables,
            Err(problem) => {
                errors.push(syn::Error::new(template.span(), problem));
                return;
            }
        },
    };
    if let Some(mime) = &attr.mime_type
        && !mime.value().contains('/')
    {
        errors.push(syn::Error::new(
            mime.span(),
            "mime_type must look like `type/subtype`, e.g. \"text/plain\" or \"image/png\"",
        ));
    }
    let mut bound = Vec::new();
    for param in &item.params {
        let ParamKind::Arg { attr: arg, .. } = &param.kind else {
            continue;
        };
        allow_arg_keys(arg, &["rename"], "URI template variables", errors);
        let name = param.wire_name();
        if attr.uri.is_some() {
            errors.push(syn::Error::new_spanned(
                &param.ident,
                format!(
                    "a resource with a fixed `uri` takes no arguments; use `uri_template = \"...{{{name}}}...\"` to take `{name}` from the URI, or make it an extractor (State<T>, ToolContext, #[extract])"
                ),
            ));
        } else if !variables.contains(&name) {
            errors.push(syn::Error::new_spanned(
                &param.ident,
                format!(
                    "`{name}` is not a variable of the URI template (it has: {}); add `{{{name}}}` to the template, rename the parameter, or make it an extractor",
                    list(&variables)
                ),
            ));
        }
        bound.push(name);
    }
    if let Some(template) = &attr.uri_template {
        for variable in variables.iter().filter(|v| !bound.contains(v)) {
            errors.push(syn::Error::new(
                template.span(),
                format!(
                    "the URI template variable `{variable}` has no parameter; add `{variable}: String` (or another `FromStr` type) to the fn"
                ),
            ));
        }
        check_completions(item, &variables, "URI template variable", errors);
    }
}

fn prompt(item: &AnnotatedFn, errors: &mut Vec<syn::Error>) {
    let mut arguments = Vec::new();
    for param in &item.params {
        if let ParamKind::Arg { attr, .. } = &param.kind {
            allow_arg_keys(
                attr,
                &["desc", "default", "rename"],
                "prompt arguments",
                errors,
            );
            let name = param.wire_name();
            if arguments.contains(&name) {
                errors.push(syn::Error::new_spanned(
                    &param.ident,
                    format!("two parameters are both the prompt argument `{name}`; rename one"),
                ));
            }
            arguments.push(name);
        }
    }
    check_completions(item, &arguments, "prompt argument", errors);
}

/// Every `complete(x = f)` key names an argument of the item.
fn check_completions(
    item: &AnnotatedFn,
    names: &[String],
    what: &str,
    errors: &mut Vec<syn::Error>,
) {
    for (arg, _) in item.attr.complete.iter().flatten() {
        let key = arg.to_string();
        if !names.contains(&key) {
            errors.push(syn::Error::new_spanned(
                arg,
                format!(
                    "`{key}` is not a {what} of this {} (it has: {}); complete one of those",
                    item.attr.kind.noun(),
                    list(names)
                ),
            ));
        }
    }
}

/// `#[arg]` keys other than `allowed` are errors at their value.
fn allow_arg_keys(
    arg: &crate::attr::ArgAttr,
    allowed: &[&str],
    what: &str,
    errors: &mut Vec<syn::Error>,
) {
    let present: [(&str, Option<Span>); 8] = [
        ("desc", arg.desc.as_ref().map(|v| v.span())),
        ("default", arg.default.as_ref().map(|v| v.span())),
        ("rename", arg.rename.as_ref().map(|v| v.span())),
        ("minimum", arg.minimum.as_ref().map(|v| v.span())),
        ("maximum", arg.maximum.as_ref().map(|v| v.span())),
        ("min_length", arg.min_length.as_ref().map(|v| v.span())),
        ("max_length", arg.max_length.as_ref().map(|v| v.span())),
        ("pattern", arg.pattern.as_ref().map(|v| v.span())),
    ];
    for (key, span) in present {
        if let Some(span) = span
            && !allowed.contains(&key)
        {
            errors.push(syn::Error::new(
                span,
                format!(
                    "`{key}` does not apply to {what}; they accept only: {}",
                    allowed.join(", ")
                ),
            ));
        }
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn contains_impl_trait(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::ImplTrait(_))
        || quote::ToTokens::to_token_stream(ty)
            .into_iter()
            .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "impl"))
}

/// The spec's rule (1–128 of `[A-Za-z0-9_.-]`) for tool and prompt names, and the portable
/// subset for tools; resource names are free text but not empty.
fn name_problem(kind: Kind, name: &str, nonportable: bool) -> Option<String> {
    let noun = kind.noun();
    if kind == Kind::Resource {
        return name
            .trim()
            .is_empty()
            .then(|| "resource name must not be empty".to_string());
    }
    if name.is_empty() || name.len() > 128 {
        return Some(format!(
            "{noun} name must be 1 to 128 characters (this one has {})",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Some(format!(
            "{noun} name {name:?} contains {bad:?}; use only ASCII letters, digits, '_', '-' and '.'"
        ));
    }
    let portable = name.len() <= 64 && !name.contains('.');
    if kind == Kind::Tool && !portable && !nonportable {
        return Some(format!(
            "tool name {name:?} has a '.' or is over 64 characters; Claude Desktop, Copilot CLI and OpenAI-style clients reject such names (and the whole tool list). Rename it, or add `nonportable_name` to opt in"
        ));
    }
    None
}
