//! # mcp-toolbelt
//!
//! Build MCP (Model Context Protocol) servers out of annotated async functions.
//!
//! `#[mcp_tool]` on an `async fn` generates the tool's JSON input schema, its metadata and
//! its registration; every annotated fn linked into the binary is collected at link time.
//! A [`ToolRegistry`] filters tools by permission, validates arguments against the schema
//! before the fn runs, dispatches through timeouts, concurrency limits and panic capture,
//! and turns every failure into a clear `Error (kind): …` result.
//!
//! ```rust,standalone_crate
//! use mcp_toolbelt::{mcp_tool, Json, State, ToolContext, ToolError, ToolRegistry};
//!
//! struct Greeter { greeting: String }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Greeting { text: String, length: usize }
//!
//! /// Greet someone by name.
//! #[mcp_tool(name = "greet", read_only)]
//! async fn greet(
//!     greeter: State<Greeter>,
//!     /// Who to greet
//!     name: String,
//! ) -> Result<Json<Greeting>, ToolError> {
//!     if name.is_empty() {
//!         return Err(ToolError::validation("name must not be empty"));
//!     }
//!     let text = format!("{}, {name}!", greeter.greeting);
//!     Ok(Json(Greeting { length: text.len(), text }))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::builder()
//!     .state(Greeter { greeting: "Hello".into() })
//!     .build()
//!     .unwrap();
//! let result = registry
//!     .call_tool(GREET_TOOL, serde_json::json!({"name": "Ada"}), ToolContext::default())
//!     .await
//!     .unwrap();
//! assert_eq!(result.structured_content().unwrap()["text"], "Hello, Ada!");
//! # });
//! ```
//!
//! The server layer (feature `server`, on by default) serves a registry over stdio, TCP
//! and Unix sockets through `rmcp`, and over streamable HTTP with the `http` feature. See
//! `docs/architecture.md` for the path of one call through the code.
//!
//! ## Features
//! | feature | what it adds | brings in |
//! |---|---|---|
//! | *(none)* | `#[mcp_tool]`, [`ToolRegistry`], validation, middleware: a tools library | schemars, serde_json, regex-lite, tokio |
//! | `server` (default) | [`server`]: `Server::serve_stdio`, `serve_tcp`, `serve_unix`, `serve_io` | rmcp (server, IO transport) |
//! | `http` | streamable HTTP: `Server::serve_http`, `bind_http`, `http_service`, `HttpOptions`, `McpService`, `AuthLayer`, health endpoints; `serve --http` | `server`, hyper, http, rmcp's streamable HTTP server |
//! | `tls` | HTTPS: `HttpOptions::tls`, `TlsConfig`; `serve --tls-cert/--tls-key` | `http`, rustls + ring |
//! | `oauth` | OAuth 2.1 resource server (`server::oauth`); `serve --oauth-issuer …` | `http`, jsonwebtoken, reqwest |
//! | `oauth-tls` | `oauth` for issuers reached over https | `oauth`, reqwest's rustls |
//! | `axum` | `Server::router`: the endpoint as an axum `Router` | `http`, axum |
//! | `cli` | `cli_app!` and `cli`: the generated command line; `serve` offers the transports the features above enable | `server`, clap, tracing-subscriber |
//! | `testing` | `testing::TestClient`: an in-process MCP client for tests, through the real protocol engine (`docs/testing.md`) | `server` |
//!
//! A stdio-only server (`cli`, or `server` with a `main` of its own) links no HTTP stack,
//! TLS or OAuth client; `docs/performance.md` ("Binary size") has the sizes and the
//! `release-small` profile.
//!
//! ## Where things are
//! The crate root holds what a tool author writes every day. The rest is named by module:
//! [`definition`] (`ToolDef`, `ResourceDef`, `PromptDef` and their builders), [`output`]
//! (results, content, errors, resource contents, prompt messages), [`context`] (the
//! request context and extractors), [`elicitation`] and [`sampling`] (typed questions to
//! the client), [`call`] (middleware), [`envelope`] (a response
//! envelope: summary, data, next steps, error codes), [`paging`] (bounded lists and pages),
//! [`sessions`] (per-caller sessions behind per-session locks), [`registry`] (the builder,
//! build errors, reports), [`permissions`], [`schema`], and behind features [`server`]
//! (features `server` and `http`), `cli` (`cli`) and `testing` (`testing`: an in-process
//! client for tests, `docs/testing.md`); rmcp appears only in `server` and `testing`.
//! `docs/versioning.md` says what is public API.
//!
//! ## The `inventory` linker caveat
//! Tools are collected from every crate *linked* into the final binary. A library crate
//! whose items the binary never references is not linked, and its tools vanish with it:
//! invoke [`tool_library!`] in the library and pass its `mcp_toolbelt_library()` to
//! [`ToolRegistryBuilder::library`](registry::ToolRegistryBuilder::library), which keeps it linked
//! and reports it if it contributes no tools. `serve` warns and `tools check` fails when a
//! registry serves nothing.

