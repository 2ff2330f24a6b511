//! Code generation: the user's fn unchanged, a name constant, and a definition constructor
//! (`ToolDef`, `ResourceDef` or `PromptDef`) with its `inventory` registration. Tools also
//! get a hidden arguments struct (serde + schemars). Every runtime item is named by an
//! absolute path: `::mcp_toolbelt::…`, or the rename the user's manifest gives it (`runtime.rs`).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{AnnotatedFn, Doc, Param, ParamKind, is_bool, is_vec, option_inner};
use crate::attr::{Kind, join_doc};

/// The code of a fn without errors: the fn, its name constant and its registration.
pub fn expand(item: &AnnotatedFn) -> TokenStream {
    match item.attr.kind {
        Kind::Tool => tool(item),
        Kind::Resource => resource(item),
        Kind::Prompt => prompt(item),
    }
}

/// What is emitted when `item` has errors: the fn and its name constant (so its uses
/// resolve and the mistake is reported once), and the errors. Nothing is registered.
pub fn fallback(item: &AnnotatedFn, errors: syn::Error) -> TokenStream {
    let user_fn = user_fn(item);
    let name_const = name_const(item);
    let errors = errors.to_compile_error();
    quote! {
        #user_fn
        #name_const
        #errors
    }
}

/// The user's fn, our attributes removed. A tool's parameters are its arguments, so a long
/// list is its schema, not a smell: clippy's `too_many_arguments` is allowed on it (unless
/// the fn says otherwise).
fn user_fn(item: &AnnotatedFn) -> TokenStream {
    let mut user_fn = item.item.clone();
    let mentions_lint = user_fn.attrs.iter().any(|a| {
        a.to_token_stream()
            .to_string()
            .contains("too_many_arguments")
    });
    if !mentions_lint {
        user_fn
            .attrs
            .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    }
    quote! { #user_fn }
}

/// `pub const <NAME>_TOOL` / `_PROMPT` (the name) or `<FN>_RESOURCE` (the URI or URI
/// template), with a doc line.
fn name_const(item: &AnnotatedFn) -> TokenStream {
    let attr = &item.attr;
    let name = item.name();
    let (base, suffix, doc, value) = match attr.kind {
        Kind::Tool | Kind::Prompt => {
            let noun = attr.kind.noun();
            let doc = format!("The name of the `{name}` {noun}.");
            (name.clone(), noun.to_uppercase(), doc, name)
        }
        Kind::Resource => {
            let fn_name = item.item.sig.ident.to_string();
            let (what, address) = match (&attr.uri, &attr.uri_template) {
                (Some(uri), _) => ("URI", uri.value()),
                (None, Some(template)) => ("URI template", template.value()),
                (None, None) => ("URI", String::new()),
            };
            let doc = format!("The {what} of the `{fn_name}` resource.");
            (fn_name, "RESOURCE".to_string(), doc, address)
        }
    };
    // Upper case, every other character `_`: the same ident for a valid name, and still an
    // ident (for the fallback) when the name is invalid.
    let mut ident: String = base
        .trim_start_matches("r#")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !ident.starts_with(|c: char| c.is_ascii_alphabetic()) {
        ident.insert(0, '_');
    }
    let ident = format_ident!("{ident}_{suffix}");
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        pub const #ident: &str = #value;
    }
}

