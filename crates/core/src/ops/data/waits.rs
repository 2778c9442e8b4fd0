//! Where an item of a construct waits for constructs still running before it maps memory:
//! their copies back from that memory must land first (docs/ARCHITECTURE.md, "Held
//! constructs").

use super::Item;
use crate::device::Device;
use crate::mapping::{Lookup, MappingTable};
use crate::ops::AsyncInfo;
use std::sync::MutexGuard;

/// The table, locked again, and the item's lookup in it.
type Looked<'t> = (MutexGuard<'t, MappingTable>, Lookup);

/// Completes the held constructs that copy back into `[begin, end)` (not `ai`'s own): whether
/// there were any. Bytes this thread staged ahead were taken before their copies back
/// landed: given back, so that a copy in reads the memory again.
fn complete_held(dev: &Device, ai: &AsyncInfo, begin: usize, end: usize) -> bool {
    let completed = crate::ops::held::complete_running(ai.cell(), begin, end);
    if completed && let Ok(backend) = dev.backend() {
        backend.unstage();
    }
    completed
}

/// Whether entry `id` is in the table with no reference left: released by a construct whose
/// work has not completed (it leaves the table then).
pub(super) fn unreferenced(table: &MappingTable, id: crate::mapping::EntryId) -> bool {
    table.get(id).is_some_and(|e| e.total_refs() == Some(0))
}

/// Item `it` found an entry whose last reference a construct still running released: while
/// that is a held `nowait` construct's (ops/held.rs), it completes first, with the table
/// unlocked (its copy back lands and the entry leaves the table), and the item is looked up
/// again. Otherwise this construct would share the device copy that construct copies back
/// from, and its own copy back could land before that one's (a part lost: libomp's
/// `in_reduction` tasks on hidden helper threads map one variable at once). An entry
/// released by a construct that is not held (a blocking one, completing now) is shared as
/// LLVM shares an entry awaiting its delayed deletion. Bytes this thread staged ahead for the
/// item were taken before the completed constructs' copies back landed: given back (the
/// guard's own give-back later finds nothing), so that the copy in reads the memory again.
#[cold]
#[inline(never)]
pub(super) fn after_released<'t>(
    dev: &'t Device,
    it: &Item,
    ai: &AsyncInfo,
    mut table: MutexGuard<'t, MappingTable>,
) -> Looked<'t> {
    let end = it.end();
    loop {
        drop(table);
        // Completes only constructs not completed yet: each round completes at least one.
        let completed = complete_held(dev, ai, it.begin, end);
        table = dev.table.lock();
        let l = table.lookup(it.begin, it.size);
        if !completed || !l.entry.is_some_and(|id| unreferenced(&table, id)) {
            return (table, l);
        }
    }
}

/// Item `it` would map memory anew whose entry a construct still running retired after
/// queuing a copy back from it (devices that free on the queue retire an entry when its
/// construct has issued its work: `AsyncInfo::retire_issued`). Mapped now, the memory would
/// be copied in before that copy back lands and copied back after it: the other construct's
/// results lost. Under OpenMP that construct's region has not ended, so the memory is still
/// mapped; LLVM keeps such an entry in its table until the construct synchronises and lets
/// the item share it. Here the item waits, with the table unlocked, until the construct
/// completes (a held `nowait` construct is completed here; another thread's construct by
/// that thread; one of this thread's own that is not held cannot complete while it waits,
/// and is not waited for), then looks again. Bytes staged ahead for it were taken before:
/// given back.
#[cold]
#[inline(never)]
pub(super) fn after_retired<'t>(
    dev: &'t Device,
    it: &Item,
    ai: &AsyncInfo,
    mut table: MutexGuard<'t, MappingTable>,
) -> Looked<'t> {
    let end = it.end();
    let own = ai.queue_id();
    let mut rounds = 0u32;
    // The caller found a range noted there (this thread's included).
    loop {
        drop(table);
        // Held constructs (of any thread) are completed here; another thread's construct
        // that is not held completes in its thread.
        complete_held(dev, ai, it.begin, end);
        table = dev.table.lock();
        if !table.in_flight_overlaps(it.begin, end, own, false) {
            let l = table.lookup(it.begin, it.size);
            return (table, l);
        }
        drop(table);
        rounds += 1;
        if rounds < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        if let Ok(backend) = dev.backend() {
            backend.unstage();
        }
        table = dev.table.lock();
    }
}
