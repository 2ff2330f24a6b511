//! Pre-serialized `tools/list` pages for the byte-stream transports.
//!
//! A `tools/list` page is the same bytes for every request that asks for it from the same
//! permission view of the same registry version, so the transport that writes its own
//! replies (`bounded.rs` and `http/direct.rs`, each `Direct`) serializes each page once and then only wraps the
//! cached bytes in the JSON-RPC envelope of the request's id. A miss goes through rmcp's
//! own request dispatch (`Service::handle_request`, with every check and every
//! version-dependent change rmcp makes to a result) and caches what that serializes to,
//! so a cached page is exactly what the uncached path sends.
//!
//! The cache is keyed by (registry version, view, page start, protocol era). A runtime
//! change to the tools bumps the registry version, and the first page asked for at the
//! new version empties the cache, so no page of a tool since disabled, removed or hidden is
//! ever served again. It holds at most [`MAX_BYTES`] of pages and [`MAX_PAGES`] pages, only
//! of views callers asked for; past either bound the least recently used pages go first
//! (a recency list: O(1) per lookup and per eviction).
//!
//! The direct paths take the steps one by one, so that a hit needs no request context:
//! `McpHandler::page_request` (which page), `McpHandler::cached_page_line` (a hit, in
//! its envelope), else `McpHandler::page_line` (stdio, TCP and Unix sockets, `bounded.rs`)
//! or rmcp's answer kept by `McpHandler::keep_page` (stateless HTTP, `http/direct.rs`);
//! those steps are in `handler/pages.rs`, this module is the cache and the envelope.
//! A stateful HTTP session's request, whose context exists already, takes
//! `McpHandler::tools_list_line`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::RequestId;
use rmcp::service::{RoleServer, TxJsonRpcMessage};

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

/// The bytes a page is serialized into at first.
pub(crate) const PAGE_CAPACITY: usize = 1024;

/// No slot (the end of the recency list).
const NIL: usize = usize::MAX;

/// The pages of one registry version, in a recency list: every lookup and every eviction
/// is O(1) (a hash lookup and a few links), whatever the number of pages.
#[derive(Default)]
struct Cache {
    /// The registry version every cached page belongs to.
    version: u64,
    /// Where each page's slot is (hashed with `foldhash`: one lookup a page request).
    index: HashMap<PageKey, usize, foldhash::fast::RandomState>,
    /// The pages; a freed slot is reused before the vector grows, so it never holds more
    /// than the page bound.
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// The most recently used page's slot ([`NIL`] when empty).
    newest: usize,
    /// The least recently used page's slot: the next to go.
    oldest: usize,
    bytes: usize,
}

struct Slot {
    key: PageKey,
    page: Arc<[u8]>,
    /// The slot used just more recently ([`NIL`]: none).
    newer: usize,
    /// The slot used just less recently ([`NIL`]: none).
    older: usize,
}

impl Cache {
    fn at(version: u64) -> Cache {
        Cache {
            version,
            newest: NIL,
            oldest: NIL,
            ..Cache::default()
        }
    }

    fn slot(&mut self, at: usize) -> &mut Slot {
        self.slots[at].as_mut().expect("a linked slot holds a page")
    }

    /// Take slot `at` out of the recency list.
    fn unlink(&mut self, at: usize) {
        let (newer, older) = {
            let slot = self.slot(at);
            (slot.newer, slot.older)
        };
        match newer {
            NIL => self.newest = older,
            newer => self.slot(newer).older = older,
        }
        match older {
            NIL => self.oldest = newer,
            older => self.slot(older).newer = newer,
        }
    }

    /// Put slot `at` (unlinked) first in the recency list.
    fn link_newest(&mut self, at: usize) {
        let newest = self.newest;
        {
            let slot = self.slot(at);
            slot.newer = NIL;
            slot.older = newest;
        }
        match newest {
            NIL => self.oldest = at,
            newest => self.slot(newest).newer = at,
        }
        self.newest = at;
    }

    fn get(&mut self, key: &PageKey) -> Option<Arc<[u8]>> {
        let at = *self.index.get(key)?;
        if self.newest != at {
            self.unlink(at);
            self.link_newest(at);
        }
        Some(self.slot(at).page.clone())
    }

    /// Drop the page in slot `at`.
    fn remove(&mut self, at: usize) {
        self.unlink(at);
        let slot = self.slots[at].take().expect("a linked slot holds a page");
        self.index.remove(&slot.key);
        self.bytes -= slot.page.len();
        self.free.push(at);
    }

    fn insert(&mut self, key: PageKey, page: Arc<[u8]>) {
        self.bytes += page.len();
        let slot = Slot {
            key: key.clone(),
            page,
            newer: NIL,
            older: NIL,
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at] = Some(slot);
                at
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.link_newest(at);
        self.index.insert(key, at);
    }
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
            cache: Mutex::new(Cache::at(0)),
        }
    }

    /// The cache, locked. A lock poisoned by a panic in the middle of an update may hold a
    /// half-updated cache (links and index out of step): it is emptied, not served.
    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            tracing::warn!("the tools/list page cache was poisoned by a panic; emptied");
            *cache = Cache::at(cache.version);
            self.cache.clear_poison();
            cache
        })
    }

    /// The page `key` of registry `version`, if cached.
    pub(crate) fn get(&self, version: u64, key: &PageKey) -> Option<Arc<[u8]>> {
        let mut cache = self.lock();
        if cache.version != version {
            return None;
        }
        cache.get(key)
    }

    /// Keep `page` as page `key` of registry `version`. A newer version empties the cache
    /// first; a page of an older version, or one larger than the whole budget, is not kept.
    pub(crate) fn insert(&self, version: u64, key: PageKey, page: Arc<[u8]>) {
        let mut cache = self.lock();
        if version < cache.version || page.len() > self.max_bytes || self.max_pages == 0 {
            return;
        }
        if version > cache.version {
            *cache = Cache::at(version);
        }
        if let Some(&at) = cache.index.get(&key) {
            cache.remove(at);
        }
        while cache.oldest != NIL
            && (cache.bytes + page.len() > self.max_bytes || cache.index.len() >= self.max_pages)
        {
            let oldest = cache.oldest;
            cache.remove(oldest);
        }
        cache.insert(key, page);
    }

    /// How many pages and bytes are cached.
    #[cfg(test)]
    pub(crate) fn size(&self) -> (usize, usize) {
        let cache = self.lock();
        (cache.index.len(), cache.bytes)
    }

    /// The cached pages' starts, most recently used first (walking the recency list).
    #[cfg(test)]
    fn recency(&self) -> Vec<usize> {
        let cache = self.lock();
        let mut starts = Vec::new();
        let mut at = cache.newest;
        while at != NIL {
            let slot = cache.slots[at].as_ref().expect("linked");
            starts.push(slot.key.start);
            at = slot.older;
        }
        starts
    }
}

