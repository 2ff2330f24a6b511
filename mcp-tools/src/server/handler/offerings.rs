//! The server side of resources, prompts and completion: `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe` / `unsubscribe`,
//! `prompts/list`, `prompts/get` and `completion/complete`, each answered from the caller's
//! view of the registry. Lists page like `tools/list`; failures map to JSON-RPC errors:
//! an unknown (or hidden) resource is -32002, an unknown prompt or bad argument -32602,
//! `resources/subscribe` / `unsubscribe` on a server without resources (so without the
//! `subscribe` capability) an unsupported method, -32601,
//! a failing handler -32603 with the error's kind and action in `data`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, SubscribeRequestMethod, SubscribeRequestParams, UnsubscribeRequestMethod,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::{McpHandler, RoundEnd};
use crate::definition::completion::{CompletionRef, CompletionRequest};
use crate::definition::params::Params;
use crate::output::error::{ErrorKind, ToolError, echo};
use crate::registry::ToolRegistry;
use crate::server::convert;
use crate::server::paging;
use crate::server::protocol::{declares_subscriptions, is_modern};

/// Resources and prompts never change at run time, so their cursors carry generation 0.
const GENERATION: u64 = 0;

/// How a failed request is answered.
#[derive(Clone, Copy)]
enum Unknown<'a> {
    /// An unknown resource (its URI): -32002 (`resource_not_found`), the URI in `data`.
    Resource(&'a str),
    /// An unknown prompt or template: -32602.
    Params,
}

/// The JSON-RPC error for `error`: its message, with the kind and action in `data`.
fn protocol_error(error: ToolError, unknown: Unknown<'_>) -> McpError {
    let mut data = json!({
        "kind": error.kind().as_str(),
        "action": error.action().map_or_else(|| error.kind().default_action(None), str::to_string),
    });
    let message = error.message().to_string();
    match (error.kind(), unknown) {
        (ErrorKind::NotFound, Unknown::Resource(uri)) => {
            // As the specification's example of the error has it.
            data["uri"] = uri.into();
            McpError::resource_not_found(message, Some(data))
        }
        (ErrorKind::NotFound | ErrorKind::Validation, _) => {
            McpError::invalid_params(message, Some(data))
        }
        _ => McpError::internal_error(message, Some(data)),
    }
}

/// The page of `all` a cursor asks for, converted to protocol entries, and the next
/// page's cursor.
fn page<D, T>(
    all: &[D],
    entry: impl Fn(&D) -> Option<T>,
    request: Option<PaginatedRequestParams>,
    page_size: Option<usize>,
) -> Result<(Vec<T>, Option<String>), McpError> {
    let cursor = request.and_then(|r| r.cursor);
    let start = paging::page_start(cursor.as_deref(), GENERATION)?;
    let (start, end, next) = paging::page_bounds(all.len(), start, page_size)?;
    Ok((
        all[start..end].iter().filter_map(entry).collect(),
        next.map(|offset| paging::cursor(GENERATION, offset)),
    ))
}

/// Fill in a list result's cursor and, on 2026-07-28, its cache hints.
macro_rules! finish_list {
    ($handler:expr, $context:expr, $result:expr, $next:expr, $private:expr) => {{
        let mut result = $result;
        result.next_cursor = $next;
        if let Some((ttl_ms, scope)) = $handler.list_cache_hints($context, $private) {
            result.ttl_ms = Some(ttl_ms);
            result.cache_scope = Some(scope);
        }
        result
    }};
}

/// Prompt arguments as strings (numbers and booleans are accepted as their JSON text).
fn prompt_arguments(arguments: Option<rmcp::model::JsonObject>) -> Result<Params, McpError> {
    let mut params = Params::new();
    for (name, value) in arguments.unwrap_or_default() {
        let text = match value {
            Value::String(text) => text,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => continue,
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "prompt argument `{name}` must be a string, got {}",
                        match other {
                            Value::Array(_) => "an array",
                            _ => "an object",
                        }
                    ),
                    None,
                ));
            }
        };
        params.insert(name, text);
    }
    Ok(params)
}

impl McpHandler {
    /// The caller's view, and whether lists depend on the caller (bearer tokens in use).
    pub(super) fn caller_view(&self, context: &RequestContext<RoleServer>) -> (ToolRegistry, bool) {
        match self.caller(context).permissions() {
            Some(permissions) => (self.shared.registry.view(permissions), true),
            None => (self.shared.registry.clone(), false),
        }
    }

    pub(super) async fn resources_list(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let (view, private) = self.caller_view(&context);
        let (items, next) = page(
            &view.list_resources(),
            |def| convert::resource(def),
            request,
            self.shared.page_size,
        )?;
        let result = ListResourcesResult::with_all_items(items);
        Ok(finish_list!(self, &context, result, next, private))
    }

    pub(super) async fn resource_templates_list(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let (view, private) = self.caller_view(&context);
        let (items, next) = page(
            &view.list_resource_templates(),
            |def| convert::resource_template(def),
            request,
            self.shared.page_size,
        )?;
        let result = ListResourceTemplatesResult::with_all_items(items);
        Ok(finish_list!(self, &context, result, next, private))
    }

    pub(super) async fn prompts_list(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let (view, private) = self.caller_view(&context);
        let (items, next) = page(
            &view.list_prompts(),
            |def| Some(convert::prompt(def)),
            request,
            self.shared.page_size,
        )?;
        let result = ListPromptsResult::with_all_items(items);
        Ok(finish_list!(self, &context, result, next, private))
    }

