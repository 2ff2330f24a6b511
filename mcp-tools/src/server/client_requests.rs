//! Requests a tool sends to the client during a call: `sampling/createMessage` and
//! `elicitation/create`. Each checks the capability the client declared, bounds the wait
//! with the server's client-request timeout, and turns every failure into a `ToolError`
//! that says what happened and what to do.
// rmcp marks the sampling types deprecated (SEP-2577) while the protocol still has them.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
    ElicitRequest, ElicitRequestParams, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use serde_json::Value;

use crate::output::error::ToolError;

/// Which client request, for messages and capability checks.
#[derive(Clone, Copy)]
pub(crate) enum ClientRequestKind {
    /// `sampling/createMessage`.
    Sampling,
    /// `elicitation/create`.
    Elicitation,
}

impl ClientRequestKind {
    fn method(self) -> &'static str {
        match self {
            ClientRequestKind::Sampling => "sampling/createMessage",
            ClientRequestKind::Elicitation => "elicitation/create",
        }
    }

    fn capability(self) -> &'static str {
        match self {
            ClientRequestKind::Sampling => "sampling",
            ClientRequestKind::Elicitation => "elicitation",
        }
    }

    fn declared(self, capabilities: Option<&ClientCapabilities>) -> bool {
        capabilities.is_some_and(|c| match self {
            ClientRequestKind::Sampling => c.sampling.is_some(),
            ClientRequestKind::Elicitation => c.elicitation.is_some(),
        })
    }
}

/// The error for a client request on protocol 2026-07-28 or later, which has no
/// server-to-client requests during a call.
pub(crate) fn not_on_modern(kind: ClientRequestKind) -> ToolError {
    ToolError::permission_denied(format!(
        "this request runs on MCP protocol 2026-07-28 or later, where a server cannot send {} to the client during a call",
        kind.method()
    ))
    .with_action("Connect with protocol 2025-11-25 or earlier (an initialize handshake) to use this tool.")
}

/// Send `params` (the protocol's JSON object) as a `kind` request to the client and return
/// the client's result as JSON.
pub(crate) async fn send(
    kind: ClientRequestKind,
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    timeout: Duration,
    params: Value,
) -> Result<Value, ToolError> {
    let method = kind.method();
    if !kind.declared(capabilities.as_ref()) {
        return Err(ToolError::permission_denied(format!(
            "the client did not declare the `{}` capability, so it cannot answer {method}",
            kind.capability()
        ))
        .with_action(format!(
            "Use a client that supports {}, or a tool that does not need it.",
            kind.capability()
        )));
    }
    let invalid = |e: serde_json::Error| {
        ToolError::validation(format!("invalid params for {method}: {e}"))
            .with_action("Build the params as the MCP specification describes them.")
    };
    let request = match kind {
        ClientRequestKind::Sampling => {
            ServerRequest::CreateMessageRequest(CreateMessageRequest::new(
                serde_json::from_value::<CreateMessageRequestParams>(params).map_err(invalid)?,
            ))
        }
        ClientRequestKind::Elicitation => ServerRequest::ElicitRequest(ElicitRequest::new(
            serde_json::from_value::<ElicitRequestParams>(params).map_err(invalid)?,
        )),
    };
    let failed = |error: ServiceError| match error {
        ServiceError::Timeout { .. } => ToolError::timeout(format!(
            "the client did not answer {method} within {} s",
            timeout.as_secs_f64()
        ))
        .with_action(
            "Ask the user to respond sooner, or raise the server's client request timeout.",
        ),
        ServiceError::McpError(error) => ToolError::upstream(format!(
            "the client answered {method} with error {}: {}",
            error.code.0, error.message
        )),
        other => ToolError::upstream(format!("{method} failed: {other}")),
    };
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
        .map_err(failed)?;
    let answer = handle.await_response().await.map_err(failed)?;
    let result = match (kind, answer) {
        (ClientRequestKind::Sampling, ClientResult::CreateMessageResult(result)) => {
            serde_json::to_value(result)
        }
        (ClientRequestKind::Elicitation, ClientResult::ElicitResult(result)) => {
            serde_json::to_value(result)
        }
        (_, other) => {
            return Err(ToolError::upstream(format!(
                "the client answered {method} with an unexpected result: {other:?}"
            )));
        }
    };
    result.map_err(|e| ToolError::internal(format!("cannot encode the {method} result: {e}")))
}