#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly) marks every feature-gated item with the features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The macros name the runtime `::mcp_toolbelt` when they expand inside this package (its
// doctests and examples link it under that name; this makes the path resolve in the
// library too).
extern crate self as mcp_toolbelt;

pub mod call;
mod caller;
#[cfg(feature = "cli")]
pub mod cli;
pub mod context;
pub mod definition;
pub mod elicitation;
pub mod envelope;
mod lines;
mod names;
pub mod output;
pub mod paging;
pub mod permissions;
mod poison;
pub mod rate;
mod registration;
pub mod registry;
pub mod sampling;
pub mod schema;
#[cfg(feature = "server")]
pub mod server;
pub mod sessions;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use caller::Caller;
pub use context::{State, ToolContext};
pub use output::{ContentBlock, ErrorKind, Json, ToolError, ToolResult};
pub use permissions::PermissionSet;
pub use registry::ToolRegistry;

/// `#[mcp_tool(...)]`: turn an `async fn` into a registered MCP tool.
///
/// See the crate docs and `docs/macro.md` for every key.
pub use mcp_toolbelt_derive::mcp_tool;

/// `#[mcp_resource(uri = "...")]` or `#[mcp_resource(uri_template = "...")]`: turn an
/// `async fn` into a registered MCP resource (or resource template).
///
/// See `docs/resources-and-prompts.md` for every key.
///
/// ```rust,standalone_crate
/// use mcp_toolbelt::{mcp_resource, Json, ToolContext, ToolRegistry};
///
/// /// Data for one id.
/// #[mcp_resource(uri_template = "demo://items/{id}", mime_type = "application/json")]
/// async fn item(id: u32) -> Json<serde_json::Value> {
///     Json(serde_json::json!({ "id": id }))
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = ToolRegistry::builder().build().unwrap();
/// assert_eq!(registry.list_resource_templates()[0].address().to_string(), ITEM_RESOURCE);
/// let contents = registry.read_resource("demo://items/7", ToolContext::default()).await.unwrap();
/// assert_eq!(contents[0].as_text(), Some("{\"id\":7}"));
/// # });
/// ```
pub use mcp_toolbelt_derive::mcp_resource;

/// `#[mcp_prompt(name = "...")]`: turn an `async fn` into a registered MCP prompt; its plain
/// parameters are the prompt's arguments.
///
/// See `docs/resources-and-prompts.md` for every key.
///
/// ```rust,standalone_crate
/// use mcp_toolbelt::definition::Params;
/// use mcp_toolbelt::{mcp_prompt, ToolContext, ToolRegistry};
///
/// /// Ask for a code review.
/// #[mcp_prompt(name = "review")]
/// async fn review(
///     /// The code to review
///     code: String,
///     /// What to focus on
///     focus: Option<String>,
/// ) -> String {
///     format!("Review this code{}:\n{code}", focus.map(|f| format!(" for {f}")).unwrap_or_default())
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = ToolRegistry::builder().build().unwrap();
/// let listed = &registry.list_prompts()[0];
/// assert!(listed.arguments()[0].required());
/// let args: Params = [("code", "fn main() {}")].into_iter().collect();
/// let result = registry.get_prompt(REVIEW_PROMPT, args, ToolContext::default()).await.unwrap();
/// assert_eq!(result.messages().len(), 1);
/// # });
/// ```
pub use mcp_toolbelt_derive::mcp_prompt;

