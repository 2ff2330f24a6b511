//! The tool registry: collects every linked `#[mcp_tool]`, filters by permission,
//! validates arguments, dispatches through the middleware, and tracks runtime changes.

use std::any::TypeId;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use serde_json::Value;

use crate::call::middleware::{self, Around, MiddlewareConfig, ToolStats};
use crate::context::{StateMap, ToolContext};
use crate::definition::tool::ToolDef;
use crate::output::error::ToolError;
use crate::output::result::ToolResult;
use crate::permissions::PermissionSet;
use crate::registration;
use crate::registry::offerings::{Collect, Offerings, OfferingsBuilder};
use crate::schema::JsonObject;
use crate::schema::provider::Provider;

mod admission;
pub(crate) mod library;
pub(crate) mod listeners;
pub(crate) mod offerings;
pub(crate) mod report;
#[cfg(test)]
mod tests;
pub(crate) mod view_cache;

use crate::poison::LockIgnoringPoison;
use admission::{Entry, Filter, Refusal};
use listeners::Listeners;
#[cfg(feature = "server")]
use listeners::Listening;
use view_cache::ViewCache;

pub use library::Library;

pub use report::{
    Finding, PermissionMatrix, ProviderReport, Severity, ValidationReport, cli_inexpressible,
};

/// The tools, resources and prompts a server serves, with their state and middleware —
/// or one caller's view of them ([`ToolRegistry::view`]): the same type, so listing and
/// calling are written once. Cheap to clone (shared inside).
///
/// ```rust,standalone_crate
/// use mcp_toolbelt::{mcp_tool, ToolRegistry, ToolContext};
///
/// /// Add two numbers.
/// #[mcp_tool(name = "add")]
/// async fn add(a: i64, b: i64) -> String {
///     (a + b).to_string()
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = ToolRegistry::builder().build().unwrap();
/// let result = registry
///     .call_tool("add", serde_json::json!({"a": 2, "b": 3}), ToolContext::default())
///     .await
///     .unwrap();
/// assert_eq!(result.text_content(), "5");
/// # });
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    pub(crate) shared: Arc<Shared>,
    /// The caller this view is for; `None`: every served tool.
    caller: Option<PermissionSet>,
}

pub(crate) struct Shared {
    catalog: ArcSwap<Catalog>,
    pub(crate) states: Arc<StateMap>,
    pub(crate) middleware: MiddlewareConfig,
    /// Resources and prompts (offerings.rs).
    pub(crate) offerings: Offerings,
    filter: Filter,
    pub(crate) listeners: Arc<Listeners<ChangeListener>>,
    writer: Mutex<()>,
    /// What the build found; [`ToolRegistry::validation_report`] adds the schema problems.
    built_report: ValidationReport,
    report: OnceLock<ValidationReport>,
}

/// A listener of [`ToolRegistry::on_change`].
pub(crate) type ChangeListener = dyn Fn(&RegistryChange) + Send + Sync;

/// One admitted tool in a catalog, switched on or off.
#[derive(Clone)]
struct Slot {
    entry: Arc<Entry>,
    enabled: bool,
}

/// An immutable snapshot of the tools; every change swaps in a new one.
struct Catalog {
    /// Counts the runtime changes that led to this snapshot (0 when built).
    version: u64,
    slots: Vec<Slot>,
    by_name: HashMap<Arc<str>, usize>,
    views: ViewCache<ViewLists>,
}

/// The cached lists of one permission view.
struct ViewLists {
    tools: Arc<[Arc<ToolDef>]>,
}

impl Catalog {
    fn new(mut slots: Vec<Slot>, version: u64) -> Catalog {
        slots.sort_by(|a, b| a.entry.def.name().cmp(b.entry.def.name()));
        let by_name = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| (Arc::from(slot.entry.def.name()), i))
            .collect();
        Catalog {
            version,
            slots,
            by_name,
            views: ViewCache::default(),
        }
    }

    /// The slot of `name` when the caller may see it.
    fn visible(&self, name: &str, caller: Option<&PermissionSet>) -> Option<&Slot> {
        let slot = &self.slots[*self.by_name.get(name)?];
        (slot.enabled && caller.is_none_or(|c| c.allows(slot.entry.def.permissions())))
            .then_some(slot)
    }

    fn lists(&self, caller: Option<&PermissionSet>) -> Arc<ViewLists> {
        let key = caller.map(|c| c.mask().clone());
        self.views.get_or_compute(key, || ViewLists {
            tools: self
                .slots
                .iter()
                .filter(|slot| {
                    slot.enabled && caller.is_none_or(|c| c.allows(slot.entry.def.permissions()))
                })
                .map(|slot| slot.entry.def.clone())
                .collect(),
        })
    }
}

