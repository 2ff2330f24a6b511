//! Resources and prompts in the [`ToolRegistry`]: collected with the tools (linked
//! `#[mcp_resource]` / `#[mcp_prompt]` fns and builder additions), filtered by the same
//! permission rule and views, and run under the same guard (registry time budget, client
//! cancellation, panic capture).
//!
//! Resources and prompts are fixed once the registry is built; a server learns that a
//! resource's contents changed through [`ToolRegistry::resource_updated`].

use std::collections::HashMap;
use std::sync::Arc;

use tracing::Instrument;

use crate::Caller;
use crate::call::middleware;
use crate::context::ResourceNotifier;
use crate::context::{StateMap, ToolContext};
use crate::definition::common::{SourceLocation, defined_at};
use crate::definition::completion::{Completion, CompletionRef, CompletionRequest};
use crate::definition::params::Params;
use crate::definition::prompt::PromptDef;
use crate::definition::resource::{ResourceAddress, ResourceDef, ResourceRequest};
use crate::output::error::{ToolError, echo};
use crate::output::prompt_messages::PromptResult;
use crate::output::resource_content::ResourceContent;
use crate::permissions::PermissionSet;
use crate::registry::listeners::Listeners;
#[cfg(feature = "server")]
use crate::registry::listeners::Listening;
use crate::registry::view_cache::ViewCache;
use crate::registry::{Shared, ToolRegistry, ToolRegistryBuilder};

/// Resources and prompts added on the builder.
#[derive(Default)]
pub(crate) struct OfferingsBuilder {
    resources: Vec<ResourceDef>,
    prompts: Vec<PromptDef>,
}

impl ToolRegistryBuilder {
    /// Add a resource (or resource template) built at runtime (without the macro).
    ///
    /// ```
    /// use mcp_toolbelt::definition::ResourceDef;
    /// use mcp_toolbelt::output::ResourceContent;
    /// use mcp_toolbelt::{ToolContext, ToolRegistry};
    /// let motd = ResourceDef::fixed("demo://motd")
    ///     .name("motd")
    ///     .description("Message of the day")
    ///     .handler(|_request, _ctx| async { Ok(vec![ResourceContent::text("Hello")]) })
    ///     .build()
    ///     .unwrap();
    /// let registry = ToolRegistry::builder().include_linked(false).resource(motd).build().unwrap();
    /// assert_eq!(registry.list_resources()[0].address().to_string(), "demo://motd");
    /// ```
    pub fn resource(mut self, def: ResourceDef) -> Self {
        self.offerings.resources.push(def);
        self
    }

    /// Add a prompt built at runtime (without the macro).
    pub fn prompt(mut self, def: PromptDef) -> Self {
        self.offerings.prompts.push(def);
        self
    }
}

/// The built resources and prompts of one registry.
#[derive(Default)]
pub(crate) struct Offerings {
    /// Fixed URIs first (sorted by URI), then templates (sorted by template).
    resources: Vec<Arc<ResourceDef>>,
    fixed: HashMap<String, usize>,
    prompts: Vec<Arc<PromptDef>>,
    prompt_index: HashMap<String, usize>,
    views: ViewCache<Lists>,
    pub(crate) updated: Arc<Listeners<UpdateListener>>,
}

/// A listener of [`ToolRegistry::resource_updated`].
pub(crate) type UpdateListener = dyn Fn(&str) + Send + Sync;

/// The cached lists of one permission view.
struct Lists {
    resources: Arc<[Arc<ResourceDef>]>,
    templates: Arc<[Arc<ResourceDef>]>,
    prompts: Arc<[Arc<PromptDef>]>,
}

/// What collecting resources and prompts needs from the registry builder.
pub(crate) struct Collect<'a> {
    pub(crate) include_linked: bool,
    pub(crate) allowed: Option<&'a PermissionSet>,
    pub(crate) states: &'a StateMap,
}

