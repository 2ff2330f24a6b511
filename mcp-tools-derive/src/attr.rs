//! Parsing of the item attributes (`#[mcp_tool(...)]`, `#[mcp_resource(...)]`,
//! `#[mcp_prompt(...)]`) and of the parameter attributes `#[arg(...)]`, `#[args]` and
//! `#[extract]`.
//!
//! Every key is one row of a table ([`ITEM_KEYS`], [`ARG_KEYS`]): its name, the macros that
//! take it, its documentation (`docs/macro.md` is generated from the rows, see the tests),
//! and the fn that parses and checks its value. A bad key is reported and skipped, so the
//! rest of the attribute and the fn's signature are still checked.

use proc_macro2::{Span, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, LitBool, LitInt, LitStr, Token};

use crate::ctxt::Ctxt;
use crate::template;

/// Which macro is being expanded; decides the keys it accepts and the wording of errors.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Tool,
    Resource,
    Prompt,
}

use Kind::{Prompt, Resource, Tool};

impl Kind {
    /// The attribute as users write it, for messages.
    pub fn attr(self) -> &'static str {
        match self {
            Tool => "#[mcp_tool]",
            Resource => "#[mcp_resource]",
            Prompt => "#[mcp_prompt]",
        }
    }

    /// What the macro defines, for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Tool => "tool",
            Resource => "resource",
            Prompt => "prompt",
        }
    }
}

/// The keys of one item attribute, as parsed. Which keys are accepted depends on the
/// [`Kind`] (see [`ITEM_KEYS`]).
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
    /// `rate = "10/s burst 20"`: the rate, checked here with the runtime's grammar, and
    /// the literal's span.
    pub rate: Option<(mcp_toolbelt_names::rate::Rate, Span)>,
    /// `task = "optional" | "required"`: the variant of `TaskSupport`.
    pub task: Option<(syn::Ident, Span)>,
    /// `audit_keep = ["field", …]`: fields of the tool's `#[args]` struct the audit log
    /// writes as they are.
    pub audit_keep: Option<Vec<LitStr>>,
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

/// Parses (and checks) one key's value into the attribute.
type ParseItemKey = fn(&ParseNestedMeta, &mut ItemAttr, &Ctxt) -> syn::Result<()>;

/// One key of `#[mcp_tool]`, `#[mcp_resource]` or `#[mcp_prompt]`.
pub struct ItemKey {
    pub name: &'static str,
    /// How the key is written, for the docs.
    pub syntax: &'static str,
    /// The macros that take it.
    pub kinds: &'static [Kind],
    /// What it means (read by the test that writes the docs' key table).
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
    /// What applies without it (read by the test that writes the docs' key table).
    #[cfg_attr(not(test), allow(dead_code))]
    pub default: &'static str,
    parse: ParseItemKey,
}

const ALL: &[Kind] = &[Tool, Resource, Prompt];

