//! Tool definitions: [`ToolDef`] (metadata + schema + handler), built by `#[mcp_tool]` or
//! by hand with [`ToolDef::builder`] for tools created at runtime.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::context::{StateRequirement, ToolContext};
use crate::definition::common::{
    DefCommon, DefError, SourceLocation, checked_handler, def_common_accessors,
    def_common_builder_methods,
};
use crate::definition::param_headers::{ParamHeader, param_headers};
use crate::output::error::ToolError;
use crate::output::result::ToolResult;
use crate::permissions::PermissionSet;
use crate::schema::JsonObject;

/// Runs a tool: gets the validated arguments object and the request context.
///
/// Any `Fn(JsonObject, ToolContext) -> impl Future<Output = Result<ToolResult, ToolError>>`
/// is a handler.
pub trait ToolHandler: Send + Sync + 'static {
    /// Run the tool once.
    fn call(
        &self,
        arguments: JsonObject,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(JsonObject, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
{
    fn call(
        &self,
        arguments: JsonObject,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        Box::pin(self(arguments, ctx))
    }
}

/// The boxed future of one tool call, as a generated handler returns it.
#[doc(hidden)]
pub type ToolFuture = BoxFuture<'static, Result<ToolResult, ToolError>>;

/// A handler that is a plain fn returning its boxed future: what `#[mcp_tool]` generates
/// (one small fn per tool, and no handler type of its own), called without boxing again.
struct BoxedToolFn(fn(JsonObject, ToolContext) -> ToolFuture);

impl ToolHandler for BoxedToolFn {
    fn call(
        &self,
        arguments: JsonObject,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        (self.0)(arguments, ctx)
    }
}

/// Behaviour hints a client may use to decide how carefully to call a tool. `None`: not
/// said (clients then assume the protocol's defaults: not read-only, destructive, not
/// idempotent, open world).
///
/// ```
/// let def = mcp_toolbelt::definition::ToolDef::builder("notes_read")
///     .description("Read the notes.")
///     .read_only(true)
///     .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("none")) })
///     .build()
///     .unwrap();
/// assert_eq!(def.annotations().read_only_hint, Some(true));
/// assert_eq!(def.annotations().destructive_hint, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may delete or overwrite (meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (e.g. the web) rather than a closed domain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// How a tool appears in a generated command line (seed 003's `cli_category`, `cli_name`,
/// `hidden_from_cli`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliOptions {
    /// Command group; defaults to the tool's category.
    pub category: Option<Cow<'static, str>>,
    /// Command name; defaults to the tool name after its category prefix.
    pub name: Option<Cow<'static, str>>,
    /// Leave this tool out of the command line.
    pub hidden: bool,
}

/// Whether a tool's calls may run as tasks (the MCP tasks extension,
/// `io.modelcontextprotocol/tasks`): the client gets a task handle at once and polls
/// `tasks/get` for the result.
///
/// ```
/// use mcp_toolbelt::definition::{TaskSupport, ToolDef};
/// let def = ToolDef::builder("render")
///     .description("Render the report (minutes).")
///     .task_support(TaskSupport::Optional)
///     .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("done")) })
///     .build()
///     .unwrap();
/// assert_eq!(def.task_support(), TaskSupport::Optional);
/// assert_eq!(TaskSupport::Required.as_str(), "required");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Calls always answer in the request (the default).
    #[default]
    Forbidden,
    /// A call from a client that declared the tasks extension becomes a task once the fn
    /// waits on anything but the client's answers; other clients get the result in the
    /// request.
    Optional,
    /// As `Optional`, and a 2026-07-28 client that did not declare the tasks extension is
    /// refused (-32021) before the fn runs. (Legacy sessions, which have no tasks, get the
    /// result in the request.)
    Required,
}

