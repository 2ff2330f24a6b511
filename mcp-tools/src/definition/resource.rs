//! Resources: [`ResourceDef`] (one fixed URI, or a [`UriTemplate`] family), built by
//! `#[mcp_resource]` or by hand with [`ResourceDef::fixed`] / [`ResourceDef::template`].

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::context::{StateRequirement, ToolContext};
use crate::definition::common::{
    DefCommon, DefError, SourceLocation, checked_handler, def_common_accessors,
    def_common_builder_methods,
};
use crate::definition::completion::{Completers, Completion, CompletionRequest};
use crate::definition::params::Params;
use crate::definition::uri_template::{UriTemplate, has_scheme};
use crate::output::error::ToolError;
use crate::output::resource_content::ResourceContent;
use crate::permissions::PermissionSet;

/// One read of a resource: the URI asked for and, for a template, its variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    uri: String,
    params: Params,
}

impl ResourceRequest {
    /// A request for `uri` with these template variables.
    pub fn new(uri: impl Into<String>, params: Params) -> ResourceRequest {
        ResourceRequest {
            uri: uri.into(),
            params,
        }
    }

    /// The URI being read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The template variables the URI matched (empty for a fixed URI).
    pub fn params(&self) -> &Params {
        &self.params
    }
}

/// Reads a resource. Any
/// `Fn(ResourceRequest, ToolContext) -> impl Future<Output = Result<Vec<ResourceContent>, ToolError>>`
/// is a handler.
pub trait ResourceHandler: Send + Sync + 'static {
    /// Read once.
    fn read(
        &self,
        request: ResourceRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Vec<ResourceContent>, ToolError>>;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContent>, ToolError>> + Send + 'static,
{
    fn read(
        &self,
        request: ResourceRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Vec<ResourceContent>, ToolError>> {
        Box::pin(self(request, ctx))
    }
}

/// Where a resource lives: one URI, or every URI matching a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceAddress {
    /// A single resource (`resources/list`).
    Fixed(String),
    /// A family of resources (`resources/templates/list`).
    Template(UriTemplate),
}

impl fmt::Display for ResourceAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceAddress::Fixed(uri) => f.write_str(uri),
            ResourceAddress::Template(template) => f.write_str(template.as_str()),
        }
    }
}

/// Everything the registry knows about one resource or resource template.
///
/// `#[mcp_resource]` builds one per annotated fn; [`ResourceDef::fixed`] and
/// [`ResourceDef::template`] build one at runtime.
///
/// ```
/// use mcp_toolbelt::definition::ResourceDef;
/// use mcp_toolbelt::output::ResourceContent;
/// let def = ResourceDef::template("notes://{id}")
///     .name("note")
///     .description("One note, by id")
///     .mime_type("text/markdown")
///     .handler(|request, _ctx| async move {
///         let id: u32 = request.params().required("id")?;
///         Ok(vec![ResourceContent::text(format!("# Note {id}"))])
///     })
///     .build()
///     .unwrap();
/// assert_eq!(def.address().to_string(), "notes://{id}");
/// assert!(def.matches("notes://7").is_some());
/// ```
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) address: ResourceAddress,
    pub(crate) name: Cow<'static, str>,
    pub(crate) title: Option<Cow<'static, str>>,
    pub(crate) description: Cow<'static, str>,
    pub(crate) mime_type: Option<Cow<'static, str>>,
    pub(crate) permissions: PermissionSet,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) requirements: Vec<StateRequirement>,
    pub(crate) completers: Completers,
    pub(crate) source: Option<SourceLocation>,
}

impl fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceDef")
            .field("address", &self.address)
            .field("name", &self.name)
            .field("permissions", &self.permissions)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl ResourceDef {
    /// Start the definition of the single resource at `uri`.
    pub fn fixed(uri: impl Into<Cow<'static, str>>) -> ResourceDefBuilder {
        ResourceDefBuilder::new(Address::Fixed(uri.into()))
    }

    /// Start the definition of the resources matching the URI template `template`
    /// (`{name}`: one path segment; `{+name}`: may contain `/`).
    pub fn template(template: impl Into<Cow<'static, str>>) -> ResourceDefBuilder {
        ResourceDefBuilder::new(Address::Template(template.into()))
    }

    /// The URI or template.
    pub fn address(&self) -> &ResourceAddress {
        &self.address
    }

    /// The programmatic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    def_common_accessors!(
        description: "The description shown to clients.",
        requirements: "State types the handler's extractors need.",
        source: "Where the resource was defined, for macro-built ones.",
    );

    /// The declared MIME type, if any.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The arguments (template variables) that have a completion fn.
    pub fn completable(&self) -> impl Iterator<Item = &str> {
        self.completers.names()
    }

    /// The template variables when `uri` is this resource (empty for a fixed URI).
    pub fn matches(&self, uri: &str) -> Option<Params> {
        match &self.address {
            ResourceAddress::Fixed(fixed) => (fixed == uri).then(Params::new),
            ResourceAddress::Template(template) => template.matches(uri),
        }
    }

    /// Run the handler directly (no permission check, no middleware): mostly for tests.
    pub fn read_unchecked(
        &self,
        request: ResourceRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Vec<ResourceContent>, ToolError>> {
        self.handler.read(request, ctx)
    }
}

