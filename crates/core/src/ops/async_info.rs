//! A construct's queue and deferred work ([`AsyncInfo`]): the copies and allocations it
//! queues, the marks it leaves on mapping entries for other queues, and what happens when it
//! synchronises (entries retired, memory freed, tool events ended).

mod deferred;
mod marks;

use super::attach;
use super::keyed::{Created, Mark, Record, Records, Removal};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::mapping::{EntryId, MappingTable};
use crate::tools::{DataOpKind, ToolCtx};
use crate::trace;
use omptarget_plugin::{AllocKind, CopyKind, EventId, QueueId};
use std::ffi::CStr;
use std::sync::{Arc, MutexGuard};

/// Entries a construct usually touches: its lists keep this many inline, so that a construct
/// of up to 16 items allocates nothing for them (past that, `keyed::INDEX_FROM`, they index
/// themselves anyway). A blocking target region builds and synchronises its AsyncInfo in
/// place, and the lists are emptied in place rather than taken out, so their inline size is
/// not copied on the way.
const SMALL: usize = super::keyed::INDEX_FROM;

/// The queue and the deferred work of one construct. A blocking construct calls
/// [`AsyncInfo::synchronize`] exactly once, at its end.
#[must_use = "an AsyncInfo must be synchronised"]
pub struct AsyncInfo {
    device: Arc<Device>,
    queue: Option<QueueId>,
    /// Device memory to free once the queue is synchronised.
    frees: Vec<(usize, AllocKind)>,
    /// Mapping entries to remove once the queue is synchronised (if still unreferenced).
    /// With the size of the item that released the last reference (LLVM traces that size).
    removals: Records<Removal, SMALL>,
    /// Host pointers to restore after copies from the device (shadow pointers).
    pub(super) restores: Vec<(usize, usize)>,
    /// Host words that must live until the queue is synchronised (staged pointer values).
    /// Boxed so that an asynchronous copy's source keeps its address when the Vec grows.
    #[allow(clippy::vec_box)]
    staged: Vec<Box<usize>>,
    /// Host buffers asynchronous copies read from (packed first-private data).
    staged_buffers: Vec<Vec<u8>>,
    /// What this construct did to entries until it completes: marked them pending on its
    /// queue (atomic maps), or counted itself among their users (devices that free on the
    /// queue). Undone together, under one table lock, when the queue is done.
    marks: Records<Mark, SMALL>,
    /// Mapping entries this construct created (id, device allocation): their struct members
    /// are copied in although they hold no reference of their own.
    created: Records<Created, SMALL>,
    /// Events recorded for cross-queue waits, returned to the device after synchronisation.
    events: Vec<EventId>,
    info: u32,
    /// `LIBOMPTARGET_MAP_FORCE_ATOMIC`: order other queues after this construct's transfers.
    atomic: bool,
    /// The backend orders allocation and free on the queue (frees need not wait).
    stream_ordered: bool,
    /// Tool events of this construct or routine; `None` when no tool listens.
    pub(crate) tool: Option<Box<ToolCtx>>,
    /// What the construct mapped anew, while it has ATTACH entries (attach.rs).
    /// Boxed: only constructs with ATTACH entries (clang 22) have one, and the AsyncInfo is
    /// built, moved and dropped on every construct.
    pub(super) new_mappings: Option<Box<attach::NewMappings>>,
    /// A construct of the same thread that returned before its work completed (deferred
    /// completion, `runtime/parked.rs`): this construct took over its queue, so its work is
    /// done when ours is, and it completes (marks, buffers) just before ours.
    predecessor: Option<Box<AsyncInfo>>,
    /// Device memory was freed on the queue (deferred completion asks whether waiting would
    /// give it back to the device).
    freed_on_queue: bool,
    /// A `nowait` construct: its copies back are registered (`ops/held.rs`: later copies of
    /// that memory to the device wait for them).
    tracked: bool,
    /// Where a tracked construct's copies back are registered (`ops/held.rs`): made on its
    /// first copy back, it becomes the construct's slot value when the construct is held.
    cell: Option<Arc<super::held::Held>>,
    /// It copies back from entries it releases the last reference to, which leave the table
    /// before the copies land: noted in the table
    /// ([`MappingTable::note_in_flight`](crate::mapping::MappingTable::note_in_flight)) until
    /// it completes.
    in_flight: bool,
}

