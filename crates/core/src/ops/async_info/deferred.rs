//! Deferred completion: a construct whose remaining device work no longer involves the
//! program's host memory may return before that work completes; the runtime parks it
//! (`runtime/parked.rs`) and the thread's next construct on the device takes over its queue
//! ([`AsyncInfo::adopt`]) and completes it. docs/ARCHITECTURE.md, "Deferred completion".

use super::AsyncInfo;
use crate::error::Result;
use crate::mapping::EntryId;
use omptarget_plugin::QueueId;

/// Deferred constructs that may wait on one queue, one behind the other: past this, a
/// construct that could be deferred synchronises instead (what waits for the queue stays
/// bounded).
const MAX_DEFERRED_CHAIN: usize = 4;

impl AsyncInfo {
    /// Takes over the queue of `parked`, a construct of this thread on the same device that
    /// returned before its work completed: this construct's work is queued behind it, and
    /// completing this construct completes it first.
    pub fn adopt(&mut self, mut parked: AsyncInfo) {
        debug_assert!(self.queue.is_none() && self.predecessor.is_none());
        debug_assert_eq!(parked.device.id, self.device.id);
        self.queue = parked.queue;
        parked.queue = None;
        self.predecessor = Some(Box::new(parked));
    }

    /// Constructs waiting on this construct's queue behind it (itself included).
    fn chain_len(&self) -> usize {
        1 + self.predecessor.as_ref().map_or(0, |p| p.chain_len())
    }

    /// Whether this construct, its work issued, may return before that work completes: the
    /// backend orders allocations and frees on the queue, other queues wait for the entries
    /// it touched through their pending marks (atomic maps), nothing queued reads or writes
    /// the program's host memory any more (copies from the device, DMA from unstaged host
    /// memory, shadow pointers to restore), no tool waits for its completion, memory it
    /// freed is not memory a wait would give back to the device (a pool over its release
    /// threshold), and the chain of such constructs on the queue is short. docs/ARCHITECTURE.md, "Deferred completion".
    pub fn may_defer(&self) -> bool {
        let Some(q) = self.queue else {
            return false;
        };
        self.stream_ordered
            && self.atomic
            && self.tool.is_none()
            && self.restores.is_empty()
            && self.chain_len() < MAX_DEFERRED_CHAIN
            && self.device.backend().is_ok_and(|b| {
                !(b.queue_touches_host(q)
                    || (self.freed_on_queue && b.completion_releases_memory()))
            })
    }

    /// Before parking a deferred construct: its retired entries leave the table and their
    /// memory is freed on the queue, as `synchronize` would do before waiting.
    pub fn prepare_deferral(&mut self) -> Result<()> {
        self.retire_issued()
    }

    /// Completes a construct whose queue (`queue`) stays with a later construct (or is
    /// released by `complete` right after): older constructs first, then its marks (before
    /// the queue can return to the pool), what waited for its work, its tool events.
    pub(super) fn complete_work(&mut self, queue: Option<QueueId>) {
        if let Some(mut p) = self.predecessor.take() {
            p.complete_work(queue);
        }
        self.end_marks(queue);
        self.finish();
        if let Some(t) = self.tool.as_deref_mut() {
            t.complete(self.device.backend().ok());
        }
    }

    /// Uses of entry `(id, alloc)` by the constructs this one took the queue over from: their
    /// work is ahead of ours on the queue, so memory only they and we use may be freed on it.
    pub(super) fn predecessor_uses(&self, id: EntryId, alloc: usize) -> u32 {
        let mut uses = 0;
        let mut p = self.predecessor.as_deref();
        while let Some(c) = p {
            if let Some(at) = c.marks.find((id, alloc)) {
                uses += c.marks.as_slice()[at].uses;
            }
            p = c.predecessor.as_deref();
        }
        uses
    }

    /// Forgets the predecessors' marks on entry `(id, alloc)` (freed on the queue now: the
    /// address may be reused at once).
    pub(super) fn forget_predecessor_marks(&mut self, id: EntryId, alloc: usize) {
        let mut p = self.predecessor.as_deref_mut();
        while let Some(c) = p {
            if let Some(at) = c.marks.find((id, alloc)) {
                let m = c.marks.get_mut(at);
                m.pending = false;
                m.uses = 0;
            }
            p = c.predecessor.as_deref_mut();
        }
    }
}