fn tool(tool: &AnnotatedFn) -> TokenStream {
    let rt = crate::runtime::path();
    let item = user_fn(tool);
    let fn_ident = &tool.item.sig.ident;
    let name = tool.name();
    let name_const = name_const(tool);

    let Arguments {
        definition,
        ty: args_ty,
        parse,
    } = arguments(tool);
    let ret_ty = return_type(&tool.item);
    let returns = returns(&tool.item);
    let extractors = tool_extractors(tool);
    let requirements = requirements(tool);
    let call_args = call_args(tool, |p| {
        let ident = &p.ident;
        quote! { #ident }
    });
    let metadata = metadata(tool);
    let constraints = constraints(tool);

    // The handler is one plain fn per tool returning its boxed future: no closure type, so
    // no handler type to instantiate the runtime's generics for. Items in this order so
    // errors come in the fn's order: the return type, the arguments, then the schema derive.
    quote! {
        #item

        #name_const

        const _: () = {
            /// How the return type becomes a result, checked here once.
            const __RETURNS: #rt::__private::Returns<#ret_ty> = #returns;

            fn __mcp_tool_def() -> ::core::result::Result<#rt::__private::ToolDef, #rt::__private::DefError> {
                let __input_schema = #rt::__private::input_schema::<#args_ty>(#name, &[#(#constraints),*])?;
                #rt::__private::ToolDef::builder(#name)
                    #metadata
                    .input_schema(#rt::__private::serde_json::Value::Object(__input_schema))
                    .output_schema((__RETURNS.output_schema)())
                    #(#requirements)*
                    .source(::core::file!(), ::core::line!())
                    .boxed_handler(__mcp_tool_call)
                    .build()
            }

            fn __mcp_tool_call(__arguments: #rt::__private::JsonObject, __ctx: #rt::ToolContext) -> #rt::__private::ToolFuture {
                ::std::boxed::Box::pin(async move {
                    #(#extractors)*
                    #parse
                    (__RETURNS.into_tool_result)(#fn_ident(#(#call_args),*).await)
                })
            }

            #definition

            #rt::__private::inventory::submit! {
                #rt::__private::Registration::new(__mcp_tool_def)
            }
        };
    }
}

fn resource(resource: &AnnotatedFn) -> TokenStream {
    let rt = crate::runtime::path();
    let item = user_fn(resource);
    let attr = &resource.attr;
    let (constructor, address) = match (&attr.uri, &attr.uri_template) {
        (Some(uri), _) => (quote! { fixed }, uri.value()),
        (None, Some(template)) => (quote! { template }, template.value()),
        (None, None) => (quote! { fixed }, String::new()),
    };
    let name_const = name_const(resource);
    let name = resource.name();
    let ret_ty = return_type(&resource.item);
    let common = common_calls(resource);
    let mime_type = attr.mime_type.as_ref().map(|m| quote! { .mime_type(#m) });
    let StringFnParts { calls, body, call } = string_fn_parts(resource);
    quote! {
        #item

        #name_const

        const _: () = {
            fn __mcp_resource_def() -> ::core::result::Result<#rt::__private::ResourceDef, #rt::__private::DefError> {
                let _ = <#ret_ty as #rt::__private::IntoResourceContents>::into_resource_contents;
                #rt::__private::ResourceDef::#constructor(#address)
                    .name(#name)
                    #common
                    #mime_type
                    #calls
                    .handler(|__request: #rt::__private::ResourceRequest, __ctx: #rt::ToolContext| async move {
                        let __params = __request.params();
                        #body
                        #rt::__private::IntoResourceContents::into_resource_contents(#call)
                    })
                    .build()
            }

            #rt::__private::inventory::submit! {
                #rt::__private::Registration::new(__mcp_resource_def)
            }
        };
    }
}

fn prompt(prompt: &AnnotatedFn) -> TokenStream {
    let rt = crate::runtime::path();
    let item = user_fn(prompt);
    let name = prompt.name();
    let name_const = name_const(prompt);
    let ret_ty = return_type(&prompt.item);
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
        let required = !param.optional();
        Some(quote! {
            .argument(#rt::__private::PromptArgument::new(#wire) #description .with_required(#required))
        })
    });
    let StringFnParts { calls, body, call } = string_fn_parts(prompt);
    quote! {
        #item

        #name_const

        const _: () = {
            fn __mcp_prompt_def() -> ::core::result::Result<#rt::__private::PromptDef, #rt::__private::DefError> {
                let _ = <#ret_ty as #rt::__private::IntoPromptResult>::into_prompt_result;
                #rt::__private::PromptDef::builder(#name)
                    #common
                    #(#arguments)*
                    #calls
                    .handler(|__params: #rt::__private::Params, __ctx: #rt::ToolContext| async move {
                        let __params = &__params;
                        #body
                        #rt::__private::IntoPromptResult::into_prompt_result(#call)
                    })
                    .build()
            }

            #rt::__private::inventory::submit! {
                #rt::__private::Registration::new(__mcp_prompt_def)
            }
        };
    }
}

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

