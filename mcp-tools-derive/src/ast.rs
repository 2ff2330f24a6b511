//! The parsed model of an annotated fn (`#[mcp_tool]`, `#[mcp_resource]`, `#[mcp_prompt]`):
//! which parameters are arguments, which one is an `#[args]` struct, which are extractors.

use syn::{FnArg, GenericArgument, Ident, ItemFn, LitStr, Pat, PathArguments, Type};

use crate::attr::{ArgAttr, ItemAttr, Kind, ParamAttrs, Shape, join_doc};
use crate::ctxt::Ctxt;

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
    /// The parameters that parsed (a `self` or pattern parameter is only an error).
    pub params: Vec<Param>,
    pub doc: Option<Doc>,
}

/// The fn's doc comment: literal lines joined at expansion, or expressions (e.g.
/// `#[doc = concat!(...)]` from a macro) joined by `concat!` at compile time.
pub enum Doc {
    Text(String),
    Exprs(Vec<syn::Expr>),
}

/// The extractor rule: a type written `State<…>` (one type argument), `ToolContext` or
/// `Caller`, bare or under `mcp_toolbelt::` / `::mcp_toolbelt::` (or the user's rename of
/// the runtime). A type of another path (`crate::State`), or a `State` without a type
/// argument (a user's `enum State`), is an argument.
pub fn is_extractor_type(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    if path.qself.is_some() {
        return false;
    }
    let segments: Vec<_> = path.path.segments.iter().collect();
    let last = match segments.as_slice() {
        [only] if path.path.leading_colon.is_none() => only,
        [krate, .., last]
            if krate.ident == "mcp_toolbelt" || krate.ident == crate::runtime::name() =>
        {
            last
        }
        _ => return false,
    };
    if last.ident == "ToolContext" || last.ident == "Caller" {
        return last.arguments.is_none();
    }
    last.ident == "State" && single_type_argument(&last.arguments).is_some()
}

fn single_type_argument(arguments: &PathArguments) -> Option<&Type> {
    match arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// `T` when `ty` is written `<name><T>` (`Option<T>`, `Vec<T>`; matched on the last path
/// segment).
fn wrapped<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    single_type_argument(&last.arguments)
}

/// `T` when `ty` is written `Option<T>`.
pub fn option_inner(ty: &Type) -> Option<&Type> {
    wrapped(ty, "Option")
}

/// True for `Vec<T>`, the list type the optional-parameter rule defaults to `[]`.
pub fn is_vec(ty: &Type) -> bool {
    wrapped(ty, "Vec").is_some()
}

/// True for `f32` and `f64`, through `Option<…>`: numbers no header may carry.
pub fn is_float(ty: &Type) -> bool {
    let ty = option_inner(ty).unwrap_or(ty);
    matches!(ty, Type::Path(p) if p.qself.is_none() && (p.path.is_ident("f32") || p.path.is_ident("f64")))
}

/// True for `bool`, the type the optional-parameter rule defaults to `false`.
pub fn is_bool(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("bool"))
}

const NUMBERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64",
];
const TEXTS: &[&str] = &["String", "str", "char"];
const LISTS: &[&str] = &[
    "Vec",
    "VecDeque",
    "HashSet",
    "BTreeSet",
    "IndexSet",
    "LinkedList",
];

/// The shape of an argument's type as written (`Option<T>` has `T`'s).
pub fn shape(ty: &Type) -> Shape {
    if let Some(inner) = option_inner(ty) {
        return shape(inner);
    }
    match ty {
        Type::Array(_) | Type::Slice(_) => Shape::List,
        Type::Paren(inner) => shape(&inner.elem),
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return Shape::Opaque;
            };
            let name = last.ident.to_string();
            let bare = last.arguments.is_none();
            if bare && NUMBERS.contains(&name.as_str()) {
                Shape::Number
            } else if bare && TEXTS.contains(&name.as_str()) {
                Shape::Text
            } else if bare && name == "bool" {
                Shape::Bool
            } else if !bare && LISTS.contains(&name.as_str()) {
                Shape::List
            } else {
                Shape::Opaque
            }
        }
        _ => Shape::Opaque,
    }
}