impl TaskSupport {
    /// The value's protocol name (`forbidden`, `optional`, `required`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// Everything the registry knows about one tool.
///
/// `#[mcp_tool]` builds one per annotated fn; [`ToolDef::builder`] builds one at runtime.
///
/// ```
/// use mcp_toolbelt::definition::ToolDef;
/// use mcp_toolbelt::ToolResult;
/// let def = ToolDef::builder("greet")
///     .description("Say hello")
///     .input_schema(serde_json::json!({"type": "object", "properties": {"who": {"type": "string"}}}))
///     .handler(|args, _ctx| async move {
///         Ok(ToolResult::text(format!("hello {}", args["who"].as_str().unwrap_or("world"))))
///     })
///     .build()
///     .unwrap();
/// assert_eq!(def.name(), "greet");
/// assert_eq!(def.category(), Some("greet"));
/// ```
#[derive(Clone)]
pub struct ToolDef {
    /// Shared: a request's metrics, span and audit line name the tool with a clone.
    pub(crate) name: Arc<str>,
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) permissions: PermissionSet,
    pub(crate) category: Option<Cow<'static, str>>,
    pub(crate) tags: Vec<Cow<'static, str>>,
    pub(crate) annotations: ToolAnnotations,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_concurrency: Option<usize>,
    /// Calls admitted per caller (`#[mcp_tool(rate = "…")]`); the rate-limits file
    /// overrides it.
    pub(crate) rate: Option<crate::rate::Rate>,
    pub(crate) input_schema: Arc<JsonObject>,
    pub(crate) output_schema: Option<Arc<JsonObject>>,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) requirements: Vec<StateRequirement>,
    pub(crate) source: Option<SourceLocation>,
    pub(crate) cli: CliOptions,
    pub(crate) nonportable_name: bool,
    pub(crate) task_support: TaskSupport,
    /// The input schema's `x-mcp-header` annotations (SEP-2243), checked by `build`; the
    /// HTTP server checks each call's headers against them.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) param_headers: Box<[ParamHeader]>,
    /// The top-level arguments an audit log may record as they are
    /// ([`ToolDefBuilder::audit_keep`]); every other argument reaches it only as a digest.
    pub(crate) audit_keep: Box<[Cow<'static, str>]>,
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("permissions", &self.permissions)
            .field("category", &self.category)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// Start a definition named `name`.
    pub fn builder(name: impl Into<Cow<'static, str>>) -> ToolDefBuilder {
        ToolDefBuilder {
            name: name.into(),
            common: DefCommon::default(),
            category: None,
            tags: Vec::new(),
            annotations: ToolAnnotations::default(),
            timeout: None,
            max_concurrency: None,
            rate: None,
            input_schema: None,
            output_schema: None,
            handler: None,
            cli: CliOptions::default(),
            nonportable_name: false,
            task_support: TaskSupport::Forbidden,
            audit_keep: Vec::new(),
        }
    }

    /// The tool's unique name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's name, shared.
    #[cfg(feature = "server")]
    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.name
    }

    def_common_accessors!(
        description: "The description shown to models.",
        requirements: "State types the tool's extractors need.",
        source: "Where the tool was defined, for macro-built tools.",
    );

    /// The category (domain) of the tool, used for grouping and error actions.
    pub fn category(&self) -> Option<&str> {
        self.category.as_deref()
    }

    /// Free-form tags.
    pub fn tags(&self) -> impl Iterator<Item = &str> {
        self.tags.iter().map(|t| &**t)
    }

    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(&self) -> &ToolAnnotations {
        &self.annotations
    }

    /// The tool's own time budget, if set.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// How many calls of this tool may run at once, if limited.
    pub fn max_concurrency(&self) -> Option<usize> {
        self.max_concurrency
    }

    /// How many calls of this tool one caller may make, if limited (`#[mcp_tool(rate =
    /// "…")]` or [`ToolDefBuilder::rate`]). A server's [`RateLimits`](crate::rate::RateLimits)
    /// may override it (`docs/rate-limits.md`).
    ///
    /// ```
    /// let def = mcp_toolbelt::definition::ToolDef::builder("search")
    ///     .description("Search.")
    ///     .rate("10/s burst 20".parse().unwrap())
    ///     .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("")) })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(def.rate().map(|r| r.to_string()).as_deref(), Some("10/s burst 20"));
    /// ```
    pub fn rate(&self) -> Option<crate::rate::Rate> {
        self.rate
    }

    /// The JSON schema of the arguments (root `"type": "object"`).
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.input_schema
    }

    /// The JSON schema of the structured output, if the tool returns `Json<T>`.
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output_schema.as_ref()
    }

    /// Command-line presentation options.
    pub fn cli(&self) -> &CliOptions {
        &self.cli
    }

    /// True when the name was explicitly allowed outside `^[A-Za-z0-9_-]{1,64}$`.
    pub fn nonportable_name(&self) -> bool {
        self.nonportable_name
    }

    /// The top-level arguments an audit log records as they are
    /// ([`ToolDefBuilder::audit_keep`]), in the order they were named.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// let def = ToolDef::builder("ticket_get")
    ///     .description("Fetch a ticket.")
    ///     .input_schema(serde_json::json!({"type": "object", "properties": {"id": {"type": "integer"}}}))
    ///     .audit_keep("id")
    ///     .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("ok")) })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(def.audit_kept().collect::<Vec<_>>(), ["id"]);
    /// ```
    pub fn audit_kept(&self) -> impl Iterator<Item = &str> {
        self.audit_keep.iter().map(|name| &**name)
    }

    /// Whether the tool's calls may run as tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.task_support
    }

    /// Run the handler directly (no validation, no middleware): mostly for tests.
    pub fn call_unchecked(
        &self,
        arguments: JsonObject,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        self.handler.call(arguments, ctx)
    }
}