/// Where the generated code takes the return type's result fns (`__private::Returns`):
/// `returns_result_json::<X, E>()` for `Result<Json<X>, E>`, `returns_result::<T, E>()`,
/// `returns_json::<X>()`, else `returns::<R>()`. Each bounds on the parts by themselves, so
/// an output type without `JsonSchema` (in the runtime's words) or an error type without
/// `Into<ToolError>` is one error at that part.
fn returns(item: &syn::ItemFn) -> TokenStream {
    let rt = crate::runtime::path();
    let syn::ReturnType::Type(_, ty) = &item.sig.output else {
        return quote! { #rt::__private::returns::<()>() };
    };
    let (ok, err) = match generic_args(ty, "Result").as_deref() {
        Some([ok, err]) => (*ok, Some(*err)),
        _ => (&**ty, None),
    };
    let json = match generic_args(ok, "Json").as_deref() {
        Some([inner]) => Some(*inner),
        _ => None,
    };
    match (json, err) {
        (Some(x), Some(e)) => quote_spanned! {ty.span()=>
            #rt::__private::returns_result_json::<#x, #e>()
        },
        (None, Some(e)) => quote_spanned! {ty.span()=>
            #rt::__private::returns_result::<#ok, #e>()
        },
        (Some(x), None) => quote_spanned! {ty.span()=> #rt::__private::returns_json::<#x>() },
        (None, None) => quote_spanned! {ty.span()=> #rt::__private::returns::<#ty>() },
    }
}

/// The type arguments of `ty` when it is a path ending in `name<…>` (types only).
fn generic_args<'a>(ty: &'a syn::Type, name: &str) -> Option<Vec<&'a syn::Type>> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != name {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args
        .iter()
        .map(|arg| match arg {
            syn::GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
        .collect()
}

/// The fn's return type (`()` when none is written).
fn return_type(item: &syn::ItemFn) -> TokenStream {
    match &item.sig.output {
        syn::ReturnType::Default => quote! { () },
        syn::ReturnType::Type(_, ty) => quote! { #ty },
    }
}

/// `let x = <T as FromContext>::from_context(&__ctx)?;` for every extractor of a resource
/// or a prompt.
fn extractors(item: &AnnotatedFn) -> Vec<TokenStream> {
    let rt = crate::runtime::path();
    item.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ident, ty, .. }| {
            let check = quote_spanned! {ty.span()=>
                const _: () = #rt::__private::extractor::<#ty>();
            };
            quote! {
                let #ident = {
                    #check
                    <#ty as #rt::__private::FromContext>::from_context(&__ctx)?
                };
            }
        })
        .collect()
}

/// A tool's extractors, built before its arguments are parsed:
/// `let x = match <T as FromContext>::from_call(&__ctx, &__arguments) { … };`, where a
/// failure renders through the return type's `IntoToolResult::error_result` (`__RETURNS`).
fn tool_extractors(item: &AnnotatedFn) -> Vec<TokenStream> {
    let rt = crate::runtime::path();
    item.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ident, ty, .. }| {
            let check = quote_spanned! {ty.span()=>
                const _: () = #rt::__private::extractor::<#ty>();
            };
            quote! {
                let #ident = {
                    #check
                    match <#ty as #rt::__private::FromContext>::from_call(&__ctx, &__arguments) {
                        ::core::result::Result::Ok(__value) => __value,
                        ::core::result::Result::Err(__error) => {
                            return (__RETURNS.error_result)(__error);
                        }
                    }
                };
            }
        })
        .collect()
}

