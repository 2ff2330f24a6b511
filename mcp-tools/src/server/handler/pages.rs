//! The handler's `tools/list` steps for the transports that write their own replies:
//! which page a request asks for, the cached page in its envelope, and rmcp's answer kept
//! as the page on a miss (the cache itself: `tool_pages.rs`).

use std::sync::Arc;

use rmcp::Service;
use rmcp::model::{ClientRequest, JsonRpcMessage, ListToolsRequest, RequestId, ServerResult};
use rmcp::service::{RequestContext, RoleServer};

use super::McpHandler;
use crate::Caller;
use crate::server::paging;
#[cfg(feature = "http")]
use crate::server::protocol::{http_caller, is_modern};
use crate::server::telemetry::OperationKey;
use crate::server::tool_pages::{PAGE_CAPACITY, PageKey, PageRequest, message_line, reply_line};

impl McpHandler {
    /// Which page a `tools/list` request after `cursor` asks for, from the permission view
    /// of a request that carries `http` (the HTTP authentication's caller, if any) on a
    /// protocol era (`modern`: 2026-07-28 or later).
    pub(crate) fn page_request(
        &self,
        cursor: Option<&str>,
        http: Option<&Caller>,
        modern: bool,
    ) -> PageRequest {
        let version = self.shared.registry.version();
        let key = paging::page_start(cursor, version)
            .ok()
            .map(|start| PageKey {
                view: self.view_of(http).map(|p| p.mask().clone()),
                start,
                modern,
            });
        PageRequest { version, key }
    }

    /// Which page `request`, with its `context`, asks for.
    #[cfg(feature = "http")]
    pub(crate) fn list_page(
        &self,
        request: &ListToolsRequest,
        context: &RequestContext<RoleServer>,
    ) -> PageRequest {
        let cursor = request.params.as_ref().and_then(|p| p.cursor.as_deref());
        self.page_request(cursor, http_caller(context), is_modern(context))
    }

    /// The reply line (without its newline) to request `id` for `page`, when the page is
    /// cached.
    /// A hit is one `tools/list` answered: measured here (without a span: no request
    /// context is made for it).
    pub(crate) fn cached_page_line(&self, id: &RequestId, page: &PageRequest) -> Option<Vec<u8>> {
        let started = std::time::Instant::now();
        let key = page.key.as_ref()?;
        let bytes = self.shared.tool_pages.get(page.version, key)?;
        let line = reply_line(id, &bytes);
        self.shared.telemetry.metrics.operation(
            OperationKey {
                method: "tools/list",
                tool: None,
                error: None,
            },
            started.elapsed(),
        );
        Some(line)
    }

    /// Keep `result`, rmcp's answer to `page`, as that page; its bytes.
    pub(crate) fn keep_page(&self, page: PageRequest, result: &ServerResult) -> Arc<[u8]> {
        // Room for a page of a few tools from the start (`to_vec` starts at 128 bytes and
        // grows by doubling, copying each time).
        let mut bytes = Vec::with_capacity(PAGE_CAPACITY);
        serde_json::to_writer(&mut bytes, result).expect("rmcp's results serialize");
        let bytes: Arc<[u8]> = bytes.into();
        if let Some(key) = page.key {
            self.shared
                .tool_pages
                .insert(page.version, key, bytes.clone());
        }
        bytes
    }

    /// The reply line (without its newline) to `tools/list` request `id` asking for `page`
    /// ([`page_request`](Self::page_request)): the cached page in its envelope, or, on a
    /// miss, rmcp's own answer, whose result is kept when it is a page. `context` is the
    /// request's, with its metadata and extensions.
    ///
    /// It looks the page up even when its caller did so already and found none: when this
    /// runs in a task, the pages kept since the request was read are then served, and a
    /// page asked for several times before its first answer is serialized once.
    pub(crate) async fn page_line(
        &self,
        id: &RequestId,
        page: PageRequest,
        request: ListToolsRequest,
        context: RequestContext<RoleServer>,
    ) -> Vec<u8> {
        if let Some(line) = self.cached_page_line(id, &page) {
            return line;
        }
        let request = ClientRequest::ListToolsRequest(request);
        match self.handle_request(request, context).await {
            Ok(result) => reply_line(id, &self.keep_page(page, &result)),
            Err(error) => message_line(&JsonRpcMessage::error(error, Some(id.clone()))),
        }
    }

    /// The reply line (without its newline) to `tools/list` request `id`
    /// ([`page_line`](Self::page_line) of the page it asks for): a stateful HTTP session's.
    #[cfg(feature = "http")]
    pub(crate) async fn tools_list_line(
        &self,
        id: &RequestId,
        request: ListToolsRequest,
        context: RequestContext<RoleServer>,
    ) -> Vec<u8> {
        let page = self.list_page(&request, &context);
        self.page_line(id, page, request, context).await
    }
}