/// A change to the registry's tools at runtime (what `tools/list_changed` reports).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryChange {
    /// A disabled tool was enabled again.
    Enabled(String),
    /// A tool was disabled.
    Disabled(String),
    /// A tool was registered at runtime.
    Registered(String),
    /// A tool was removed.
    Unregistered(String),
}

/// A name the caller cannot call: unknown, filtered out, not permitted, or disabled —
/// all alike, so hidden tools cannot be probed. Servers answer it with JSON-RPC -32602.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let err = registry
///     .call_tool("nope", serde_json::Value::Null, mcp_toolbelt::ToolContext::default())
///     .await
///     .unwrap_err();
/// assert_eq!(err.to_string(), "unknown tool: nope");
/// assert_eq!(err.name(), "nope");
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool: {}", crate::output::error::echo(name))]
pub struct ToolNotFound {
    name: String,
}

impl ToolNotFound {
    /// The requested name, whole (its message shows at most 128 characters of it).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Why a registry could not be built; lists every problem at once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot build the tool registry:\n{}", problems.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n"))]
pub struct BuildError {
    problems: Vec<String>,
}

impl BuildError {
    /// One line per problem, each naming the tool and how to fix it.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

/// Configures and builds a [`ToolRegistry`].
///
/// ```
/// use mcp_toolbelt::{PermissionSet, ToolRegistry};
/// let registry = ToolRegistry::builder()
///     .allowed_permissions(PermissionSet::new(["TICKET_VIEW"]))
///     .default_timeout(std::time::Duration::from_secs(30))
///     .build()
///     .unwrap();
/// assert!(registry.list_tools().iter().all(|t| t.name() != "ticket_delete"));
/// ```
#[must_use]
pub struct ToolRegistryBuilder {
    states: StateMap,
    filter: Filter,
    defs: Vec<ToolDef>,
    include_linked: bool,
    lenient: bool,
    middleware: MiddlewareConfig,
    pub(crate) offerings: OfferingsBuilder,
    libraries: Vec<Library>,
}

impl ToolRegistry {
    /// Start configuring a registry.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder {
            states: StateMap::default(),
            filter: Filter::default(),
            defs: Vec::new(),
            include_linked: true,
            lenient: false,
            middleware: MiddlewareConfig::default(),
            offerings: OfferingsBuilder::default(),
            libraries: Vec::new(),
        }
    }
}

