//! The protocol bridge: rmcp's `ServerHandler` over a [`ToolRegistry`]. Everything a
//! request needs is built once (the registry caches each permission view's tool list);
//! a request only picks the caller's view, a page, or a tool.

#[cfg(feature = "audit")]
mod audit;
mod offerings;
mod pages;
#[cfg(feature = "http")]
mod param_headers;
mod tasks;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult, InputRequiredResult,
    InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, NumberOrString, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams, UpdateTaskParams,
};
// rmcp marks the logging types deprecated (SEP-2577) while the protocol still has them.
#[expect(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;

use super::convert;
use super::paging;
use super::peer::{LogFilter, RequestPeer, from_rmcp};
use super::protocol::http_caller;
#[cfg(feature = "http")]
use super::protocol::takes_batches;
use super::protocol::{is_modern, method_eras, method_not_found, outside_era};
use super::request_state::{self, Pending, Round, RoundOutcome};
use super::state::{Session, Shared};
use super::telemetry::{OTHER_TOOL, Observation};
use crate::context::{LogLevel, ToolContext};
use crate::output::error::ToolError;
use crate::output::error::echo;
use crate::output::result::ToolResult;
use crate::poison::LockIgnoringPoison;
use crate::{Caller, ErrorKind, PermissionSet};

/// rmcp's [`ServerHandler`] over a [`ToolRegistry`](crate::ToolRegistry), one per MCP session.
///
/// [`Server`](super::Server) creates these for its transports; get one from
/// [`Server::handler`](super::Server::handler) to serve over a transport of your own with
/// rmcp's `ServiceExt::serve`.
///
/// ```
/// use mcp_toolbelt::server::rmcp::ServerHandler;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let handler = mcp_toolbelt::server::Server::new(registry)
///     .info(mcp_toolbelt::server::ServerInfo::new("demo", "1.0.0"))
///     .handler();
/// let info = handler.get_info();
/// assert_eq!(info.server_info.name, "demo");
/// assert!(info.capabilities.tools.is_some());
/// ```
#[derive(Clone)]
pub struct McpHandler {
    pub(super) shared: Arc<Shared>,
    pub(super) session: Arc<Session>,
}

impl McpHandler {
    /// A handler for a new session.
    pub(crate) fn new_session(shared: Arc<Shared>) -> McpHandler {
        McpHandler::new_session_as(shared, None)
    }

    /// A handler for a new session whose peer authenticated as `caller` when it connected
    /// (`None`: the local caller, unless a request carries its own [`Caller`] in its HTTP
    /// extensions, as HTTP requests with bearer tokens do).
    pub(crate) fn new_session_as(shared: Arc<Shared>, caller: Option<Caller>) -> McpHandler {
        McpHandler {
            shared,
            session: Arc::new(Session {
                caller,
                ..Session::default()
            }),
        }
    }

    /// A handler taking over `session` (an HTTP session's state, kept while the session is
    /// parked and handed to the handler that rebuilds it).
    #[cfg(feature = "http")]
    pub(super) fn with_session(shared: Arc<Shared>, session: Arc<Session>) -> McpHandler {
        McpHandler { shared, session }
    }

    /// The caller: the HTTP request's (put into its extensions by the authentication in
    /// front), else the session's (from the TCP authentication line), else the local caller.
    pub(super) fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        self.caller_with(http_caller(context))
    }

    /// The caller of a request that carries `http` (the HTTP authentication's, if any).
    fn caller_with(&self, http: Option<&Caller>) -> Caller {
        self.caller_of(http).cloned().unwrap_or_default()
    }

    /// The caller of a request that carries `http`, borrowed (`None`: the local caller).
    fn caller_of<'a>(&'a self, http: Option<&'a Caller>) -> Option<&'a Caller> {
        http.or(self.session.caller.as_ref())
    }

    /// Start observing this request (`docs/operations.md`): its span and its metrics.
    pub(super) fn observe(
        &self,
        method: &str,
        tool: Option<Arc<str>>,
        context: &RequestContext<RoleServer>,
    ) -> Observation {
        let caller = self.caller_of(http_caller(context));
        Observation::start(&self.shared.telemetry, method, tool, context, caller)
    }

    /// The permission view of a request that carries `http` (`None`: every served tool).
    pub(super) fn view_of<'a>(&'a self, http: Option<&'a Caller>) -> Option<&'a PermissionSet> {
        self.caller_of(http).and_then(Caller::permissions)
    }
}

