//! An in-process MCP client for tests (feature `testing`): [`TestClient`] connects to a
//! [`Server`] over an in-memory pipe and speaks newline-delimited JSON-RPC to the same
//! engine `serve_stdio` runs — the handshake, the caller's view of the tools, argument
//! validation, middleware, the conversion to the wire and back. A test chooses the caller
//! identity, the protocol revision, and closures that answer a tool's elicitation and
//! sampling questions; `docs/testing.md` is the guide.
//!
//! ```rust,standalone_crate
//! use mcp_toolbelt::testing::{TestClient, ToolResultExt, accept};
//! use mcp_toolbelt::{mcp_tool, ToolContext, ToolError, ToolRegistry, ErrorKind};
//! use mcp_toolbelt::server::Server;
//! use serde_json::json;
//!
//! /// Add two numbers.
//! #[mcp_tool(name = "add")]
//! async fn add(a: i64, b: i64) -> Result<String, ToolError> {
//!     a.checked_add(b).map(|sum| sum.to_string()).ok_or_else(|| ToolError::validation("overflow"))
//! }
//!
//! /// Greet whoever the client says it is.
//! #[mcp_tool(name = "greet")]
//! async fn greet(ctx: ToolContext) -> Result<String, ToolError> {
//!     let answer = ctx.elicit(json!({"message": "Your name?", "requestedSchema": {
//!         "type": "object", "properties": {"name": {"type": "string"}}}})).await?;
//!     Ok(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("nobody")))
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::new(ToolRegistry::builder().build().unwrap());
//! let client = TestClient::builder(server)
//!     .on_elicitation(|_params| accept(json!({"name": "Ada"})))
//!     .connect()
//!     .await;
//! assert_eq!(client.call("add", json!({"a": 2, "b": 3})).await.ok_text(), "5");
//! let overflow = client.call("add", json!({"a": i64::MAX, "b": 1})).await;
//! assert_eq!(overflow.err_kind(), ErrorKind::Validation);
//! assert_eq!(client.call("greet", json!({})).await.ok_text(), "Hello, Ada!");
//! client.close().await.unwrap();
//! # });
//! ```

mod answers;
mod error;
mod expect;
mod pipe;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use rmcp::model::{self as wire, ConstString as _};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

pub use answers::{accept, cancel, decline, sampled_text};
pub use error::ClientError;
pub use expect::ToolResultExt;

use self::answers::{Answers, async_answer, sync_answer};
use self::pipe::Pipe;
use crate::Caller;
use crate::context::LogLevel;
use crate::output::{PromptResult, ResourceContent, ToolResult};
use crate::server::convert::received;
use crate::server::protocol::is_modern_version;
use crate::server::{ServeError, Server};

/// How long the client waits for any answer by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol revision a client speaks by default: the one with sessions and server
/// requests over the pipe.
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-11-25";

/// How many `input_required` rounds one request may take (protocol 2026-07-28) before the
/// client gives up: a tool asking this many questions in a row is almost surely looping.
const MAX_ROUNDS: usize = 32;

/// The in-memory pipe's buffer in each direction.
const PIPE_BUFFER: usize = 64 * 1024;

/// A notification the server sent: `notifications/progress`, `notifications/message`
/// (logging), `notifications/tools/list_changed`, …
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    method: String,
    params: Value,
}

impl Notification {
    /// The notification's method, e.g. `notifications/progress`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Its params (`null` when it had none).
    pub fn params(&self) -> &Value {
        &self.params
    }
}

/// How a [`TestClient`] connects: the caller it is, the protocol it speaks, and how it
/// answers the server's questions. Made by [`TestClient::builder`].
#[must_use]
pub struct TestClientBuilder {
    server: Server,
    caller: Option<Caller>,
    protocol_version: String,
    client_name: String,
    client_version: String,
    capabilities: Option<Value>,
    answers: Answers,
    timeout: Duration,
    progress_tokens: bool,
    log_level: Option<LogLevel>,
}