impl AsyncInfo {
    pub fn new(device: &Arc<Device>) -> Self {
        Self::with_options(device, 0, true)
    }

    /// An AsyncInfo that traces with `LIBOMPTARGET_INFO` bits `info` and orders other queues
    /// after its transfers when `atomic`.
    pub fn with_options(device: &Arc<Device>, info: u32, atomic: bool) -> Self {
        Self::with_tool(device, info, atomic, None)
    }

    /// [`AsyncInfo::with_options`] with the tool state of a construct (built in place: an
    /// AsyncInfo is large, and the hot path should not copy it).
    #[inline]
    pub(crate) fn with_tool(
        device: &Arc<Device>,
        info: u32,
        atomic: bool,
        tool: Option<Box<ToolCtx>>,
    ) -> Self {
        let (stream_ordered, asynchronous) = device
            .backend()
            .map(|b| (b.orders_alloc_on_queue(), b.is_asynchronous()))
            .unwrap_or((false, false));
        Self {
            device: device.clone(),
            queue: None,
            frees: Vec::new(),
            removals: Default::default(),
            restores: Vec::new(),
            staged: Vec::new(),
            staged_buffers: Vec::new(),
            marks: Default::default(),
            created: Default::default(),
            events: Vec::new(),
            info,
            atomic: atomic && asynchronous,
            stream_ordered,
            tool,
            new_mappings: None,
            predecessor: None,
            freed_on_queue: false,
            tracked: false,
            cell: None,
            in_flight: false,
        }
    }

    /// Registers this construct's copies back (a `nowait` construct, which may be left
    /// running in its task's slot: `ops/held.rs`).
    pub fn track_copies_home(&mut self) {
        self.tracked = true;
    }

    /// Whether this construct's copies back are registered.
    pub fn tracks_copies_home(&self) -> bool {
        self.tracked
    }

    /// The cell this construct's copies back are registered in, if any (`ops/held.rs`).
    pub(crate) fn cell(&self) -> Option<&Arc<super::held::Held>> {
        self.cell.as_ref()
    }

    /// The construct completed without being held: constructs waiting for its cell go on.
    #[cold]
    fn end_issuing(&mut self) {
        if let Some(cell) = self.cell.take() {
            super::held::issued_and_done(cell);
        }
    }

    /// Takes the construct's cell out, to hold the construct in it.
    pub(super) fn take_cell(&mut self) -> Option<Arc<super::held::Held>> {
        self.cell.take()
    }

    /// Queues a copy of one word to device address `tgt`; the word's host copy lives until
    /// the synchronisation (an asynchronous copy reads it later). `traced`: the copy is one
    /// LLVM reports under `LIBOMPTARGET_INFO` 0x20 (an attached pointer, a lambda's captured
    /// reference), named after the given mapping's name.
    pub(crate) fn write_word(
        &mut self,
        dev: &Device,
        tgt: usize,
        value: usize,
        traced: Option<Option<&'static CStr>>,
    ) -> Result<()> {
        let staged = Box::new(value);
        let src = &*staged as *const usize as usize;
        self.staged.push(staged);
        if let Some(name) = traced {
            trace::transfer(
                self.info,
                dev.id,
                true,
                src,
                tgt,
                std::mem::size_of::<usize>(),
                name,
            );
        }
        self.copy(
            dev,
            CopyKind::HostToDevice,
            tgt,
            src,
            std::mem::size_of::<usize>(),
        )
    }

    /// Keeps `buffer` alive until the construct's synchronisation (a copy queued from it may
    /// read it later).
    pub(crate) fn keep_until_synchronized(&mut self, buffer: Vec<u8>) {
        self.staged_buffers.push(buffer);
    }

    /// Allocates `size` bytes of device memory for host data at `host` on the construct's
    /// queue (tools see a data operation).
    pub(crate) fn alloc(&mut self, dev: &Device, size: usize, host: usize) -> Result<usize> {
        let queue = self.queue()?;
        let Some(t) = self.tool.as_deref_mut() else {
            return dev.alloc(size, AllocKind::Device, Some(queue));
        };
        let backend = dev.backend()?;
        let (host_dev, id) = (t.host_device, dev.id as i32);
        let op = t.op_begin(
            backend,
            Some(queue),
            DataOpKind::Alloc,
            host,
            host_dev,
            0,
            id,
            size,
        );
        let r = dev.alloc(size, AllocKind::Device, Some(queue));
        t.op_end(backend, Some(queue), op, Some(*r.as_ref().unwrap_or(&0)));
        r
    }