/// A definition serializes to its `tools/list` entry (name, title, description,
/// inputSchema, outputSchema, annotations).
///
/// ```
/// let def = mcp_toolbelt::definition::ToolDef::builder("ping")
///     .description("Answer pong.")
///     .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("pong")) })
///     .build()
///     .unwrap();
/// let listed = serde_json::to_value(&def).unwrap();
/// assert_eq!(listed["name"], "ping");
/// assert_eq!(listed["inputSchema"]["type"], "object");
/// assert!(listed.get("annotations").is_none());
/// ```
impl Serialize for ToolDef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &*self.name)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("description", &self.description)?;
        map.serialize_entry("inputSchema", &*self.input_schema)?;
        if let Some(output) = &self.output_schema {
            map.serialize_entry("outputSchema", &**output)?;
        }
        if self.annotations != ToolAnnotations::default() {
            map.serialize_entry("annotations", &self.annotations)?;
        }
        map.end()
    }
}

/// Builder for a [`ToolDef`]; `#[mcp_tool]` expands to calls of it.
#[must_use]
pub struct ToolDefBuilder {
    name: Cow<'static, str>,
    common: DefCommon,
    category: Option<Cow<'static, str>>,
    tags: Vec<Cow<'static, str>>,
    annotations: ToolAnnotations,
    timeout: Option<Duration>,
    max_concurrency: Option<usize>,
    rate: Option<crate::rate::Rate>,
    input_schema: Option<Value>,
    output_schema: Option<JsonObject>,
    handler: Option<Arc<dyn ToolHandler>>,
    cli: CliOptions,
    nonportable_name: bool,
    task_support: TaskSupport,
    audit_keep: Vec<Cow<'static, str>>,
}

impl ToolDefBuilder {
    def_common_builder_methods!(
        description: "The description shown to models (required, non-empty).",
        permissions: "Permissions a caller needs.",
        source: "Where the tool is defined.",
    );

