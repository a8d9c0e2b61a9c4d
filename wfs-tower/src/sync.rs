//! One lock rule for the in-process state behind a `std::sync::Mutex` (caches, the
//! change hub, held reads): a panic while holding it leaves the data as consistent as
//! any other moment, so a poisoned lock is taken as it is rather than failing every
//! later request.

use std::sync::{Mutex, MutexGuard, PoisonError};

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