impl McpHandler {
    /// The cache hints of a list result on 2026-07-28 and later (`None` before): how long
    /// the list may be kept ([`Server::list_ttl`](super::Server::list_ttl), 0 without
    /// one) and whether it may be shared (`private`: it depends on the caller's token).
    pub(super) fn list_cache_hints(
        &self,
        context: &RequestContext<RoleServer>,
        private: bool,
    ) -> Option<(u64, CacheScope)> {
        if !is_modern(context) {
            return None;
        }
        let ttl_ms = self
            .shared
            .list_ttl
            .map_or(0, |ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        let scope = match private {
            true => CacheScope::Private,
            false => CacheScope::Public,
        };
        Some((ttl_ms, scope))
    }

    /// Which log messages this request's tool may send; `modern`: [`is_modern`].
    fn log_filter(&self, context: &RequestContext<RoleServer>, modern: bool) -> LogFilter {
        if let Some(level) = context.meta.log_level() {
            return LogFilter::AtLeast(from_rmcp(level));
        }
        if modern {
            // 2026-07-28: a request gets log messages only when it opts in.
            return LogFilter::Off;
        }
        let level = *self.session.log_level.lock_ignoring_poison();
        LogFilter::AtLeast(level.unwrap_or(LogLevel::Debug))
    }

    /// The context a tool, resource, prompt or completion fn gets for this request: its
    /// id, cancellation, the caller, and the client (progress, logs, sampling, elicitation).
    pub(super) fn tool_context(&self, context: &RequestContext<RoleServer>) -> ToolContext {
        self.context_in_round(context, None)
    }

    /// [`tool_context`](Self::tool_context) for a round of a resumable call (2026-07-28):
    /// its sampling and elicitation requests go to `round`.
    fn context_in_round(
        &self,
        context: &RequestContext<RoleServer>,
        round: Option<Arc<Round>>,
    ) -> ToolContext {
        let modern = is_modern(context);
        let peer = RequestPeer {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            logs: self.log_filter(context, modern),
            capabilities: context.client_capabilities(),
            client_timeout: self.shared.client_timeout,
            modern,
            round,
        };
        ToolContext::for_request(Some(request_id_text(&context.id)), context.ct.clone())
            .with_caller(self.caller(context))
            .with_peer(Arc::new(peer))
            .observed()
    }

    /// What a resumable request's state is bound to: `method` on `target` with `arguments`
    /// by this request's caller; `None` before protocol 2026-07-28, where nothing resumes.
    pub(super) fn binding(
        &self,
        context: &RequestContext<RoleServer>,
        method: &str,
        target: &str,
        arguments: &Value,
    ) -> Option<Vec<u8>> {
        is_modern(context)
            .then(|| request_state::binding(method, target, arguments, &self.caller(context)))
    }

    /// Run `run` (a tool, prompt or resource fn) with this request's context. On 2026-07-28
    /// and later (`binding` is `Some`: what the state is bound to) it is one round of a
    /// resumable request: `run` gets the answers the verified `requestState` and
    /// `inputResponses` carry, and when it asks for something they do not answer, its future
    /// is dropped and the round ends with that request and the state for the retry.
    pub(super) async fn in_round<T, F>(
        &self,
        context: &RequestContext<RoleServer>,
        binding: Option<Vec<u8>>,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        run: impl FnOnce(ToolContext) -> F,
    ) -> Result<RoundEnd<T>, McpError>
    where
        F: Future<Output = T>,
    {
        let Some(binding) = binding else {
            return Ok(RoundEnd::Finished(run(self.tool_context(context)).await));
        };
        let (round, ends, ctx) = self.open_round(context, &binding, state, responses)?;
        let ran = run(ctx);
        tokio::select! {
            biased;
            Ok(()) = ends => {}
            output = ran => return Ok(RoundEnd::Finished(output)),
        }
        Ok(match self.end_round(&round, &binding)? {
            Ok(input_required) => RoundEnd::Asked(input_required),
            Err(error) => RoundEnd::Failed(error),
        })
    }

    /// A round of a resumable request bound to `binding`: the round (the answers the
    /// verified `requestState` and `inputResponses` carry), the receiver told when the fn
    /// asks for more than they answer, and the context the fn runs with.
    pub(super) fn open_round(
        &self,
        context: &RequestContext<RoleServer>,
        binding: &[u8],
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<(Arc<Round>, tokio::sync::oneshot::Receiver<()>, ToolContext), McpError> {
        let known =
            request_state::Known::of_retry(&self.shared.sealing, state, responses, binding)?;
        let (round, ends) = Round::new(known);
        let ctx = self.context_in_round(context, Some(round.clone()));
        Ok((round, ends, ctx))
    }

    /// How a round that did not finish ends (the tool asked, or the request was refused):
    /// the `input_required` answer with the state for the retry, a tool error when the
    /// state would be too large, or the refusal.
    pub(super) fn end_round(
        &self,
        round: &Round,
        binding: &[u8],
    ) -> Result<Result<InputRequiredResult, ToolError>, McpError> {
        let (asked, answers) = match round.outcome() {
            RoundOutcome::Refused(refusal) => return Err(refusal),
            RoundOutcome::Asked { asked, answers } => (asked, answers),
        };
        let pending: Vec<Pending> = asked
            .iter()
            .map(|a| Pending {
                key: a.key.clone(),
                feature: a.feature,
            })
            .collect();
        Ok(
            match request_state::seal(&self.shared.sealing, &answers, &pending, binding) {
                Ok(state) => {
                    let requests = asked.into_iter().map(|a| (a.key, a.request)).collect();
                    Ok(InputRequiredResult::new(Some(requests), Some(state)))
                }
                Err(error) => Err(error),
            },
        )
    }
}

/// A request id as text, for [`ToolContext::request_id`]: a string id is shared as it is,
/// a number written with one allocation.
fn request_id_text(id: &NumberOrString) -> Arc<str> {
    match id {
        NumberOrString::String(text) => text.clone(),
        NumberOrString::Number(number) => {
            let mut digits = [0u8; 20];
            let mut start = digits.len();
            let mut rest = number.unsigned_abs();
            loop {
                start -= 1;
                digits[start] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            let digits = std::str::from_utf8(&digits[start..]).unwrap_or_default();
            if *number < 0 {
                Arc::from(format!("-{digits}"))
            } else {
                Arc::from(digits)
            }
        }
    }
}

impl McpHandler {
    /// The rate limits of a `tools/call` of `def`, a tool the caller can see (any other
    /// answers as unknown, later, exactly as without limits).
    async fn admit_call(
        &self,
        def: &crate::definition::ToolDef,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self
            .caller_of(http_caller(context))
            .unwrap_or(&crate::caller::LOCAL);
        self.shared
            .rate
            .admit(caller, def)
            .await
            .map_err(|refusal| super::rate_limit::refusal_error(&refusal, def.name()))
    }
}

/// How a request that may ask the client ended ([`McpHandler::in_round`]).
pub(super) enum RoundEnd<T> {
    /// The function returned.
    Finished(T),
    /// It asked the client: the `input_required` answer.
    Asked(InputRequiredResult),
    /// The state for the next round could not be made (too large).
    Failed(ToolError),
}

/// The answer to a `tools/call` from the registry's outcome.
fn tool_outcome(
    outcome: Result<ToolResult, crate::registry::ToolNotFound>,
) -> Result<CallToolResponse, McpError> {
    match outcome {
        Ok(result) => Ok(convert::call_result(result).into()),
        Err(not_found) => {
            // A client mistake: debug, not warn (the client gets the error).
            tracing::debug!(tool = %echo(not_found.name()), "tools/call of a tool the caller cannot see");
            Err(McpError::invalid_params(not_found.to_string(), None))
        }
    }
}

impl McpHandler {
    /// The `tools/list` page a request asks for.
    fn tools_page(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&context);
        let cursor = request.and_then(|r| r.cursor);
        let registry = &self.shared.registry;
        // The list and its registry version come from one snapshot, so a cursor never
        // pairs an old version with a newer list.
        let (generation, tools) = match caller.permissions() {
            Some(permissions) => registry.view(permissions).listed_tools(),
            None => registry.listed_tools(),
        };
        let start = paging::page_start(cursor.as_deref(), generation)?;
        let (start, end, next) = paging::page_bounds(tools.len(), start, self.shared.page_size)?;
        let mut result = ListToolsResult::with_all_items(
            tools[start..end].iter().map(|d| convert::tool(d)).collect(),
        );
        result.next_cursor = next.map(|offset| paging::cursor(generation, offset));
        if let Some((ttl_ms, scope)) = self.list_cache_hints(&context, !caller.is_local()) {
            result.ttl_ms = Some(ttl_ms);
            result.cache_scope = Some(scope);
        }
        Ok(result)
    }

    /// `tools/call` in the caller's view `registry`: the answer, and for an `isError`
    /// result `Some` of its kind.
    async fn call_tool_in(
        &self,
        registry: crate::ToolRegistry,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> (
        Result<CallToolResponse, McpError>,
        Option<Option<ErrorKind>>,
    ) {
        #[cfg(feature = "http")]
        if let Err(error) = self.check_param_headers(&request, context) {
            return (Err(error), None);
        }
        match self.task_support(&request, context) {
            Err(error) => return (Err(error), None),
            Ok(true) => return (self.call_as_task(request, context).await, None),
            Ok(false) => {}
        }
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        let binding = self.binding(context, "tools/call", &request.name, &arguments);
        let ended = self
            .in_round(
                context,
                binding,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
                |ctx| registry.call_tool(&request.name, arguments, ctx),
            )
            .await;
        match ended {
            Err(error) => (Err(error), None),
            Ok(RoundEnd::Finished(Ok(result))) => {
                let error = result.is_error().then(|| result.error_kind());
                (Ok(convert::call_result(result).into()), error)
            }
            Ok(RoundEnd::Finished(Err(not_found))) => (tool_outcome(Err(not_found)), None),
            Ok(RoundEnd::Asked(input_required)) => (Ok(input_required.into()), None),
            Ok(RoundEnd::Failed(error)) => (
                Ok(convert::call_result(ToolResult::error(&error, None)).into()),
                Some(Some(error.kind())),
            ),
        }
    }
}

impl McpHandler {
    /// `initialize`: the client's info kept, the version negotiated.
    fn initialize_session(
        &self,
        request: InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if let Some(removed) = outside_era("initialize", context) {
            return Err(removed);
        }
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        #[cfg(feature = "http")]
        self.session
            .batches
            .store(takes_batches(&result.protocol_version), Ordering::SeqCst);
        Ok(result)
    }
}

/// The answer to a request rmcp could not type (see `on_custom_request`).
fn custom_request(
    request: &CustomRequest,
    context: &RequestContext<RoleServer>,
) -> Result<CustomResult, McpError> {
    if let Some(removed) = outside_era(&request.method, context) {
        return Err(removed);
    }
    if method_eras(&request.method).is_some() {
        return Err(McpError::invalid_params(
            format!(
                "invalid params for {}: they do not match the method's schema",
                echo(&request.method)
            ),
            None,
        ));
    }
    Err(method_not_found(&request.method))
}

/// Run `answer` as part of `observation`'s request and end the observation with its result.
async fn observed<T>(
    observation: Observation,
    answer: impl Future<Output = Result<T, McpError>>,
) -> Result<T, McpError> {
    let result = observation.within(answer).await;
    observation.end_with(&result);
    result
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        self.shared.config.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let observation = self.observe("tools/list", None, &context);
        let result = self.tools_page(request, context);
        observation.end_with(&result);
        result
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The tool's name labels the request only when the caller can see that tool: an
        // unknown or hidden one reads the same placeholder.
        let (registry, _) = self.caller_view(&context);
        let def = registry.get(&request.name);
        let tool = def
            .as_ref()
            .map_or_else(|| Arc::from(OTHER_TOOL), |def| def.shared_name().clone());
        // A call of a tool the caller can see gets an audit line, a refusal by a rate limit
        // included; any other answers as unknown and writes none.
        #[cfg(feature = "audit")]
        let audited = self.audit_tool(def.as_deref(), request.arguments.as_ref());
        let observation = self.observe("tools/call", Some(tool), &context);
        let (answer, tool_error) = observation
            .within(async {
                if let Some(def) = &def
                    && let Err(refused) = self.admit_call(def, &context).await
                {
                    return (Err(refused), None);
                }
                self.call_tool_in(registry, request, &context).await
            })
            .await;
        #[cfg(feature = "audit")]
        if let Some(audited) = audited {
            let started = observation.started();
            self.audit_finish(audited, &context, started, &answer, tool_error.flatten());
        }
        match tool_error {
            Some(kind) if answer.is_ok() => observation.end_tool_error(kind),
            _ => observation.end_with(&answer),
        }
        answer
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let observation = self.observe("tasks/get", None, &context);
        observed(observation, self.task_get(request, context)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let observation = self.observe("tasks/update", None, &context);
        observed(observation, self.task_update(request, context)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let observation = self.observe("tasks/cancel", None, &context);
        observed(observation, self.task_cancel(request, context)).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let observation = self.observe("resources/list", None, &context);
        observed(observation, self.resources_list(request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let observation = self.observe("resources/templates/list", None, &context);
        observed(observation, self.resource_templates_list(request, context)).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let observation = self.observe("resources/read", None, &context);
        #[cfg(feature = "audit")]
        let audited = self.audit_resource(&context, &request.uri);
        #[cfg(feature = "audit")]
        let started = observation.started();
        let answer = observed(observation, self.resource_read(request, &context)).await;
        #[cfg(feature = "audit")]
        if let Some(audited) = audited {
            self.audit_finish(audited, &context, started, &answer, None);
        }
        answer
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let observation = self.observe("resources/subscribe", None, &context);
        observed(observation, self.resource_subscribe(request, context)).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let observation = self.observe("resources/unsubscribe", None, &context);
        observed(observation, self.resource_unsubscribe(request, context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let observation = self.observe("prompts/list", None, &context);
        observed(observation, self.prompts_list(request, context)).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let observation = self.observe("prompts/get", None, &context);
        #[cfg(feature = "audit")]
        let audited = self.audit_prompt(&context, &request.name, request.arguments.as_ref());
        #[cfg(feature = "audit")]
        let started = observation.started();
        let answer = observed(observation, self.prompt_get(request, &context)).await;
        #[cfg(feature = "audit")]
        if let Some(audited) = audited {
            self.audit_finish(audited, &context, started, &answer, None);
        }
        answer
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let observation = self.observe("completion/complete", None, &context);
        observed(observation, self.completion(request, context)).await
    }

    #[expect(deprecated)] // logging
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if let Some(removed) = outside_era("logging/setLevel", &context) {
            return Err(removed);
        }
        *self.session.log_level.lock_ignoring_poison() = Some(from_rmcp(request.level));
        Ok(())
    }

    /// rmcp's own `initialize` (the client's info kept, the version negotiated), noting
    /// whether the session takes batches before its reply goes out.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let observation = self.observe("initialize", None, &context);
        let result = self.initialize_session(request, &context);
        observation.end_with(&result);
        result
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        #[cfg(feature = "http")]
        self.session.live.initialized(&context.peer);
        if !self.session.registered.swap(true, Ordering::SeqCst) {
            self.shared.list_changed.start_pump();
            // A rebuilt session's resource subscriptions reach its new peer.
            self.shared
                .subscriptions
                .rebind(&self.session.subscriptions, &context.peer);
            self.shared.list_changed.add_peer(context.peer);
        }
    }

    /// rmcp parses a request it cannot type (unknown method, or a known method whose params
    /// do not fit, like `tools/call` without a `name`) as a custom request. Unknown methods,
    /// and methods of another protocol revision than the request's, answer -32601; known
    /// methods with unusable params answer -32602, naming the method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let observation = self.observe(&request.method, None, &context);
        let result = custom_request(&request, &context);
        observation.end_with(&result);
        result
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.session
            .listens_pending
            .lock_ignoring_poison()
            .push(self.shared.list_changed.generation());
        let mut accepted = SubscriptionFilter::new();
        if requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        // Resource updates for the URIs asked for (listen has no caller context to check
        // them against; a URI nobody updates simply never notifies).
        if self.shared.registry.has_resources() {
            accepted.resource_subscriptions = requested.resource_subscriptions.clone();
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let list_changed = &self.shared.list_changed;
        list_changed.start_pump();
        let _subscribed = list_changed.subscribe(context.sink().clone());
        let _resources = self.shared.subscriptions.listen(context.sink().clone());
        // The oldest pending generation is at most this stream's own: a change since then may
        // have been broadcast before the stream was registered, so tell it (a second
        // notification is harmless: it only says "list again").
        let accepted_at = {
            let mut pending = self.session.listens_pending.lock_ignoring_poison();
            let oldest = pending.iter().enumerate().min_by_key(|(_, g)| **g);
            oldest.map(|(at, _)| at).map(|at| pending.swap_remove(at))
        };
        if accepted_at.is_some_and(|generation| generation != list_changed.generation())
            && context.accepted().tools_list_changed == Some(true)
            && let Err(error) = context.sink().notify_tool_list_changed().await
        {
            tracing::debug!(%error, "could not send tools/list_changed to a subscription");
        }
        context.cancelled().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::request_id_text;

    #[test]
    fn request_ids_read_as_rmcp_writes_them() {
        for number in [0, 7, 42, -1, -10, 1_000_000, i64::MAX, i64::MIN] {
            let id = NumberOrString::Number(number);
            assert_eq!(&*request_id_text(&id), id.to_string(), "{number}");
        }
        let id = NumberOrString::String("req-1".into());
        assert_eq!(&*request_id_text(&id), "req-1");
    }
}
