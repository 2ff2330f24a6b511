//! Checks that point at the offending span with a message saying how to fix it.

use proc_macro2::Span;
use quote::ToTokens;
use syn::LitStr;
use syn::spanned::Spanned;

use crate::ast::{self, AnnotatedFn, Param, ParamKind};
use crate::attr::{Kind, Shape};
use crate::ctxt::Ctxt;
use crate::template;

/// Report every problem of `item` to `cx`.
pub fn check(cx: &Ctxt, item: &AnnotatedFn) {
    common(cx, item);
    match item.attr.kind {
        Kind::Tool => tool(cx, item),
        Kind::Resource => resource(cx, item),
        Kind::Prompt => prompt(cx, item),
    }
}

/// The checks every macro shares: signature shape, name, description, parameters.
fn common(cx: &Ctxt, item: &AnnotatedFn) {
    let kind = item.attr.kind;
    let attr_name = kind.attr();
    let sig = &item.item.sig;
    if sig.asyncness.is_none() {
        cx.error_at(
            sig.fn_token.span(),
            format!("{attr_name} requires an `async fn`; add `async` before `fn`"),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        let why = match kind {
            Kind::Tool => "the schema must be known at compile time",
            Kind::Resource | Kind::Prompt => "its metadata must be known at compile time",
        };
        cx.error_spanned_by(
            &sig.generics,
            format!("{attr_name} fns cannot be generic; {why} — use concrete types"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, format!("{attr_name} fns cannot be variadic"));
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && contains_impl_trait(ty)
    {
        let examples = match kind {
            Kind::Tool => "String, Json<T>, ToolResult or Result<T, E>",
            Kind::Resource => "String, Vec<u8>, Json<T>, ResourceContent or Result<T, E>",
            Kind::Prompt => "String, PromptMessage, Vec<PromptMessage> or Result<T, E>",
        };
        cx.error_spanned_by(
            ty,
            format!("{attr_name} fns cannot return `impl Trait`; return a concrete type such as {examples}"),
        );
    }
    let name_span = item
        .attr
        .name
        .as_ref()
        .map(|n| n.span())
        .unwrap_or_else(|| sig.ident.span());
    if let Some(problem) = name_problem(kind, &item.name(), item.attr.nonportable_name.is_some()) {
        cx.error_at(name_span, problem);
    }
    if let (Some(d), Some(_)) = (&item.attr.description, &item.attr.description_file) {
        cx.error_at(
            d.span(),
            "give either `description` or `description_file`, not both",
        );
    }
    let has_description = item
        .attr
        .description
        .as_ref()
        .is_some_and(|d| !d.value().trim().is_empty())
        || item.attr.description_file.is_some()
        || item.doc.is_some();
    if !has_description {
        cx.error_at(
            sig.ident.span(),
            format!(
                "this {} has no description; add a `/// doc comment` to the fn, or `description = \"...\"` / `description_file = \"path.md\"` to {attr_name}",
                kind.noun()
            ),
        );
    }
    if kind == Kind::Tool {
        headers(cx, item);
    }
    for param in &item.params {
        owned(cx, kind, param);
        optional_extractor(cx, kind, param);
        if let ParamKind::Arg { attr, .. } = &param.kind {
            if let Some(name) = &attr.rename
                && name.value().is_empty()
            {
                cx.error_at(name.span(), "rename needs a non-empty name");
            }
            if let Some(audit) = &attr.audit
                && audit.value() != "keep"
            {
                cx.error_at(
                    audit.span(),
                    format!(
                        "`audit` takes \"keep\" (write this argument as it is in the audit log), not {:?}; without the key an argument reaches the log only in the arguments' digest",
                        audit.value()
                    ),
                );
            }
            arg_keys(cx, kind, param, attr);
        }
        if matches!(param.kind, ParamKind::Args) && kind != Kind::Tool {
            cx.error_spanned_by(
                &param.ident,
                format!(
                    "#[args] structs are for tools; give each {} as its own parameter",
                    match kind {
                        Kind::Prompt => "prompt argument",
                        _ => "URI template variable",
                    }
                ),
            );
        }
    }
}

/// `#[arg(header = "Name")]`: an HTTP token, not on a float, each name once per tool
/// (ignoring case, as HTTP compares header names).
fn headers(cx: &Ctxt, item: &AnnotatedFn) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for param in &item.params {
        let ParamKind::Arg { attr, .. } = &param.kind else {
            continue;
        };
        let Some(header) = &attr.header else {
            continue;
        };
        let name = header.value();
        let bad = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)));
        if name.is_empty() {
            cx.error_at(
                header.span(),
                "the header name is empty; give the part after `Mcp-Param-`, e.g. `header = \"Region\"`",
            );
        } else if let Some(bad) = bad {
            cx.error_at(
                header.span(),
                format!(
                    "`{name}` is not an HTTP header name ({bad:?} is not allowed); use letters, digits and !#$%&'*+-.^_`|~"
                ),
            );
        } else if let Some((_, other)) = seen
            .iter()
            .find(|(seen, _)| seen.eq_ignore_ascii_case(&name))
        {
            cx.error_at(
                header.span(),
                format!(
                    "the header `Mcp-Param-{name}` is already `{other}`'s (header names are compared ignoring case); give each argument its own"
                ),
            );
        } else {
            seen.push((name, param.wire_name()));
        }
        if ast::is_float(&param.ty) {
            cx.error_at(
                header.span(),
                format!(
                    "`header` applies to strings, integers and booleans, and `{}: {}` is a float (SEP-2243 leaves `number` out); take an integer or a string",
                    param.wire_name(),
                    tokens(&param.ty)
                ),
            );
        }
    }
}