/// Every item key, in the order the docs list them.
pub const ITEM_KEYS: &[ItemKey] = &[
    ItemKey {
        name: "name",
        syntax: "name = \"...\"",
        kinds: ALL,
        doc: "the name clients call it by; tools and prompts: 1–128 chars of `[A-Za-z0-9_.-]`, checked at compile time",
        default: "the fn's name",
        parse: |meta, attr, _| value(meta, &mut attr.name),
    },
    ItemKey {
        name: "nonportable_name",
        syntax: "nonportable_name",
        kinds: &[Tool],
        doc: "allow a name with `.` or over 64 chars (several clients reject those)",
        default: "off",
        parse: |meta, attr, _| flag(meta, &mut attr.nonportable_name),
    },
    ItemKey {
        name: "title",
        syntax: "title = \"...\"",
        kinds: ALL,
        doc: "human-readable title",
        default: "none",
        parse: |meta, attr, _| value(meta, &mut attr.title),
    },
    ItemKey {
        name: "description",
        syntax: "description = \"...\"",
        kinds: ALL,
        doc: "text shown to models",
        default: "the fn's doc comment",
        parse: |meta, attr, _| value(meta, &mut attr.description),
    },
    ItemKey {
        name: "description_file",
        syntax: "description_file = \"path.md\"",
        kinds: ALL,
        doc: "description read from a file relative to the crate root (`include_str!`)",
        default: "—",
        parse: |meta, attr, _| value(meta, &mut attr.description_file),
    },
    ItemKey {
        name: "permissions",
        syntax: "permissions = [\"A\", CONST]",
        kinds: ALL,
        doc: "permissions a caller needs: string literals or `&str` consts",
        default: "none (always available)",
        parse: |meta, attr, _| list(meta, &mut attr.permissions),
    },
    ItemKey {
        name: "category",
        syntax: "category = \"...\"",
        kinds: &[Tool],
        doc: "domain, used for grouping, CLI groups and error actions",
        default: "the name's prefix before the first `_`",
        parse: |meta, attr, _| value(meta, &mut attr.category),
    },
    ItemKey {
        name: "tags",
        syntax: "tags = [\"...\"]",
        kinds: &[Tool],
        doc: "free-form tags (registry selection by tag)",
        default: "none",
        parse: |meta, attr, _| list(meta, &mut attr.tags),
    },
    ItemKey {
        name: "read_only",
        syntax: "read_only",
        kinds: &[Tool],
        doc: "MCP annotation hint: the tool changes nothing; the bare key means `true`, `read_only = false` says so explicitly",
        default: "unset",
        parse: |meta, attr, _| hint(meta, &mut attr.read_only),
    },
    ItemKey {
        name: "destructive",
        syntax: "destructive",
        kinds: &[Tool],
        doc: "MCP annotation hint: the tool may destroy data (clients assume so of a tool that is not read-only unless told `destructive = false`)",
        default: "unset",
        parse: |meta, attr, _| hint(meta, &mut attr.destructive),
    },
    ItemKey {
        name: "idempotent",
        syntax: "idempotent",
        kinds: &[Tool],
        doc: "MCP annotation hint: repeating a call has no further effect",
        default: "unset",
        parse: |meta, attr, _| hint(meta, &mut attr.idempotent),
    },
    ItemKey {
        name: "open_world",
        syntax: "open_world",
        kinds: &[Tool],
        doc: "MCP annotation hint: the tool reaches outside systems",
        default: "unset",
        parse: |meta, attr, _| hint(meta, &mut attr.open_world),
    },
    ItemKey {
        name: "timeout_ms",
        syntax: "timeout_ms = N",
        kinds: &[Tool],
        doc: "time budget of one call → `Error (timeout)`",
        default: "the registry's default, if any",
        parse: |meta, attr, _| value(meta, &mut attr.timeout_ms),
    },
    ItemKey {
        name: "max_concurrency",
        syntax: "max_concurrency = N",
        kinds: &[Tool],
        doc: "at most N calls at once (`1` serializes the tool)",
        default: "unlimited",
        parse: |meta, attr, cx| {
            let limit: LitInt = meta.value()?.parse()?;
            if limit.base10_parse::<usize>().is_ok_and(|n| n == 0) {
                cx.error_at(
                    limit.span(),
                    "max_concurrency must be at least 1 (1 serializes the tool)",
                );
            }
            attr.max_concurrency = Some(limit);
            Ok(())
        },
    },
    ItemKey {
        name: "audit_keep",
        syntax: "audit_keep = [\"field\", ...]",
        kinds: &[Tool],
        doc: "fields of the tool's `#[args]` struct whose values the audit log writes as they are (`serve --audit-log`), by their names in the input schema; a name the schema lacks fails the registry's build. A tool with plain parameters marks them `#[arg(audit = \"keep\")]` instead. For values safe to keep (ids, regions), never secrets or personal data",
        default: "none (the arguments reach the log only in their digest)",
        parse: |meta, attr, _| list(meta, &mut attr.audit_keep),
    },
    ItemKey {
        name: "rate",
        syntax: "rate = \"10/s burst 20\"",
        kinds: &[Tool],
        doc: "at most this many calls per caller (`COUNT/PERIOD`, units ms, s, min, h, d; optional `burst N`, default the count); past it a call is refused with the time to retry; a server's rate-limits file overrides it (`docs/rate-limits.md`)",
        default: "unlimited",
        parse: |meta, attr, cx| {
            let rate: LitStr = meta.value()?.parse()?;
            match mcp_toolbelt_names::rate::parse(&rate.value()) {
                Ok(parsed) => attr.rate = Some((parsed, rate.span())),
                Err(problem) => cx.error_at(rate.span(), format!("rate: {problem}")),
            }
            Ok(())
        },
    },
    ItemKey {
        name: "task",
        syntax: "task = \"optional\"/\"required\"",
        kinds: &[Tool],
        doc: "calls may (`optional`) or must (`required`) run as tasks of the MCP tasks extension: the client gets a handle and polls for the result",
        default: "never a task",
        parse: |meta, attr, cx| {
            let support: LitStr = meta.value()?.parse()?;
            let variant = match support.value().as_str() {
                "optional" => "Optional",
                "required" => "Required",
                "forbidden" => "Forbidden",
                other => {
                    cx.error_at(
                        support.span(),
                        format!(
                            "task = {other:?} is not a task support; write `task = \"optional\"` \
                             (a task when the client can take one) or `task = \"required\"`"
                        ),
                    );
                    return Ok(());
                }
            };
            attr.task = Some((syn::Ident::new(variant, support.span()), support.span()));
            Ok(())
        },
    },
    ItemKey {
        name: "cli_category",
        syntax: "cli_category = \"...\"",
        kinds: &[Tool],
        doc: "the command group of the generated command line",
        default: "the category",
        parse: |meta, attr, _| value(meta, &mut attr.cli_category),
    },
    ItemKey {
        name: "cli_name",
        syntax: "cli_name = \"...\"",
        kinds: &[Tool],
        doc: "the command's name in its group",
        default: "the rest of the name",
        parse: |meta, attr, _| value(meta, &mut attr.cli_name),
    },
    ItemKey {
        name: "hidden_from_cli",
        syntax: "hidden_from_cli",
        kinds: &[Tool],
        doc: "no command for this tool (still served and callable with `call`)",
        default: "shown",
        parse: |meta, attr, _| flag(meta, &mut attr.hidden_from_cli),
    },
    ItemKey {
        name: "uri",
        syntax: "uri = \"scheme://path\"",
        kinds: &[Resource],
        doc: "the URI of one resource",
        default: "—",
        parse: |meta, attr, cx| {
            let uri: LitStr = meta.value()?.parse()?;
            if let Some(problem) = template::uri_problem(&uri.value()) {
                cx.error_at(uri.span(), problem);
            }
            attr.uri = Some(uri);
            Ok(())
        },
    },
    ItemKey {
        name: "uri_template",
        syntax: "uri_template = \"scheme://path/{var}\"",
        kinds: &[Resource],
        doc: "a family of resources; each `{var}` is a parameter of the fn",
        default: "—",
        parse: |meta, attr, _| value(meta, &mut attr.uri_template),
    },
    ItemKey {
        name: "mime_type",
        syntax: "mime_type = \"type/subtype\"",
        kinds: &[Resource],
        doc: "the contents' MIME type",
        default: "none",
        parse: |meta, attr, cx| {
            let mime: LitStr = meta.value()?.parse()?;
            if !mime.value().contains('/') {
                cx.error_at(
                    mime.span(),
                    "mime_type must look like `type/subtype`, e.g. \"text/plain\" or \"image/png\"",
                );
            }
            attr.mime_type = Some(mime);
            Ok(())
        },
    },
    ItemKey {
        name: "complete",
        syntax: "complete(arg = path::to::fn)",
        kinds: &[Resource, Prompt],
        doc: "the completion fn of each argument",
        default: "none",
        parse: |meta, attr, cx| {
            let mut entries: Vec<(Ident, syn::Path)> = Vec::new();
            meta.parse_nested_meta(|entry| {
                let Some(arg) = entry.path.get_ident().cloned() else {
                    return Err(entry.error("write `complete(argument = path::to::completion_fn)`"));
                };
                let path = entry.value()?.parse()?;
                if entries.iter().any(|(seen, _)| *seen == arg) {
                    cx.error_spanned_by(
                        &arg,
                        format!("`{arg}` has two completion fns; give each argument one"),
                    );
                } else {
                    entries.push((arg, path));
                }
                Ok(())
            })?;
            attr.complete = Some(entries);
            Ok(())
        },
    },
];