impl OfferingsBuilder {
    /// Collect, check and index. Duplicate URIs, templates or prompt names and failed
    /// definitions go to `problems`; a missing state type fails at once (as for tools).
    pub(crate) fn build(
        self,
        collect: Collect<'_>,
        problems: &mut Vec<String>,
    ) -> Result<Offerings, String> {
        let mut resources = Vec::new();
        let mut prompts = Vec::new();
        if collect.include_linked {
            for defined in crate::registration::linked::<ResourceDef>() {
                match defined {
                    Ok(def) => resources.push(def),
                    Err(err) => problems.push(err.to_string()),
                }
            }
            for defined in crate::registration::linked::<PromptDef>() {
                match defined {
                    Ok(def) => prompts.push(def),
                    Err(err) => problems.push(err.to_string()),
                }
            }
        }
        resources.extend(self.resources);
        prompts.extend(self.prompts);
        let admitted = |required: &PermissionSet| {
            collect
                .allowed
                .is_none_or(|allowed| allowed.allows(required))
        };
        let missing = |requirements: &[crate::context::StateRequirement], what: String| {
            requirements
                .iter()
                .find(|req| !collect.states.contains(req.type_id))
                .map(|req| {
                    format!(
                        "{what} needs state {} but none was registered; call .state(value) on the registry builder",
                        req.type_name
                    )
                })
        };

        let mut seen: HashMap<String, Option<SourceLocation>> = HashMap::new();
        let mut kept = Vec::new();
        for def in resources {
            let key = def.address().to_string();
            if let Some(first) = seen.get(&key) {
                problems.push(format!(
                    "duplicate resource {key:?}: {}; change one of them",
                    defined_at(*first, def.source())
                ));
                continue;
            }
            seen.insert(key.clone(), def.source());
            if !admitted(def.permissions()) {
                continue;
            }
            if let Some(problem) = missing(def.requirements(), format!("resource {key:?}")) {
                return Err(problem);
            }
            kept.push(Arc::new(def));
        }
        kept.sort_by(|a, b| match (a.address(), b.address()) {
            (ResourceAddress::Fixed(x), ResourceAddress::Fixed(y)) => x.cmp(y),
            (ResourceAddress::Fixed(_), ResourceAddress::Template(_)) => std::cmp::Ordering::Less,
            (ResourceAddress::Template(_), ResourceAddress::Fixed(_)) => {
                std::cmp::Ordering::Greater
            }
            (ResourceAddress::Template(x), ResourceAddress::Template(y)) => {
                x.as_str().cmp(y.as_str())
            }
        });

        let mut names: HashMap<String, Option<SourceLocation>> = HashMap::new();
        let mut kept_prompts = Vec::new();
        for def in prompts {
            if let Some(first) = names.get(def.name()) {
                problems.push(format!(
                    "duplicate prompt name {:?}: {}; rename one of them",
                    def.name(),
                    defined_at(*first, def.source())
                ));
                continue;
            }
            names.insert(def.name().to_string(), def.source());
            if !admitted(def.permissions()) {
                continue;
            }
            if let Some(problem) = missing(def.requirements(), format!("prompt {:?}", def.name())) {
                return Err(problem);
            }
            kept_prompts.push(Arc::new(def));
        }
        kept_prompts.sort_by(|a, b| a.name().cmp(b.name()));

        Ok(Offerings {
            fixed: kept
                .iter()
                .enumerate()
                .filter_map(|(i, def)| match def.address() {
                    ResourceAddress::Fixed(uri) => Some((uri.clone(), i)),
                    ResourceAddress::Template(_) => None,
                })
                .collect(),
            resources: kept,
            prompt_index: kept_prompts
                .iter()
                .enumerate()
                .map(|(i, def)| (def.name().to_string(), i))
                .collect(),
            prompts: kept_prompts,
            ..Offerings::default()
        })
    }
}