    /// Copies `size` bytes on the construct's queue (tools see a data operation).
    pub(crate) fn copy(
        &mut self,
        dev: &Device,
        kind: CopyKind,
        dst: usize,
        src: usize,
        size: usize,
    ) -> Result<()> {
        let queue = self.queue()?;
        if self.tracked && kind == CopyKind::DeviceToHost {
            super::held::register(&mut self.cell, dst, dst + size);
        }
        let Some(t) = self.tool.as_deref_mut() else {
            return dev.copy(kind, dst, src, size, Some(queue));
        };
        traced_copy(t, dev, kind, dst, src, size, Some(queue))
    }

    /// Dispatches a kernel submission's begin event (tools).
    pub(crate) fn submit_begin(
        &mut self,
        backend: &dyn omptarget_plugin::Device,
        queue: QueueId,
        requested_teams: u32,
        kernel: &'static str,
    ) -> Option<crate::tools::SubmitScope> {
        self.tool
            .as_deref_mut()?
            .submit_begin(backend, Some(queue), requested_teams, kernel)
    }

    /// Ends a kernel submission; `granted_teams` (asked only when traced) is what the device
    /// launched.
    pub(crate) fn submit_end(
        &mut self,
        backend: &dyn omptarget_plugin::Device,
        queue: QueueId,
        scope: Option<crate::tools::SubmitScope>,
        granted_teams: impl FnOnce() -> u32,
    ) {
        if let Some(t) = self.tool.as_deref_mut() {
            t.submit_end(backend, Some(queue), scope, granted_teams);
        }
    }

    /// Copies `size` bytes from `src` on this construct's device to `dst` on the device with
    /// peer handle `peer` (OpenMP number `dst_device`), directly, on the construct's queue.
    /// `Ok(false)`: no direct path (nothing happened, tools see nothing). Tools see a
    /// transfer from the device with both device numbers, as LLVM reports its exchanges.
    pub(crate) fn copy_to_peer(
        &mut self,
        dst: usize,
        dst_device: usize,
        peer: usize,
        src: usize,
        size: usize,
    ) -> Result<bool> {
        let q = self.queue()?;
        let dev = self.device.clone();
        let backend = dev.backend()?;
        let err = |source| Error::Device {
            device: dev.id,
            what: "copying to another device",
            source,
        };
        let Some(t) = self.tool.as_deref_mut() else {
            return backend.copy_to_peer(dst, peer, src, size, q).map_err(err);
        };
        let start = t.stamp(backend, Some(q));
        let direct = backend.copy_to_peer(dst, peer, src, size, q).map_err(err)?;
        if direct {
            let (from, to) = (dev.id as i32, dst_device as i32);
            let mut op = t.op_begin_at(DataOpKind::TransferFromDevice, src, from, dst, to, size);
            op.start = start;
            t.op_end(backend, Some(q), op, None);
        }
        Ok(direct)
    }

    /// Frees device memory, on `queue` or at once (tools see a data operation).
    pub(crate) fn free_memory(
        &mut self,
        ptr: usize,
        kind: AllocKind,
        queue: Option<QueueId>,
    ) -> Result<()> {
        self.freed_on_queue |= queue.is_some();
        traced_free(&self.device, self.tool.as_deref_mut(), ptr, kind, queue)
    }

    /// Whether a tool listens to this construct's events.
    pub fn has_tools(&self) -> bool {
        self.tool.is_some()
    }

    /// The OpenMP number of the device this construct runs on.
    pub fn device_id(&self) -> usize {
        self.device.id
    }

    /// The construct's queue if it has taken one.
    pub(crate) fn queue_id(&self) -> Option<QueueId> {
        self.queue
    }

    /// The construct's queue, acquired on first use.
    pub fn queue(&mut self) -> Result<QueueId> {
        match self.queue {
            Some(q) => Ok(q),
            None => {
                let q = self.device.acquire_queue()?;
                self.queue = Some(q);
                Ok(q)
            }
        }
    }