fn value<T: Parse>(meta: &ParseNestedMeta, slot: &mut Option<T>) -> syn::Result<()> {
    *slot = Some(meta.value()?.parse()?);
    Ok(())
}

/// A key whose value is a bracketed list, `key = [a, b]`.
fn list<T: Parse>(meta: &ParseNestedMeta, slot: &mut Option<Vec<T>>) -> syn::Result<()> {
    let input = meta.value()?;
    let content;
    syn::bracketed!(content in input);
    let items: Punctuated<T, Token![,]> = Punctuated::parse_terminated(&content)?;
    *slot = Some(items.into_iter().collect());
    Ok(())
}

/// A key without a value.
fn flag(meta: &ParseNestedMeta, slot: &mut Option<Span>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!("`{}` takes no value", key_name(&meta.path))));
    }
    *slot = Some(
        meta.path
            .get_ident()
            .map_or_else(Span::call_site, Ident::span),
    );
    Ok(())
}

/// An annotation hint: the bare key means `true`; `key = false` says so explicitly.
fn hint(meta: &ParseNestedMeta, slot: &mut Option<LitBool>) -> syn::Result<()> {
    let value = if meta.input.peek(Token![=]) {
        meta.value()?.parse()?
    } else {
        LitBool::new(
            true,
            meta.path
                .get_ident()
                .map_or_else(Span::call_site, Ident::span),
        )
    };
    *slot = Some(value);
    Ok(())
}

