//! The request context handed to tools, and extractors (`State<T>`, `ToolContext`,
//! [`Caller`]).
//!
//! **What counts as an extractor.** A tool parameter whose type is written `State<T>`,
//! `ToolContext` or `Caller` (bare or under `mcp_toolbelt::`), or any parameter marked
//! `#[extract]`, is built from the request context through [`FromContext`] and is *not*
//! part of the input schema. Every other parameter is an argument.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::caller::{Caller, LOCAL};
use crate::elicitation::{Elicitation, requested_schema_for};
use crate::output::error::ToolError;
use crate::sampling::{SamplingRequest, SamplingResult};
use crate::schema::JsonObject;

/// Shared values registered on the registry, looked up by type.
#[derive(Default, Clone)]
pub(crate) struct StateMap(HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>);

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.0.insert(
            TypeId::of::<T>(),
            (value as Arc<dyn Any + Send + Sync>, type_name::<T>()),
        );
    }

    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let (value, _) = self.0.get(&TypeId::of::<T>())?;
        value.clone().downcast::<T>().ok()
    }
}

/// The one thing a context needs from the registry serving its call: telling it that a
/// resource changed. (A narrow interface, so the call path does not depend on the
/// registry.)
pub(crate) trait ResourceNotifier: Send + Sync {
    /// Announce that the contents of `uri` changed.
    fn resource_updated(&self, uri: &str);
}

/// Severity of a log message sent to the client (`notifications/message`), lowest first.
///
/// ```
/// use mcp_toolbelt::context::LogLevel;
/// assert!(LogLevel::Error > LogLevel::Info);
/// assert_eq!(LogLevel::Warning.as_str(), "warning");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's protocol name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// What a tool can ask the client for during a call: each is a client request
/// (`sampling/createMessage`, `elicitation/create`, `roots/list`) that the client must have
/// declared the capability for.
///
/// ```
/// use mcp_toolbelt::context::ClientFeature;
/// assert_eq!(ClientFeature::Roots.method(), "roots/list");
/// assert_eq!(ClientFeature::Elicitation.capability(), "elicitation");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ClientFeature {
    /// `sampling/createMessage`: the client's LLM answers a prompt.
    Sampling,
    /// `elicitation/create`: the client's user fills in a form.
    Elicitation,
    /// `roots/list`: the client's file-system roots.
    Roots,
}

impl ClientFeature {
    /// The request's method name.
    pub fn method(self) -> &'static str {
        match self {
            ClientFeature::Sampling => "sampling/createMessage",
            ClientFeature::Elicitation => "elicitation/create",
            ClientFeature::Roots => "roots/list",
        }
    }

    /// The feature whose request is `method`.
    #[cfg(feature = "server")]
    pub(crate) fn of_method(method: &str) -> Option<ClientFeature> {
        [
            ClientFeature::Sampling,
            ClientFeature::Elicitation,
            ClientFeature::Roots,
        ]
        .into_iter()
        .find(|feature| feature.method() == method)
    }

    /// The client capability it needs (`sampling`, `elicitation`, `roots`).
    pub fn capability(self) -> &'static str {
        match self {
            ClientFeature::Sampling => "sampling",
            ClientFeature::Elicitation => "elicitation",
            ClientFeature::Roots => "roots",
        }
    }
}

/// The future every [`ClientPeer`] method returns: boxed, `Send`, owning what it needs
/// (`'static`), so a tool can await it after the borrow of the context ends. The same type
/// as `futures::future::BoxFuture<'static, T>`; an implementation returns
/// `Box::pin(async move { … })`.
pub type PeerFuture<T> = BoxFuture<'static, T>;

/// The client side of the current request, as seen from a tool: where progress and log
/// notifications go and where sampling/elicitation requests are sent.
///
/// The server layer implements it over its transport; tests may implement it to record
/// what a tool sends. Methods without a client capability answer with a clear error.
pub trait ClientPeer: Send + Sync {
    /// Send a progress notification for the current request.
    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> PeerFuture<()>;

    /// Send a log message notification (filtered by the client's `logging/setLevel`).
    fn log(&self, level: LogLevel, logger: Option<String>, data: Value) -> PeerFuture<()>;