/// The README's code blocks, compiled as doctests (they use the `cli` feature too).
#[cfg(all(doctest, feature = "cli"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The code blocks of `docs/resources-and-prompts.md`, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/resources-and-prompts.md")]
pub struct ResourcesAndPromptsDoctests;

/// The code blocks of `docs/rate-limits.md`, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/rate-limits.md")]
pub struct RateLimitsDoctests;

/// The code blocks of `docs/testing.md`, compiled and run as doctests.
#[cfg(all(doctest, feature = "testing"))]
#[doc = include_str!("../docs/testing.md")]
pub struct TestingDoctests;

/// Items the macros' generated code refers to. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use futures;
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;

    pub use crate::registration::Registration;

    pub use crate::context::FromContext;
    pub use crate::definition::arguments::{Arguments, Skipped};
    pub use crate::definition::{
        CliOptions, CompletionRequest, DefError, IntoCompletion, Params, PromptArgument, PromptDef,
        ResourceDef, ResourceRequest, ToolDef,
    };
    pub use crate::output::{IntoPromptResult, IntoResourceContents, IntoToolResult, ToolError};
    pub use crate::schema::JsonObject;

    pub use crate::definition::param_headers::MirroredHeader;
    pub use crate::definition::tool::ToolFuture;

    /// The CLI's flag conversion, for the fuzz targets.
    #[cfg(feature = "cli")]
    pub use crate::cli::command_line_arguments;

    use serde_json::Value;

    /// A rate `#[mcp_tool(rate = "…")]` checked at compile time with the same grammar.
    pub fn rate(count: u64, period_ms: u64, burst: u64) -> crate::rate::Rate {
        match crate::rate::Rate::new(count, period_ms, burst) {
            Ok(rate) => rate,
            Err(problem) => panic!("{problem}"),
        }
    }

    /// Deserialize validated arguments into the tool's args type.
    pub fn parse_args<T: serde::de::DeserializeOwned>(
        tool: &str,
        arguments: JsonObject,
    ) -> Result<T, ToolError> {
        serde_json::from_value(Value::Object(arguments))
            .map_err(|err| crate::definition::arguments::invalid_arguments(tool, err))
    }

    /// What a tool argument's type needs; bounded on by the generated code so a missing
    /// derive is reported at the argument with what to write.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it needs `Deserialize` and `JsonSchema`",
        label = "this argument's type",
        note = "derive them on the type: `#[derive(serde::Deserialize, schemars::JsonSchema)]` (schemars 1.x)",
        note = "if it is an extractor imported under another name, mark the parameter `#[extract]`"
    )]
    pub trait ToolArgument: serde::de::DeserializeOwned + schemars::JsonSchema {}

    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolArgument for T {}

    /// Compiles only when `T` can be a tool argument.
    pub const fn tool_argument<T: ToolArgument>() {}

    /// What an extractor's type needs; bounded on by the generated code so a type taken
    /// for an extractor by mistake is reported with the rule.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not an extractor: it does not implement `mcp_toolbelt::context::FromContext`",
        label = "taken as an extractor",
        note = "a type written `State<…>`, `ToolContext` or `Caller` (bare or under `mcp_toolbelt::`) is an extractor; to pass your own type of that name as an argument, write it with its path (`crate::State<…>`)"
    )]
    pub trait Extractor {}

    impl<T: crate::context::FromContext> Extractor for T {}

    /// Compiles only when `T` is an extractor.
    pub const fn extractor<T: Extractor>() {}

    /// What the type inside a tool's `Json<…>` result needs; the generated code bounds on
    /// it so a missing derive is one error at that type.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's structured output: it needs `Serialize` and `JsonSchema`",
        label = "the type inside `Json<…>`",
        note = "derive them on the type: `#[derive(serde::Serialize, schemars::JsonSchema)]` (schemars 1.x)"
    )]
    pub trait StructuredOutput: serde::Serialize + schemars::JsonSchema + 'static {}

    impl<T: serde::Serialize + schemars::JsonSchema + 'static> StructuredOutput for T {}

    /// How a tool fn's return type `R` becomes a result, as plain fns: the generated code
    /// takes them from one of [`returns`], [`returns_json`], [`returns_result`] or
    /// [`returns_result_json`] in one place, so a return type missing a trait is one error
    /// naming the part that lacks it.
    pub struct Returns<R> {
        /// `R`'s `outputSchema`.
        pub output_schema: fn() -> Option<JsonObject>,
        /// The fn's value as a result.
        pub into_tool_result: fn(R) -> Result<crate::ToolResult, ToolError>,
        /// A failed extractor's error as `R` renders it.
        pub error_result: fn(ToolError) -> Result<crate::ToolResult, ToolError>,
    }

    /// [`Returns`] of any tool result type.
    pub const fn returns<R: IntoToolResult>() -> Returns<R> {
        Returns {
            output_schema: R::output_schema,
            into_tool_result: R::into_tool_result,
            error_result: R::error_result,
        }
    }

    /// [`Returns`] of `Json<X>`.
    pub const fn returns_json<X: StructuredOutput>() -> Returns<crate::Json<X>> {
        returns::<crate::Json<X>>()
    }

    /// [`Returns`] of `Result<T, E>` (`E` bounded by itself, so a missing conversion is
    /// reported at the error type).
    pub const fn returns_result<T: IntoToolResult, E: Into<ToolError>>() -> Returns<Result<T, E>> {
        returns::<Result<T, E>>()
    }

    /// [`Returns`] of `Result<Json<X>, E>`.
    pub const fn returns_result_json<X: StructuredOutput, E: Into<ToolError>>()
    -> Returns<Result<crate::Json<X>, E>> {
        returns::<Result<crate::Json<X>, E>>()
    }

    /// One `#[arg]` constraint as written: argument, key, and the schema keywords it becomes.
    pub type Constraint = (&'static str, &'static str, &'static [&'static str]);

    /// The input schema of `T`, after checking that every constraint key the author wrote
    /// reached it. schemars drops a constraint that does not fit the type's schema; the
    /// macro refuses that at compile time for the types it can see, and this catches the
    /// rest (aliases, user types) when the registry is built.
    pub fn input_schema<T: schemars::JsonSchema>(
        tool: &str,
        constraints: &[Constraint],
    ) -> Result<JsonObject, DefError> {
        checked_constraints(tool, constraints, crate::schema::input_schema_for::<T>())
    }

    /// [`input_schema`]'s check, compiled once rather than once per tool.
    fn checked_constraints(
        tool: &str,
        constraints: &[Constraint],
        schema: JsonObject,
    ) -> Result<JsonObject, DefError> {
        let properties = schema.get("properties").and_then(Value::as_object);
        for (argument, key, keywords) in constraints {
            let property = properties.and_then(|p| p.get(*argument));
            if property.is_some_and(|p| has_keyword(p, keywords)) {
                continue;
            }
            let shown = property.and_then(|p| p.get("type")).map_or_else(
                || "not a number, string or array".to_string(),
                Value::to_string,
            );
            return Err(DefError::new(
                "tool",
                tool,
                format!(
                    "argument `{argument}`: `#[arg({key})]` does not fit its type (schema type {shown}), so it would not be enforced; `minimum`/`maximum` apply to numbers, `min_length`/`max_length` to strings and arrays, `pattern` to strings"
                ),
            ));
        }
        Ok(schema)
    }

    /// True when `schema` (or a branch of its `anyOf`/`oneOf`, as for `Option<T>`) holds
    /// one of `keywords`.
    fn has_keyword(schema: &Value, keywords: &[&str]) -> bool {
        let Some(object) = schema.as_object() else {
            return false;
        };
        keywords.iter().any(|k| object.contains_key(*k))
            || ["anyOf", "oneOf"].iter().any(|union| {
                object
                    .get(*union)
                    .and_then(Value::as_array)
                    .is_some_and(|branches| branches.iter().any(|b| has_keyword(b, keywords)))
            })
    }
}