/// A definition serializes to its `resources/list` entry (a fixed URI: `uri`) or its
/// `resources/templates/list` entry (a template: `uriTemplate`).
///
/// ```
/// use mcp_toolbelt::definition::ResourceDef;
/// use mcp_toolbelt::output::ResourceContent;
/// let def = ResourceDef::fixed("demo://motd")
///     .name("motd")
///     .description("Message of the day")
///     .handler(|_request, _ctx| async { Ok(vec![ResourceContent::text("Hello")]) })
///     .build()
///     .unwrap();
/// assert_eq!(serde_json::to_value(&def).unwrap()["uri"], "demo://motd");
/// ```
impl Serialize for ResourceDef {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.address {
            ResourceAddress::Fixed(uri) => map.serialize_entry("uri", uri)?,
            ResourceAddress::Template(template) => {
                map.serialize_entry("uriTemplate", template.as_str())?
            }
        }
        map.serialize_entry("name", &self.name)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("description", &self.description)?;
        if let Some(mime_type) = &self.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        map.end()
    }
}

enum Address {
    Fixed(Cow<'static, str>),
    Template(Cow<'static, str>),
}

/// Builder for a [`ResourceDef`]; `#[mcp_resource]` expands to calls of it.
#[must_use]
pub struct ResourceDefBuilder {
    address: Address,
    name: Option<Cow<'static, str>>,
    common: DefCommon,
    mime_type: Option<Cow<'static, str>>,
    handler: Option<Arc<dyn ResourceHandler>>,
    completers: Completers,
}

impl ResourceDefBuilder {
    fn new(address: Address) -> ResourceDefBuilder {
        ResourceDefBuilder {
            address,
            name: None,
            common: DefCommon::default(),
            mime_type: None,
            handler: None,
            completers: Completers::default(),
        }
    }

    /// The programmatic name (required).
    pub fn name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    def_common_builder_methods!(
        description: "The description shown to clients (required, non-empty).",
        permissions: "Permissions a caller needs to list and read it.",
        source: "Where the resource is defined.",
    );

    /// The MIME type of the contents (the default of every piece read).
    pub fn mime_type(mut self, mime_type: impl Into<Cow<'static, str>>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The handler: an `async` closure or fn of the request and the context.
    pub fn handler<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContent>, ToolError>> + Send + 'static,
    {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The completion fn of the template variable `variable`.
    pub fn complete<F, Fut>(mut self, variable: impl Into<String>, handler: F) -> Self
    where
        F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ToolError>> + Send + 'static,
    {
        self.completers.add(variable.into(), Arc::new(handler));
        self
    }

    /// Check and build. Fails on a URI without a scheme, an invalid template, a missing
    /// name, description or handler, or a completion fn for a variable the template lacks.
    pub fn build(self) -> Result<ResourceDef, DefError> {
        let shown = match &self.address {
            Address::Fixed(uri) | Address::Template(uri) => uri.to_string(),
        };
        let fail = |problem: String| DefError::new("resource", &shown, problem);
        let address = match self.address {
            Address::Fixed(uri) => {
                if !has_scheme(&uri) {
                    return Err(fail(
                        "the URI does not start with a scheme such as `myapp://`".into(),
                    ));
                }
                if uri.contains(['{', '}']) {
                    return Err(fail(
                        "the URI has `{...}` in it; use ResourceDef::template for a URI template"
                            .into(),
                    ));
                }
                ResourceAddress::Fixed(uri.into_owned())
            }
            Address::Template(template) => ResourceAddress::Template(
                UriTemplate::parse(&template).map_err(|e| fail(e.problem().to_string()))?,
            ),
        };
        let name = match self.name {
            Some(name) if !name.trim().is_empty() => name,
            _ => return Err(fail("has no name; call .name(\"...\")".into())),
        };
        let description = self.common.checked_description().map_err(&fail)?;
        let handler = checked_handler(self.handler).map_err(&fail)?;
        let variables: Vec<&str> = match &address {
            ResourceAddress::Fixed(_) => Vec::new(),
            ResourceAddress::Template(template) => template.variables().collect(),
        };
        if let Some(unknown) = self.completers.names().find(|n| !variables.contains(n)) {
            return Err(fail(format!(
                "has a completion fn for `{unknown}`, which is not a template variable"
            )));
        }
        Ok(ResourceDef {
            address,
            name,
            title: self.common.title,
            description,
            mime_type: self.mime_type,
            permissions: PermissionSet::new(self.common.permissions.iter()),
            handler,
            requirements: self.common.requirements,
            completers: self.completers,
            source: self.common.source,
        })
    }
}
