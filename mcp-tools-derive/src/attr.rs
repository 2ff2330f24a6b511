//! Parsing of the item attributes (`#[mcp_tool(...)]`, `#[mcp_resource(...)]`,
//! `#[mcp_prompt(...)]`) and of the parameter attributes `#[arg(...)]`, `#[args]` and
//! `#[extract]`.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, LitBool, LitInt, LitStr, Token};

/// Which macro is being expanded; decides the keys it accepts and the wording of errors.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Kind {
    #[default]
    Tool,
    Resource,
    Prompt,
}

const TOOL_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "description_file",
    "permissions",
    "category",
    "tags",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "timeout_ms",
    "max_concurrency",
    "cli_category",
    "cli_name",
    "hidden_from_cli",
    "nonportable_name",
];

const RESOURCE_KEYS: &[&str] = &[
    "uri",
    "uri_template",
    "name",
    "title",
    "description",
    "description_file",
    "mime_type",
    "permissions",
    "complete",
];

const PROMPT_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "description_file",
    "permissions",
    "complete",
];

impl Kind {
    /// The attribute as users write it, for messages.
    pub fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "#[mcp_tool]",
            Kind::Resource => "#[mcp_resource]",
            Kind::Prompt => "#[mcp_prompt]",
        }
    }

    /// What the macro defines, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }

    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => TOOL_KEYS,
            Kind::Resource => RESOURCE_KEYS,
            Kind::Prompt => PROMPT_KEYS,
        }
    }
}

/// The keys of one item attribute. Which keys are accepted depends on the [`Kind`].
#[derive(Default)]
pub struct ItemAttr {
    pub kind: Kind,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub description_file: Option<LitStr>,
    pub permissions: Option<Vec<Expr>>,
    pub category: Option<LitStr>,
    pub tags: Option<Vec<LitStr>>,
    pub read_only: Option<LitBool>,
    pub destructive: Option<LitBool>,
    pub idempotent: Option<LitBool>,
    pub open_world: Option<LitBool>,
    pub timeout_ms: Option<LitInt>,
    pub max_concurrency: Option<LitInt>,
    pub cli_category: Option<LitStr>,
    pub cli_name: Option<LitStr>,
    pub hidden_from_cli: Option<Span>,
    pub nonportable_name: Option<Span>,
    pub uri: Option<LitStr>,
    pub uri_template: Option<LitStr>,
    pub mime_type: Option<LitStr>,
    /// `complete(arg = path::to::fn, ...)`: the completion fn of each argument.
    pub complete: Option<Vec<(Ident, syn::Path)>>,
}

/// An annotation hint: the bare key means `true`; `key = false` says so explicitly.
fn hint(meta: &syn::meta::ParseNestedMeta) -> syn::Result<LitBool> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse()
    } else {
        Ok(LitBool::new(
            true,
            meta.path
                .get_ident()
                .map_or_else(Span::call_site, |i| i.span()),
        ))
    }
}

/// Store `value` in `slot`, or fail on a repeated key.
fn set_once<T>(slot: &mut Option<T>, value: T, key: &syn::Path) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new_spanned(
            key,
            format!(
                "duplicate key `{}`; give each key once",
                key.get_ident().map(|i| i.to_string()).unwrap_or_default()
            ),
        ));
    }
    *slot = Some(value);
    Ok(())
}

fn bracketed<T>(
    input: ParseStream,
    item: fn(ParseStream) -> syn::Result<T>,
) -> syn::Result<Vec<T>> {
    let content;
    syn::bracketed!(content in input);
    let items: Punctuated<T, Token![,]> = Punctuated::parse_terminated_with(&content, item)?;
    Ok(items.into_iter().collect())
}