    /// Ask the client to sample an LLM (`sampling/createMessage`); `params` and the result
    /// are the protocol's JSON objects.
    fn create_message(&self, params: Value) -> PeerFuture<Result<Value, ToolError>> {
        let _ = params;
        Box::pin(async {
            Err(ToolError::permission_denied(
                "the client does not support sampling (sampling/createMessage)",
            ))
        })
    }

    /// Ask the client to elicit input from its user (`elicitation/create`).
    fn elicit(&self, params: Value) -> PeerFuture<Result<Value, ToolError>> {
        let _ = params;
        Box::pin(async {
            Err(ToolError::permission_denied(
                "the client does not support elicitation (elicitation/create)",
            ))
        })
    }

    /// Ask the client for `feature` with `params` (`{}` for roots). `key` names the request
    /// in a 2026-07-28 `input_required` result (`None`: the feature and the request's
    /// position, e.g. `elicitation-0`); other transports ignore it. By default sampling and
    /// elicitation go to [`create_message`](Self::create_message) and
    /// [`elicit`](Self::elicit), and roots are unsupported.
    fn request_input(
        &self,
        key: Option<&str>,
        feature: ClientFeature,
        params: Value,
    ) -> PeerFuture<Result<Value, ToolError>> {
        let _ = key;
        match feature {
            ClientFeature::Sampling => self.create_message(params),
            ClientFeature::Elicitation => self.elicit(params),
            ClientFeature::Roots => Box::pin(async {
                Err(ToolError::permission_denied(
                    "the client does not support roots (roots/list)",
                ))
            }),
        }
    }

    /// True when the client declared the capability `feature` needs. Default: `false`.
    fn declares(&self, feature: ClientFeature) -> bool {
        let _ = feature;
        false
    }

    /// True when this request continues a call whose earlier round asked the client (MCP
    /// 2026-07-28: the retry brought back a verified `requestState`). Default: `false`.
    fn resumed(&self) -> bool {
        false
    }
}

/// Everything a tool may want to know about the request it serves: the cancellation
/// token, the [`Caller`], the request id, registered state, and the client (progress,
/// logging, sampling, elicitation).
///
/// A `ToolContext` parameter in an `#[mcp_tool]` fn is filled in by the registry. Outside a
/// server, `ToolContext::default()` is a context with no client, the local caller and a
/// fresh cancellation token.
///
/// ```
/// use mcp_toolbelt::ToolContext;
/// let ctx = ToolContext::default().with_request_id("42");
/// assert_eq!(ctx.request_id(), Some("42"));
/// assert!(ctx.caller().is_local());
/// assert!(!ctx.is_cancelled());
/// ```
#[derive(Clone)]
pub struct ToolContext {
    request_id: Option<Arc<str>>,
    cancellation: CancellationToken,
    /// `None`: the local caller (no allocation on the stdio path).
    caller: Option<Arc<Caller>>,
    pub(crate) states: Arc<StateMap>,
    peer: Option<Arc<dyn ClientPeer>>,
    /// Where `resource_updated` goes: the registry serving the call (set by it).
    pub(crate) notifier: Option<Arc<dyn ResourceNotifier>>,
    /// A server observes the request (its span is the call's): the middleware opens no
    /// `tool_call` span of its own.
    observed: bool,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("request_id", &self.request_id)
            .field("cancelled", &self.cancellation.is_cancelled())
            .field("caller", self.caller())
            .field("has_peer", &self.peer.is_some())
            .finish()
    }
}

impl Default for ToolContext {
    fn default() -> Self {
        ToolContext::for_request(None, CancellationToken::new())
    }
}

impl ToolContext {
    /// The context of one request before the registry fills in its state: no caller, no
    /// peer, the registry-less empty state (shared, not allocated per call).
    pub(crate) fn for_request(
        request_id: Option<Arc<str>>,
        cancellation: CancellationToken,
    ) -> ToolContext {
        static NO_STATES: std::sync::OnceLock<Arc<StateMap>> = std::sync::OnceLock::new();
        ToolContext {
            request_id,
            cancellation,
            caller: None,
            states: NO_STATES.get_or_init(Arc::default).clone(),
            peer: None,
            notifier: None,
            observed: false,
        }
    }