impl AnnotatedFn {
    /// Parse; every structural problem goes to `cx` and the parameter is left out.
    pub fn parse(cx: &Ctxt, attr: ItemAttr, mut item: ItemFn) -> AnnotatedFn {
        let macro_name = attr.kind.attr();
        let doc = fn_doc(&item);
        let mut params = Vec::new();
        for input in item.sig.inputs.iter_mut() {
            let typed = match input {
                FnArg::Receiver(receiver) => {
                    cx.error_spanned_by(
                        &*receiver,
                        format!(
                            "{macro_name} fns cannot take `self`; make it a free fn and pass shared data as `State<T>`"
                        ),
                    );
                    continue;
                }
                FnArg::Typed(typed) => typed,
            };
            let attrs = ParamAttrs::take(cx, &mut typed.attrs);
            let ident = match &*typed.pat {
                Pat::Ident(pat) if pat.subpat.is_none() && pat.by_ref.is_none() => {
                    pat.ident.clone()
                }
                other => {
                    cx.error_spanned_by(
                        other,
                        format!(
                            "{macro_name} parameters must be plain names (`name: Type`); destructure inside the fn body"
                        ),
                    );
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
                cx.error_at(
                    span,
                    format!(
                        "#[arg] describes {what}; it cannot go on an #[args] struct or an extractor"
                    ),
                );
            }
            params.push(Param {
                ident,
                ty: (*typed.ty).clone(),
                kind,
            });
        }
        let own = &macro_name[2..macro_name.len() - 1];
        item.attrs.retain(|a| !a.path().is_ident(own));
        AnnotatedFn {
            attr,
            item,
            params,
            doc,
        }
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

fn fn_doc(item: &ItemFn) -> Option<Doc> {
    let exprs: Vec<syn::Expr> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect();
    let lines: Option<Vec<LitStr>> = exprs
        .iter()
        .map(|e| match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.clone()),
            _ => None,
        })
        .collect();
    match lines {
        Some(lines) => join_doc(&lines).map(Doc::Text),
        None => Some(Doc::Exprs(exprs)),
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

    /// True when a client may leave this argument out: `Option<T>`, `#[arg(default)]`, and
    /// (the defaulted types) `Vec<T>` and `bool`.
    pub fn optional(&self) -> bool {
        match &self.kind {
            ParamKind::Arg { attr, .. } => {
                attr.default.is_some()
                    || option_inner(&self.ty).is_some()
                    || is_vec(&self.ty)
                    || is_bool(&self.ty)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        syn::parse_str(text).unwrap()
    }

    #[test]
    fn extractors_are_recognised_by_how_they_are_written() {
        for extractor in [
            "State<Db>",
            "mcp_toolbelt::State<Db>",
            "::mcp_toolbelt::State<crate::Db>",
            "mcp_toolbelt::context::State<Db>",
            "ToolContext",
            "mcp_toolbelt::ToolContext",
            "Caller",
            "mcp_toolbelt::Caller",
            "::mcp_toolbelt::Caller",
        ] {
            assert!(is_extractor_type(&ty(extractor)), "{extractor}");
        }
        for argument in [
            "State",
            "crate::State<u32>",
            "model::State<u32>",
            "State<A, B>",
            "ToolContext<u8>",
            "&ToolContext",
            "Option<State<Db>>",
            "&Caller",
            "Option<Caller>",
            "Caller<u8>",
            "auth::Caller",
            "String",
        ] {
            assert!(!is_extractor_type(&ty(argument)), "{argument}");
        }
    }

    #[test]
    fn shapes_see_through_option() {
        assert_eq!(shape(&ty("u32")), Shape::Number);
        assert_eq!(shape(&ty("Option<f64>")), Shape::Number);
        assert_eq!(shape(&ty("String")), Shape::Text);
        assert_eq!(shape(&ty("Option<Vec<u8>>")), Shape::List);
        assert_eq!(
            shape(&ty("std::collections::BTreeSet<String>")),
            Shape::List
        );
        assert_eq!(shape(&ty("[u8; 4]")), Shape::List);
        assert_eq!(shape(&ty("bool")), Shape::Bool);
        for opaque in ["Count", "Point", "serde_json::Value", "Vec", "String<u8>"] {
            assert_eq!(shape(&ty(opaque)), Shape::Opaque, "{opaque}");
        }
    }
}