impl ToolRegistryBuilder {
    /// Register shared state handed to tools taking `State<T>`; one value per type.
    pub fn state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.state_arc(Arc::new(value))
    }

    /// Register shared state already in an `Arc`.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.states.insert(value);
        self
    }

    /// Serve only tools whose permissions are empty or a subset of `allowed`; `None` (the
    /// default) serves every tool, so an optional `--permissions-file` passes straight in.
    ///
    /// ```
    /// use mcp_toolbelt::{PermissionSet, ToolRegistry};
    /// let some = ToolRegistry::builder().allowed_permissions(PermissionSet::new(["WIKI_VIEW"]));
    /// let from_flag: Option<PermissionSet> = None;
    /// let all = ToolRegistry::builder().allowed_permissions(from_flag);
    /// # let _ = (some, all);
    /// ```
    pub fn allowed_permissions(mut self, allowed: impl Into<Option<PermissionSet>>) -> Self {
        self.filter.allowed = allowed.into();
        self
    }

    /// Serve only tools in these categories.
    pub fn categories<I: IntoIterator<Item = S>, S: Into<String>>(mut self, categories: I) -> Self {
        self.filter.categories = Some(categories.into_iter().map(Into::into).collect());
        self
    }

    /// Serve only tools carrying at least one of these tags.
    pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.filter.tags = Some(tags.into_iter().map(Into::into).collect());
        self
    }

    /// List every tool's input schema as `provider` takes it: what
    /// [`schema::provider::adapt`](crate::schema::provider::adapt) can rewrite keeping the
    /// schema's meaning is rewritten (e.g. `"type": ["integer", "null"]` becomes
    /// `"type": "integer", "nullable": true` for Gemini); what it cannot is listed as
    /// written, and `tools check --provider` names it. Arguments are still validated
    /// against the original schema, so the tools accept what they did; the model is only
    /// told less (a dropped keyword, which the server still enforces) or asked for less
    /// (OpenAI: no unknown keys). One addition: for OpenAI's strict mode an optional
    /// argument that refuses `null` (one with a default) is listed as required and
    /// nullable, and a call's `null` for it is taken as the argument left out. Tools
    /// registered later are listed the same way.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// use mcp_toolbelt::schema::provider::Provider;
    /// use mcp_toolbelt::{ToolRegistry, ToolResult};
    /// let def = ToolDef::builder("notes_search")
    ///     .description("Search the notes.")
    ///     .input_schema(serde_json::json!({"type": "object",
    ///         "properties": {"limit": {"type": ["integer", "null"]}}}))
    ///     .handler(|_args, _ctx| async { Ok(ToolResult::text("none")) })
    ///     .build()
    ///     .unwrap();
    /// let registry = ToolRegistry::builder()
    ///     .include_linked(false)
    ///     .schemas_for(Provider::Gemini)
    ///     .tool(def)
    ///     .build()
    ///     .unwrap();
    /// let listed = registry.get("notes_search").unwrap();
    /// assert_eq!(listed.input_schema()["properties"]["limit"]["nullable"], true);
    /// ```
    pub fn schemas_for(mut self, provider: Provider) -> Self {
        self.filter.schemas = Some(provider);
        self
    }

    /// Add a tool built at runtime (without the macro).
    pub fn tool(mut self, def: ToolDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Expect tools from `library` (its `mcp_toolbelt_library()`, see
    /// [`tool_library!`](crate::tool_library)): calling that fn keeps the library linked,
    /// and a library that contributes no tools is an error in
    /// [`validation_report`](ToolRegistry::validation_report) (and `tools check`).
    pub fn library(mut self, library: Library) -> Self {
        self.libraries.push(library);
        self
    }

    /// Whether to collect the `#[mcp_tool]` fns linked into the binary (default: yes).
    pub fn include_linked(mut self, include: bool) -> Self {
        self.include_linked = include;
        self
    }

    /// Report duplicate names and invalid tools in [`ToolRegistry::validation_report`]
    /// instead of failing (the first definition of a name wins; invalid ones are left out).
    /// Missing state types still fail.
    pub fn lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// Time budget for tools that set no `timeout_ms`.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.middleware.default_timeout = Some(timeout);
        self
    }

    /// Truncate text results over `bytes`, with an explicit notice.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.middleware.max_response_bytes = Some(bytes);
        self
    }

    /// Wrap every call in `hook` (first added is outermost).
    pub fn around(mut self, hook: impl Around) -> Self {
        self.middleware.hooks.push(Arc::new(hook));
        self
    }

    /// The tools [`build`](Self::build) would serve, sorted by name, without building:
    /// linked tools (unless `include_linked(false)`) and added ones, passed through the
    /// permission, category and tag filters. The first definition of a name wins;
    /// definitions that fail to build are left out. Registered state is not checked, so a
    /// command line can list tools before the state they need exists.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// use mcp_toolbelt::{ToolRegistry, ToolResult};
    /// let def = ToolDef::builder("demo_ping")
    ///     .description("Answer pong.")
    ///     .handler(|_args, _ctx| async { Ok(ToolResult::text("pong")) })
    ///     .build()
    ///     .unwrap();
    /// let builder = ToolRegistry::builder().include_linked(false).tool(def);
    /// let names: Vec<String> = builder.definitions().iter().map(|d| d.name().to_string()).collect();
    /// assert_eq!(names, ["demo_ping"]);
    /// assert!(builder.build().is_ok());
    /// ```
    pub fn definitions(&self) -> Vec<Arc<ToolDef>> {
        let linked = self
            .include_linked
            .then(registration::linked::<ToolDef>)
            .into_iter()
            .flatten()
            .filter_map(Result::ok);
        let mut seen = BTreeSet::new();
        let mut defs: Vec<Arc<ToolDef>> = linked
            .chain(self.defs.iter().cloned())
            .filter(|def| seen.insert(def.name().to_string()))
            .filter(|def| self.filter.admits(def))
            .map(Arc::new)
            .collect();
        defs.sort_by(|a, b| a.name().cmp(b.name()));
        defs
    }

    /// Collect, check and index every tool. Fails, naming every problem, on duplicate
    /// names (with both source locations), invalid definitions or schemas, and tools
    /// needing a state type that was never registered.
    pub fn build(self) -> Result<ToolRegistry, BuildError> {
        let mut problems = Vec::new();
        let mut report = ValidationReport::default();
        let mut defs: Vec<ToolDef> = Vec::new();
        if self.include_linked {
            for defined in registration::linked::<ToolDef>() {
                match defined {
                    Ok(def) => defs.push(def),
                    Err(err) => problems.push(err.to_string()),
                }
            }
        }
        defs.extend(self.defs);
        for library in &self.libraries {
            if !defs.iter().any(|def| library.contains(def.source())) {
                report.push(Severity::Error, "", &library::silent(library));
            }
        }
        let mut slots: Vec<Slot> = Vec::new();
        let mut seen: HashMap<String, Arc<ToolDef>> = HashMap::new();
        let mut needing: Vec<(&'static str, Arc<ToolDef>)> = Vec::new();
        for def in defs {
            if let Some(first) = seen.get(def.name()) {
                problems.push(duplicate_problem(first, &def));
                continue;
            }
            let def = Arc::new(def);
            seen.insert(def.name().to_string(), def.clone());
            match self.filter.admit(def.clone(), &self.states) {
                Ok(Some(entry)) => slots.push(Slot {
                    entry: Arc::new(entry),
                    enabled: true,
                }),
                Ok(None) => {}
                Err(Refusal::MissingStates(missing)) => {
                    needing.extend(missing.into_iter().map(|state| (state, def.clone())));
                }
            }
        }
        // A missing state fails even a lenient build (the tool could never run); the error
        // still names every other problem found, so one build shows them all.
        let mut fatal = missing_state_problems(needing);
        let collect = Collect {
            include_linked: self.include_linked,
            allowed: self.filter.allowed.as_ref(),
            states: &self.states,
        };
        let offerings = match self.offerings.build(collect, &mut problems) {
            Ok(offerings) if fatal.is_empty() => offerings,
            outcome => {
                fatal.extend(outcome.err());
                problems.sort();
                fatal.extend(problems);
                return Err(BuildError { problems: fatal });
            }
        };
        if !problems.is_empty() {
            if !self.lenient {
                problems.sort();
                return Err(BuildError { problems });
            }
            for problem in &problems {
                report.push(Severity::Error, "", problem);
            }
        }
        let catalog = Catalog::new(slots, 0);
        for slot in &catalog.slots {
            report.check_tool(&slot.entry.def);
        }
        if catalog.slots.is_empty() && offerings.is_empty() {
            report.push(Severity::Warning, "", library::EMPTY);
        }
        Ok(ToolRegistry {
            shared: Arc::new(Shared {
                catalog: ArcSwap::from_pointee(catalog),
                states: Arc::new(self.states),
                middleware: self.middleware,
                offerings,
                filter: self.filter,
                listeners: Arc::default(),
                writer: Mutex::new(()),
                built_report: report,
                report: OnceLock::new(),
            }),
            caller: None,
        })
    }
}