    /// Waits for the construct's work, then runs what had to wait for it.
    pub fn synchronize(mut self) -> Result<()> {
        self.synchronize_in_place()
    }

    /// [`AsyncInfo::synchronize`] without moving the AsyncInfo (a move copies its inline
    /// records, ~100 instructions on the region path); it is left with nothing to wait for, so
    /// dropping it afterwards does no more.
    #[inline]
    pub fn synchronize_in_place(&mut self) -> Result<()> {
        let mut result = self.retire_issued();
        let queue = self.queue.take();
        if let Some(q) = queue {
            let synced = self.device.backend().and_then(|b| {
                b.synchronize(q).map_err(|source| {
                    // LLVM's line, with the driver's reason (a kernel that faulted shows
                    // here first: an illegal address, a trap).
                    crate::message::plugin_error(format_args!(
                        "Failure to synchronize stream (nil): {source}"
                    ));
                    Error::Device {
                        device: self.device.id,
                        what: "synchronising a queue",
                        source,
                    }
                })
            });
            if result.is_ok() {
                result = synced;
            }
        }
        self.complete(queue);
        result
    }

    /// Whether the construct's work has completed, without blocking (`nowait` constructs).
    /// When it has, runs what waited for it and returns the queue, as `synchronize` would.
    pub fn is_done(&mut self) -> Result<bool> {
        self.retire_issued()?;
        if let Some(q) = self.queue {
            let done = self.device.backend()?.query(q).map_err(|source| {
                crate::message::plugin_error(format_args!(
                    "Failure to query stream (nil): {source}"
                ));
                Error::Device {
                    device: self.device.id,
                    what: "querying a queue",
                    source,
                }
            })?;
            if !done {
                return Ok(false);
            }
        }
        let queue = self.queue.take();
        self.complete(queue);
        Ok(true)
    }

    /// The construct's work is done (`queue` was its queue, if it had one): what waited for
    /// it runs (`complete_work`, constructs it took the queue over from first), then the
    /// queue goes back to the pool.
    fn complete(&mut self, queue: Option<QueueId>) {
        self.complete_work(queue);
        if self.cell.is_some() {
            self.end_issuing();
        }
        if let Some(q) = queue {
            self.device.release_queue(q);
        }
    }

    /// Records that this construct created entry `id` (device allocation `alloc`).
    pub(crate) fn record_created(&mut self, id: EntryId, alloc: usize) {
        self.created.push(Created(id, alloc));
    }

    /// Whether this construct created entry `id` (still the one with allocation `alloc`).
    pub(crate) fn created_here(&self, id: EntryId, alloc: usize) -> bool {
        self.created.contains((id, alloc))
    }