    /// Mark the request as one a server observes (`server/telemetry`: `Observation`).
    #[cfg(feature = "server")]
    pub(crate) fn observed(mut self) -> Self {
        self.observed = true;
        self
    }

    /// Whether a server observes the request ([`observed`](Self::observed)).
    pub(crate) fn is_observed(&self) -> bool {
        self.observed
    }

    /// Set the request id (the JSON-RPC id, as text).
    pub fn with_request_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Use `token` as this request's cancellation token.
    ///
    /// ```
    /// let token = tokio_util::sync::CancellationToken::new();
    /// let ctx = mcp_toolbelt::ToolContext::default().with_cancellation(token.clone());
    /// token.cancel();
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = token;
        self
    }

    /// Set who is calling (the server sets it from the transport's authentication; a
    /// [`ToolRegistry::view`](crate::ToolRegistry::view) sets a caller with its permissions when the
    /// context has only the local one).
    ///
    /// ```
    /// use mcp_toolbelt::{Caller, PermissionSet, ToolContext};
    /// let alice = Caller::new(Some("alice".into()), None, vec![], PermissionSet::empty(), Default::default());
    /// let ctx = ToolContext::default().with_caller(alice);
    /// assert_eq!(ctx.caller().subject(), Some("alice"));
    /// ```
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = (!caller.is_local()).then(|| Arc::new(caller));
        self
    }

    /// Attach the client side of the request.
    pub fn with_peer(mut self, peer: Arc<dyn ClientPeer>) -> Self {
        self.peer = Some(peer);
        self
    }

    /// The request id, when the call came through a protocol request.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// Who is calling: the subject, client, scopes, permissions and kept claims the
    /// transport's authentication established, or [`Caller::local`] (stdio, a server
    /// without tokens, the command line, a direct [`ToolRegistry`](crate::ToolRegistry) call).
    ///
    /// ```
    /// assert_eq!(mcp_toolbelt::ToolContext::default().caller().subject(), None);
    /// ```
    pub fn caller(&self) -> &Caller {
        self.caller.as_deref().unwrap_or(&LOCAL)
    }

    /// The request's cancellation token: it fires on `notifications/cancelled` or time-out.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// True once the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    /// The client side of the request, when there is one.
    pub fn peer(&self) -> Option<&Arc<dyn ClientPeer>> {
        self.peer.as_ref()
    }

    /// Report progress to the client; a no-op when there is no client or the request
    /// carried no progress token.
    ///
    /// ```
    /// # tokio_test_block(async {
    /// mcp_toolbelt::ToolContext::default().progress(1.0, Some(10.0), "one of ten").await;
    /// # });
    /// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
    /// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    /// # }
    /// ```
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(peer) = &self.peer {
            peer.progress(progress, total, Some(message.into())).await;
        }
    }

    /// Send a log message to the client; a no-op without a client.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) {
        if let Some(peer) = &self.peer {
            peer.log(level, None, data.into()).await;
        }
    }

    /// Ask the client to sample an LLM; an error when there is no client or it lacks the
    /// capability.
    ///
    /// On MCP 2026-07-28 and later (no session) a `tools/call` that asks ends with
    /// `input_required`, and the client's retry runs the tool **again from the start**:
    /// this call, and every earlier one, then returns the client's recorded answer. Keep the
    /// code before a question idempotent and ask the same questions in the same order on
    /// every run (`docs/resumable.md`). Legacy sessions send a real request and wait.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // Outside a server there is no client to ask.
    /// let err = mcp_toolbelt::ToolContext::default()
    ///     .create_message(serde_json::json!({ "messages": [], "maxTokens": 10 }))
    ///     .await
    ///     .unwrap_err();
    /// assert!(err.message().contains("cannot sample"));
    /// # });
    /// ```
    pub async fn create_message(&self, params: Value) -> Result<Value, ToolError> {
        match &self.peer {
            Some(peer) => peer.create_message(params).await,
            None => Err(ToolError::permission_denied(
                "no client is attached to this call, so it cannot sample",
            )),
        }
    }

    /// Ask the client to elicit input from its user; an error when there is no client or it
    /// lacks the capability. On MCP 2026-07-28 the tool runs again on the client's retry,
    /// as [`create_message`](Self::create_message) describes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let err = mcp_toolbelt::ToolContext::default()
    ///     .elicit(serde_json::json!({ "message": "Your name?", "requestedSchema": {} }))
    ///     .await
    ///     .unwrap_err();
    /// assert!(err.message().contains("cannot elicit"));
    /// # });
    /// ```
    pub async fn elicit(&self, params: Value) -> Result<Value, ToolError> {
        match &self.peer {
            Some(peer) => peer.elicit(params).await,
            None => Err(ToolError::permission_denied(
                "no client is attached to this call, so it cannot elicit input",
            )),
        }
    }

    /// Ask the client's user to fill in the form `T` (`elicitation/create`, the
    /// `requestedSchema` generated from `T` by
    /// [`requested_schema_for`]) and get the answer
    /// as `T`. The typed form of [`elicit`](Self::elicit), which stays for what a type cannot
    /// express (URL mode, a schema built at run time). On MCP 2026-07-28 the tool runs again
    /// on the client's retry, as [`create_message`](Self::create_message) describes.
    ///
    /// `T` must be a flat struct of strings, numbers, booleans and unit-variant enums
    /// (`mcp_toolbelt::elicitation` lists the shapes). A compile-time check is not possible
    /// (the schema is generated at run time), so the check runs at the first ask, once per
    /// type; call `requested_schema_for::<T>()` in a unit test to catch a bad type before.
    ///
    /// # Errors
    ///
    /// - `internal_error` naming the field when `T` is not a form elicitation allows
    ///   (nothing is sent);
    /// - `upstream_error` when the client's answer does not deserialize into `T`;
    /// - the errors of [`elicit`](Self::elicit) (no client, no capability, time-out).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use mcp_toolbelt::elicitation::Elicitation;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm {
    ///     /// Delete the branch too?
    ///     delete_branch: bool,
    /// }
    ///
    /// async fn ask(ctx: &mcp_toolbelt::ToolContext) -> Result<bool, mcp_toolbelt::ToolError> {
    ///     Ok(match ctx.elicit_as::<Confirm>("Merge the pull request?").await? {
    ///         Elicitation::Accepted(answer) => answer.delete_branch,
    ///         Elicitation::Declined | Elicitation::Cancelled => false,
    ///     })
    /// }
    /// // Outside a server there is no client to ask.
    /// let err = ask(&mcp_toolbelt::ToolContext::default()).await.unwrap_err();
    /// assert!(err.message().contains("cannot elicit"));
    /// # });
    /// ```
    pub async fn elicit_as<T>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ToolError>
    where
        T: JsonSchema + DeserializeOwned + 'static,
    {
        let schema = requested_schema_for::<T>().map_err(|err| {
            ToolError::internal(err.to_string()).with_action(
                "Make the form type a flat struct of strings, numbers, booleans and unit-variant enums (see mcp_toolbelt::elicitation).",
            )
        })?;
        let params = serde_json::json!({ "message": message.into(), "requestedSchema": *schema });
        Elicitation::from_result(self.elicit(params).await?)
    }

    /// Ask the client's LLM (`sampling/createMessage`) with a typed request and get a typed
    /// result: the typed form of [`create_message`](Self::create_message), which stays for
    /// what [`SamplingRequest`] does not cover (tools, `metadata`). On MCP 2026-07-28 the
    /// tool runs again on the client's retry, as `create_message` describes.
    ///
    /// # Errors
    ///
    /// `upstream_error` when the client's result is not a `sampling/createMessage` result;
    /// the errors of [`create_message`](Self::create_message) (no client, no capability,
    /// time-out).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use mcp_toolbelt::sampling::SamplingRequest;
    /// let ctx = mcp_toolbelt::ToolContext::default();
    /// let asked = ctx.sample(SamplingRequest::new(50).user("2+2?")).await;
    /// assert!(asked.unwrap_err().message().contains("cannot sample")); // no client here
    /// # });
    /// ```
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, ToolError> {
        let params = serde_json::to_value(&request).map_err(|err| {
            ToolError::internal(format!("cannot write the sampling request: {err}"))
        })?;
        SamplingResult::from_result(self.create_message(params).await?)
    }

    /// Ask the client for its file-system roots (`roots/list`; the result is the protocol's
    /// `ListRootsResult` object); an error when there is no client or it lacks the
    /// capability. On MCP 2026-07-28 the tool runs again on the client's retry, as
    /// [`create_message`](Self::create_message) describes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let err = mcp_toolbelt::ToolContext::default().list_roots().await.unwrap_err();
    /// assert!(err.message().contains("cannot list"));
    /// # });
    /// ```
    pub async fn list_roots(&self) -> Result<Value, ToolError> {
        match &self.peer {
            Some(peer) => {
                peer.request_input(
                    None,
                    ClientFeature::Roots,
                    Value::Object(Default::default()),
                )
                .await
            }
            None => Err(ToolError::permission_denied(
                "no client is attached to this call, so it cannot list the client's roots",
            )),
        }
    }

    /// Ask the client for `feature` under a name of the tool's choosing: on MCP 2026-07-28
    /// `key` is the request's key in the `input_required` result's `inputRequests` and in
    /// the retry's `inputResponses` (the default keys of [`elicit`](Self::elicit) and the
    /// others are the feature and the request's position, e.g. `elicitation-0`). Several
    /// requests awaited together (`tokio::join!`) go to the client in one round. On legacy
    /// sessions the key is not sent. `params` is the request's JSON params (`{}` for
    /// roots).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use mcp_toolbelt::context::ClientFeature;
    /// let ctx = mcp_toolbelt::ToolContext::default();
    /// let asked = ctx.request_input("confirm", ClientFeature::Elicitation, serde_json::json!({
    ///     "message": "Delete it?",
    ///     "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    /// }));
    /// assert!(asked.await.is_err()); // no client outside a server
    /// # });
    /// ```
    pub async fn request_input(
        &self,
        key: &str,
        feature: ClientFeature,
        params: Value,
    ) -> Result<Value, ToolError> {
        match &self.peer {
            Some(peer) => peer.request_input(Some(key), feature, params).await,
            None => Err(ToolError::permission_denied(format!(
                "no client is attached to this call, so it cannot send {}",
                feature.method()
            ))),
        }
    }

    /// True when the client declared the capability `feature` needs (on 2026-07-28, in
    /// this request's `_meta`). Asking for an undeclared feature fails (-32021 on
    /// 2026-07-28), so a tool that can do without it asks only when this is true.
    ///
    /// ```
    /// use mcp_toolbelt::context::ClientFeature;
    /// assert!(!mcp_toolbelt::ToolContext::default().client_declares(ClientFeature::Sampling));
    /// ```
    pub fn client_declares(&self, feature: ClientFeature) -> bool {
        self.peer
            .as_ref()
            .is_some_and(|peer| peer.declares(feature))
    }

    /// True when this run continues a call whose earlier round asked the client: on MCP
    /// 2026-07-28 the fn runs again from the start on the client's retry, and the retry
    /// brought back the `requestState` the server sealed (verified before the fn runs).
    /// Code with side effects before a question can use it to tell a retry from a first
    /// run.
    ///
    /// ```
    /// assert!(!mcp_toolbelt::ToolContext::default().resumed());
    /// ```
    pub fn resumed(&self) -> bool {
        self.peer.as_ref().is_some_and(|peer| peer.resumed())
    }

    /// Announce that the resource `uri` changed (e.g. a tool just edited the wiki page
    /// behind `trac://wiki/{name}`): sessions subscribed to it get
    /// `notifications/resources/updated`. A no-op outside a registry call.
    ///
    /// ```
    /// // Outside a registry there is nobody to tell; nothing happens.
    /// mcp_toolbelt::ToolContext::default().resource_updated("trac://wiki/WikiStart");
    /// ```
    pub fn resource_updated(&self, uri: &str) {
        if let Some(notifier) = &self.notifier {
            notifier.resource_updated(uri);
        }
    }

    /// Shared state of type `T` registered with `ToolRegistryBuilder::state`.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.states.get::<T>().map(State)
    }
}