/// Arguments are deserialized, so they are owned: `&str` and `&T` cannot be filled.
fn owned(cx: &Ctxt, kind: Kind, param: &Param) {
    if matches!(param.kind, ParamKind::Extractor) {
        return;
    }
    let syn::Type::Reference(reference) = &param.ty else {
        return;
    };
    let elem = &reference.elem;
    let owned = match &**elem {
        syn::Type::Path(path) if path.path.is_ident("str") => "String".to_string(),
        syn::Type::Slice(slice) => format!("Vec<{}>", tokens(&slice.elem)),
        other => tokens(other),
    };
    cx.error_spanned_by(
        &param.ty,
        format!(
            "{} arguments are parsed from the request into owned values; take `{owned}` instead of `{}`",
            kind.attr(),
            tokens(&param.ty)
        ),
    );
}

/// An extractor is always filled in, so `Option<State<T>>`, `Option<ToolContext>` and
/// `Option<Caller>` are mistakes, not arguments (none of them could be deserialized).
fn optional_extractor(cx: &Ctxt, kind: Kind, param: &Param) {
    if !matches!(param.kind, ParamKind::Arg { .. }) {
        return;
    }
    let Some(inner) = ast::option_inner(&param.ty).filter(|t| ast::is_extractor_type(t)) else {
        return;
    };
    cx.error_spanned_by(
        &param.ty,
        format!(
            "{} extractors are never optional (outside a server `Caller` is the local caller, and `build()` checks every `State`); take `{}` instead of `{}`",
            kind.attr(),
            tokens(inner),
            tokens(&param.ty)
        ),
    );
}

/// Each `#[arg]` key applies to this macro and fits the argument's type.
fn arg_keys(cx: &Ctxt, kind: Kind, param: &Param, attr: &crate::attr::ArgAttr) {
    let shape = ast::shape(&param.ty);
    for (key, span) in &attr.given {
        if !key.kinds.contains(&kind) {
            let allowed: Vec<&str> = crate::attr::ARG_KEYS
                .iter()
                .filter(|k| k.kinds.contains(&kind))
                .map(|k| k.name)
                .collect();
            let what = match kind {
                Kind::Tool => "tool arguments",
                Kind::Resource => "URI template variables",
                Kind::Prompt => "prompt arguments",
            };
            cx.error_at(
                *span,
                format!(
                    "`{}` does not apply to {what}; they accept only: {}",
                    key.name,
                    allowed.join(", ")
                ),
            );
            continue;
        }
        if key.fits.admits(shape) {
            continue;
        }
        let is = match shape {
            Shape::Number => "a number",
            Shape::Text => "a string",
            Shape::List => "a list",
            Shape::Bool => "a boolean",
            Shape::Opaque => "opaque",
        };
        let instead = key
            .counterpart
            .and_then(|name| crate::attr::ARG_KEYS.iter().find(|k| k.name == name))
            .filter(|other| other.fits.admits(shape))
            .map(|other| format!("; use `{}` instead", other.name))
            .unwrap_or_default();
        cx.error_at(
            *span,
            format!(
                "`{}` applies to {}, and `{}: {}` is {is}{instead}",
                key.name,
                key.fits.what(),
                param.wire_name(),
                tokens(&param.ty)
            ),
        );
    }
}

fn tokens(ty: &syn::Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace("& ", "&")
        .replace(" :: ", "::")
}