impl TestClientBuilder {
    /// Connect as `caller` (default: [`Caller::local`], which sees every tool the registry
    /// serves), as if the transport's authentication had established it: a tool its
    /// permissions do not allow answers like an unknown one.
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }

    /// Speak protocol `version` (default [`DEFAULT_PROTOCOL_VERSION`]). On `2026-07-28`
    /// and later there is no handshake: every request carries the client's identity and
    /// capabilities in its `_meta`, and a tool's question comes back as an
    /// `input_required` result, which the client answers with the same closures and
    /// retries, so a test reads the same on either revision.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// The `clientInfo` name and version (default `mcp-toolbelt-test-client`, the crate's
    /// version).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_name = name.into();
        self.client_version = version.into();
        self
    }

    /// Declare these client capabilities instead of the ones the answers given imply
    /// (`elicitation` with [`on_elicitation`](Self::on_elicitation), `sampling` with
    /// [`on_sampling`](Self::on_sampling), `roots` with [`roots`](Self::roots)): e.g.
    /// `json!({})` to see how a tool does without them.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = Some(capabilities);
        self
    }

    /// Answer elicitation (`elicitation/create`) with `answer`: the request's params in
    /// (`message`, `requestedSchema`), the result out ([`accept`], [`decline`],
    /// [`cancel`]).
    pub fn on_elicitation<F>(mut self, answer: F) -> Self
    where
        F: Fn(Value) -> Value + Send + Sync + 'static,
    {
        self.answers.elicitation = Some(sync_answer(answer));
        self
    }

    /// [`on_elicitation`](Self::on_elicitation) with an async closure.
    pub fn on_elicitation_async<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Value> + Send + 'static,
    {
        self.answers.elicitation = Some(async_answer(answer));
        self
    }

    /// Answer sampling (`sampling/createMessage`) with `answer`: the request's params in
    /// (`messages`, `maxTokens`, …), the result out (e.g. [`sampled_text`]).
    pub fn on_sampling<F>(mut self, answer: F) -> Self
    where
        F: Fn(Value) -> Value + Send + Sync + 'static,
    {
        self.answers.sampling = Some(sync_answer(answer));
        self
    }

    /// [`on_sampling`](Self::on_sampling) with an async closure.
    pub fn on_sampling_async<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Value> + Send + 'static,
    {
        self.answers.sampling = Some(async_answer(answer));
        self
    }

    /// Answer `roots/list` with these root URIs.
    pub fn roots<I, S>(mut self, uris: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        #[expect(deprecated)] // roots: deprecated by SEP-2577, still in the protocol
        let roots = uris.into_iter().map(wire::Root::new).collect();
        self.answers.roots = Some(roots);
        self
    }

    /// How long the client waits for any answer (default [`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Send a `progressToken` with every `tools/call`, so that a tool's `ctx.progress(..)`
    /// reaches the client as `notifications/progress` (default off).
    pub fn progress_tokens(mut self, on: bool) -> Self {
        self.progress_tokens = on;
        self
    }

    /// Ask for the server's log messages (`ctx.log(..)`, `notifications/message`) at
    /// `level` and above: `logging/setLevel` after the handshake, or on 2026-07-28 and
    /// later the log level in every request's `_meta`. Without it the server's default
    /// holds: every message on 2025-11-25, none on 2026-07-28.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Connect: start the server's session on an in-memory pipe and, on a revision with
    /// sessions, complete the `initialize` handshake.
    ///
    /// # Panics
    ///
    /// When the handshake fails; [`try_connect`](Self::try_connect) returns the error.
    pub async fn connect(self) -> TestClient {
        match self.try_connect().await {
            Ok(client) => client,
            Err(error) => panic!("the test client could not connect: {error}"),
        }
    }

    /// [`connect`](Self::connect), returning a failed handshake.
    ///
    /// # Errors
    ///
    /// The server's answer to `initialize` when it is an error, or [`ClientError::Timeout`]
    /// / [`ClientError::Closed`] when none came.
    pub async fn try_connect(self) -> Result<TestClient, ClientError> {
        let version: wire::ProtocolVersion =
            serde_json::from_value(json!(self.protocol_version))
                .map_err(|e| ClientError::unexpected("initialize", e))?;
        let modern = is_modern_version(&version);
        let capabilities = self
            .capabilities
            .clone()
            .unwrap_or_else(|| self.answers.capabilities());
        let client_info = json!({"name": self.client_name, "version": self.client_version});

        let (client_end, server_end) = tokio::io::duplex(PIPE_BUFFER);
        let (server_read, server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(
            self.server
                .serve_io_as(self.caller, server_read, server_write),
        );
        let (read, write) = tokio::io::split(client_end);
        let pipe = Arc::new(Pipe::new(write));
        let reader = tokio::spawn(pipe::read_lines(pipe.clone(), read, self.answers.clone()));

        #[expect(deprecated)] // logging: deprecated by SEP-2577, still in the protocol
        let log_level: Option<wire::LoggingLevel> = match self.log_level {
            Some(level) => Some(
                serde_json::from_value(json!(level.as_str()))
                    .map_err(|e| ClientError::unexpected("logging/setLevel", e))?,
            ),
            None => None,
        };
        let meta = modern.then(|| {
            let mut meta = wire::RequestMetaObject::with_client_context(
                version.clone(),
                serde_json::from_value(client_info.clone()).unwrap_or_default(),
                serde_json::from_value(capabilities.clone()).unwrap_or_default(),
            );
            if let Some(level) = log_level {
                meta.set_log_level(level);
            }
            match serde_json::to_value(meta) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            }
        });
        let mut client = TestClient {
            pipe,
            reader: Some(reader),
            server: Some(server),
            meta,
            answers: self.answers,
            next_id: AtomicI64::new(1),
            timeout: self.timeout,
            progress_tokens: self.progress_tokens,
            initialized: None,
        };
        if !modern {
            let params = json!({"protocolVersion": self.protocol_version,
                "capabilities": capabilities, "clientInfo": client_info});
            let initialized = client
                .request(wire::InitializeResultMethod::VALUE, params)
                .await?;
            let notification = json!({"jsonrpc": "2.0",
                "method": wire::InitializedNotificationMethod::VALUE});
            if !client.pipe.send(&notification).await {
                return Err(ClientError::Closed {
                    method: wire::InitializedNotificationMethod::VALUE.into(),
                });
            }
            client.initialized = Some(initialized);
            if let Some(level) = log_level {
                client
                    .request(
                        wire::SetLevelRequestMethod::VALUE,
                        json!({ "level": level }),
                    )
                    .await?;
            }
        }
        Ok(client)
    }
}

