//! The callbacks a registry calls on its events (a runtime change to the tools, an
//! updated resource). The application's listeners stay as long as the registry; a
//! server's listener leaves with the server ([`Listening`]), so a long-lived registry
//! serving one short-lived server after another holds only the live servers' listeners.

use crate::poison::RwLockIgnoringPoison;
#[cfg(feature = "server")]
use std::sync::Weak;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The listeners of one kind of event, each under the key it was added with.
pub(crate) struct Listeners<F: ?Sized> {
    entries: RwLock<Vec<(u64, Arc<F>)>>,
    next_key: AtomicU64,
}

impl<F: ?Sized> Default for Listeners<F> {
    fn default() -> Self {
        Listeners {
            entries: RwLock::new(Vec::new()),
            next_key: AtomicU64::new(0),
        }
    }
}

impl<F: ?Sized> Listeners<F> {
    /// Keep `listener` as long as the registry.
    pub(crate) fn add(&self, listener: Arc<F>) {
        self.insert(listener);
    }

    /// Keep `listener` until the returned guard is dropped.
    #[cfg(feature = "server")]
    pub(crate) fn add_until_dropped(self: &Arc<Self>, listener: Arc<F>) -> Listening<F> {
        let key = self.insert(listener);
        Listening {
            listeners: Arc::downgrade(self),
            key,
        }
    }

    fn insert(&self, listener: Arc<F>) -> u64 {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.entries.write_ignoring_poison().push((key, listener));
        key
    }

    /// The listeners now, in the order they were added (called without the lock held, so
    /// a listener may add or remove listeners).
    pub(crate) fn current(&self) -> Vec<Arc<F>> {
        self.entries
            .read_ignoring_poison()
            .iter()
            .map(|(_, listener)| listener.clone())
            .collect()
    }

    /// How many listeners are kept.
    #[cfg(all(test, feature = "server"))]
    pub(crate) fn len(&self) -> usize {
        self.entries.read_ignoring_poison().len()
    }
}

/// Keeps one listener registered while alive; dropping it removes the listener.
#[cfg(feature = "server")]
pub(crate) struct Listening<F: ?Sized> {
    listeners: Weak<Listeners<F>>,
    key: u64,
}

#[cfg(feature = "server")]
impl<F: ?Sized> Drop for Listening<F> {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners
                .entries
                .write_ignoring_poison()
                .retain(|(key, _)| *key != self.key);
        }
    }
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::Listeners;

    type Count = dyn Fn() + Send + Sync;

    #[test]
    fn a_guarded_listener_leaves_when_its_guard_drops_and_a_kept_one_stays() {
        let listeners: Arc<Listeners<Count>> = Arc::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let counting = |calls: &Arc<AtomicUsize>| -> Arc<Count> {
            let calls = calls.clone();
            Arc::new(move || {
                calls.fetch_add(1, Ordering::SeqCst);
            })
        };
        listeners.add(counting(&calls));
        let first = listeners.add_until_dropped(counting(&calls));
        let second = listeners.add_until_dropped(counting(&calls));
        assert_eq!(listeners.len(), 3);
        drop(first);
        assert_eq!(listeners.len(), 2);
        listeners.current().iter().for_each(|listener| listener());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        drop(second);
        assert_eq!(listeners.len(), 1);
        // A guard outliving its listeners drops quietly.
        let late = listeners.add_until_dropped(counting(&calls));
        drop(listeners);
        drop(late);
    }
}
