//! The lists each permission view sees, computed once per view and kept for the
//! [`MAX_CACHED_VIEWS`] views used most recently: a server with more distinct callers
//! than that keeps serving every one of them, and recomputes only the lists of callers
//! that have not come back for a while.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::permissions::Mask;
use crate::poison::LockIgnoringPoison;

/// The most distinct permission views whose lists are kept at once.
pub(crate) const MAX_CACHED_VIEWS: usize = 256;

/// A view's key: the caller's permission mask, or `None` for the unfiltered registry.
type ViewKey = Option<Mask>;

/// Lists of type `L` by permission view, least recently used out first.
pub(crate) struct ViewCache<L> {
    views: Mutex<Views<L>>,
}

struct Views<L> {
    /// Each view's lists with the tick of its last use.
    entries: HashMap<ViewKey, (Arc<L>, u64)>,
    tick: u64,
}

impl<L> Default for ViewCache<L> {
    fn default() -> Self {
        ViewCache {
            views: Mutex::new(Views {
                entries: HashMap::new(),
                tick: 0,
            }),
        }
    }
}

impl<L> ViewCache<L> {
    /// The lists of `key`, computed by `compute` when not cached; when the cache is full
    /// the view used least recently makes room.
    pub(crate) fn get_or_compute(&self, key: ViewKey, compute: impl FnOnce() -> L) -> Arc<L> {
        let mut views = self.views.lock_ignoring_poison();
        views.tick += 1;
        let now = views.tick;
        if let Some((lists, used)) = views.entries.get_mut(&key) {
            *used = now;
            return lists.clone();
        }
        if views.entries.len() >= MAX_CACHED_VIEWS {
            // A linear scan, on a miss of a full cache only: 256 entries, no second index
            // to keep in step on every hit.
            let oldest = views
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                views.entries.remove(&oldest);
            }
        }
        let lists = Arc::new(compute());
        views.entries.insert(key, (lists.clone(), now));
        lists
    }

    /// How many views are cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.views.lock_ignoring_poison().entries.len()
    }
}
