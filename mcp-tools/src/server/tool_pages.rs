//! Pre-serialized `tools/list` pages for the byte-stream transports.
//!
//! A `tools/list` page is the same bytes for every request that asks for it from the same
//! permission view of the same registry version, so the transport that writes its own
//! replies (`bounded.rs`, `Direct`) serializes each page once and then only wraps the
//! cached bytes in the JSON-RPC envelope of the request's id. A miss goes through rmcp's
//! own request dispatch (`Service::handle_request`, with every check and every
//! version-dependent change rmcp makes to a result) and caches what that serializes to,
//! so a cached page is exactly what the uncached path sends.
//!
//! The cache is keyed by (registry version, view, page start, protocol era). A runtime
//! change to the tools bumps the registry version, and the first page asked for at the
//! new version empties the cache, so no page of a tool since disabled, removed or hidden is
//! ever served again. It holds at most [`MAX_BYTES`] of pages and [`MAX_PAGES`] pages, only
//! of views callers asked for; past either bound the least recently used pages go first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::Service;
use rmcp::model::{ClientRequest, JsonRpcMessage, ListToolsRequest, RequestId};
use rmcp::service::{RequestContext, RoleServer, TxJsonRpcMessage};

use super::handler::{McpHandler, is_modern};
use super::paging;
use crate::permissions::Mask;

/// The most bytes of pages kept at once.
pub(crate) const MAX_BYTES: usize = 8 * 1024 * 1024;
/// The most pages kept at once.
pub(crate) const MAX_PAGES: usize = 4096;

/// Which page: who is asking, from where, on which protocol era.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    /// The caller's permission view (`None`: the local caller, every served tool).
    pub(crate) view: Option<Mask>,
    /// The offset of the page's first tool.
    pub(crate) start: usize,
    /// Protocol 2026-07-28 or later (the result carries cache hints).
    pub(crate) modern: bool,
}

/// The serialized `tools/list` results of one server, one registry version at a time.
pub(crate) struct ToolPages {
    max_bytes: usize,
    max_pages: usize,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// The registry version every cached page belongs to.
    version: u64,
    pages: HashMap<PageKey, Cached>,
    bytes: usize,
    /// Ticks on every lookup; a page's last tick says how recently it was used.
    clock: u64,
}

struct Cached {
    page: Arc<[u8]>,
    used: u64,
}

impl Default for ToolPages {
    fn default() -> ToolPages {
        ToolPages::with_limits(MAX_BYTES, MAX_PAGES)
    }
}