impl ItemAttr {
    pub fn parse(kind: Kind, args: proc_macro2::TokenStream) -> syn::Result<ItemAttr> {
        let mut attr = ItemAttr {
            kind,
            ..ItemAttr::default()
        };
        let parser = syn::meta::parser(|meta| {
            let key = meta.path.clone();
            let ident = key.get_ident().map(|i| i.to_string()).unwrap_or_default();
            if !kind.keys().contains(&ident.as_str()) {
                return Err(meta.error(format!(
                    "unknown key `{}` in {}; expected one of: {}",
                    key.get_ident()
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| "?".into()),
                    kind.attr(),
                    kind.keys().join(", ")
                )));
            }
            let flag = |slot: &mut Option<Span>| {
                set_once(slot, meta.path.get_ident().unwrap().span(), &key)
            };
            match ident.as_str() {
                "name" => set_once(&mut attr.name, meta.value()?.parse()?, &key),
                "title" => set_once(&mut attr.title, meta.value()?.parse()?, &key),
                "description" => set_once(&mut attr.description, meta.value()?.parse()?, &key),
                "description_file" => {
                    set_once(&mut attr.description_file, meta.value()?.parse()?, &key)
                }
                "permissions" => {
                    let list = bracketed(meta.value()?, |input| input.parse::<Expr>())?;
                    set_once(&mut attr.permissions, list, &key)
                }
                "category" => set_once(&mut attr.category, meta.value()?.parse()?, &key),
                "tags" => {
                    let list = bracketed(meta.value()?, |input| input.parse::<LitStr>())?;
                    set_once(&mut attr.tags, list, &key)
                }
                "read_only" => set_once(&mut attr.read_only, hint(&meta)?, &key),
                "destructive" => set_once(&mut attr.destructive, hint(&meta)?, &key),
                "idempotent" => set_once(&mut attr.idempotent, hint(&meta)?, &key),
                "open_world" => set_once(&mut attr.open_world, hint(&meta)?, &key),
                "hidden_from_cli" => flag(&mut attr.hidden_from_cli),
                "nonportable_name" => flag(&mut attr.nonportable_name),
                "timeout_ms" => set_once(&mut attr.timeout_ms, meta.value()?.parse()?, &key),
                "max_concurrency" => {
                    set_once(&mut attr.max_concurrency, meta.value()?.parse()?, &key)
                }
                "cli_category" => set_once(&mut attr.cli_category, meta.value()?.parse()?, &key),
                "cli_name" => set_once(&mut attr.cli_name, meta.value()?.parse()?, &key),
                "uri" => set_once(&mut attr.uri, meta.value()?.parse()?, &key),
                "uri_template" => set_once(&mut attr.uri_template, meta.value()?.parse()?, &key),
                "mime_type" => set_once(&mut attr.mime_type, meta.value()?.parse()?, &key),
                "complete" => {
                    let mut entries: Vec<(Ident, syn::Path)> = Vec::new();
                    meta.parse_nested_meta(|entry| {
                        let Some(arg) = entry.path.get_ident().cloned() else {
                            return Err(
                                entry.error("write `complete(argument = path::to::completion_fn)`")
                            );
                        };
                        if entries.iter().any(|(seen, _)| *seen == arg) {
                            return Err(syn::Error::new_spanned(
                                &arg,
                                format!("`{arg}` has two completion fns; give each argument one"),
                            ));
                        }
                        entries.push((arg, entry.value()?.parse()?));
                        Ok(())
                    })?;
                    set_once(&mut attr.complete, entries, &key)
                }
                _ => Err(meta.error("this key is not supported here")),
            }
        });
        syn::parse::Parser::parse2(parser, args)?;
        Ok(attr)
    }
}

/// The keys of one parameter's `#[arg(...)]`.
#[derive(Default)]
pub struct ArgAttr {
    pub desc: Option<LitStr>,
    pub default: Option<Expr>,
    pub rename: Option<LitStr>,
    pub minimum: Option<Expr>,
    pub maximum: Option<Expr>,
    pub min_length: Option<Expr>,
    pub max_length: Option<Expr>,
    pub pattern: Option<LitStr>,
}

const ARG_KEYS: &str = "desc, default, rename, minimum, maximum, min_length, max_length, pattern";

/// What the attributes of one parameter say.
#[derive(Default)]
pub struct ParamAttrs {
    pub arg: ArgAttr,
    pub arg_span: Option<Span>,
    pub args: Option<Span>,
    pub extract: Option<Span>,
    pub doc: Vec<LitStr>,
}

impl ParamAttrs {
    /// Parse and remove our attributes from a parameter's attribute list.
    pub fn take(attrs: &mut Vec<Attribute>) -> syn::Result<ParamAttrs> {
        let mut out = ParamAttrs::default();
        let mut kept = Vec::new();
        for attr in attrs.drain(..) {
            let path = attr.path();
            if path.is_ident("arg") {
                set_once(&mut out.arg_span, path.get_ident().unwrap().span(), path)?;
                out.arg = parse_arg(&attr)?;
            } else if path.is_ident("args") {
                attr.meta.require_path_only()?;
                set_once(&mut out.args, path.get_ident().unwrap().span(), path)?;
            } else if path.is_ident("extract") {
                attr.meta.require_path_only()?;
                set_once(&mut out.extract, path.get_ident().unwrap().span(), path)?;
            } else if path.is_ident("doc") {
                if let syn::Meta::NameValue(nv) = &attr.meta
                    && let Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) = &nv.value
                {
                    out.doc.push(s.clone());
                }
            } else {
                kept.push(attr);
            }
        }
        *attrs = kept;
        Ok(out)
    }
}

fn parse_arg(attr: &Attribute) -> syn::Result<ArgAttr> {
    let mut arg = ArgAttr::default();
    attr.parse_nested_meta(|meta| {
        let key = meta.path.clone();
        let ident = key.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match ident.as_str() {
            "desc" | "description" => set_once(&mut arg.desc, meta.value()?.parse()?, &key),
            "default" => set_once(&mut arg.default, meta.value()?.parse()?, &key),
            "rename" => set_once(&mut arg.rename, meta.value()?.parse()?, &key),
            "minimum" => set_once(&mut arg.minimum, meta.value()?.parse()?, &key),
            "maximum" => set_once(&mut arg.maximum, meta.value()?.parse()?, &key),
            "min_length" | "min_items" => {
                set_once(&mut arg.min_length, meta.value()?.parse()?, &key)
            }
            "max_length" | "max_items" => {
                set_once(&mut arg.max_length, meta.value()?.parse()?, &key)
            }
            "pattern" => set_once(&mut arg.pattern, meta.value()?.parse()?, &key),
            _ => Err(meta.error(format!(
                "unknown key `{ident}` in #[arg]; expected one of: {ARG_KEYS}"
            ))),
        }
    })?;
    Ok(arg)
}

/// Join doc comment lines the way rustdoc shows them: one leading space stripped,
/// trailing blank lines dropped.
pub fn join_doc(lines: &[LitStr]) -> Option<String> {
    let text = lines
        .iter()
        .map(|l| {
            let v = l.value();
            v.strip_prefix(' ').map(str::to_string).unwrap_or(v)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let text = text.trim().to_string();
    (!text.is_empty()).then_some(text)
}