fn key_name(path: &syn::Path) -> String {
    path.get_ident()
        .map_or_else(|| quote::quote!(#path).to_string(), Ident::to_string)
}

/// After a bad key: skip its value, up to the next `,` at this level.
fn skip_value(input: ParseStream) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tree, next)) = rest.token_tree() {
            if matches!(&tree, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

/// Parse a comma-separated key list with `one`, reporting each bad key and going on.
fn parse_keys(
    cx: &Ctxt,
    tokens: proc_macro2::TokenStream,
    mut one: impl FnMut(&ParseNestedMeta) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        if let Err(err) = one(&meta) {
            cx.syn_error(err);
            skip_value(meta.input)?;
        }
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, tokens) {
        cx.syn_error(err);
    }
}

/// A key's value did not parse: say how the key is written.
fn how_to_write(err: syn::Error, syntax: &str) -> syn::Error {
    syn::Error::new(err.span(), format!("{err}; write `{syntax}`"))
}

/// The keys of `kind`, for messages.
fn key_list(kind: Kind) -> String {
    ITEM_KEYS
        .iter()
        .filter(|key| key.kinds.contains(&kind))
        .map(|key| key.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ItemAttr {
    /// Parse the attribute's keys; every problem goes to `cx`.
    pub fn parse(cx: &Ctxt, kind: Kind, args: proc_macro2::TokenStream) -> ItemAttr {
        let mut attr = ItemAttr {
            kind,
            name: None,
            title: None,
            description: None,
            description_file: None,
            permissions: None,
            category: None,
            tags: None,
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
            timeout_ms: None,
            task: None,
            max_concurrency: None,
            rate: None,
            audit_keep: None,
            cli_category: None,
            cli_name: None,
            hidden_from_cli: None,
            nonportable_name: None,
            uri: None,
            uri_template: None,
            mime_type: None,
            complete: None,
        };
        let mut seen: Vec<&'static str> = Vec::new();
        parse_keys(cx, args, |meta| {
            let name = key_name(&meta.path);
            let Some(key) = ITEM_KEYS
                .iter()
                .find(|key| key.name == name && key.kinds.contains(&kind))
            else {
                let elsewhere = ITEM_KEYS.iter().find(|key| key.name == name).map(|key| {
                    let attrs: Vec<&str> = key.kinds.iter().map(|k| k.attr()).collect();
                    format!(" (it is a key of {})", attrs.join(" and "))
                });
                return Err(meta.error(format!(
                    "unknown key `{name}` in {}{}; expected one of: {}",
                    kind.attr(),
                    elsewhere.unwrap_or_default(),
                    key_list(kind)
                )));
            };
            if seen.contains(&key.name) {
                return Err(syn::Error::new_spanned(
                    &meta.path,
                    format!("duplicate key `{name}`; give each key once"),
                ));
            }
            seen.push(key.name);
            (key.parse)(meta, &mut attr, cx).map_err(|err| how_to_write(err, key.syntax))
        });
        attr
    }
}

/// The argument types an `#[arg]` key applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fits {
    Any,
    Number,
    Text,
    TextOrList,
    /// Strings, integers and booleans (the macro tells floats from integers by name).
    Scalar,
}

/// The shape of an argument's type, as far as the macro can see it (`Option<T>` is `T`'s).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    Number,
    Text,
    List,
    Bool,
    /// A type the macro cannot see through (a user type, an alias): the build checks that
    /// its constraints reached the schema.
    Opaque,
}

impl Fits {
    /// Whether a key with this fit applies to `shape` (always, for opaque types).
    pub fn admits(self, shape: Shape) -> bool {
        match self {
            Fits::Any => true,
            Fits::Number => matches!(shape, Shape::Number | Shape::Opaque),
            Fits::Text => matches!(shape, Shape::Text | Shape::Opaque),
            Fits::TextOrList => matches!(shape, Shape::Text | Shape::List | Shape::Opaque),
            Fits::Scalar => matches!(
                shape,
                Shape::Number | Shape::Text | Shape::Bool | Shape::Opaque
            ),
        }
    }

    /// The types it applies to, for messages and docs.
    pub fn what(self) -> &'static str {
        match self {
            Fits::Any => "any argument",
            Fits::Number => "numbers",
            Fits::Text => "strings",
            Fits::TextOrList => "strings (characters) and lists (items)",
            Fits::Scalar => "strings, integers and booleans",
        }
    }
}

