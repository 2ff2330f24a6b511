//! Requests a tool sends to the client during a call: `sampling/createMessage`,
//! `elicitation/create` and `roots/list`. Each checks the capability the client declared, bounds the wait
//! with the server's client-request timeout, and turns every failure into a `ToolError`
//! that says what happened and what to do.

use std::time::Duration;

// rmcp marks the sampling and roots types deprecated (SEP-2577) while the protocol still has them.
use rmcp::model::{
    ClientCapabilities, ClientResult, ElicitRequest, ElicitRequestParams, InputRequest,
    ServerRequest,
};
#[expect(deprecated)]
use rmcp::model::{CreateMessageRequest, CreateMessageRequestParams, ListRootsRequest};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use serde_json::Value;

use crate::context::ClientFeature;
use crate::output::error::ToolError;

/// The client capabilities `feature` needs, as the protocol writes them (`{"sampling": {}}`):
/// the data of a -32021 answer.
pub(crate) fn required(feature: ClientFeature) -> ClientCapabilities {
    let mut required = ClientCapabilities::default();
    match feature {
        ClientFeature::Sampling => required.sampling = Some(Default::default()),
        ClientFeature::Elicitation => required.elicitation = Some(Default::default()),
        ClientFeature::Roots => required.roots = Some(Default::default()),
    }
    required
}

/// True when `capabilities` declare what `feature` needs.
pub(crate) fn declared(feature: ClientFeature, capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities.is_some_and(|c| match feature {
        ClientFeature::Sampling => c.sampling.is_some(),
        ClientFeature::Elicitation => c.elicitation.is_some(),
        ClientFeature::Roots => c.roots.is_some(),
    })
}

/// The error for a client request on protocol 2026-07-28 or later from a request that
/// cannot answer `input_required` (completion), which has no server-to-client requests.
pub(crate) fn not_on_modern(feature: ClientFeature) -> ToolError {
    ToolError::permission_denied(format!(
        "this request runs on MCP protocol 2026-07-28 or later, where only tools/call, \
         prompts/get and resources/read can ask the client for {} (an input_required \
         result); this request cannot",
        feature.method()
    ))
    .with_action(
        "Ask from a tool, prompt or resource, or connect with protocol 2025-11-25 or earlier \
         (an initialize handshake).",
    )
}

/// Refuse a `feature` request to a client that did not declare the capability for it.
pub(crate) fn check_declared(
    feature: ClientFeature,
    capabilities: Option<&ClientCapabilities>,
) -> Result<(), ToolError> {
    if declared(feature, capabilities) {
        return Ok(());
    }
    Err(ToolError::permission_denied(format!(
        "this session's client did not declare the `{}` capability, so it cannot answer {} \
         (a stateless server keeps no session: it never knows what a client declared)",
        feature.capability(),
        feature.method()
    ))
    .with_action(format!(
        "Use a client that supports {} over a session (stdio, TCP, or stateful HTTP), or a \
         tool that does not need it.",
        feature.capability()
    )))
}

/// The `feature` request a tool's `params` make, checked against the protocol's params type.
#[expect(deprecated)] // sampling
pub(crate) fn input_request(
    feature: ClientFeature,
    params: Value,
) -> Result<InputRequest, ToolError> {
    let request = match feature {
        ClientFeature::Sampling => serde_json::from_value::<CreateMessageRequestParams>(params)
            .map(|p| InputRequest::CreateMessage(CreateMessageRequest::new(p))),
        ClientFeature::Elicitation => serde_json::from_value::<ElicitRequestParams>(params)
            .map(|p| InputRequest::Elicitation(ElicitRequest::new(p))),
        // roots/list has no params; whatever object came is not sent.
        ClientFeature::Roots => Ok(InputRequest::ListRoots(ListRootsRequest::default())),
    };
    request.map_err(|error| {
        ToolError::validation(format!("invalid params for {}: {error}", feature.method()))
            .with_action("Build the params as the MCP specification describes them.")
    })
}

/// Send `params` (the protocol's JSON object) as a `feature` request to the client and return
/// the client's result as JSON.
pub(crate) async fn send(
    feature: ClientFeature,
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    timeout: Duration,
    params: Value,
) -> Result<Value, ToolError> {
    let method = feature.method();
    check_declared(feature, capabilities.as_ref())?;
    let request = match input_request(feature, params)? {
        InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
        InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
        InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
        other => {
            return Err(ToolError::internal(format!(
                "{method} made an unexpected request: {other:?}"
            )));
        }
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
    let result = match (feature, answer) {
        (ClientFeature::Sampling, ClientResult::CreateMessageResult(result)) => {
            serde_json::to_value(result)
        }
        (ClientFeature::Elicitation, ClientResult::ElicitResult(result)) => {
            serde_json::to_value(result)
        }
        (ClientFeature::Roots, ClientResult::ListRootsResult(result)) => {
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
