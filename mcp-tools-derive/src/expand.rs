//! Code generation for `#[mcp_tool]`: the user's fn unchanged, a name constant, a hidden
//! arguments struct (serde + schemars), a `ToolDef` constructor and its `inventory`
//! registration. Every runtime item is named by an absolute `::mcp_tools::…` path.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{Doc, Param, ParamKind, ToolFn};

pub fn expand(tool: &ToolFn) -> TokenStream {
    let item = &tool.item;
    let fn_ident = &item.sig.ident;
    let name = tool.name();
    let const_ident = format_ident!(
        "{}{}_TOOL",
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        },
        name.to_uppercase().replace(['-', '.'], "_")
    );
    let const_doc = format!("The name of the `{name}` tool.");

    let (args_struct, args_ty, field_values) = arguments(tool);
    let extractors = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ident, ty, .. }| {
            quote! { let #ident = <#ty as ::mcp_tools::FromContext>::from_context(&__ctx)?; }
        });
    let requirements = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ty, .. }| {
            quote! { .requires(<#ty as ::mcp_tools::FromContext>::requirement()) }
        });
    let call_args = tool.params.iter().map(|p| {
        let ident = &p.ident;
        match &p.kind {
            ParamKind::Extractor => quote! { #ident },
            ParamKind::Args => quote! { __args },
            ParamKind::Arg { .. } => field_values
                .iter()
                .find(|(field, _)| field == ident)
                .map(|(_, value)| value.clone())
                .unwrap_or_default(),
        }
    });
    let ret_ty = match &item.sig.output {
        syn::ReturnType::Default => quote! { () },
        syn::ReturnType::Type(_, ty) => quote! { #ty },
    };
    let metadata = metadata(tool);

    quote! {
        #item

        #[doc = #const_doc]
        #[allow(dead_code)]
        pub const #const_ident: &str = #name;

        const _: () = {
            #args_struct

            fn __mcp_tool_def() -> ::core::result::Result<::mcp_tools::ToolDef, ::mcp_tools::ToolDefError> {
                ::mcp_tools::ToolDef::builder(#name)
                    #metadata
                    .input_schema(::mcp_tools::__private::serde_json::Value::Object(
                        ::mcp_tools::schema::input_schema_for::<#args_ty>(),
                    ))
                    .output_schema(<#ret_ty as ::mcp_tools::IntoToolResult>::output_schema())
                    #(#requirements)*
                    .source(::core::file!(), ::core::line!())
                    .handler(|__arguments: ::mcp_tools::JsonObject, __ctx: ::mcp_tools::ToolContext| async move {
                        let __args: #args_ty = ::mcp_tools::__private::parse_args(#name, __arguments)?;
                        #(#extractors)*
                        ::mcp_tools::IntoToolResult::into_tool_result(#fn_ident(#(#call_args),*).await)
                    })
                    .build()
            }

            ::mcp_tools::__private::inventory::submit! {
                ::mcp_tools::__private::ToolRegistration::new(__mcp_tool_def)
            }
        };
    }
}

/// The arguments type (hidden struct or the user's `#[args]` type), its definition, and
/// the expression passing each plain argument.
fn arguments(tool: &ToolFn) -> (TokenStream, TokenStream, Vec<(syn::Ident, TokenStream)>) {
    if let Some(param) = tool
        .params
        .iter()
        .find(|p| matches!(p.kind, ParamKind::Args))
    {
        let ty = &param.ty;
        return (TokenStream::new(), quote! { #ty }, Vec::new());
    }
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    let mut values = Vec::new();
    for param in &tool.params {
        let ParamKind::Arg { attr, doc } = &param.kind else {
            continue;
        };
        let ident = &param.ident;
        let ty = &param.ty;
        let mut attrs = Vec::new();
        for line in doc {
            attrs.push(quote! { #[doc = #line] });
        }
        if let Some(desc) = &attr.desc {
            attrs.push(quote! { #[schemars(description = #desc)] });
        }
        if let Some(rename) = &attr.rename {
            attrs.push(quote! { #[serde(rename = #rename)] });
        }
        if let Some(default) = &attr.default {
            let default_fn = format_ident!("__mcp_default_{}", ident);
            let path = default_fn.to_string();
            // A string literal default also serves `String` (and other `From<&str>`) fields.
            let value = match default {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(_),
                    ..
                }) => {
                    quote! { ::core::convert::Into::into(#default) }
                }
                _ => quote! { #default },
            };
            defaults.push(quote! {
                fn #default_fn() -> #ty { #value }
            });
            attrs.push(quote! { #[serde(default = #path)] });
        }
        let bound = |key: &str, min: &Option<syn::Expr>, max: &Option<syn::Expr>| {
            let key = format_ident!("{}", key);
            let min = min.as_ref().map(|m| quote! { min = #m, });
            let max = max.as_ref().map(|m| quote! { max = #m, });
            (min.is_some() || max.is_some()).then(|| quote! { #[schemars(#key(#min #max))] })
        };
        attrs.extend(bound("range", &attr.minimum, &attr.maximum));
        attrs.extend(bound("length", &attr.min_length, &attr.max_length));
        if let Some(pattern) = &attr.pattern {
            attrs.push(quote! { #[schemars(pattern(#pattern))] });
        }
        fields.push(quote! { #(#attrs)* #ident: #ty, });
        values.push((ident.clone(), quote! { __args.#ident }));
    }
    let definition = quote! {
        #[derive(::mcp_tools::__private::serde::Deserialize, ::mcp_tools::__private::schemars::JsonSchema)]
        #[serde(crate = "::mcp_tools::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::mcp_tools::__private::schemars")]
        #[allow(non_camel_case_types)]
        struct __McpToolArgs { #(#fields)* }
        #(#defaults)*
    };
    (definition, quote! { __McpToolArgs }, values)
}

/// The builder calls for every metadata key.
fn metadata(tool: &ToolFn) -> TokenStream {
    let attr = &tool.attr;
    let mut calls = Vec::new();
    let description = match (&attr.description, &attr.description_file, &tool.doc) {
        (Some(d), _, _) => quote! { #d },
        (None, Some(file), _) => quote! {
            ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #file))
        },
        (None, None, Some(Doc::Text(doc))) => quote! { #doc },
        (None, None, Some(Doc::Exprs(lines))) => quote! { ::core::concat!(#(#lines),*).trim() },
        (None, None, None) => quote! { "" },
    };
    calls.push(quote! { .description(#description) });
    if let Some(title) = &attr.title {
        calls.push(quote! { .title(#title) });
    }
    let permissions = attr.permissions.clone().unwrap_or_default();
    calls.push(quote! {
        .permissions::<[&'static str; _], &'static str>([#(#permissions),*])
    });
    if let Some(category) = &attr.category {
        calls.push(quote! { .category(#category) });
    }
    if let Some(tags) = &attr.tags {
        calls.push(quote! { .tags::<[&'static str; _], &'static str>([#(#tags),*]) });
    }
    for (flag, call) in [
        (&attr.read_only, quote! { .read_only() }),
        (&attr.destructive, quote! { .destructive() }),
        (&attr.idempotent, quote! { .idempotent() }),
        (&attr.open_world, quote! { .open_world() }),
        (&attr.nonportable_name, quote! { .nonportable_name() }),
    ] {
        if flag.is_some() {
            calls.push(call);
        }
    }
    if let Some(ms) = &attr.timeout_ms {
        calls.push(quote! { .timeout_ms(#ms) });
    }
    if let Some(limit) = &attr.max_concurrency {
        calls.push(quote! { .max_concurrency(#limit) });
    }
    let cli_category = attr
        .cli_category
        .as_ref()
        .map(|c| quote! { ::core::option::Option::Some(::std::borrow::Cow::Borrowed(#c)) });
    let cli_name = attr
        .cli_name
        .as_ref()
        .map(|c| quote! { ::core::option::Option::Some(::std::borrow::Cow::Borrowed(#c)) });
    let hidden = attr.hidden_from_cli.is_some();
    if cli_category.is_some() || cli_name.is_some() || hidden {
        let cli_category = cli_category.unwrap_or_else(|| quote! { ::core::option::Option::None });
        let cli_name = cli_name.unwrap_or_else(|| quote! { ::core::option::Option::None });
        calls.push(quote! {
            .cli(::mcp_tools::CliOptions { category: #cli_category, name: #cli_name, hidden: #hidden })
        });
    }
    quote! { #(#calls)* }
}