    /// The mapping table's guard across a copy back to the host of an entry this construct
    /// has marked used ([`AsyncInfo::mark_used`]): given up (`None`) on a device that frees on
    /// the queue, kept elsewhere.
    ///
    /// The driver's call can take hundreds of microseconds when many threads submit at once,
    /// and other threads' items would wait for it. Queued without the lock, the copy is still
    /// safe where frees go on the queue: the entry's memory stays allocated until this
    /// construct completes, whoever removes the entry meanwhile (the construct counts among
    /// its users); this queue's wait for the entry's pending transfer was queued under the
    /// lock; and a copy back orders nothing for other queues (only a copy to the device marks
    /// an entry pending). Elsewhere a racing construct of another thread that mapped the same
    /// data could remove the entry and free its memory before the copy reads it.
    pub(crate) fn guard_for_copy_back<'t>(
        &self,
        table: MutexGuard<'t, MappingTable>,
    ) -> Option<MutexGuard<'t, MappingTable>> {
        (!self.stream_ordered).then_some(table)
    }

    /// Orders this construct's queue after the pending work of another queue on an entry: an
    /// event recorded on that queue now covers the entry's transfer (and whatever came before
    /// it), and our queue waits for it on the device, not on the host.
    pub(crate) fn order_after(&mut self, pending: Option<QueueId>) -> Result<()> {
        let Some(other) = pending else { return Ok(()) };
        if !self.atomic {
            return Ok(());
        }
        let mine = self.queue()?;
        if other == mine {
            return Ok(());
        }
        let backend = self.device.backend()?;
        let event = self.device.acquire_event()?;
        self.events.push(event);
        let err = |source| Error::Device {
            device: self.device.id,
            what: "ordering queues through an event",
            source,
        };
        backend.record_event(event, other).map_err(err)?;
        backend.wait_event(event, mine).map_err(err)
    }

    /// An entry whose last reference went away: with stream-ordered allocation it leaves the
    /// table now and its memory is freed on the queue behind the construct's copies; otherwise
    /// both wait for the synchronisation.
    ///
    /// An entry retired again by a later item of the construct moves behind the items retired
    /// meanwhile, with that item's size: LLVM removes an entry after the last item of the
    /// construct that names it, and traces that item's size.
    pub(crate) fn retire(&mut self, id: EntryId, size: usize) -> Result<()> {
        // Removed only when the construct has issued all its work: a later item of the same
        // construct may still name the entry (`map(always, from: a) map(delete: a)`: the items
        // are processed last to first, so the delete comes before the copy).
        if let Some(earlier) = self.removals.lookup_mut(id) {
            earlier.size = Removal::DEAD;
        }
        self.removals.push(Removal { id, size });
        Ok(())
    }

    /// Whether entry `id` is to leave the table when the construct's work is done.
    pub(crate) fn retiring(&self, id: EntryId) -> bool {
        self.removals.contains(id)
    }

    /// On devices that free on the queue: the construct has issued all its work, so its
    /// retired entries leave the table and their memory is freed on the queue, behind the
    /// copies that read it, before anyone waits. (Other devices remove them after the wait.)
    ///
    /// The work the backend holds back on the queue (the copies back, gathered into one
    /// operation) goes to the device first, so that it runs during this host work instead of
    /// after it.
    pub(crate) fn retire_issued(&mut self) -> Result<()> {
        if !self.stream_ordered || self.removals.is_empty() {
            return Ok(());
        }
        let mut result = self.issue_held_back();
        // By index, not taken out (a take copies the inline records); nothing below adds one.
        for at in 0..self.removals.as_slice().len() {
            let r = self.removals.as_slice()[at];
            if !r.live() {
                continue;
            }
            let Removal { id, size } = r;
            let removed = {
                let mut table = self.device.table.lock();
                match table.get(id) {
                    Some(e) if e.total_refs() == Some(0) => table.remove(id),
                    _ => None,
                }
            };
            if let Some(e) = removed {
                trace::removing(self.info, self.device.id, &e, size);
                if e.owns_allocation {
                    // Our mark on it, looked up once.
                    let mark = self.marks.find((id, e.tgt_alloc));
                    // Constructs this one took the queue over from (deferred completion) are
                    // behind us on it: their uses count as ours.
                    let ours = mark.map_or(0, |at| self.marks.get_mut(at).uses)
                        + self.predecessor_uses(id, e.tgt_alloc);
                    if e.users > ours {
                        // Other constructs' queued work still uses the memory: the last of
                        // them to synchronise frees it (we count among them).
                        self.device.zombies.lock().push((e.tgt_alloc, e.users));
                        continue;
                    }
                    // Only this construct used it: free it on our queue, behind our work, and
                    // forget our marks on it (the address may be reused at once).
                    if let Some(at) = mark {
                        let m = self.marks.get_mut(at);
                        m.pending = false;
                        m.uses = 0;
                    }
                    self.forget_predecessor_marks(id, e.tgt_alloc);
                    let r = self
                        .queue()
                        .and_then(|q| self.free_memory(e.tgt_alloc, AllocKind::Device, Some(q)));
                    if result.is_ok() {
                        result = r;
                    }
                }
            }
        }
        self.removals.clear();
        result
    }

    /// [`Device::issue`](omptarget_plugin::Device::issue) of the construct's queue, if it has one.
    fn issue_held_back(&mut self) -> Result<()> {
        let Some(q) = self.queue else {
            return Ok(());
        };
        self.device
            .backend()?
            .issue(q)
            .map_err(|source| Error::Device {
                device: self.device.id,
                what: "issuing a queue's copies",
                source,
            })
    }

    /// Memory used only by work already queued (private copies, staging): freed on the queue
    /// with stream-ordered allocation, else after the synchronisation.
    pub(crate) fn free_after_use(&mut self, ptr: usize) -> Result<()> {
        if self.stream_ordered {
            let q = self.queue()?;
            self.free_memory(ptr, AllocKind::Device, Some(q))
        } else {
            self.frees.push((ptr, AllocKind::Device));
            Ok(())
        }
    }

    fn finish(&mut self) {
        for (addr, value) in std::mem::take(&mut self.restores) {
            // SAFETY: the address lies in a mapped host range (a shadow pointer recorded when
            // the pointer was attached), and the copy that overwrote it has completed.
            unsafe { std::ptr::write_unaligned(addr as *mut usize, value) };
        }
        self.staged.clear();
        self.staged_buffers.clear();
        for r in self.removals.as_slice().iter().filter(|r| r.live()) {
            let tool = self.tool.as_deref_mut();
            remove_if_unreferenced(&self.device, r.id, r.size, self.info, tool);
        }
        self.removals.clear();
        for (ptr, kind) in std::mem::take(&mut self.frees) {
            let _ = self.free_memory(ptr, kind, None);
        }
        for event in std::mem::take(&mut self.events) {
            self.device.release_event(event);
        }
    }
}