impl Offerings {
    /// True when no resource, template or prompt is served.
    pub(crate) fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.prompts.is_empty()
    }

    fn lists(&self, caller: Option<&PermissionSet>) -> Arc<Lists> {
        let key = caller.map(|c| c.mask().clone());
        let allows = |required: &PermissionSet| caller.is_none_or(|c| c.allows(required));
        let visible = || self.resources.iter().filter(|d| allows(d.permissions()));
        self.views.get_or_compute(key, || Lists {
            resources: visible()
                .filter(|d| matches!(d.address(), ResourceAddress::Fixed(_)))
                .cloned()
                .collect(),
            templates: visible()
                .filter(|d| matches!(d.address(), ResourceAddress::Template(_)))
                .cloned()
                .collect(),
            prompts: self
                .prompts
                .iter()
                .filter(|d| allows(d.permissions()))
                .cloned()
                .collect(),
        })
    }

    /// The resource `uri` names, with its template variables, if the caller may read it:
    /// a fixed URI first, else the first matching template.
    fn resolve(
        &self,
        uri: &str,
        caller: Option<&PermissionSet>,
    ) -> Option<(Arc<ResourceDef>, Params)> {
        let allows = |def: &ResourceDef| caller.is_none_or(|c| c.allows(def.permissions()));
        if let Some(&index) = self.fixed.get(uri) {
            let def = &self.resources[index];
            if allows(def) {
                return Some((def.clone(), Params::new()));
            }
        }
        self.resources
            .iter()
            .filter(|def| matches!(def.address(), ResourceAddress::Template(_)) && allows(def))
            .find_map(|def| def.matches(uri).map(|params| (def.clone(), params)))
    }

    fn prompt(&self, name: &str, caller: Option<&PermissionSet>) -> Option<Arc<PromptDef>> {
        let def = &self.prompts[*self.prompt_index.get(name)?];
        caller
            .is_none_or(|c| c.allows(def.permissions()))
            .then(|| def.clone())
    }
}

/// The error for a resource the caller cannot read (unknown, or hidden by permissions:
/// both answer alike).
fn unknown_resource(uri: &str) -> ToolError {
    ToolError::not_found(format!("unknown resource: {}", echo(uri))).with_action(
        "List resources (resources/list) and resource templates (resources/templates/list) to find a URI that exists.",
    )
}

fn unknown_prompt(name: &str) -> ToolError {
    ToolError::not_found(format!("unknown prompt: {}", echo(name)))
        .with_action("List prompts (prompts/list) to find one that exists.")
}

impl ToolRegistry {
    fn offerings(&self) -> &Offerings {
        &self.shared.offerings
    }

    /// The context a handler gets: the registry's state, and a caller with this view's
    /// permissions when the context has only the local one.
    pub(super) fn prepare(&self, ctx: ToolContext) -> ToolContext {
        let mut ctx = ctx;
        ctx.states = self.shared.states.clone();
        ctx.notifier = Some(self.shared.clone());
        match self.view_permissions() {
            Some(permissions) if ctx.caller().is_local() => {
                ctx.with_caller(Caller::with_permissions(permissions.clone()))
            }
            _ => ctx,
        }
    }

    /// The fixed-URI resources (`resources/list`), sorted by URI.
    pub fn list_resources(&self) -> Arc<[Arc<ResourceDef>]> {
        self.offerings()
            .lists(self.view_permissions())
            .resources
            .clone()
    }

    /// The resource templates (`resources/templates/list`), sorted by template.
    pub fn list_resource_templates(&self) -> Arc<[Arc<ResourceDef>]> {
        self.offerings()
            .lists(self.view_permissions())
            .templates
            .clone()
    }

    /// The prompts (`prompts/list`), sorted by name.
    pub fn list_prompts(&self) -> Arc<[Arc<PromptDef>]> {
        self.offerings()
            .lists(self.view_permissions())
            .prompts
            .clone()
    }

    /// The definition of the resource (or template) `uri` resolves to, if this caller may
    /// read it.
    pub fn resource_for(&self, uri: &str) -> Option<Arc<ResourceDef>> {
        self.offerings()
            .resolve(uri, self.view_permissions())
            .map(|(def, _)| def)
    }

    /// The definition of prompt `name`, if this caller may get it.
    pub fn prompt_def(&self, name: &str) -> Option<Arc<PromptDef>> {
        self.offerings().prompt(name, self.view_permissions())
    }

