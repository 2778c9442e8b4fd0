//! The mock's device clock and its timestamps: each operation costs a fixed time, and a
//! timestamp on a queue resolves only once the queue was synchronised.

use crate::MockState;
use crate::lock;
use omptarget_plugin::QueueId;
use std::sync::atomic::Ordering;

/// What each operation costs on the mock's device clock, in nanoseconds.
pub mod cost {
    pub const ALLOC: u64 = 50;
    pub const FREE: u64 = 20;
    /// Plus one nanosecond per byte.
    pub const COPY: u64 = 100;
    pub const LAUNCH: u64 = 1000;
}

impl MockState {
    pub(crate) fn tick(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::Relaxed);
    }
    pub(crate) fn synchronized(&self, queue: QueueId) {
        *lock(&self.syncs).entry(queue).or_insert(0) += 1;
        lock(&self.touching_host).remove(&queue);
    }
    /// How often `queue` was synchronised (or found done) so far.
    pub(crate) fn sync_count(&self, queue: QueueId) -> u64 {
        lock(&self.syncs).get(&queue).copied().unwrap_or(0)
    }
    /// Timestamps taken and not resolved yet.
    pub fn pending_timestamps(&self) -> usize {
        lock(&self.stamps).len()
    }
}