/// The keys of one parameter's `#[arg(...)]`, as parsed.
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
    pub header: Option<LitStr>,
    pub audit: Option<LitStr>,
    /// Each key given, with the span of its name.
    pub given: Vec<(&'static ArgKey, Span)>,
}

/// One key of `#[arg(...)]`.
pub struct ArgKey {
    pub name: &'static str,
    /// Other spellings of the key.
    pub aliases: &'static [&'static str],
    /// How the key is written, for the docs.
    pub syntax: &'static str,
    /// The macros whose arguments take it.
    pub kinds: &'static [Kind],
    /// What it means (read by the test that writes the docs' key table).
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
    /// The argument types it applies to.
    pub fits: Fits,
    /// The key doing the same job for the other shape (`minimum` ↔ `min_length`).
    pub counterpart: Option<&'static str>,
    /// The JSON Schema keywords it becomes (checked at build time for opaque types).
    pub schema_keywords: &'static [&'static str],
    parse: fn(&ParseNestedMeta, &mut ArgAttr) -> syn::Result<()>,
}

/// Every `#[arg]` key, in the order the docs list them.
pub const ARG_KEYS: &[ArgKey] = &[
    ArgKey {
        name: "desc",
        aliases: &["description"],
        syntax: "desc = \"...\"",
        kinds: &[Tool, Prompt],
        doc: "the argument's description (a `/// doc comment` on the parameter does the same)",
        fits: Fits::Any,
        counterpart: None,
        schema_keywords: &[],
        parse: |meta, arg| value(meta, &mut arg.desc),
    },
    ArgKey {
        name: "default",
        aliases: &[],
        syntax: "default = expr",
        kinds: &[Tool, Prompt],
        doc: "makes the argument optional; the value is used when it is absent and shown in the schema",
        fits: Fits::Any,
        counterpart: None,
        schema_keywords: &[],
        parse: |meta, arg| value(meta, &mut arg.default),
    },
    ArgKey {
        name: "rename",
        aliases: &[],
        syntax: "rename = \"wire_name\"",
        kinds: ALL,
        doc: "the name clients use (schema property, prompt argument or URI template variable)",
        fits: Fits::Any,
        counterpart: None,
        schema_keywords: &[],
        parse: |meta, arg| value(meta, &mut arg.rename),
    },
    ArgKey {
        name: "minimum",
        aliases: &[],
        syntax: "minimum = a",
        kinds: &[Tool],
        doc: "smallest value allowed",
        fits: Fits::Number,
        counterpart: Some("min_length"),
        schema_keywords: &["minimum"],
        parse: |meta, arg| value(meta, &mut arg.minimum),
    },
    ArgKey {
        name: "maximum",
        aliases: &[],
        syntax: "maximum = b",
        kinds: &[Tool],
        doc: "largest value allowed",
        fits: Fits::Number,
        counterpart: Some("max_length"),
        schema_keywords: &["maximum"],
        parse: |meta, arg| value(meta, &mut arg.maximum),
    },
    ArgKey {
        name: "min_length",
        aliases: &["min_items"],
        syntax: "min_length = a",
        kinds: &[Tool],
        doc: "fewest characters of a string, or items of a list",
        fits: Fits::TextOrList,
        counterpart: Some("minimum"),
        schema_keywords: &["minLength", "minItems"],
        parse: |meta, arg| value(meta, &mut arg.min_length),
    },
    ArgKey {
        name: "max_length",
        aliases: &["max_items"],
        syntax: "max_length = b",
        kinds: &[Tool],
        doc: "most characters of a string, or items of a list",
        fits: Fits::TextOrList,
        counterpart: Some("maximum"),
        schema_keywords: &["maxLength", "maxItems"],
        parse: |meta, arg| value(meta, &mut arg.max_length),
    },
    ArgKey {
        name: "pattern",
        aliases: &[],
        syntax: "pattern = \"regex\"",
        kinds: &[Tool],
        doc: "a regular expression the string must match",
        fits: Fits::Text,
        counterpart: None,
        schema_keywords: &["pattern"],
        parse: |meta, arg| value(meta, &mut arg.pattern),
    },
    ArgKey {
        name: "header",
        aliases: &[],
        syntax: "header = \"Name\"",
        kinds: &[Tool],
        doc: "mirrors the argument into the HTTP header `Mcp-Param-Name` (SEP-2243, `x-mcp-header` in the schema) for proxies to route on; on 2026-07-28 the server refuses a call whose header and argument differ. An HTTP token, unique per tool ignoring case; an `Option` argument is then absent or a value, never `null`",
        fits: Fits::Scalar,
        counterpart: None,
        schema_keywords: &[],
        parse: |meta, arg| value(meta, &mut arg.header),
    },
    ArgKey {
        name: "audit",
        aliases: &[],
        syntax: "audit = \"keep\"",
        kinds: &[Tool],
        doc: "writes the argument's value as it is under `arguments` in the audit log's line for each call (`serve --audit-log`); without it an argument reaches the log only inside the arguments' SHA-256 digest. For values safe to keep (ids, regions), never secrets or personal data",
        fits: Fits::Any,
        counterpart: None,
        schema_keywords: &[],
        parse: |meta, arg| value(meta, &mut arg.audit),
    },
];

