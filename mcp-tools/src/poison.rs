//! Locks taken whatever a panicking holder left behind. The crate's locks guard queues,
//! caches, counters and registries, each held for one short update; a panic during one is
//! a bug, and taking the guard anyway keeps that bug from turning every later request
//! into a second panic.

#[cfg(any(feature = "otel", feature = "audit"))]
use std::sync::Condvar;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
#[cfg(any(feature = "otel", feature = "audit"))]
use std::time::Duration;

/// [`Mutex::lock`] that takes the guard of a poisoned mutex too.
pub(crate) trait LockIgnoringPoison<T: ?Sized> {
    fn lock_ignoring_poison(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockIgnoringPoison<T> for Mutex<T> {
    fn lock_ignoring_poison(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// [`RwLock::read`] and [`RwLock::write`] that take the guard of a poisoned lock too.
pub(crate) trait RwLockIgnoringPoison<T: ?Sized> {
    fn read_ignoring_poison(&self) -> RwLockReadGuard<'_, T>;
    fn write_ignoring_poison(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockIgnoringPoison<T> for RwLock<T> {
    fn read_ignoring_poison(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_ignoring_poison(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// [`Condvar::wait`] and [`Condvar::wait_timeout`] that take back the guard of a mutex
/// poisoned meanwhile too. The timed wait gives only the guard: its callers look at the
/// clock and their condition again, whether it timed out or not.
#[cfg(any(feature = "otel", feature = "audit"))]
pub(crate) trait CondvarIgnoringPoison {
    #[cfg(feature = "audit")]
    fn wait_ignoring_poison<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T>;
    fn wait_timeout_ignoring_poison<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> MutexGuard<'a, T>;
}

#[cfg(any(feature = "otel", feature = "audit"))]
impl CondvarIgnoringPoison for Condvar {
    #[cfg(feature = "audit")]
    fn wait_ignoring_poison<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    fn wait_timeout_ignoring_poison<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
    ) -> MutexGuard<'a, T> {
        self.wait_timeout(guard, timeout)
            .unwrap_or_else(|e| e.into_inner())
            .0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_gives_its_value() {
        let mutex = Mutex::new(1);
        let rw = RwLock::new(2);
        let _ = std::panic::catch_unwind(|| {
            let _m = mutex.lock().unwrap();
            let _w = rw.write().unwrap();
            panic!("poison both");
        });
        assert!(mutex.is_poisoned() && rw.is_poisoned());
        *mutex.lock_ignoring_poison() += 1;
        *rw.write_ignoring_poison() += 1;
        assert_eq!(*mutex.lock_ignoring_poison(), 2);
        assert_eq!(*rw.read_ignoring_poison(), 3);
    }

    #[cfg(any(feature = "otel", feature = "audit"))]
    #[test]
    fn a_wait_on_a_poisoned_mutex_gives_its_guard_back() {
        let mutex = Mutex::new(5);
        let _ = std::panic::catch_unwind(|| {
            let _m = mutex.lock().unwrap();
            panic!("poison it");
        });
        let guard = Condvar::new().wait_timeout_ignoring_poison(
            mutex.lock_ignoring_poison(),
            std::time::Duration::from_millis(1),
        );
        assert_eq!(*guard, 5);
    }
}
