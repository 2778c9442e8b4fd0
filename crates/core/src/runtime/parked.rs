//! Deferred completion, the runtime's part: constructs that returned before their device
//! work completed wait here, one per thread and device at most, until
//!
//! - the same thread's next construct on the device takes over their queue
//!   ([`Runtime::async_info`] → [`AsyncInfo::adopt`]): its work is queued behind theirs, and
//!   it completes them when it completes;
//! - another thread's construct or routine on the device begins, or a routine that works on
//!   device memory by address (`omp_target_memcpy`, `omp_target_free`, ...) runs: those
//!   complete every parked construct first (they may use what it filled through a device
//!   address the mapping table does not see);
//! - the program exits or its last binary is unregistered.
//!
//! The list's lock is never held across a driver call: constructs are taken out (leaving a
//! `draining` marker, so that their thread's next construct waits for them) and synchronised
//! outside it. docs/ARCHITECTURE.md, "Deferred completion".

use super::Runtime;
use crate::error::Result;
use crate::ops::AsyncInfo;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Slot {
    /// Names the slot while its construct is taken out.
    id: u64,
    device: usize,
    thread: usize,
    /// `None` while another thread synchronises it.
    construct: Option<AsyncInfo>,
}

#[derive(Default)]
pub(crate) struct Parked {
    /// Slots in the list (0: nothing parked, the one load a construct pays).
    count: AtomicUsize,
    list: Mutex<Vec<Slot>>,
    next_id: std::sync::atomic::AtomicU64,
}

thread_local! {
    /// Its address names the thread (a `const` cell: no destructor is registered).
    static THREAD: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

fn this_thread() -> usize {
    THREAD.with(|c| c as *const _ as usize)
}

impl Parked {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn park(&self, device: usize, construct: AsyncInfo) {
        let mut list = self.lock();
        list.push(Slot {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            device,
            thread: this_thread(),
            construct: Some(construct),
        });
        self.count.store(list.len(), Ordering::Release);
    }

    /// Takes out the parked construct `mine` selects (the caller's, to take over) and those
    /// `drain` selects (leaving markers until [`Parked::complete`] has synchronised them).
    /// The flag: the caller's own construct is being completed by another thread right now.
    #[allow(clippy::type_complexity)]
    fn take(
        &self,
        mine: impl Fn(&Slot) -> bool,
        drain: impl Fn(&Slot) -> bool,
    ) -> (Option<AsyncInfo>, Vec<(u64, AsyncInfo)>, bool) {
        let mut list = self.lock();
        let mut adopted = None;
        let mut drained = Vec::new();
        let mut busy = false;
        let mut i = 0;
        while i < list.len() {
            if mine(&list[i]) {
                match list[i].construct.take() {
                    Some(c) => {
                        adopted = Some(c);
                        list.swap_remove(i);
                        continue;
                    }
                    None => busy = true,
                }
            } else if drain(&list[i])
                && let Some(c) = list[i].construct.take()
            {
                drained.push((list[i].id, c));
            }
            i += 1;
        }
        self.count.store(list.len(), Ordering::Release);
        (adopted, drained, busy)
    }

    /// Synchronises constructs taken out by `take` and removes their markers.
    fn complete(&self, drained: Vec<(u64, AsyncInfo)>) -> Result<()> {
        if drained.is_empty() {
            return Ok(());
        }
        let mut result = Ok(());
        let mut ids = Vec::with_capacity(drained.len());
        for (id, c) in drained {
            ids.push(id);
            let r = c.synchronize();
            if result.is_ok() {
                result = r;
            }
        }
        let mut list = self.lock();
        list.retain(|s| !ids.contains(&s.id));
        self.count.store(list.len(), Ordering::Release);
        result
    }
}

impl Runtime {
    /// Ends a data construct's work: when its work allows ([`AsyncInfo::may_defer`]) the
    /// construct is parked and returns early, else it waits. (A blocking target region
    /// waits in place: `AsyncInfo::synchronize_in_place`.)
    #[inline]
    pub fn finish_construct(&self, ai: AsyncInfo) -> Result<()> {
        if self.config.deferred_completion {
            return self.defer_or_synchronize(ai);
        }
        ai.synchronize()
    }

    /// Retired entries leave the table first (what `synchronize` does before it waits; it
    /// may free memory on the queue, which `may_defer` weighs), then the construct is parked
    /// or waited for.
    #[inline(never)]
    fn defer_or_synchronize(&self, mut ai: AsyncInfo) -> Result<()> {
        ai.prepare_deferral()?;
        if ai.may_defer() {
            self.parked.park(ai.device_id(), ai);
            return Ok(());
        }
        ai.synchronize()
    }

    /// Whether any construct is parked (one atomic load: the hot path's whole cost).
    #[inline]
    pub(crate) fn has_parked(&self) -> bool {
        self.parked.count.load(Ordering::Acquire) != 0
    }

    /// At the start of a construct on `device`: this thread's parked construct there, to
    /// take over; other threads' parked constructs on the device are completed first. (A
    /// failure among those was reported in LLVM's words when its queue was synchronised; it
    /// belongs to another thread's construct, so this one goes on.)
    pub(crate) fn parked_for_construct(&self, device: usize) -> Option<AsyncInfo> {
        if !self.has_parked() {
            return None;
        }
        let me = this_thread();
        loop {
            let (mine, others, busy) = self.parked.take(
                |s| s.device == device && s.thread == me,
                |s| s.device == device,
            );
            let _ = self.parked.complete(others);
            if mine.is_some() || !busy {
                return mine;
            }
            // Another thread is completing this thread's parked construct: this construct
            // begins once it has (its work must follow that construct's).
            std::thread::yield_now();
        }
    }

    /// Completes every parked construct (of every thread) on `device`, or on every device:
    /// before routines that use device memory by address, and at exit. The first failure
    /// is returned (each was reported in LLVM's words when its queue was synchronised).
    pub fn complete_parked(&self, device: Option<usize>) -> Result<()> {
        if !self.has_parked() {
            return Ok(());
        }
        let (_, all, _) = self
            .parked
            .take(|_| false, |s| device.is_none_or(|d| s.device == d));
        self.parked.complete(all)
    }

    /// Constructs parked now (tests).
    pub fn parked_count(&self) -> usize {
        self.parked.count.load(Ordering::Acquire)
    }
}