    pub(super) async fn resource_read(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let (view, _) = self.caller_view(context);
        let binding = self.binding(context, "resources/read", &request.uri, &Value::Null);
        let ended = self
            .in_round(
                context,
                binding,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
                |ctx| view.read_resource(&request.uri, ctx),
            )
            .await?;
        match ended {
            RoundEnd::Finished(Ok(contents)) => Ok(ReadResourceResult::new(
                contents
                    .into_iter()
                    .map(convert::resource_contents)
                    .collect(),
            )
            .into()),
            RoundEnd::Finished(Err(error)) | RoundEnd::Failed(error) => {
                Err(protocol_error(error, Unknown::Resource(&request.uri)))
            }
            RoundEnd::Asked(input_required) => Ok(input_required.into()),
        }
    }

    pub(super) async fn resource_subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !declares_subscriptions(&self.shared.registry) {
            tracing::debug!("resources/subscribe on a server without resource subscriptions");
            return Err(McpError::method_not_found::<SubscribeRequestMethod>());
        }
        let (view, _) = self.caller_view(&context);
        if view.resource_for(&request.uri).is_none() {
            return Err(McpError::resource_not_found(
                format!("unknown resource: {}", echo(&request.uri)),
                Some(json!({"uri": request.uri})),
            ));
        }
        self.shared.subscriptions.subscribe(
            &self.session.subscriptions,
            context.peer.clone(),
            request.uri,
        );
        Ok(())
    }

    pub(super) async fn resource_unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !declares_subscriptions(&self.shared.registry) {
            tracing::debug!("resources/unsubscribe on a server without resource subscriptions");
            return Err(McpError::method_not_found::<UnsubscribeRequestMethod>());
        }
        self.shared
            .subscriptions
            .unsubscribe(&self.session.subscriptions, &request.uri);
        Ok(())
    }

    pub(super) async fn prompt_get(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let (view, _) = self.caller_view(context);
        let binding = is_modern(context)
            .then(|| Value::Object(request.arguments.clone().unwrap_or_default()))
            .and_then(|arguments| self.binding(context, "prompts/get", &request.name, &arguments));
        let arguments = prompt_arguments(request.arguments)?;
        let ended = self
            .in_round(
                context,
                binding,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
                |ctx| view.get_prompt(&request.name, arguments, ctx),
            )
            .await?;
        match ended {
            RoundEnd::Finished(Ok(result)) => Ok(convert::prompt_result(result).into()),
            RoundEnd::Finished(Err(error)) | RoundEnd::Failed(error) => {
                Err(protocol_error(error, Unknown::Params))
            }
            RoundEnd::Asked(input_required) => Ok(input_required.into()),
        }
    }

    pub(super) async fn completion(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let (view, _) = self.caller_view(&context);
        let reference = match request.r#ref {
            Reference::Prompt(prompt) => CompletionRef::Prompt(prompt.name),
            Reference::Resource(resource) => CompletionRef::ResourceTemplate(resource.uri),
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "completion/complete: unsupported reference type {}",
                        other.reference_type()
                    ),
                    None,
                ));
            }
        };
        let ArgumentInfo { name, value, .. } = request.argument;
        let completion_request = CompletionRequest {
            argument: name,
            value,
            context: request
                .context
                .and_then(|c| c.arguments)
                .unwrap_or_default(),
        };
        let ctx = self.tool_context(&context);
        let completion = view
            .complete(&reference, completion_request, ctx)
            .await
            .map_err(|error| protocol_error(error, Unknown::Params))?;
        let info = CompletionInfo::with_pagination(
            completion.values().to_vec(),
            completion.total(),
            completion.has_more(),
        )
        .map_err(|problem| McpError::internal_error(problem, None))?;
        Ok(CompleteResult::new(info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_protocol_codes() {
        let not_found = protocol_error(ToolError::not_found("gone"), Unknown::Resource("a:b"));
        assert_eq!(not_found.code.0, -32002);
        assert_eq!(not_found.data.as_ref().unwrap()["uri"], "a:b");
        let unknown_prompt = protocol_error(ToolError::not_found("gone"), Unknown::Params);
        assert_eq!(unknown_prompt.code.0, -32602);
        let bad = protocol_error(ToolError::validation("bad"), Unknown::Resource("a:b"));
        assert_eq!(bad.code.0, -32602);
        let failed = protocol_error(
            ToolError::upstream("down").with_action("Start it."),
            Unknown::Params,
        );
        assert_eq!(failed.code.0, -32603);
        assert_eq!(failed.message, "down");
        assert_eq!(
            failed.data.unwrap(),
            json!({"kind": "upstream_error", "action": "Start it."})
        );
    }

    #[test]
    fn prompt_arguments_accept_scalars_only() {
        let args = serde_json::from_value(json!({"a": "x", "n": 3, "b": true, "z": null})).unwrap();
        let params = prompt_arguments(Some(args)).unwrap();
        assert_eq!(params.get("n"), Some("3"));
        assert_eq!(params.get("b"), Some("true"));
        assert_eq!(params.get("z"), None);
        let nested = serde_json::from_value(json!({"a": [1]})).unwrap();
        assert_eq!(prompt_arguments(Some(nested)).unwrap_err().code.0, -32602);
    }
}
