//! What a construct did to mapping entries until it completes (its marks): marked them
//! pending on its queue (atomic maps), counted itself among their users (devices that free
//! on the queue), noted entries it retired while it copies back from them; undone under one
//! table lock when its queue is done.

use super::AsyncInfo;
use crate::error::Result;
use crate::mapping::EntryId;
use crate::ops::keyed::Mark;
use omptarget_plugin::{AllocKind, QueueId};

impl AsyncInfo {
    /// Undoes the construct's marks, before its queue returns to the pool (so a pending mark
    /// never stands for a later construct's work on the same queue): entries it marked
    /// pending no longer make other queues wait, and it no longer counts among their users;
    /// an entry that left the table while it still did is freed by the last such construct.
    pub(super) fn end_marks(&mut self, queue: Option<QueueId>) {
        if self.marks.is_empty() && !self.in_flight {
            return;
        }
        let mut to_free: omptarget_plugin::words::Words<usize> = Default::default();
        {
            let mut table = self.device.table.lock();
            if std::mem::take(&mut self.in_flight)
                && let Some(q) = queue
            {
                table.forget_in_flight(q);
            }
            for m in self.marks.as_slice() {
                if m.exited
                    && let Some(q) = queue
                {
                    table.forget_exit(m.id, m.alloc, q);
                }
                match table.get_mut(m.id) {
                    Some(e) if e.tgt_alloc == m.alloc => {
                        e.users = e.users.saturating_sub(m.uses);
                        if m.pending && queue.is_some() && e.pending == queue {
                            e.pending = None;
                        }
                    }
                    _ if m.uses > 0 => {
                        let mut zombies = self.device.zombies.lock();
                        if let Some(pos) = zombies.iter().position(|z| z.0 == m.alloc) {
                            zombies[pos].1 = zombies[pos].1.saturating_sub(m.uses);
                            if zombies[pos].1 == 0 {
                                to_free.push(zombies.swap_remove(pos).0);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        self.marks.clear();
        for &alloc in to_free.as_slice() {
            // Every construct that used it has completed.
            let _ = self.free_memory(alloc, AllocKind::Device, None);
        }
    }

    /// Records that this construct's queued work uses entry `id` (devices that free on the
    /// queue: the entry's memory is not freed before this construct completes) and, when
    /// `pending`, that the construct's queue fills it (atomic maps: other queues that use it
    /// first wait for this one), with one search of the construct's marks. Fails only where
    /// `pending` needs the construct's queue.
    pub(crate) fn mark_used(
        &mut self,
        e: &mut crate::mapping::Entry,
        id: EntryId,
        pending: bool,
    ) -> Result<()> {
        let pending = pending && self.atomic;
        let used = self.stream_ordered && e.owns_allocation;
        if !pending && !used {
            return Ok(());
        }
        if pending {
            e.pending = Some(self.queue()?);
        }
        if used {
            e.users += 1;
        }
        let m = self.mark(id, e.tgt_alloc);
        m.pending |= pending;
        m.uses += used as u32;
        Ok(())
    }

    /// This construct's mark on entry `id` (one per entry, however often it is touched).
    pub(super) fn mark(&mut self, id: EntryId, alloc: usize) -> &mut Mark {
        let at = self.marks.find((id, alloc)).unwrap_or_else(|| {
            self.marks.push(Mark {
                id,
                alloc,
                ..Mark::default()
            })
        });
        self.marks.get_mut(at)
    }

    /// [`AsyncInfo::mark_used`] without `pending` (which cannot fail), for the exit half, on
    /// every item of every region: kept apart for its cost.
    pub(crate) fn mark_use(&mut self, e: &mut crate::mapping::Entry, id: EntryId) {
        if self.stream_ordered && e.owns_allocation {
            e.users += 1;
            self.mark(id, e.tgt_alloc).uses += 1;
        }
    }

    /// This construct released a reference to entry `id` without being the last: while its
    /// queued work may still use the entry, the construct that releases the last reference
    /// orders its copy back after it. The note to make in the table (`MappingTable::
    /// note_exit`), once per construct and entry, on devices that free on the queue.
    #[inline]
    pub(crate) fn exit_note(
        &mut self,
        e: &crate::mapping::Entry,
        id: EntryId,
    ) -> Option<(usize, QueueId)> {
        let q = self.queue?;
        if !self.stream_ordered || !e.owns_allocation {
            return None;
        }
        let m = self.mark(id, e.tgt_alloc);
        if m.exited {
            return None;
        }
        m.exited = true;
        Some((e.tgt_alloc, q))
    }

    /// This construct releases the last reference to an entry that the constructs of queues
    /// `exits` released theirs to while still running: its copy back and free go behind
    /// their work.
    pub(crate) fn after_exits(&mut self, exits: &[QueueId]) -> Result<()> {
        for &q in exits {
            self.order_after(Some(q))?;
        }
        Ok(())
    }

    /// This construct copies `[begin, begin + size)` back from an entry it releases the last
    /// reference to: on a device that frees on the queue the entry leaves the table when the
    /// construct has issued its work, and until the copy lands nobody may map that memory
    /// anew (`ops/data/waits.rs::after_retired`). Noted until the construct completes.
    #[inline]
    pub(crate) fn note_in_flight(
        &mut self,
        table: &mut crate::mapping::MappingTable,
        begin: usize,
        size: usize,
    ) {
        if self.stream_ordered
            && let Ok(q) = self.queue()
        {
            table.note_in_flight(begin, begin + size, q);
            self.in_flight = true;
        }
    }
}