/// A state type a tool needs; checked by `ToolRegistryBuilder::build`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRequirement {
    /// The state's type id.
    pub type_id: TypeId,
    /// The state's type name, for error messages.
    pub type_name: &'static str,
}

/// Builds a tool parameter from the request context instead of the arguments.
///
/// Implement it for your own extractor types and mark the parameter `#[extract]`.
///
/// ```
/// use mcp_toolbelt::context::FromContext;
/// use mcp_toolbelt::{ToolContext, ToolError};
/// struct RequestId(String);
/// impl FromContext for RequestId {
///     fn from_context(ctx: &ToolContext) -> Result<Self, ToolError> {
///         Ok(RequestId(ctx.request_id().unwrap_or("none").to_string()))
///     }
/// }
/// let id = RequestId::from_context(&ToolContext::default()).unwrap();
/// assert_eq!(id.0, "none");
/// ```
pub trait FromContext: Sized {
    /// Build the value, or fail with a tool error.
    fn from_context(ctx: &ToolContext) -> Result<Self, ToolError>;

    /// Build the value for a tool call, seeing the call's (validated) arguments too: an
    /// extractor that resolves one of them — a session id to the caller's session, as
    /// [`SessionRef`](crate::sessions::SessionRef) does — fails here, before the fn runs.
    /// `#[mcp_tool]` fns call this (resources and prompts call `from_context`); by default
    /// it is `from_context`.
    ///
    /// ```
    /// use mcp_toolbelt::context::FromContext;
    /// use mcp_toolbelt::schema::JsonObject;
    /// use mcp_toolbelt::{ToolContext, ToolError};
    /// /// The `ticket` argument, checked against a list before the tool runs.
    /// struct KnownTicket(u64);
    /// impl FromContext for KnownTicket {
    ///     fn from_context(_: &ToolContext) -> Result<Self, ToolError> {
    ///         Err(ToolError::internal("KnownTicket needs the call's arguments"))
    ///     }
    ///     fn from_call(_: &ToolContext, arguments: &JsonObject) -> Result<Self, ToolError> {
    ///         match arguments.get("ticket").and_then(|t| t.as_u64()) {
    ///             Some(id) if id < 100 => Ok(KnownTicket(id)),
    ///             _ => Err(ToolError::not_found("no such ticket").with_action("list the tickets first")),
    ///         }
    ///     }
    /// }
    /// let args: JsonObject = serde_json::from_value(serde_json::json!({"ticket": 7})).unwrap();
    /// assert_eq!(KnownTicket::from_call(&ToolContext::default(), &args).unwrap().0, 7);
    /// ```
    fn from_call(ctx: &ToolContext, arguments: &JsonObject) -> Result<Self, ToolError> {
        let _ = arguments;
        Self::from_context(ctx)
    }