    /// Read the resource `uri`: a fixed URI, or the first template (in template order) it
    /// matches, whose variables become the fn's parameters.
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) when no served resource
    /// has this URI (servers answer JSON-RPC -32002); `Validation` when a variable does not
    /// convert to its parameter's type (-32602); otherwise the handler's own error, a
    /// time-out, a cancellation or a captured panic (-32603).
    ///
    /// ```
    /// use mcp_toolbelt::definition::ResourceDef;
    /// use mcp_toolbelt::output::ResourceContent;
    /// use mcp_toolbelt::{ToolContext, ToolRegistry};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let def = ResourceDef::template("demo://square/{n}")
    ///     .name("square")
    ///     .description("The square of n")
    ///     .handler(|request, _ctx| async move {
    ///         let n: i64 = request.params().required("n")?;
    ///         Ok(vec![ResourceContent::text((n * n).to_string())])
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let registry = ToolRegistry::builder().include_linked(false).resource(def).build().unwrap();
    /// let contents = registry.read_resource("demo://square/12", ToolContext::default()).await.unwrap();
    /// assert_eq!(contents[0].as_text(), Some("144"));
    /// assert!(registry.read_resource("demo://square/x", ToolContext::default()).await.is_err());
    /// # });
    /// ```
    pub async fn read_resource(
        &self,
        uri: &str,
        ctx: ToolContext,
    ) -> Result<Vec<ResourceContent>, ToolError> {
        let (def, params) = self
            .offerings()
            .resolve(uri, self.view_permissions())
            .ok_or_else(|| unknown_resource(uri))?;
        let ctx = self.prepare(ctx);
        let span = tracing::info_span!(
            "resource_read",
            uri,
            request_id = ctx.request_id().unwrap_or(""),
            subject = ctx.caller().subject(),
            client_id = ctx.caller().client_id(),
        );
        let request = ResourceRequest::new(uri, params);
        let contents = self
            .guard(
                format!("resource '{uri}'"),
                &ctx,
                def.read_unchecked(request, ctx.clone()),
            )
            .instrument(span)
            .await?;
        let mime = def.mime_type();
        Ok(contents
            .into_iter()
            .map(|piece| piece.resolved(uri, mime))
            .collect())
    }

    /// Render the prompt `name` with `arguments` (each converted to its parameter's type).
    ///
    /// Errors: `NotFound` for an unknown prompt (servers answer -32602); `Validation` for a
    /// missing required argument, an unknown one, or one that does not convert (-32602);
    /// otherwise the handler's error (-32603).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Params,
        ctx: ToolContext,
    ) -> Result<PromptResult, ToolError> {
        let def = self
            .offerings()
            .prompt(name, self.view_permissions())
            .ok_or_else(|| unknown_prompt(name))?;
        def.check_arguments(&arguments)?;
        let ctx = self.prepare(ctx);
        let span = tracing::info_span!(
            "prompt_get",
            prompt = name,
            request_id = ctx.request_id().unwrap_or(""),
            subject = ctx.caller().subject(),
            client_id = ctx.caller().client_id(),
        );
        self.guard(
            format!("prompt '{name}'"),
            &ctx,
            def.get_unchecked(arguments, ctx.clone()),
        )
        .instrument(span)
        .await
    }

    /// Suggest values for an argument of a prompt or a resource template variable, with the
    /// completion fn named in its attribute; no fn means no suggestions.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        request: CompletionRequest,
        ctx: ToolContext,
    ) -> Result<Completion, ToolError> {
        let offerings = self.offerings();
        let caller = self.view_permissions();
        let handler = match reference {
            CompletionRef::Prompt(name) => {
                let def = offerings
                    .prompt(name, caller)
                    .ok_or_else(|| unknown_prompt(name))?;
                if !def.arguments().iter().any(|a| a.name() == request.argument) {
                    return Err(ToolError::validation(format!(
                        "prompt '{name}' has no argument `{}`",
                        request.argument
                    )));
                }
                def.completers.get(&request.argument).cloned()
            }
            CompletionRef::ResourceTemplate(template) => {
                let def = offerings
                    .resources
                    .iter()
                    .find(|def| {
                        matches!(def.address(), ResourceAddress::Template(t) if t.as_str() == template)
                            && caller.is_none_or(|c| c.allows(def.permissions()))
                    })
                    .ok_or_else(|| {
                        ToolError::not_found(format!("unknown resource template: {}", echo(template)))
                            .with_action("List resource templates (resources/templates/list) to find one that exists.")
                    })?;
                let ResourceAddress::Template(parsed) = def.address() else {
                    return Err(ToolError::internal(
                        "resource template index is inconsistent",
                    ));
                };
                if !parsed.variables().any(|v| v == request.argument) {
                    return Err(ToolError::validation(format!(
                        "resource template '{template}' has no variable `{}`",
                        request.argument
                    )));
                }
                def.completers.get(&request.argument).cloned()
            }
        };
        // An argument without a completion fn has no suggestions.
        let Some(handler) = handler else {
            return Ok(Completion::empty());
        };
        let ctx = self.prepare(ctx);
        let label = format!("completion of `{}`", request.argument);
        let work = handler.complete(request, ctx.clone());
        self.guard(label, &ctx, work).await
    }

    async fn guard<T: Send + 'static>(
        &self,
        label: String,
        ctx: &ToolContext,
        work: futures::future::BoxFuture<'static, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        let budget = self.shared.middleware.default_timeout;
        middleware::guard(label, budget, ctx.cancellation().clone(), work).await
    }
}

