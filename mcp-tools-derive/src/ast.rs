//! The parsed model of an annotated fn (`#[mcp_tool]`, `#[mcp_resource]`, `#[mcp_prompt]`):
//! which parameters are arguments, which one is an `#[args]` struct, which are extractors.

use syn::{FnArg, Ident, ItemFn, LitStr, Pat, Type};

use crate::attr::{ArgAttr, ItemAttr, Kind, ParamAttrs, join_doc};

/// How one parameter is filled in.
pub enum ParamKind {
    /// A property of the generated input schema (tools), a prompt argument (prompts) or a
    /// URI template variable (resources).
    Arg {
        attr: Box<ArgAttr>,
        doc: Vec<LitStr>,
    },
    /// The whole arguments object, deserialized into the user's struct.
    Args,
    /// Built from the request context via `FromContext`.
    Extractor,
}

pub struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: ParamKind,
}

/// One annotated fn.
pub struct AnnotatedFn {
    pub attr: ItemAttr,
    /// The fn with our attributes removed (emitted unchanged otherwise).
    pub item: ItemFn,
    pub params: Vec<Param>,
    pub doc: Option<Doc>,
}

/// The fn's doc comment: literal lines joined at expansion, or expressions (e.g.
/// `#[doc = concat!(...)]` from a macro) joined by `concat!` at compile time.
pub enum Doc {
    Text(String),
    Exprs(Vec<syn::Expr>),
}

/// The parameter types matched as extractors without `#[extract]`.
const EXTRACTOR_TYPES: [&str; 2] = ["State", "ToolContext"];

fn is_extractor_type(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|s| EXTRACTOR_TYPES.iter().any(|name| s.ident == name)),
        _ => false,
    }
}

/// `T` when `ty` is written `Option<T>` (matched on the last path segment).
pub fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

impl AnnotatedFn {
    /// Parse; every structural problem is a spanned error (collected by `valid.rs`).
    pub fn parse(attr: ItemAttr, mut item: ItemFn) -> syn::Result<AnnotatedFn> {
        let macro_name = attr.kind.attr();
        let doc_exprs: Vec<syn::Expr> = item
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .filter_map(|a| match &a.meta {
                syn::Meta::NameValue(nv) => Some(nv.value.clone()),
                _ => None,
            })
            .collect();
        let doc_lines: Option<Vec<LitStr>> = doc_exprs
            .iter()
            .map(|e| match e {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.clone()),
                _ => None,
            })
            .collect();
        let doc = match doc_lines {
            Some(lines) => join_doc(&lines).map(Doc::Text),
            None => Some(Doc::Exprs(doc_exprs)),
        };
        let mut params = Vec::new();
        let mut errors: Option<syn::Error> = None;
        let mut push_error = |e: syn::Error| match &mut errors {
            Some(all) => all.combine(e),
            None => errors = Some(e),
        };
        for input in item.sig.inputs.iter_mut() {
            let typed = match input {
                FnArg::Receiver(receiver) => {
                    push_error(syn::Error::new_spanned(
                        receiver,
                        format!(
                            "{macro_name} fns cannot take `self`; make it a free fn and pass shared data as `State<T>`"
                        ),
                    ));
                    continue;
                }
                FnArg::Typed(typed) => typed,
            };
            let attrs = match ParamAttrs::take(&mut typed.attrs) {
                Ok(attrs) => attrs,
                Err(e) => {
                    push_error(e);
                    continue;
                }
            };
            let ident = match &*typed.pat {
                Pat::Ident(pat) if pat.subpat.is_none() && pat.by_ref.is_none() => {
                    pat.ident.clone()
                }
                other => {
                    push_error(syn::Error::new_spanned(
                        other,
                        format!(
                            "{macro_name} parameters must be plain names (`name: Type`); destructure inside the fn body"
                        ),
                    ));
                    continue;
                }
            };
            let kind = if attrs.args.is_some() {
                ParamKind::Args
            } else if attrs.extract.is_some() || is_extractor_type(&typed.ty) {
                ParamKind::Extractor
            } else {
                ParamKind::Arg {
                    attr: Box::new(attrs.arg),
                    doc: attrs.doc,
                }
            };
            if let (Some(span), ParamKind::Args | ParamKind::Extractor) = (attrs.arg_span, &kind) {
                let what = match attr.kind {
                    Kind::Tool => "a schema property",
                    Kind::Resource => "a URI template variable",
                    Kind::Prompt => "a prompt argument",
                };
                push_error(syn::Error::new(
                    span,
                    format!(
                        "#[arg] describes {what}; it cannot go on an #[args] struct or an extractor"
                    ),
                ));
            }
            params.push(Param {
                ident,
                ty: (*typed.ty).clone(),
                kind,
            });
        }
        let own = &macro_name[2..macro_name.len() - 1];
        item.attrs.retain(|a| !a.path().is_ident(own));
        if let Some(errors) = errors {
            return Err(errors);
        }
        Ok(AnnotatedFn {
            attr,
            item,
            params,
            doc,
        })
    }

    /// The item's name: the `name` key or the fn's name.
    pub fn name(&self) -> String {
        self.attr
            .name
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| self.item.sig.ident.to_string())
    }
}

impl Param {
    /// The name the client uses: `#[arg(rename = ...)]` or the parameter's name (raw
    /// identifiers lose their `r#`).
    pub fn wire_name(&self) -> String {
        match &self.kind {
            ParamKind::Arg { attr, .. } if attr.rename.is_some() => {
                attr.rename.as_ref().map(LitStr::value).unwrap_or_default()
            }
            _ => {
                let name = self.ident.to_string();
                name.strip_prefix("r#").map(str::to_string).unwrap_or(name)
            }
        }
    }
}