    /// A registered state this extractor needs; `build()` fails when it is missing.
    fn requirement() -> Option<StateRequirement> {
        None
    }
}

impl FromContext for ToolContext {
    fn from_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(ctx.clone())
    }
}

impl FromContext for Caller {
    fn from_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(ctx.caller().clone())
    }
}

/// Shared state of type `T`, registered once with `ToolRegistryBuilder::state` and handed
/// to every tool that takes a `State<T>` parameter. Derefs to `T`.
///
/// ```
/// use mcp_toolbelt::context::FromContext;
/// use mcp_toolbelt::{State, ToolContext};
/// let state = State::new(5u32);
/// assert_eq!(*state + 1, 6);
/// ```
pub struct State<T>(Arc<T>);

impl<T> State<T> {
    /// Wrap a value (useful when calling a tool fn directly in tests).
    pub fn new(value: T) -> Self {
        State(Arc::new(value))
    }

    /// Wrap a shared value.
    pub fn from_arc(value: Arc<T>) -> Self {
        State(value)
    }

    /// The shared value.
    pub fn into_arc(self) -> Arc<T> {
        self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.state::<T>().ok_or_else(|| {
            ToolError::internal(format!(
                "state {} is not registered on the registry",
                type_name::<T>()
            ))
            .with_action("Register it with ToolRegistry::builder().state(value).")
        })
    }

    fn requirement() -> Option<StateRequirement> {
        Some(StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: type_name::<T>(),
        })
    }
}