impl ToolRegistry {
    /// Announce that the contents of the resource `uri` changed: servers send
    /// `notifications/resources/updated` to every session subscribed to it.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = seen.clone();
    /// registry.on_resource_updated(move |uri| sink.lock().unwrap().push(uri.to_string()));
    /// registry.resource_updated("trac://wiki/WikiStart");
    /// assert_eq!(*seen.lock().unwrap(), ["trac://wiki/WikiStart"]);
    /// ```
    pub fn resource_updated(&self, uri: &str) {
        self.shared.resource_updated(uri);
    }

    /// Call `listener` with the URI on every [`resource_updated`](Self::resource_updated).
    pub fn on_resource_updated(&self, listener: impl Fn(&str) + Send + Sync + 'static) {
        self.shared.offerings.updated.add(Arc::new(listener));
    }

    /// [`on_resource_updated`](Self::on_resource_updated) until the returned guard is
    /// dropped (a server's listener, which must not outlive the server).
    #[cfg(feature = "server")]
    pub(crate) fn on_resource_updated_until_dropped(
        &self,
        listener: impl Fn(&str) + Send + Sync + 'static,
    ) -> Listening<UpdateListener> {
        self.shared
            .offerings
            .updated
            .add_until_dropped(Arc::new(listener))
    }

    /// True when the registry serves at least one resource or resource template.
    pub fn has_resources(&self) -> bool {
        !self.shared.offerings.resources.is_empty()
    }

    /// True when the registry serves at least one prompt.
    pub fn has_prompts(&self) -> bool {
        !self.shared.offerings.prompts.is_empty()
    }

    /// The prompts and resource templates that have at least one completion fn, as
    /// references (for a `completions` capability).
    pub fn completable(&self) -> Vec<CompletionRef> {
        let offerings = &self.shared.offerings;
        let templates = offerings
            .resources
            .iter()
            .filter_map(|def| match def.address() {
                ResourceAddress::Template(t) if def.completable().next().is_some() => {
                    Some(CompletionRef::ResourceTemplate(t.as_str().to_string()))
                }
                _ => None,
            });
        let prompts = offerings
            .prompts
            .iter()
            .filter(|def| def.completable().next().is_some())
            .map(|def| CompletionRef::Prompt(def.name().to_string()));
        templates.chain(prompts).collect()
    }
}

impl ResourceNotifier for Shared {
    fn resource_updated(&self, uri: &str) {
        for listener in self.offerings.updated.current() {
            listener(uri);
        }
    }
}
