//! Locking that survives a panic elsewhere: the one poison-tolerant lock of the crate
//! (mutex and read-write lock).
//!
//! A thread that panics while holding a `std::sync::Mutex` poisons it; every later `lock()`
//! then returns an error. The gateway's shared state (sessions, alerts, counters, peers...)
//! stays consistent between statements, so the next holder takes the data as it is rather
//! than failing every request that follows. The store's writer lock is the exception: it
//! stops the register on poison (`store/mod.rs`) and does not use this.

use std::sync::{LockResult, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, taking the data even if a panicking holder poisoned it.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    recover(mutex.lock())
}

/// Read-locks `lock`, poisoned or not.
pub fn read<T: ?Sized>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    recover(lock.read())
}

/// Write-locks `lock`, poisoned or not.
pub fn write<T: ?Sized>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    recover(lock.write())
}

/// The guard of a lock or a condition variable's wait, poisoned or not.
pub fn recover<G>(result: LockResult<G>) -> G {
    result.unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_poisoned_mutex_still_gives_its_data() {
        let shared = Arc::new(Mutex::new(7));
        let poisoner = Arc::clone(&shared);
        let _ = std::thread::spawn(move || {
            let _guard = poisoner.lock().unwrap();
            panic!("poison it");
        })
        .join();
        assert!(shared.is_poisoned());
        *lock(&shared) += 1;
        assert_eq!(*lock(&shared), 8);
    }
}