impl AsyncInfo {
    /// Nothing left to wait for, undo or give back: a construct after its synchronisation
    /// (which completed everything), or one that queued nothing.
    fn settled(&self) -> bool {
        self.queue.is_none()
            && self.predecessor.is_none()
            && self.tool.is_none()
            && self.removals.is_empty()
            && self.marks.is_empty()
            && self.restores.is_empty()
            && self.staged.is_empty()
            && self.staged_buffers.is_empty()
            && self.frees.is_empty()
            && self.events.is_empty()
    }
}

impl Drop for AsyncInfo {
    fn drop(&mut self) {
        if self.settled() {
            return;
        }
        // An error path dropped us before synchronising: still wait and release, so no memory
        // leaks and no entry stays half-removed.
        let _ = self.retire_issued();
        let queue = self.queue.take();
        if let Some(q) = queue
            && let Ok(b) = self.device.backend()
        {
            let _ = b.synchronize(q);
        }
        self.complete(queue);
    }
}

/// Removes entry `id` if nothing references it any more, and frees its memory.
fn remove_if_unreferenced(
    device: &Device,
    id: EntryId,
    size: usize,
    info: u32,
    tool: Option<&mut ToolCtx>,
) {
    let removed = {
        let mut table = device.table.lock();
        match table.get(id) {
            Some(e) if e.total_refs() == Some(0) => table.remove(id),
            _ => None,
        }
    };
    if let Some(e) = removed {
        trace::removing(info, device.id, &e, size);
        if e.owns_allocation {
            let _ = traced_free(device, tool, e.tgt_alloc, AllocKind::Device, None);
        }
    }
}

/// `Device::free` with the tool events of a delete.
fn traced_free(
    device: &Device,
    tool: Option<&mut ToolCtx>,
    ptr: usize,
    kind: AllocKind,
    queue: Option<QueueId>,
) -> Result<()> {
    let Some(t) = tool else {
        return device.free(ptr, kind, queue);
    };
    let backend = device.backend()?;
    let op = t.op_begin(
        backend,
        queue,
        DataOpKind::Delete,
        ptr,
        device.id as i32,
        0,
        -1,
        0,
    );
    let r = device.free(ptr, kind, queue);
    t.op_end(backend, queue, op, None);
    r
}

/// `Device::copy` with the tool events of a transfer (a copy within one device is reported,
/// as LLVM reports its device-to-device exchanges, as a transfer from the device).
pub(crate) fn traced_copy(
    t: &mut ToolCtx,
    dev: &Device,
    kind: CopyKind,
    dst: usize,
    src: usize,
    size: usize,
    queue: Option<QueueId>,
) -> Result<()> {
    let backend = dev.backend()?;
    let (host, id) = (t.host_device, dev.id as i32);
    let (op_kind, src_dev, dst_dev) = match kind {
        CopyKind::HostToDevice => (DataOpKind::TransferToDevice, host, id),
        CopyKind::DeviceToHost => (DataOpKind::TransferFromDevice, id, host),
        CopyKind::DeviceToDevice => (DataOpKind::TransferFromDevice, id, id),
    };
    let op = t.op_begin(backend, queue, op_kind, src, src_dev, dst, dst_dev, size);
    let r = dev.copy(kind, dst, src, size, queue);
    t.op_end(backend, queue, op, None);
    r
}