impl ToolPages {
    /// A cache holding at most `max_bytes` of pages and `max_pages` pages.
    pub(crate) fn with_limits(max_bytes: usize, max_pages: usize) -> ToolPages {
        ToolPages {
            max_bytes,
            max_pages,
            cache: Mutex::new(Cache::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The page `key` of registry `version`, if cached.
    pub(crate) fn get(&self, version: u64, key: &PageKey) -> Option<Arc<[u8]>> {
        let mut cache = self.lock();
        if cache.version != version {
            return None;
        }
        cache.clock += 1;
        let now = cache.clock;
        let cached = cache.pages.get_mut(key)?;
        cached.used = now;
        Some(cached.page.clone())
    }

    /// Keep `page` as page `key` of registry `version`. A newer version empties the cache
    /// first; a page of an older version, or one larger than the whole budget, is not kept.
    pub(crate) fn insert(&self, version: u64, key: PageKey, page: Arc<[u8]>) {
        let mut cache = self.lock();
        if version < cache.version || page.len() > self.max_bytes || self.max_pages == 0 {
            return;
        }
        if version > cache.version {
            *cache = Cache {
                version,
                ..Cache::default()
            };
        }
        if let Some(old) = cache.pages.remove(&key) {
            cache.bytes -= old.page.len();
        }
        while cache.bytes + page.len() > self.max_bytes || cache.pages.len() >= self.max_pages {
            let Some(oldest) = cache
                .pages
                .iter()
                .min_by_key(|(_, cached)| cached.used)
                .map(|(key, _)| key.clone())
            else {
                break;
            };
            if let Some(evicted) = cache.pages.remove(&oldest) {
                cache.bytes -= evicted.page.len();
            }
        }
        cache.clock += 1;
        let used = cache.clock;
        cache.bytes += page.len();
        cache.pages.insert(key, Cached { page, used });
    }

    /// How many pages and bytes are cached.
    #[cfg(test)]
    pub(crate) fn size(&self) -> (usize, usize) {
        let cache = self.lock();
        (cache.pages.len(), cache.bytes)
    }
}

/// The reply line (without its newline) answering request `id` with `result`, the
/// serialized result of the request.
fn reply_line(id: &RequestId, result: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const MIDDLE: &[u8] = br#","result":"#;
    // Room for the id, the closing brace and the newline the writer adds.
    let mut line = Vec::with_capacity(HEAD.len() + MIDDLE.len() + result.len() + 48);
    line.extend_from_slice(HEAD);
    match id {
        RequestId::Number(n) => line.extend_from_slice(n.to_string().as_bytes()),
        RequestId::String(s) => {
            serde_json::to_writer(&mut line, s.as_ref()).expect("a string serializes")
        }
    }
    line.extend_from_slice(MIDDLE);
    line.extend_from_slice(result);
    line.push(b'}');
    line
}

/// The line of a whole message, as rmcp would write it.
fn message_line(message: &TxJsonRpcMessage<RoleServer>) -> Vec<u8> {
    serde_json::to_vec(message).expect("rmcp's messages serialize")
}

impl McpHandler {
    /// The reply line (without its newline) to `tools/list` request `id`: the cached page
    /// in its envelope, or, on a miss, rmcp's own answer, whose result is cached when it
    /// is a page. `context` is the request's, with its metadata and extensions.
    pub(crate) async fn tools_list_line(
        &self,
        id: &RequestId,
        request: ListToolsRequest,
        context: RequestContext<RoleServer>,
    ) -> Vec<u8> {
        let caller = self.caller(&context);
        let view = caller.permissions();
        let version = self.shared.registry.version();
        let cursor = request.params.as_ref().and_then(|p| p.cursor.as_deref());
        // A cursor this version refuses is answered by rmcp below, uncached.
        let key = paging::page_start(cursor, version)
            .ok()
            .map(|start| PageKey {
                view: view.map(|p| p.mask().clone()),
                start,
                modern: is_modern(&context),
            });
        let pages = &self.shared.tool_pages;
        if let Some(page) = key.as_ref().and_then(|key| pages.get(version, key)) {
            return reply_line(id, &page);
        }
        let request = ClientRequest::ListToolsRequest(request);
        match self.handle_request(request, context).await {
            Ok(result) => {
                let page: Arc<[u8]> = serde_json::to_vec(&result)
                    .expect("rmcp's results serialize")
                    .into();
                if let Some(key) = key {
                    pages.insert(version, key, page.clone());
                }
                reply_line(id, &page)
            }
            Err(error) => message_line(&JsonRpcMessage::error(error, Some(id.clone()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(start: usize) -> PageKey {
        PageKey {
            view: None,
            start,
            modern: false,
        }
    }

    fn page(byte: u8, len: usize) -> Arc<[u8]> {
        vec![byte; len].into()
    }

    #[test]
    fn pages_of_the_current_version_are_served_and_a_newer_version_empties_the_cache() {
        let pages = ToolPages::with_limits(1000, 10);
        pages.insert(3, key(0), page(b'a', 10));
        assert_eq!(pages.get(3, &key(0)).as_deref(), Some(&[b'a'; 10][..]));
        assert!(pages.get(3, &key(1)).is_none());
        assert!(pages.get(4, &key(0)).is_none(), "another version's page");
        // A page made from an older snapshot after a newer one was cached is dropped.
        pages.insert(4, key(1), page(b'b', 10));
        assert!(
            pages.get(4, &key(0)).is_none(),
            "version 3's pages are gone"
        );
        pages.insert(3, key(0), page(b'a', 10));
        assert!(pages.get(4, &key(0)).is_none());
        assert_eq!(pages.size(), (1, 10));
    }

    #[test]
    fn the_least_recently_used_pages_go_first_and_the_bounds_hold() {
        let pages = ToolPages::with_limits(100, 3);
        for start in 0..3 {
            pages.insert(1, key(start), page(b'x', 30));
        }
        assert!(pages.get(1, &key(0)).is_some());
        // Over the byte budget: page 1, used least recently, goes.
        pages.insert(1, key(3), page(b'y', 30));
        assert!(pages.get(1, &key(1)).is_none());
        assert!(pages.get(1, &key(0)).is_some());
        assert_eq!(pages.size(), (3, 90));
        // Over the page count with room in bytes: the oldest goes again.
        let pages_small = ToolPages::with_limits(1000, 2);
        pages_small.insert(1, key(0), page(b'x', 1));
        pages_small.insert(1, key(1), page(b'x', 1));
        pages_small.insert(1, key(2), page(b'x', 1));
        assert_eq!(pages_small.size(), (2, 2));
        assert!(pages_small.get(1, &key(0)).is_none());
        // A page larger than the whole budget is never kept; replacing a page keeps one.
        pages.insert(1, key(9), page(b'z', 101));
        assert!(pages.get(1, &key(9)).is_none());
        pages.insert(1, key(0), page(b'w', 10));
        assert_eq!(pages.get(1, &key(0)).as_deref(), Some(&[b'w'; 10][..]));
        assert_eq!(pages.size(), (3, 70));
    }

    #[test]
    fn views_and_eras_are_pages_of_their_own() {
        let pages = ToolPages::with_limits(1000, 10);
        let reader = crate::PermissionSet::new(["READ"]);
        let of_reader = PageKey {
            view: Some(reader.mask().clone()),
            ..key(0)
        };
        pages.insert(1, key(0), page(b'a', 4));
        assert!(pages.get(1, &of_reader).is_none());
        let modern = PageKey {
            modern: true,
            ..key(0)
        };
        assert!(pages.get(1, &modern).is_none());
    }

    #[test]
    fn reply_lines_match_rmcps_envelope() {
        let result = rmcp::model::ServerResult::empty(());
        let bytes = serde_json::to_vec(&result).unwrap();
        for id in [
            RequestId::Number(7),
            RequestId::Number(-3),
            RequestId::String("a \"quoted\" id\n".into()),
        ] {
            let message: TxJsonRpcMessage<RoleServer> =
                JsonRpcMessage::response(result.clone(), id.clone());
            assert_eq!(reply_line(&id, &bytes), message_line(&message));
        }
    }
}
