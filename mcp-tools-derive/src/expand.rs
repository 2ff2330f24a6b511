//! Code generation: the user's fn unchanged, a name constant, and a definition constructor
//! (`ToolDef`, `ResourceDef` or `PromptDef`) with its `inventory` registration. Tools also
//! get a hidden arguments struct (serde + schemars). Every runtime item is named by an
//! absolute `::mcp_tools::…` path.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{AnnotatedFn, Doc, Param, ParamKind, option_inner};
use crate::attr::{Kind, join_doc};

pub fn expand(item: &AnnotatedFn) -> TokenStream {
    match item.attr.kind {
        Kind::Tool => tool(item),
        Kind::Resource => resource(item),
        Kind::Prompt => prompt(item),
    }
}

fn tool(tool: &AnnotatedFn) -> TokenStream {
    let item = &tool.item;
    let fn_ident = &item.sig.ident;
    let name = tool.name();
    let name_const = name_const(
        &name,
        "TOOL",
        &format!("The name of the `{name}` tool."),
        &name,
    );

    let (args_struct, args_ty, field_values) = arguments(tool);
    let extractors = extractors(tool);
    let requirements = requirements(tool);
    let call_args = call_args(tool, |p| {
        field_values
            .iter()
            .find(|(field, _)| *field == p.ident)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    });
    let ret_ty = return_type(item);
    let metadata = metadata(tool);

    quote! {
        #item

        #name_const

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

fn resource(resource: &AnnotatedFn) -> TokenStream {
    let item = &resource.item;
    let fn_ident = &item.sig.ident;
    let attr = &resource.attr;
    let (constructor, address) = match (&attr.uri, &attr.uri_template) {
        (Some(uri), _) => (quote! { fixed }, uri.value()),
        (None, Some(template)) => (quote! { template }, template.value()),
        (None, None) => (quote! { fixed }, String::new()),
    };
    let what = if attr.uri.is_some() {
        "URI"
    } else {
        "URI template"
    };
    let const_doc = format!("The {what} of the `{fn_ident}` resource.");
    let name_const = name_const(&fn_ident.to_string(), "RESOURCE", &const_doc, &address);
    let name = resource.name();
    let ret_ty = return_type(item);
    let common = common_calls(resource);
    let mime_type = attr.mime_type.as_ref().map(|m| quote! { .mime_type(#m) });
    let StringFnParts { calls, body, call } = string_fn_parts(resource);
    quote! {
        #item

        #name_const

        const _: () = {
            fn __mcp_resource_def() -> ::core::result::Result<::mcp_tools::ResourceDef, ::mcp_tools::DefError> {
                let _ = <#ret_ty as ::mcp_tools::IntoResourceContents>::into_resource_contents;
                ::mcp_tools::ResourceDef::#constructor(#address)
                    .name(#name)
                    #common
                    #mime_type
                    #calls
                    .handler(|__request: ::mcp_tools::ResourceRequest, __ctx: ::mcp_tools::ToolContext| async move {
                        let __params = __request.params();
                        #body
                        ::mcp_tools::IntoResourceContents::into_resource_contents(#call)
                    })
                    .build()
            }

            ::mcp_tools::__private::inventory::submit! {
                ::mcp_tools::__private::Registration::<::mcp_tools::ResourceDef>::new(__mcp_resource_def)
            }
        };
    }
}

fn prompt(prompt: &AnnotatedFn) -> TokenStream {
    let item = &prompt.item;
    let name = prompt.name();
    let name_const = name_const(
        &name,
        "PROMPT",
        &format!("The name of the `{name}` prompt."),
        &name,
    );
    let ret_ty = return_type(item);
    let common = common_calls(prompt);
    let arguments = prompt.params.iter().filter_map(|param| {
        let ParamKind::Arg { attr, doc } = &param.kind else {
            return None;
        };
        let wire = param.wire_name();
        let description = attr
            .desc
            .as_ref()
            .map(syn::LitStr::value)
            .or_else(|| join_doc(doc))
            .map(|d| quote! { .with_description(#d) });
        let required = option_inner(&param.ty).is_none() && attr.default.is_none();
        Some(quote! {
            .argument(::mcp_tools::PromptArgument::new(#wire) #description .with_required(#required))
        })
    });
    let StringFnParts { calls, body, call } = string_fn_parts(prompt);
    quote! {
        #item

        #name_const

        const _: () = {
            fn __mcp_prompt_def() -> ::core::result::Result<::mcp_tools::PromptDef, ::mcp_tools::DefError> {
                let _ = <#ret_ty as ::mcp_tools::IntoPromptResult>::into_prompt_result;
                ::mcp_tools::PromptDef::builder(#name)
                    #common
                    #(#arguments)*
                    #calls
                    .handler(|__params: ::mcp_tools::Params, __ctx: ::mcp_tools::ToolContext| async move {
                        let __params = &__params;
                        #body
                        ::mcp_tools::IntoPromptResult::into_prompt_result(#call)
                    })
                    .build()
            }

            ::mcp_tools::__private::inventory::submit! {
                ::mcp_tools::__private::Registration::<::mcp_tools::PromptDef>::new(__mcp_prompt_def)
            }
        };
    }
}

/// The fn's return type (`()` when none is written).
/// The generated pieces resources and prompts share: both take their parameters from
/// strings (template variables, prompt arguments) bound to `__params` in the handler.
struct StringFnParts {
    /// `.requires(...)` and `.complete(...)` builder calls, then `.source(...)`.
    calls: TokenStream,
    /// The handler's parameter conversions, then its extractors.
    body: TokenStream,
    /// The awaited call of the annotated fn.
    call: TokenStream,
}

fn string_fn_parts(item: &AnnotatedFn) -> StringFnParts {
    let fn_ident = &item.item.sig.ident;
    let requirements = requirements(item);
    let completions = completions(item);
    let extractors = extractors(item);
    let conversions = string_params(item);
    let call_args = call_args(item, |p| {
        let ident = &p.ident;
        quote! { #ident }
    });
    StringFnParts {
        calls: quote! {
            #(#requirements)*
            #(#completions)*
            .source(::core::file!(), ::core::line!())
        },
        body: quote! {
            #(#conversions)*
            #(#extractors)*
        },
        call: quote! { #fn_ident(#(#call_args),*).await },
    }
}

fn return_type(item: &syn::ItemFn) -> TokenStream {
    match &item.sig.output {
        syn::ReturnType::Default => quote! { () },
        syn::ReturnType::Type(_, ty) => quote! { #ty },
    }
}

/// `pub const <NAME>_<SUFFIX>: &str = value;` with a doc line.
fn name_const(name: &str, suffix: &str, doc: &str, value: &str) -> TokenStream {
    let ident = format_ident!(
        "{}{}_{suffix}",
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        },
        name.to_uppercase().replace(['-', '.'], "_")
    );
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        pub const #ident: &str = #value;
    }
}

/// `let x = <T as FromContext>::from_context(&__ctx)?;` for every extractor.
fn extractors(item: &AnnotatedFn) -> Vec<TokenStream> {
    item.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ident, ty, .. }| {
            quote! { let #ident = <#ty as ::mcp_tools::FromContext>::from_context(&__ctx)?; }
        })
        .collect()
}

/// `.requires(...)` for every extractor's state type.
fn requirements(item: &AnnotatedFn) -> Vec<TokenStream> {
    item.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ty, .. }| {
            quote! { .requires(<#ty as ::mcp_tools::FromContext>::requirement()) }
        })
        .collect()
}

/// The arguments of the call of the user's fn: extractors by name, `#[args]` as the
/// parsed struct, plain parameters as `plain` says.
fn call_args(item: &AnnotatedFn, plain: impl Fn(&Param) -> TokenStream) -> Vec<TokenStream> {
    item.params
        .iter()
        .map(|p| {
            let ident = &p.ident;
            match &p.kind {
                ParamKind::Extractor => quote! { #ident },
                ParamKind::Args => quote! { __args },
                ParamKind::Arg { .. } => plain(p),
            }
        })
        .collect()
}

/// `.complete("arg", |req, ctx| ...)` for every `complete(arg = f)` key.
fn completions(item: &AnnotatedFn) -> Vec<TokenStream> {
    item.attr
        .complete
        .iter()
        .flatten()
        .map(|(arg, path)| {
            let key = arg.to_string();
            // Spanned at the fn path, so a wrong return type is reported there.
            let convert = quote_spanned! {path.span()=>
                ::mcp_tools::IntoCompletion::into_completion(#path(__request, __ctx).await)
            };
            quote! {
                .complete(#key, |__request: ::mcp_tools::CompletionRequest, __ctx: ::mcp_tools::ToolContext| async move {
                    #convert
                })
            }
        })
        .collect()
}

/// `let x: T = __params.required::<T>("x")?;` (or `optional`, or with the default) for
/// every plain parameter of a resource or prompt: string values converted with `FromStr`.
fn string_params(item: &AnnotatedFn) -> Vec<TokenStream> {
    item.params
        .iter()
        .filter_map(|param| {
            let ParamKind::Arg { attr, .. } = &param.kind else {
                return None;
            };
            let ident = &param.ident;
            let ty = &param.ty;
            let wire = param.wire_name();
            let value = match (option_inner(ty), &attr.default) {
                (Some(inner), _) => quote! { __params.optional::<#inner>(#wire)? },
                (None, Some(default)) => {
                    let default = default_value(default);
                    quote! {
                        match __params.optional::<#ty>(#wire)? {
                            ::core::option::Option::Some(value) => value,
                            ::core::option::Option::None => #default,
                        }
                    }
                }
                (None, None) => quote! { __params.required::<#ty>(#wire)? },
            };
            Some(quote! { let #ident: #ty = #value; })
        })
        .collect()
}

/// A default value: a string literal also serves `String` (and other `From<&str>` types).
fn default_value(default: &syn::Expr) -> TokenStream {
    match default {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(_),
            ..
        }) => quote! { ::core::convert::Into::into(#default) },
        _ => quote! { #default },
    }
}

/// `.description(...)`, `.title(...)` and `.permissions(...)`, shared by every kind.
fn common_calls(item: &AnnotatedFn) -> TokenStream {
    let attr = &item.attr;
    let description = match (&attr.description, &attr.description_file, &item.doc) {
        (Some(d), _, _) => quote! { #d },
        (None, Some(file), _) => quote! {
            ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #file))
        },
        (None, None, Some(Doc::Text(doc))) => quote! { #doc },
        (None, None, Some(Doc::Exprs(lines))) => quote! { ::core::concat!(#(#lines),*).trim() },
        (None, None, None) => quote! { "" },
    };
    let title = attr.title.as_ref().map(|title| quote! { .title(#title) });
    let permissions = attr.permissions.clone().unwrap_or_default();
    quote! {
        .description(#description)
        #title
        .permissions::<[&'static str; _], &'static str>([#(#permissions),*])
    }
}

/// The arguments type (hidden struct or the user's `#[args]` type), its definition, and
/// the expression passing each plain argument.
fn arguments(tool: &AnnotatedFn) -> (TokenStream, TokenStream, Vec<(syn::Ident, TokenStream)>) {
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
            let value = default_value(default);
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

/// The builder calls for every tool metadata key.
fn metadata(tool: &AnnotatedFn) -> TokenStream {
    let attr = &tool.attr;
    let mut calls = vec![common_calls(tool)];
    if let Some(category) = &attr.category {
        calls.push(quote! { .category(#category) });
    }
    if let Some(tags) = &attr.tags {
        calls.push(quote! { .tags::<[&'static str; _], &'static str>([#(#tags),*]) });
    }
    for (hint, method) in [
        (&attr.read_only, quote! { read_only }),
        (&attr.destructive, quote! { destructive }),
        (&attr.idempotent, quote! { idempotent }),
        (&attr.open_world, quote! { open_world }),
    ] {
        if let Some(value) = hint {
            calls.push(quote! { .#method(#value) });
        }
    }
    if attr.nonportable_name.is_some() {
        calls.push(quote! { .nonportable_name() });
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