/// An MCP client connected to a [`Server`] in this process, for tests.
///
/// Every request goes through the real protocol engine over an in-memory pipe; every wait
/// is bounded by the client's time-out. Dropping the client ends the session and the tasks
/// serving it; [`close`](Self::close) ends it and returns how serving ended.
///
/// See [the module](self) for an example.
pub struct TestClient {
    pipe: Arc<Pipe>,
    reader: Option<JoinHandle<()>>,
    server: Option<JoinHandle<Result<(), ServeError>>>,
    /// The `_meta` every request carries (protocol 2026-07-28 and later), else `None`.
    meta: Option<Map<String, Value>>,
    answers: Answers,
    next_id: AtomicI64,
    timeout: Duration,
    progress_tokens: bool,
    /// The `initialize` result (revisions with sessions).
    initialized: Option<Value>,
}

impl TestClient {
    /// A client of `server` as the local caller, on [`DEFAULT_PROTOCOL_VERSION`], that
    /// answers no questions.
    ///
    /// # Panics
    ///
    /// When the handshake fails.
    pub async fn connect(server: Server) -> TestClient {
        TestClient::builder(server).connect().await
    }

    /// A client of `server` to configure before it connects.
    pub fn builder(server: Server) -> TestClientBuilder {
        TestClientBuilder {
            server,
            caller: None,
            protocol_version: DEFAULT_PROTOCOL_VERSION.to_string(),
            client_name: "mcp-toolbelt-test-client".to_string(),
            client_version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: None,
            answers: Answers::default(),
            timeout: DEFAULT_TIMEOUT,
            progress_tokens: false,
            log_level: None,
        }
    }

    /// The server's `initialize` result (`serverInfo`, `capabilities`, `instructions`);
    /// `None` on 2026-07-28 and later, which have no handshake.
    pub fn initialize_result(&self) -> Option<&Value> {
        self.initialized.as_ref()
    }