/// One `tools/list` page request: the registry version it is answered at and, unless its
/// cursor is one this version refuses (rmcp answers those, uncached), which page it is.
pub(crate) struct PageRequest {
    pub(crate) version: u64,
    pub(crate) key: Option<PageKey>,
}

/// The reply line (without its newline) answering request `id` with `result`, the
/// serialized result of the request.
pub(crate) fn reply_line(id: &RequestId, result: &[u8]) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const MIDDLE: &[u8] = br#","result":"#;
    // Room for the id, the closing brace and the newline the writer adds.
    let mut line = Vec::with_capacity(HEAD.len() + MIDDLE.len() + result.len() + 48);
    line.extend_from_slice(HEAD);
    match id {
        RequestId::Number(n) => line.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
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
pub(crate) fn message_line(message: &TxJsonRpcMessage<RoleServer>) -> Vec<u8> {
    serde_json::to_vec(message).expect("rmcp's messages serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::JsonRpcMessage;

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

    /// The recency list after every kind of step: a lookup moves a page to the front, an
    /// eviction takes the back, a replaced page counts as just used, and freed slots are
    /// reused (the slot vector never outgrows the page bound).
    /// A panic while the cache is locked (here: in the middle of a use) leaves it
    /// poisoned: the next use finds it empty, and it fills again.
    #[test]
    fn a_poisoned_cache_is_emptied_not_served() {
        let pages = ToolPages::with_limits(1000, 4);
        pages.insert(1, key(0), page(b'x', 10));
        pages.insert(1, key(1), page(b'x', 10));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut cache = pages.lock();
            cache.bytes += 1;
            panic!("in the middle of an update");
        }));
        assert!(panicked.is_err());
        assert!(pages.cache.is_poisoned());
        assert!(
            pages.get(1, &key(0)).is_none(),
            "a poisoned cache serves nothing"
        );
        assert!(!pages.cache.is_poisoned());
        assert_eq!(pages.size(), (0, 0));
        pages.insert(1, key(0), page(b'x', 10));
        assert!(pages.get(1, &key(0)).is_some());
    }

    #[test]
    fn the_recency_list_orders_pages_by_last_use() {
        let pages = ToolPages::with_limits(1000, 4);
        for start in 0..4 {
            pages.insert(1, key(start), page(b'x', 10));
        }
        assert_eq!(pages.recency(), [3, 2, 1, 0]);
        assert!(pages.get(1, &key(0)).is_some());
        assert!(pages.get(1, &key(2)).is_some());
        assert!(pages.get(1, &key(2)).is_some(), "the newest, used again");
        assert_eq!(pages.recency(), [2, 0, 3, 1]);
        pages.insert(1, key(3), page(b'y', 20));
        assert_eq!(pages.recency(), [3, 2, 0, 1]);
        assert_eq!(pages.size(), (4, 50));
        // Full: each insert evicts the least recently used page.
        pages.insert(1, key(4), page(b'z', 10));
        assert_eq!(pages.recency(), [4, 3, 2, 0]);
        assert!(pages.get(1, &key(1)).is_none());
        assert!(pages.get(1, &key(0)).is_some());
        pages.insert(1, key(5), page(b'z', 10));
        assert_eq!(pages.recency(), [5, 0, 4, 3]);
        assert_eq!(pages.lock().slots.len(), 4);
        // A new version starts an empty list.
        pages.insert(2, key(7), page(b'v', 1));
        assert_eq!(pages.recency(), [7]);
        assert_eq!(pages.size(), (1, 1));
    }

    /// Many pages of mixed sizes through a small cache: both bounds hold after every
    /// insert, the list and the index agree, and a page that fits is always kept.
    #[test]
    fn the_bounds_hold_under_churn() {
        let (max_bytes, max_pages) = (300, 16);
        let pages = ToolPages::with_limits(max_bytes, max_pages);
        for round in 0..2000usize {
            let start = round * 7919 % 40;
            let len = 1 + round * 31 % 97;
            pages.insert(1, key(start), page(b'p', len));
            assert_eq!(
                pages.recency()[0],
                start,
                "the page just kept is the newest"
            );
            if round % 3 == 0 {
                pages.get(1, &key(round % 40));
            }
            let (count, bytes) = pages.size();
            assert!(
                count <= max_pages && bytes <= max_bytes,
                "{count} pages, {bytes} B"
            );
            assert_eq!(pages.recency().len(), count);
            let cache = pages.lock();
            let linked: usize = cache.slots.iter().flatten().map(|s| s.page.len()).sum();
            assert_eq!(linked, bytes);
            assert!(cache.slots.len() <= max_pages);
        }
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