fn duplicate_problem(first: &ToolDef, second: &ToolDef) -> String {
    format!(
        "duplicate tool name {:?}: {}; rename one of them",
        first.name(),
        crate::definition::common::defined_at(first.source(), second.source())
    )
}

/// One problem per missing state type, naming every tool that needs it with its location,
/// in source order (tools defined at run time last).
fn missing_state_problems(mut needing: Vec<(&'static str, Arc<ToolDef>)>) -> Vec<String> {
    needing.sort_by_key(|(state, def)| (*state, def.source().is_none(), def.source()));
    let mut problems: Vec<String> = Vec::new();
    let mut current: Option<(&str, Vec<String>)> = None;
    let flush = |current: Option<(&str, Vec<String>)>, problems: &mut Vec<String>| {
        if let Some((state, tools)) = current {
            problems.push(format!(
                "state {state} is needed by {} tool(s) but none was registered; call .state(value) on the registry builder: {}",
                tools.len(),
                tools.join(", ")
            ));
        }
    };
    for (state, def) in needing {
        let at = def
            .source()
            .map_or_else(|| "a runtime definition".to_string(), |s| s.to_string());
        let tool = format!("{:?} ({at})", def.name());
        match &mut current {
            Some((name, tools)) if *name == state => tools.push(tool),
            _ => {
                flush(current.take(), &mut problems);
                current = Some((state, vec![tool]));
            }
        }
    }
    flush(current, &mut problems);
    problems
}

impl ToolRegistry {
    /// A view of the registry for a caller holding `permissions`: same tools, same rules,
    /// filtered further by the caller's set, with its own cached list. Cheap.
    ///
    /// ```
    /// # let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let view = registry.view(&mcp_toolbelt::PermissionSet::new(["WIKI_VIEW"]));
    /// assert!(view.list_tools().is_empty());
    /// ```
    pub fn view(&self, permissions: &PermissionSet) -> ToolRegistry {
        ToolRegistry {
            shared: self.shared.clone(),
            caller: Some(permissions.clone()),
        }
    }

    /// The permissions of the caller this view is for (`None`: not a view, every served
    /// tool is visible).
    ///
    /// ```
    /// use mcp_toolbelt::{PermissionSet, ToolRegistry};
    /// let registry = ToolRegistry::builder().include_linked(false).build().unwrap();
    /// assert!(registry.view_permissions().is_none());
    /// let view = registry.view(&PermissionSet::new(["WIKI_VIEW"]));
    /// assert!(view.view_permissions().unwrap().contains("WIKI_VIEW"));
    /// ```
    pub fn view_permissions(&self) -> Option<&PermissionSet> {
        self.caller.as_ref()
    }

    /// The definitions of the tools this registry (or view) serves, enabled ones only,
    /// sorted by name; computed once per change and per caller. Each serializes to its
    /// `tools/list` entry.
    pub fn list_tools(&self) -> Arc<[Arc<ToolDef>]> {
        self.listed_tools().1
    }

    /// [`list_tools`](Self::list_tools) with the version of the snapshot it comes from,
    /// read together: the version counts runtime changes, so it tells a list (and the
    /// cursors and pages made from it) from any list before or after a change.
    pub(crate) fn listed_tools(&self) -> (u64, Arc<[Arc<ToolDef>]>) {
        let catalog = self.shared.catalog.load();
        let tools = catalog.lists(self.caller.as_ref()).tools.clone();
        (catalog.version, tools)
    }

    /// The version of the tools: how many runtime changes the registry has had.
    #[cfg(feature = "server")]
    pub(crate) fn version(&self) -> u64 {
        self.shared.catalog.load().version
    }

    /// The definition of `name`, if served, enabled and visible to this view's caller.
    pub fn get(&self, name: &str) -> Option<Arc<ToolDef>> {
        let catalog = self.shared.catalog.load();
        catalog
            .visible(name, self.caller.as_ref())
            .map(|slot| slot.entry.def.clone())
    }

    /// The served, enabled tools of one category.
    pub fn tools_in_category(&self, category: &str) -> Vec<Arc<ToolDef>> {
        self.list_tools()
            .iter()
            .filter(|d| d.category() == Some(category))
            .cloned()
            .collect()
    }

    /// The categories of the served, enabled tools, sorted.
    pub fn categories(&self) -> Vec<String> {
        let set: BTreeSet<String> = self
            .list_tools()
            .iter()
            .filter_map(|d| d.category().map(str::to_string))
            .collect();
        set.into_iter().collect()
    }

    /// Call `name` with `arguments` (a JSON object, or null for none), as this view's
    /// caller: a context with the local caller gets a caller with this view's permissions
    /// ([`ToolContext::caller`]); a context with a caller of its own keeps it.
    ///
    /// Returns `Err(ToolNotFound)` only when the tool is unknown, filtered out, disabled or
    /// hidden from this view's caller;
    /// every other failure — bad arguments, handler errors, panics, time-outs — is an
    /// `isError` [`ToolResult`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        ctx: ToolContext,
    ) -> Result<ToolResult, ToolNotFound> {
        let entry = {
            let catalog = self.shared.catalog.load();
            match catalog.visible(name, self.caller.as_ref()) {
                Some(slot) => slot.entry.clone(),
                None => return Err(ToolNotFound { name: name.into() }),
            }
        };
        let def = &entry.def;
        let mut arguments = if arguments.is_null() {
            Value::Object(JsonObject::new())
        } else {
            arguments
        };
        entry.null_as_absent(&mut arguments);
        if let Err(error) = entry.validator.check(def.name(), &arguments) {
            return Ok(ToolResult::error(&error, def.category()));
        }
        let Value::Object(arguments) = arguments else {
            let error = ToolError::validation(format!(
                "arguments for tool '{}' must be a JSON object",
                def.name()
            ));
            return Ok(ToolResult::error(&error, def.category()));
        };
        let ctx = self.prepare(ctx);
        Ok(middleware::run(def, &entry.runtime, &self.shared.middleware, arguments, ctx).await)
    }

    /// Enable a disabled tool again. Notifies change listeners. A name the registry does not
    /// serve — unknown, or excluded by the builder's permission, category or tag filter —
    /// is `Err(ToolNotFound)`, the same answer for both.
    pub fn enable(&self, name: &str) -> Result<(), ToolNotFound> {
        self.set_enabled(name, true)
    }

    /// Disable a tool: it disappears from lists and answers as unknown. Notifies listeners.
    pub fn disable(&self, name: &str) -> Result<(), ToolNotFound> {
        self.set_enabled(name, false)
    }

    fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), ToolNotFound> {
        let changed = self.mutate(|slots| {
            let slot = slots
                .iter_mut()
                .find(|s| s.entry.def.name() == name)
                .ok_or_else(|| ToolNotFound { name: name.into() })?;
            let changed = slot.enabled != enabled;
            slot.enabled = enabled;
            Ok((changed, changed))
        })?;
        if changed {
            self.notify(if enabled {
                RegistryChange::Enabled(name.into())
            } else {
                RegistryChange::Disabled(name.into())
            });
        }
        Ok(())
    }

    /// Add a tool at runtime, enabled. Fails on a duplicate name, a missing state type or an
    /// invalid schema. A tool the builder's permission, category or tag filter excludes is
    /// left out exactly as [`build`](ToolRegistryBuilder::build) leaves out such tools:
    /// `Ok(())`, nothing stored, no listener notified; listing, calling, enabling or
    /// unregistering its name then answers as for an unknown name.
    ///
    /// ```
    /// use mcp_toolbelt::definition::ToolDef;
    /// use mcp_toolbelt::{PermissionSet, ToolRegistry, ToolResult};
    /// let registry = ToolRegistry::builder()
    ///     .include_linked(false)
    ///     .allowed_permissions(PermissionSet::new(["READ"]))
    ///     .build()
    ///     .unwrap();
    /// let admin = ToolDef::builder("purge")
    ///     .description("Delete everything.")
    ///     .permissions(["ADMIN"])
    ///     .handler(|_args, _ctx| async { Ok(ToolResult::text("purged")) })
    ///     .build()
    ///     .unwrap();
    /// registry.register(admin).unwrap();
    /// assert!(registry.get("purge").is_none());
    /// assert_eq!(registry.enable("purge").unwrap_err().to_string(), "unknown tool: purge");
    /// assert_eq!(registry.enable("nope").unwrap_err().to_string(), "unknown tool: nope");
    /// ```
    pub fn register(&self, def: ToolDef) -> Result<(), BuildError> {
        let name = def.name().to_string();
        let admitted = self
            .shared
            .filter
            .admit(Arc::new(def), &self.shared.states)
            .map_err(|refusal| BuildError {
                problems: vec![refusal.into_problem(&name)],
            })?;
        let Some(entry) = admitted else {
            tracing::debug!(tool = %name, "runtime tool left out by the registry's filter");
            return Ok(());
        };
        let entry = Arc::new(entry);
        self.mutate(|slots| {
            if let Some(existing) = slots.iter().find(|s| s.entry.def.name() == name) {
                return Err(BuildError {
                    problems: vec![duplicate_problem(&existing.entry.def, &entry.def)],
                });
            }
            slots.push(Slot {
                entry,
                enabled: true,
            });
            Ok(((), true))
        })?;
        self.notify(RegistryChange::Registered(name));
        Ok(())
    }

    /// Remove a tool. Notifies listeners.
    pub fn unregister(&self, name: &str) -> Result<Arc<ToolDef>, ToolNotFound> {
        let removed = self.mutate(|slots| {
            let index = slots
                .iter()
                .position(|s| s.entry.def.name() == name)
                .ok_or_else(|| ToolNotFound { name: name.into() })?;
            Ok((slots.remove(index).entry.def.clone(), true))
        })?;
        self.notify(RegistryChange::Unregistered(name.into()));
        Ok(removed)
    }

    /// Call `listener` after every runtime change (the server sends `tools/list_changed`).
    pub fn on_change(&self, listener: impl Fn(&RegistryChange) + Send + Sync + 'static) {
        self.shared.listeners.add(Arc::new(listener));
    }

    /// [`on_change`](Self::on_change) until the returned guard is dropped (a server's
    /// listener, which must not outlive the server).
    #[cfg(feature = "server")]
    pub(crate) fn on_change_until_dropped(
        &self,
        listener: impl Fn(&RegistryChange) + Send + Sync + 'static,
    ) -> Listening<ChangeListener> {
        self.shared.listeners.add_until_dropped(Arc::new(listener))
    }

    /// True when the registry serves no tool, resource or prompt at all (most often: the
    /// tools are in a library the binary does not link; see
    /// [`tool_library!`](crate::tool_library)). `serve` warns about it, `tools check` fails.
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// assert!(registry.is_empty());
    /// assert!(registry.validation_report().findings()[0].message.contains("no tools"));
    /// ```
    pub fn is_empty(&self) -> bool {
        self.shared.catalog.load().slots.is_empty() && self.shared.offerings.is_empty()
    }

    /// What `provider` refuses in the tools this registry lists, and what of it
    /// [`schemas_for`](ToolRegistryBuilder::schemas_for) rewrites (a registry built with
    /// it lists the rewritten schemas, so only what cannot be rewritten is left).
    pub fn provider_report(&self, provider: Provider) -> ProviderReport {
        ProviderReport::of(provider, &self.list_tools())
    }

    /// Findings about the tools: non-portable names, `$ref`s left in schemas, schemas a
    /// command line cannot express, thin descriptions, and (with `lenient`) build problems.
    ///
    /// The first call also compiles every tool's input schema (serving compiles each one
    /// at its tool's first call instead) and lists those that are not valid JSON Schema.
    pub fn validation_report(&self) -> &ValidationReport {
        self.shared.report.get_or_init(|| {
            let mut report = self.shared.built_report.clone();
            for slot in &self.shared.catalog.load().slots {
                if let Some(problem) = slot.entry.validator.problem() {
                    let name = slot.entry.def.name();
                    report.push(
                        Severity::Error,
                        name,
                        &format!("invalid input schema: {problem}"),
                    );
                }
            }
            report
        })
    }

    /// Call statistics of every served tool, sorted by name.
    pub fn stats(&self) -> Vec<ToolStats> {
        self.shared
            .catalog
            .load()
            .slots
            .iter()
            .map(|s| s.entry.runtime.counters.snapshot(s.entry.def.name()))
            .collect()
    }

    /// True when a state of type `T` is registered.
    pub fn has_state<T: 'static>(&self) -> bool {
        self.shared.states.contains(TypeId::of::<T>())
    }

    /// The state of type `T` registered with [`ToolRegistryBuilder::state`], as the tools
    /// get it: for code outside a tool that works with the same state (e.g. a command
    /// added with `cli::App::command`).
    ///
    /// ```
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).state(7u32).build().unwrap();
    /// assert_eq!(registry.state::<u32>().map(|n| *n), Some(7));
    /// assert!(registry.state::<String>().is_none());
    /// ```
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<crate::context::State<T>> {
        self.shared
            .states
            .get::<T>()
            .map(crate::context::State::from_arc)
    }

    /// Apply `change` to a copy of the slots, and swap the copy in as the next version when
    /// `change` says it changed something (`Ok((outcome, changed))`).
    fn mutate<R, E>(
        &self,
        change: impl FnOnce(&mut Vec<Slot>) -> Result<(R, bool), E>,
    ) -> Result<R, E> {
        let _writer = self.shared.writer.lock_ignoring_poison();
        let current = self.shared.catalog.load();
        let mut slots = current.slots.clone();
        let (outcome, changed) = change(&mut slots)?;
        if changed {
            let next = Catalog::new(slots, current.version + 1);
            self.shared.catalog.store(Arc::new(next));
        }
        Ok(outcome)
    }

    fn notify(&self, change: RegistryChange) {
        for listener in self.shared.listeners.current() {
            listener(&change);
        }
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let catalog = self.shared.catalog.load();
        f.debug_struct("ToolRegistry")
            .field("tools", &catalog.slots.len())
            .field(
                "enabled",
                &catalog.slots.iter().filter(|s| s.enabled).count(),
            )
            .finish_non_exhaustive()
    }
}