/// `.requires(...)` for every extractor's state type.
fn requirements(item: &AnnotatedFn) -> Vec<TokenStream> {
    let rt = crate::runtime::path();
    item.params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Extractor))
        .map(|Param { ty, .. }| {
            quote! { .requires(<#ty as #rt::__private::FromContext>::requirement()) }
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
    let rt = crate::runtime::path();
    item.attr
        .complete
        .iter()
        .flatten()
        .map(|(arg, path)| {
            let key = arg.to_string();
            // Spanned at the fn path, so a wrong return type is reported there.
            let convert = quote_spanned! {path.span()=>
                #rt::__private::IntoCompletion::into_completion(#path(__request, __ctx).await)
            };
            quote! {
                .complete(#key, |__request: #rt::__private::CompletionRequest, __ctx: #rt::ToolContext| async move {
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
                (None, None) if is_bool(ty) => {
                    quote! { __params.optional::<bool>(#wire)?.unwrap_or(false) }
                }
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

/// How a tool gets its arguments.
struct Arguments {
    /// Items beside the handler: the argument checks, and for plain arguments the hidden
    /// struct whose schemars derive gives the input schema, and the default fns.
    definition: TokenStream,
    /// The type the input schema is generated for.
    ty: TokenStream,
    /// The handler's statements binding each argument (by the parameter's name, or
    /// `__args` for an `#[args]` struct) from `__arguments`.
    parse: TokenStream,
}

/// An `#[args]` struct is deserialized whole; plain arguments are taken one by one with
/// the runtime's `Arguments` (the same answers as a derived `Deserialize`, without a
/// visitor per tool).
fn arguments(tool: &AnnotatedFn) -> Arguments {
    let rt = crate::runtime::path();
    let schemars_path = format!("::{}::__private::schemars", crate::runtime::name());
    let name = tool.name();
    if let Some(param) = tool
        .params
        .iter()
        .find(|p| matches!(p.kind, ParamKind::Args))
    {
        let ty = &param.ty;
        return Arguments {
            definition: argument_check(ty),
            ty: quote! { #ty },
            parse: quote! {
                let __args: #ty = #rt::__private::parse_args(#name, __arguments)?;
            },
        };
    }
    let mut fields = Vec::new();
    let mut defaults = Vec::new();
    let mut wires = Vec::new();
    let mut idents = Vec::new();
    let mut takes = Vec::new();
    for param in &tool.params {
        let ParamKind::Arg { attr, doc } = &param.kind else {
            continue;
        };
        let ident = &param.ident;
        let ty = &param.ty;
        let index = wires.len();
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
        // Spanned at the type, so a type that cannot be an argument is reported there.
        let take = if let Some(default) = &attr.default {
            let default_fn = format_ident!("__mcp_default_{}", ident);
            let path = default_fn.to_string();
            let value = default_value(default);
            defaults.push(quote! {
                fn #default_fn() -> #ty { #value }
            });
            attrs.push(quote! { #[serde(default = #path)] });
            let take = quote_spanned! {ty.span()=> #rt::__private::Arguments::take_or::<#ty> };
            quote! { #take(&mut __fields, #index, #default_fn) }
        } else if is_vec(ty) || is_bool(ty) {
            // The optional-parameter rule: `[]` / `false` when absent, and the schema says so.
            attrs.push(quote! { #[serde(default)] });
            let take =
                quote_spanned! {ty.span()=> #rt::__private::Arguments::take_or_default::<#ty> };
            quote! { #take(&mut __fields, #index) }
        } else {
            let take = quote_spanned! {ty.span()=> #rt::__private::Arguments::take::<#ty> };
            quote! { #take(&mut __fields, #index) }
        };
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
        if let Some(header) = &attr.header {
            attrs.push(quote! {
                #[schemars(transform = #rt::__private::MirroredHeader(#header))]
            });
        }
        fields.push(quote! { #(#attrs)* #ident: #ty, });
        wires.push(param.wire_name());
        idents.push(ident);
        takes.push(take);
    }
    let definition = quote! {
        // Only its schema is used: the arguments are taken one by one.
        #[derive(#rt::__private::schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[schemars(crate = #schemars_path)]
        #[allow(non_camel_case_types, dead_code)]
        struct __McpToolArgs { #(#fields)* }
        #(#defaults)*
    };
    let open = quote! {
        let mut __fields = #rt::__private::Arguments::new(#name, __arguments, &[#(#wires),*]);
    };
    let parse = if takes.is_empty() {
        quote! {
            #open
            __fields.finish()?;
        }
    } else {
        quote! {
            #open
            let __taken = (#(#takes,)*);
            let (#(::core::result::Result::Ok(#idents),)*) = __taken else {
                return ::core::result::Result::Err(__fields.error());
            };
            __fields.finish()?;
        }
    };
    Arguments {
        definition,
        ty: quote! { __McpToolArgs },
        parse,
    }
}

/// The builder calls for every tool metadata key.
fn metadata(tool: &AnnotatedFn) -> TokenStream {
    let rt = crate::runtime::path();
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
    if let Some((rate, span)) = &attr.rate {
        let (count, period_ms, burst) = (rate.count(), rate.period_ms(), rate.burst());
        calls.push(quote::quote_spanned! { *span=>
            .rate(#rt::__private::rate(#count, #period_ms, #burst))
        });
    }
    for param in &tool.params {
        if let ParamKind::Arg { attr, .. } = &param.kind
            && attr.audit.is_some()
        {
            let wire = param.wire_name();
            calls.push(quote! { .audit_keep(#wire) });
        }
    }
    for field in attr.audit_keep.iter().flatten() {
        calls.push(quote! { .audit_keep(#field) });
    }
    if let Some((variant, span)) = &attr.task {
        calls.push(
            quote::quote_spanned! { *span=> .task_support(#rt::definition::TaskSupport::#variant) },
        );
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
            .cli(#rt::__private::CliOptions { category: #cli_category, name: #cli_name, hidden: #hidden })
        });
    }
    quote! { #(#calls)* }
}

/// `(argument, key, schema keywords)` for every constraint key of every argument: the
/// build checks each reached the schema (for types the macro cannot see through).
fn constraints(tool: &AnnotatedFn) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for param in &tool.params {
        let ParamKind::Arg { attr, .. } = &param.kind else {
            continue;
        };
        let wire = param.wire_name();
        for (key, _) in attr
            .given
            .iter()
            .filter(|(k, _)| !k.schema_keywords.is_empty())
        {
            let name = key.name;
            let keywords = key.schema_keywords;
            out.push(quote! { (#wire, #name, &[#(#keywords),*]) });
        }
    }
    out
}

/// A type without `Deserialize` or `JsonSchema` is an error at the argument saying what to
/// derive (next to rustc's own errors from the derives, which do not say it).
fn argument_check(ty: &syn::Type) -> TokenStream {
    let rt = crate::runtime::path();
    quote_spanned! {ty.span()=> const _: () = #rt::__private::tool_argument::<#ty>(); }
}