fn tool(cx: &Ctxt, item: &AnnotatedFn) {
    let args_structs: Vec<_> = item
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Args))
        .collect();
    if let Some(kept) = &item.attr.audit_keep
        && args_structs.is_empty()
    {
        let at = kept.first().map_or_else(Span::call_site, LitStr::span);
        cx.error_at(
            at,
            "`audit_keep` names fields of an #[args] struct, and this tool has none; mark each parameter to keep with `#[arg(audit = \"keep\")]`",
        );
    }
    let plain_args = item
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Arg { .. }))
        .count();
    if args_structs.len() > 1 {
        cx.error_spanned_by(
            &args_structs[1].ident,
            "only one parameter can be #[args]; merge the structs",
        );
    }
    if !args_structs.is_empty() && plain_args > 0 {
        cx.error_spanned_by(
            &args_structs[0].ident,
            "an #[args] struct is the whole input schema; move the other arguments into it as fields",
        );
    }
}

fn resource(cx: &Ctxt, item: &AnnotatedFn) {
    let attr = &item.attr;
    let variables = match (&attr.uri, &attr.uri_template) {
        (None, None) => {
            cx.error_at(
                Span::call_site(),
                "#[mcp_resource] needs `uri = \"scheme://path\"` (one resource) or `uri_template = \"scheme://path/{var}\"` (a family of resources)",
            );
            return;
        }
        (Some(uri), Some(_)) => {
            cx.error_at(uri.span(), "give either `uri` or `uri_template`, not both");
            return;
        }
        (Some(_), None) => {
            if let Some((arg, _)) = attr.complete.iter().flatten().next() {
                cx.error_spanned_by(
                    arg,
                    "a resource with a fixed `uri` has no variables to complete; use `uri_template`",
                );
            }
            Vec::new()
        }
        (None, Some(template)) => match template::variables(&template.value()) {
            Ok(variables) => variables,
            Err(problem) => {
                cx.error_at(template.span(), problem);
                return;
            }
        },
    };
    let mut bound = Vec::new();
    for param in &item.params {
        let ParamKind::Arg { .. } = &param.kind else {
            continue;
        };
        let name = param.wire_name();
        if attr.uri.is_some() {
            cx.error_spanned_by(
                &param.ident,
                format!(
                    "a resource with a fixed `uri` takes no arguments; use `uri_template = \"...{{{name}}}...\"` to take `{name}` from the URI, or make it an extractor (State<T>, ToolContext, #[extract])"
                ),
            );
        } else if !variables.contains(&name) {
            cx.error_spanned_by(
                &param.ident,
                format!(
                    "`{name}` is not a variable of the URI template (it has: {}); add `{{{name}}}` to the template, rename the parameter, or make it an extractor",
                    list(&variables)
                ),
            );
        }
        bound.push(name);
    }
    if let Some(template) = &attr.uri_template {
        for variable in variables.iter().filter(|v| !bound.contains(v)) {
            cx.error_at(
                template.span(),
                format!(
                    "the URI template variable `{variable}` has no parameter; add `{variable}: String` (or another `FromStr` type) to the fn"
                ),
            );
        }
        check_completions(cx, item, &variables, "URI template variable");
    }
}

fn prompt(cx: &Ctxt, item: &AnnotatedFn) {
    let mut arguments = Vec::new();
    for param in &item.params {
        if let ParamKind::Arg { .. } = &param.kind {
            let name = param.wire_name();
            if arguments.contains(&name) {
                cx.error_spanned_by(
                    &param.ident,
                    format!("two parameters are both the prompt argument `{name}`; rename one"),
                );
            }
            arguments.push(name);
        }
    }
    check_completions(cx, item, &arguments, "prompt argument");
}

/// Every `complete(x = f)` key names an argument of the item.
fn check_completions(cx: &Ctxt, item: &AnnotatedFn, names: &[String], what: &str) {
    for (arg, _) in item.attr.complete.iter().flatten() {
        let key = arg.to_string();
        if !names.contains(&key) {
            cx.error_spanned_by(
                arg,
                format!(
                    "`{key}` is not a {what} of this {} (it has: {}); complete one of those",
                    item.attr.kind.noun(),
                    list(names)
                ),
            );
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

/// The shared name rules (`mcp-toolbelt-names`) for tools and prompts (prompt names may be
/// non-portable); resource names are free text but not empty.
fn name_problem(kind: Kind, name: &str, nonportable: bool) -> Option<String> {
    if kind == Kind::Resource {
        return name
            .trim()
            .is_empty()
            .then(|| "resource name must not be empty".to_string());
    }
    let nonportable = nonportable || kind == Kind::Prompt;
    mcp_toolbelt_names::check(name, nonportable)
        .err()
        .map(|problem| format!("{} {problem}", kind.noun()))
}