    /// Send one request and wait for its answer: the raw `result`. On 2026-07-28 and
    /// later the client's `_meta` is added to `params`; an `input_required` result is
    /// returned as it is (the typed methods answer it).
    ///
    /// # Errors
    ///
    /// A JSON-RPC error answer ([`ClientError::Rpc`]), no answer within the time-out, or a
    /// closed session.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => return Err(ClientError::unexpected(method, format!("params {other}"))),
        };
        if let Some(meta) = &self.meta {
            let entry = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(entry) = entry {
                for (key, value) in meta {
                    entry.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
        let answer = self.pipe.expect(id);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if !self.pipe.send(&message).await {
            self.pipe.forget(id);
            return Err(ClientError::Closed {
                method: method.into(),
            });
        }
        let mut reply = match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => {
                return Err(ClientError::Closed {
                    method: method.into(),
                });
            }
            Err(_) => {
                self.pipe.forget(id);
                return Err(ClientError::Timeout {
                    method: method.into(),
                    after: self.timeout,
                });
            }
        };
        if let Some(error) = reply.get_mut("error") {
            return Err(ClientError::Rpc {
                code: error["code"].as_i64().unwrap_or_default(),
                message: error["message"].as_str().unwrap_or_default().to_string(),
                data: error.get_mut("data").map(Value::take),
            });
        }
        match reply.get_mut("result") {
            Some(result) => Ok(result.take()),
            None => Err(ClientError::unexpected(method, reply)),
        }
    }

    /// [`request`](Self::request), answering `input_required` results (2026-07-28) with
    /// the client's closures and retrying with `inputResponses` and the `requestState`,
    /// until a final result comes.
    async fn resumable(&self, method: &str, mut params: Value) -> Result<Value, ClientError> {
        for _ in 0..MAX_ROUNDS {
            let result = self.request(method, params.clone()).await?;
            let Ok(input) = serde_json::from_value::<wire::InputRequiredResult>(result.clone())
            else {
                return Ok(result);
            };
            let mut responses = Map::new();
            for (key, question) in input.input_requests.unwrap_or_default() {
                let question = serde_json::to_value(question)
                    .map_err(|e| ClientError::unexpected(method, e))?;
                let asked = question["method"].as_str().unwrap_or_default();
                let answer = self
                    .answers
                    .answer(asked, question["params"].clone())
                    .await
                    .map_err(|(_, refusal)| ClientError::unexpected(method, refusal))?;
                responses.insert(key, answer);
            }
            params["inputResponses"] = Value::Object(responses);
            match input.request_state {
                Some(state) => params["requestState"] = Value::String(state),
                None => {
                    if let Some(params) = params.as_object_mut() {
                        params.remove("requestState");
                    }
                }
            }
        }
        Err(ClientError::unexpected(
            method,
            format!("still input_required after {MAX_ROUNDS} rounds"),
        ))
    }

    /// Every item of a paginated list (`tools/list`, `resources/list`, …), following
    /// `nextCursor`.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let mut page = self.request(method, params).await?;
            match page.get_mut(key).map(Value::take) {
                Some(Value::Array(page_items)) => items.extend(page_items),
                _ => return Err(ClientError::unexpected(method, format!("no `{key}` array"))),
            }
            cursor = page["nextCursor"].as_str().map(str::to_string);
            if cursor.is_none() {
                return Ok(items);
            }
        }
    }

    /// The tools this caller sees (`tools/list`, every page), as the wire carries them.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn list_tools(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all(wire::ListToolsRequestMethod::VALUE, "tools")
            .await
    }

    /// The names of the tools this caller sees, in the server's order.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn tool_names(&self) -> Result<Vec<String>, ClientError> {
        Ok(self
            .list_tools()
            .await?
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_string))
            .collect())
    }

    /// Call tool `name` with `arguments` (`tools/call`). A tool's failure is a result
    /// ([`ToolResult::is_error`], [`ToolResult::error_kind`]); see [`ToolResultExt`] for
    /// the assertions tests usually make.
    ///
    /// # Panics
    ///
    /// When the server answers a JSON-RPC error instead of a result (an unknown or hidden
    /// tool, bad params) or no answer comes: [`try_call`](Self::try_call) returns those.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolResult {
        match self.try_call(name, arguments).await {
            Ok(result) => result,
            Err(error) => panic!("calling tool `{name}` failed: {error}"),
        }
    }

    /// [`call`](Self::call), returning a JSON-RPC error instead of panicking.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request): `-32602` ([`ClientError::Rpc`]) for a tool that is
    /// unknown or hidden from this caller.
    pub async fn try_call(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        let method = wire::CallToolRequestMethod::VALUE;
        let mut params = json!({ "name": name, "arguments": arguments });
        if self.progress_tokens {
            let token = self.next_id.fetch_add(1, Ordering::Relaxed);
            params["_meta"] = json!({ "progressToken": token });
        }
        let result = self.resumable(method, params).await?;
        let call: wire::CallToolResult =
            serde_json::from_value(result).map_err(|e| ClientError::unexpected(method, e))?;
        received::call_result(call).map_err(|e| ClientError::unexpected(method, e))
    }

    /// The fixed-URI resources (`resources/list`, every page), as the wire carries them.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all(wire::ListResourcesRequestMethod::VALUE, "resources")
            .await
    }

    /// The resource templates (`resources/templates/list`, every page).
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all(
            wire::ListResourceTemplatesRequestMethod::VALUE,
            "resourceTemplates",
        )
        .await
    }

    /// Read the resource at `uri` (`resources/read`).
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request): e.g. `-32002` for an unknown resource.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContent>, ClientError> {
        let method = wire::ReadResourceRequestMethod::VALUE;
        let result = self.resumable(method, json!({ "uri": uri })).await?;
        let read: wire::ReadResourceResult =
            serde_json::from_value(result).map_err(|e| ClientError::unexpected(method, e))?;
        read.contents
            .into_iter()
            .map(received::resource_contents)
            .collect::<Result<_, _>>()
            .map_err(|e| ClientError::unexpected(method, e))
    }

    /// The prompts (`prompts/list`, every page), as the wire carries them.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all(wire::ListPromptsRequestMethod::VALUE, "prompts")
            .await
    }

    /// Render prompt `name` with `arguments` (an object of strings; `prompts/get`).
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request): `-32602` for an unknown prompt or missing argument.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<PromptResult, ClientError> {
        let method = wire::GetPromptRequestMethod::VALUE;
        let result = self
            .resumable(method, json!({ "name": name, "arguments": arguments }))
            .await?;
        let prompt: wire::GetPromptResult =
            serde_json::from_value(result).map_err(|e| ClientError::unexpected(method, e))?;
        received::prompt_result(prompt).map_err(|e| ClientError::unexpected(method, e))
    }

    /// The completions of `argument` partly typed as `value` (`completion/complete`);
    /// `reference` is `{"type": "ref/prompt", "name": …}` or
    /// `{"type": "ref/resource", "uri": template}`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, ClientError> {
        let method = wire::CompleteRequestMethod::VALUE;
        let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        let result = self.request(method, params).await?;
        let complete: wire::CompleteResult =
            serde_json::from_value(result).map_err(|e| ClientError::unexpected(method, e))?;
        Ok(complete.completion.values)
    }

    /// Every notification received so far and not taken, oldest first.
    pub fn notifications(&self) -> Vec<Notification> {
        self.pipe
            .notifications
            .lock()
            .expect("the notifications")
            .clone()
    }

    /// [`notifications`](Self::notifications), emptying the list.
    pub fn take_notifications(&self) -> Vec<Notification> {
        std::mem::take(&mut *self.pipe.notifications.lock().expect("the notifications"))
    }

    /// Wait for the first notification `method` not taken yet, and take it.
    ///
    /// # Errors
    ///
    /// [`ClientError::Timeout`] when none came within the client's time-out.
    pub async fn notification(&self, method: &str) -> Result<Notification, ClientError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let notified = self.pipe.notified.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut list = self.pipe.notifications.lock().expect("the notifications");
                if let Some(at) = list.iter().position(|n| n.method == method) {
                    return Ok(list.remove(at));
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(ClientError::Timeout {
                    method: method.into(),
                    after: self.timeout,
                });
            }
        }
    }

    /// End the session: close the client's side of the pipe and wait for the server to
    /// finish serving.
    ///
    /// # Errors
    ///
    /// How serving ended, when it failed.
    ///
    /// # Panics
    ///
    /// When the server does not finish within the client's time-out, or its task panicked.
    pub async fn close(mut self) -> Result<(), ServeError> {
        self.pipe.close().await;
        let server = self.server.take().expect("the server task, until closed");
        match tokio::time::timeout(self.timeout, server).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(error)) => panic!("the server's task failed: {error}"),
            Err(_) => panic!(
                "the server did not end its session within {:?} of the client closing it",
                self.timeout
            ),
        }
    }
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("sessions", &self.initialized.is_some())
            .field("timeout", &self.timeout)
            .field("progress_tokens", &self.progress_tokens)
            .finish_non_exhaustive()
    }
}

impl Drop for TestClient {
    /// Ends the session at once: the tasks reading the pipe and serving the session stop.
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
        }
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}