    /// Category; defaults to the name's prefix before the first `_` (the whole name if none).
    pub fn category(mut self, category: impl Into<Cow<'static, str>>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Tags.
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Hint that the tool is read-only (does not modify its environment): `true` or `false` (unset by default).
    pub fn read_only(mut self, hint: bool) -> Self {
        self.annotations.read_only_hint = Some(hint);
        self
    }

    /// Hint that the tool is destructive (may delete or overwrite; MCP clients assume so for a tool that is not read-only unless told `false`): `true` or `false` (unset by default).
    pub fn destructive(mut self, hint: bool) -> Self {
        self.annotations.destructive_hint = Some(hint);
        self
    }

    /// Hint that the tool is idempotent: `true` or `false` (unset by default).
    pub fn idempotent(mut self, hint: bool) -> Self {
        self.annotations.idempotent_hint = Some(hint);
        self
    }

    /// Hint that the tool is as reaching an open world (e.g. the web): `true` or `false` (unset by default).
    pub fn open_world(mut self, hint: bool) -> Self {
        self.annotations.open_world_hint = Some(hint);
        self
    }

    /// Time budget for one call, in milliseconds.
    pub fn timeout_ms(mut self, millis: u64) -> Self {
        self.timeout = Some(Duration::from_millis(millis));
        self
    }

    /// At most `limit` calls of this tool run at once (1 serializes it).
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// At most `rate` calls of this tool per caller: past it a call is refused with the
    /// time to retry (`#[mcp_tool(rate = "10/s")]` writes this; the grammar is in
    /// [`Rate`](crate::rate::Rate)). Enforced by the server; a rate-limits file overrides it.
    ///
    /// ```
    /// use mcp_toolbelt::rate::Rate;
    /// let builder = mcp_toolbelt::definition::ToolDef::builder("search")
    ///     .rate(Rate::new(100, 60_000, 20).unwrap());
    /// # let _ = builder;
    /// ```
    pub fn rate(mut self, rate: crate::rate::Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// The input schema (a JSON object whose `type` is `object`).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The output schema of structured results.
    pub fn output_schema(mut self, schema: Option<JsonObject>) -> Self {
        self.output_schema = schema;
        self
    }

    /// The handler: an `async` closure or fn of the validated arguments and the context.
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(JsonObject, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The handler as a fn that boxes its own future. For the macros' generated code.
    #[doc(hidden)]
    pub fn boxed_handler(mut self, handler: fn(JsonObject, ToolContext) -> ToolFuture) -> Self {
        self.handler = Some(Arc::new(BoxedToolFn(handler)));
        self
    }

    /// Command-line presentation.
    pub fn cli(mut self, cli: CliOptions) -> Self {
        self.cli = cli;
        self
    }

    /// Whether calls may run as tasks ([`TaskSupport::Forbidden`] by default).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Let an audit log (`mcp_toolbelt::server::AuditLog`) record the top-level argument
    /// `name` as it is, under `arguments` in the call's line: for values safe to keep (an
    /// id, a region), never for secrets or personal data. Every argument, kept or not,
    /// goes into the line's digest. `build` fails when the input schema has no such
    /// property. `#[arg(audit = "keep")]` on a tool fn parameter calls this.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// let tool = |kept: &'static str| {
    ///     ToolDef::builder("deploy")
    ///         .description("Deploy to a region.")
    ///         .input_schema(serde_json::json!({"type": "object", "properties": {"region": {"type": "string"}}}))
    ///         .audit_keep(kept)
    ///         .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("ok")) })
    ///         .build()
    /// };
    /// assert!(tool("region").is_ok());
    /// assert!(tool("regoin").unwrap_err().problem().contains("audit_keep"));
    /// ```
    pub fn audit_keep(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        let name = name.into();
        if !self.audit_keep.contains(&name) {
            self.audit_keep.push(name);
        }
        self
    }

    /// Allow a name outside `^[A-Za-z0-9_-]{1,64}$` (dots, or over 64 chars), which some
    /// clients reject together with the server's whole tool list.
    pub fn nonportable_name(mut self) -> Self {
        self.nonportable_name = true;
        self
    }

    /// Check and build. Fails on an invalid name, a missing or empty description, a
    /// missing handler, an input schema whose root is not an object, an
    /// [`audit_keep`](Self::audit_keep) name that is not one of its properties, or an `x-mcp-header`
    /// annotation (an argument mirrored into an HTTP header, SEP-2243) that is not a
    /// non-empty HTTP token, unique ignoring case, on a `string`, `integer` or `boolean`
    /// property reached from the root through `properties`.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// let tool = |region: serde_json::Value| {
    ///     ToolDef::builder("deploy")
    ///         .description("Deploy to a region.")
    ///         .input_schema(serde_json::json!({"type": "object", "properties": {"region": region}}))
    ///         .handler(|_args, _ctx| async { Ok(mcp_toolbelt::ToolResult::text("ok")) })
    ///         .build()
    /// };
    /// assert!(tool(serde_json::json!({"type": "string", "x-mcp-header": "Region"})).is_ok());
    /// let error = tool(serde_json::json!({"type": "number", "x-mcp-header": "Region"})).unwrap_err();
    /// assert!(error.problem().starts_with("property \"region\": x-mcp-header applies to"));
    /// ```
    pub fn build(mut self) -> Result<ToolDef, DefError> {
        let fail = |problem: String| DefError::new("tool", &self.name, problem);
        if let Some(problem) = crate::names::check_name(&self.name, self.nonportable_name) {
            return Err(fail(problem));
        }
        let description = self.common.checked_description().map_err(&fail)?;
        let handler = checked_handler(self.handler.clone()).map_err(&fail)?;
        // Moved, not cloned: the macro's schemas are built for this definition alone.
        let input_schema = match self.input_schema.take() {
            None => {
                let mut schema = JsonObject::new();
                schema.insert("type".into(), "object".into());
                schema.insert("properties".into(), Value::Object(JsonObject::new()));
                schema
            }
            Some(Value::Object(schema)) if crate::schema::is_object_schema(&schema) => schema,
            Some(other) => {
                return Err(fail(format!(
                    "input schema root must be {{\"type\": \"object\"}}, got {other}"
                )));
            }
        };
        let param_headers = param_headers(&input_schema)
            .map_err(&fail)?
            .into_boxed_slice();
        let properties = input_schema.get("properties").and_then(Value::as_object);
        if let Some(unknown) = self
            .audit_keep
            .iter()
            .find(|name| properties.is_none_or(|p| !p.contains_key(name.as_ref())))
        {
            return Err(fail(format!(
                "audit_keep names {unknown:?}, which is not a property of the input schema"
            )));
        }
        let category = self.category.clone().or_else(|| {
            let prefix = self.name.split('_').next().unwrap_or(&self.name);
            Some(Cow::Owned(prefix.to_string()))
        });
        Ok(ToolDef {
            permissions: PermissionSet::new(self.common.permissions.iter()),
            name: Arc::from(self.name),
            title: self.common.title,
            description,
            category,
            tags: self.tags,
            annotations: self.annotations,
            timeout: self.timeout,
            max_concurrency: self.max_concurrency,
            rate: self.rate,
            input_schema: Arc::new(input_schema),
            output_schema: self.output_schema.map(Arc::new),
            handler,
            requirements: self.common.requirements,
            source: self.common.source,
            cli: self.cli,
            nonportable_name: self.nonportable_name,
            task_support: self.task_support,
            param_headers,
            audit_keep: self.audit_keep.into_boxed_slice(),
        })
    }
}
