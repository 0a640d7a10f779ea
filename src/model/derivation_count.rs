//! How many intervals this process derived (`interval::derive*` counts
//! each): a cheap process-wide counter that tests and `/metrics` compare
//! with the Samples taken, so a second derivation of one Sample shows.
use std::sync::atomic::{AtomicU64, Ordering};

static DERIVATIONS: AtomicU64 = AtomicU64::new(0);

/// Called by `interval::derive_reusing`, the one place rows are derived.
pub(crate) fn count() {
    DERIVATIONS.fetch_add(1, Ordering::Relaxed);
}

/// Intervals derived by this process so far (every caller counted).
pub fn derivations() -> u64 {
    DERIVATIONS.load(Ordering::Relaxed)
}
