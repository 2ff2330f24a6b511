//! `rmcp-reference`: the differential test's fixture (`tests/tests/differential.rs`) served
//! by a plain rmcp 3.11 server written with rmcp's own macros (`#[tool_router]`, `#[tool]`,
//! `#[tool_handler]`, `#[prompt_router]`, `#[prompt]`, `#[prompt_handler]`) and its public
//! API only. `toolbelt-reference` serves the same fixture with mcp-toolbelt (see its docs
//! for the fixture; keep the two identical).
//!
//! ```text
//! rmcp-reference --stdio                      stdio (rmcp::transport::stdio())
//! rmcp-reference --http ADDR [--stateless]    rmcp's streamable HTTP at http://ADDR/mcp
//!                                             (LocalSessionManager, or NeverSessionManager
//!                                             when stateless); prints `listening on URL` on
//!                                             stderr once it listens
//! ```

use std::sync::Arc;

use rmcp::{
    ErrorData, Json, Peer, RoleServer, ServerHandler, ServiceExt,
    handler::server::{
        router::{prompt::PromptRouter, tool::ToolRouter},
        wrapper::Parameters,
    },
    model::{
        CallToolResult, ClientResult, CompleteRequestParams, CompleteResult, CompletionInfo,
        ContentBlock, GetPromptResult, Implementation, ListResourceTemplatesResult,
        ListResourcesResult, PaginatedRequestParams, ProgressNotificationParam, PromptMessage,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference,
        RequestMetaObject, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
        ServerConfig, ServerRequest,
    },
    prompt, prompt_handler, prompt_router, schemars,
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back
    message: String,
}

/// Arguments of `add`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
}

/// The sum of `add`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Sum {
    /// a + b
    sum: i64,
}

/// Arguments of `greet`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Who to greet
    name: String,
}

/// The fixture: its tool and prompt routers, built once.
#[derive(Clone)]
struct Fixture {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

/// Send progress on the request's token, if it has one.
async fn progress(
    peer: &Peer<RoleServer>,
    meta: &RequestMetaObject,
    step: f64,
    total: Option<f64>,
    message: &str,
) {
    if let Some(token) = meta.get_progress_token() {
        let mut param = ProgressNotificationParam::new(token, step).with_message(message);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        let _ = peer.notify_progress(param).await;
    }
}

#[tool_router]
impl Fixture {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }

    /// Echo the message back unchanged
    #[tool(name = "echo", annotations(read_only_hint = true))]
    async fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }

    /// Add two integers
    #[tool(name = "add", annotations(read_only_hint = true))]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum { sum: a + b })
    }

    /// Always fails
    #[tool(name = "fail", annotations(read_only_hint = true))]
    async fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "Error (internal_error): this tool always fails\n\nAction: None: failing is this tool's purpose.",
        )])
    }

    /// Count to three, reporting progress
    #[tool(name = "count", annotations(read_only_hint = true))]
    async fn count(&self, meta: RequestMetaObject, peer: Peer<RoleServer>) -> String {
        for step in 1..=3 {
            progress(
                &peer,
                &meta,
                f64::from(step),
                Some(3.0),
                &format!("step {step}"),
            )
            .await;
        }
        "counted to 3".to_string()
    }

    /// Wait until cancelled
    #[tool(name = "wait", annotations(read_only_hint = true))]
    async fn wait(&self, meta: RequestMetaObject, peer: Peer<RoleServer>) -> String {
        progress(&peer, &meta, 0.0, None, "started").await;
        std::future::pending::<String>().await
    }

    /// Ask the user for their name
    #[tool(name = "ask", annotations(read_only_hint = true))]
    async fn ask(&self, peer: Peer<RoleServer>) -> Result<String, ErrorData> {
        let params = serde_json::from_value(json!({
            "message": "Your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer = peer
            .send_request(ServerRequest::ElicitRequest(
                rmcp::model::ElicitRequest::new(params),
            ))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer: Value = match answer {
            ClientResult::ElicitResult(result) => serde_json::to_value(result),
            other => serde_json::to_value(other),
        }
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(
            match (
                answer["action"].as_str(),
                answer["content"]["name"].as_str(),
            ) {
                (Some("accept"), Some(name)) => format!("Hello, {name}!"),
                _ => format!("No name: {}", answer["action"]),
            },
        )
    }
}

#[prompt_router]
impl Fixture {
    /// Greet someone
    #[prompt(name = "greet")]
    async fn greet(
        &self,
        Parameters(GreetArgs { name }): Parameters<GreetArgs>,
    ) -> GetPromptResult {
        GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Please greet {name}."),
        )])
    }
}

/// The values among `choices` that start with `typed`.
fn matching(choices: &[&str], typed: &str) -> CompletionInfo {
    let values: Vec<String> = choices
        .iter()
        .filter(|choice| choice.starts_with(typed))
        .map(|choice| choice.to_string())
        .collect();
    CompletionInfo::with_all_values(values).unwrap_or_default()
}

const README_URI: &str = "fixture://readme";
const ITEM_TEMPLATE: &str = "fixture://items/{id}";
const ITEM_PREFIX: &str = "fixture://items/";

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_completions()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-reference", "0.0.0"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(README_URI, "readme")
                .with_description("The fixture's readme")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(ITEM_TEMPLATE, "item")
                .with_description("One item by id")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = if request.uri == README_URI {
            "This is the fixture's readme.".to_string()
        } else if let Some(id) = request.uri.strip_prefix(ITEM_PREFIX)
            && !id.is_empty()
            && !id.contains('/')
        {
            format!("Item {id}")
        } else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                Some(json!({"uri": request.uri})),
            ));
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("text/plain"),
        ])
        .into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = request.argument.value.as_str();
        let completion = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Prompt(prompt), "name") if prompt.name == "greet" => {
                matching(&["alice", "alan", "bob"], typed)
            }
            (Reference::Resource(resource), "id") if resource.uri == ITEM_TEMPLATE => {
                matching(&["100", "101", "200"], typed)
            }
            _ => CompletionInfo::default(),
        };
        Ok(CompleteResult::new(completion))
    }
}

const USAGE: &str = "usage: rmcp-reference (--stdio | --http ADDR [--stateless])";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag] if flag == "--stdio" => serve_stdio().await,
        [flag, addr, rest @ ..] if flag == "--http" => {
            let stateful = match rest {
                [] => true,
                [s] if s == "--stateless" => false,
                _ => {
                    eprintln!("{USAGE}");
                    return std::process::ExitCode::from(2);
                }
            };
            match addr.parse() {
                Ok(addr) => serve_http(addr, stateful).await,
                Err(e) => Err(format!("--http {addr:?}: {e}").into()),
            }
        }
        _ => {
            eprintln!("{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rmcp-reference: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let service = Fixture::new().serve(rmcp::transport::stdio()).await?;
    let reason = service.waiting().await?;
    tracing::info!("rmcp-reference: stopped: {reason:?}");
    Ok(())
}

/// Serve rmcp's streamable HTTP service at `http://ADDR/mcp` until killed.
async fn serve_http(
    addr: std::net::SocketAddr,
    stateful: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(stateful);
    let factory = || Ok(Fixture::new());
    if stateful {
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        accept(listener, service).await
    } else {
        let service =
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        accept(listener, service).await
    }
}

async fn accept<M>(
    listener: tokio::net::TcpListener,
    service: rmcp::transport::StreamableHttpService<Fixture, M>,
) -> Result<(), Box<dyn std::error::Error>>
where
    M: rmcp::transport::streamable_http_server::session::SessionManager,
{
    let service = Arc::new(service);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request| {
                let service = service.clone();
                async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}