impl ArgKey {
    fn called(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

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
    /// Parse and remove our attributes from a parameter's attribute list; every problem
    /// goes to `cx`.
    pub fn take(cx: &Ctxt, attrs: &mut Vec<Attribute>) -> ParamAttrs {
        let mut out = ParamAttrs::default();
        let mut kept = Vec::new();
        for attr in attrs.drain(..) {
            let path = attr.path();
            let marker = |slot: &mut Option<Span>| {
                if let Err(err) = attr.meta.require_path_only() {
                    cx.syn_error(err);
                }
                once(cx, slot, path);
            };
            if path.is_ident("arg") {
                once(cx, &mut out.arg_span, path);
                parse_arg(cx, &attr, &mut out.arg);
            } else if path.is_ident("args") {
                marker(&mut out.args);
            } else if path.is_ident("extract") {
                marker(&mut out.extract);
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
        out
    }
}

/// Record a parameter marker, or report it repeated.
fn once(cx: &Ctxt, slot: &mut Option<Span>, path: &syn::Path) {
    if slot.is_some() {
        cx.error_spanned_by(
            path,
            format!("duplicate #[{}]; give it once", key_name(path)),
        );
    }
    *slot = Some(path.get_ident().map_or_else(Span::call_site, Ident::span));
}

fn parse_arg(cx: &Ctxt, attr: &Attribute, arg: &mut ArgAttr) {
    let tokens = match attr.meta.require_list() {
        Ok(list) => list.tokens.clone(),
        Err(err) => return cx.syn_error(err),
    };
    parse_keys(cx, tokens, |meta| {
        let name = key_name(&meta.path);
        let Some(key) = ARG_KEYS.iter().find(|key| key.called(&name)) else {
            let keys: Vec<&str> = ARG_KEYS.iter().map(|key| key.name).collect();
            return Err(meta.error(format!(
                "unknown key `{name}` in #[arg]; expected one of: {}",
                keys.join(", ")
            )));
        };
        if arg.given.iter().any(|(seen, _)| seen.name == key.name) {
            return Err(syn::Error::new_spanned(
                &meta.path,
                format!("duplicate key `{name}`; give each key once"),
            ));
        }
        (key.parse)(meta, arg).map_err(|err| how_to_write(err, key.syntax))?;
        arg.given
            .push((key, syn::spanned::Spanned::span(&meta.path)));
        Ok(())
    });
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

/// `docs/macro.md`'s key tables are written from [`ITEM_KEYS`] and [`ARG_KEYS`]: run
/// `MCP_TOOLBELT_DOCS=overwrite cargo test -p mcp-toolbelt-derive` after changing a row.
#[cfg(test)]
mod docs {
    use super::*;

    const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/macro.md");

    fn item_table(kind: Kind) -> String {
        let mut table = String::from("| key | meaning | default |\n|---|---|---|\n");
        for key in ITEM_KEYS.iter().filter(|key| key.kinds.contains(&kind)) {
            table += &format!("| `{}` | {} | {} |\n", key.syntax, key.doc, key.default);
        }
        table
    }

    fn arg_table() -> String {
        let mut table = String::from("| key | meaning | applies to |\n|---|---|---|\n");
        for key in ARG_KEYS {
            let aliases: String = key
                .aliases
                .iter()
                .map(|alias| format!(" (or `{alias}`)"))
                .collect();
            let kinds: Vec<&str> = key.kinds.iter().map(|kind| kind.attr()).collect();
            table += &format!(
                "| `{}`{aliases} | {} | {} of {} |\n",
                key.syntax,
                key.doc,
                key.fits.what(),
                kinds.join(", ")
            );
        }
        table
    }

    /// `text` with the block between `<!-- table: {name} -->` and `<!-- end table -->`
    /// replaced by `table`.
    fn replace_block(text: &str, name: &str, table: &str) -> String {
        let start_marker = format!("<!-- table: {name} -->\n");
        let start = text
            .find(&start_marker)
            .expect("table marker in docs/macro.md")
            + start_marker.len();
        let end = start
            + text[start..]
                .find("<!-- end table -->")
                .expect("end marker");
        format!("{}{table}{}", &text[..start], &text[end..])
    }

    #[test]
    fn key_tables_match_the_docs() {
        // The published package has no docs/ (it is the repository's): there the tables
        // were checked before publishing. In the repository the file must be there.
        let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let in_repository = std::fs::read_to_string(workspace)
            .is_ok_and(|manifest| manifest.contains("\"mcp-tools-derive\""));
        if !in_repository {
            return;
        }
        let text = std::fs::read_to_string(DOC).expect("docs/macro.md in the repository");
        let mut expected = replace_block(&text, "tool keys", &item_table(Kind::Tool));
        expected = replace_block(&expected, "arg keys", &arg_table());
        if std::env::var_os("MCP_TOOLBELT_DOCS").is_some_and(|v| v == "overwrite") {
            std::fs::write(DOC, &expected).unwrap();
        } else {
            assert!(
                text == expected,
                "docs/macro.md's key tables differ from the key tables in attr.rs; run MCP_TOOLBELT_DOCS=overwrite cargo test -p mcp-toolbelt-derive"
            );
        }
    }

    #[test]
    fn every_key_is_in_a_table_once() {
        let mut names: Vec<&str> = ITEM_KEYS.iter().map(|key| key.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ITEM_KEYS.len());
        assert!(
            ITEM_KEYS
                .iter()
                .all(|key| !key.kinds.is_empty() && !key.doc.is_empty())
        );
        assert!(
            ARG_KEYS
                .iter()
                .all(|key| !key.kinds.is_empty() && !key.doc.is_empty())
        );
    }
}
