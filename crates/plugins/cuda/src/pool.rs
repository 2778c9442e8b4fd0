//! The device's default memory pool under the sharing policy of `omptarget_plugin::pool_policy`
//! (bounded cache, idle and pressure trims on a governor thread, patient allocation), so that
//! several processes can share one GPU. docs/GPU.md has the measurements behind the defaults.

use crate::blocks::BlockCache;
use crate::driver::{CUcontext, CUdeviceptr, CUstream, call, create_stream, make_current};
use crate::wait::Waiter;
use cudarc::driver::sys;
use omptarget_plugin::contention::{Lock, Site};
use omptarget_plugin::pool_policy::{Governor, PoolOps, PoolPolicy, Reading, govern};
use omptarget_plugin::{ErrorKind, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

static STREAMS: Site = Site::new("cuda: streams a pool settle waits for");

/// The pool and what the governor thread shares with the device.
pub(crate) struct Pool {
    pub(crate) handle: sys::CUmemoryPool,
    ctx: CUcontext,
    total: u64,
    /// Bytes the pool keeps cached at a synchronisation (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`).
    release_threshold: u64,
    pub(crate) policy: PoolPolicy,
    pub(crate) blocks: Arc<BlockCache>,
    /// Set by every allocation and free, cleared by the governor when it looks.
    active: AtomicBool,
    /// The governor sleeps longer than its poll (an idle pool with nothing due soon): the
    /// first activity wakes it.
    dozing: AtomicBool,
    running: AtomicBool,
    stop: AtomicBool,
    /// The governor thread and the process that started it: a `fork()`ed child has a copy of
    /// the handle but not the thread, and must not join it.
    governor: Mutex<Option<(std::thread::JoinHandle<()>, u32)>>,
    /// The device's streams (its queues and internal streams), which [`Pool::settle`] waits
    /// for: registered at creation, removed before destruction.
    streams: Lock<Vec<usize>>,
    /// The device's waits, whose stash of blocking-sync events [`Pool::settle`] borrows.
    waiter: Arc<Waiter>,
}

// SAFETY: the pool and context handles may be used from any thread once the context is
// current there (every thread that uses them makes it current first).
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

impl Pool {
    pub(crate) fn new(
        handle: sys::CUmemoryPool,
        ctx: CUcontext,
        total: u64,
        release_threshold: u64,
        policy: PoolPolicy,
        blocks: Arc<BlockCache>,
        waiter: Arc<Waiter>,
    ) -> Arc<Self> {
        let pool = Arc::new(Self {
            handle,
            ctx,
            total,
            release_threshold,
            policy,
            blocks,
            active: AtomicBool::new(false),
            dozing: AtomicBool::new(false),
            running: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            governor: Mutex::new(None),
            streams: Lock::with_default(&STREAMS),
            waiter,
        });
        pool.start_governor();
        pool
    }

    /// Records an allocation or free for the idle clock: one relaxed load on the hot path
    /// (a store only for the first one since the governor last looked, and a wake-up of a
    /// dozing governor).
    #[inline]
    pub(crate) fn note_activity(self: &Arc<Self>) {
        if !self.active.load(Ordering::Relaxed) {
            // SeqCst with the governor's store of `dozing` and load of `active`: either it sees
            // this activity before it dozes, or this sees it dozing and wakes it.
            self.active.store(true, Ordering::SeqCst);
            if self.dozing.load(Ordering::SeqCst) {
                self.wake_governor();
            }
            if !self.running.load(Ordering::Relaxed) {
                self.start_governor();
            }
        }
    }

    #[cold]
    fn wake_governor(&self) {
        if !self.dozing.swap(false, Ordering::SeqCst) {
            return;
        }
        if let Some((h, pid)) = &*self.governor.lock().unwrap_or_else(|e| e.into_inner())
            && *pid == std::process::id()
        {
            h.thread().unpark();
        }
    }

    fn start_governor(self: &Arc<Self>) {
        if self.policy.idle.is_zero() && self.policy.low_water == 0 {
            return;
        }
        let mut slot = self.governor.lock().unwrap_or_else(|e| e.into_inner());
        if self.running.load(Ordering::Acquire) {
            return;
        }
        self.stop.store(false, Ordering::Release);
        let pool = self.clone();
        let spawned = std::thread::Builder::new()
            .name("omptarget-pool".into())
            .spawn(move || pool.govern_loop());
        if let Ok(h) = spawned {
            self.running.store(true, Ordering::Release);
            *slot = Some((h, std::process::id()));
        }
    }

    /// Stops the governor thread (the last binary went away; process exit follows).
    pub(crate) fn stop_governor(&self) {
        let h = self
            .governor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match h {
            Some((h, pid)) if pid == std::process::id() => {
                self.stop.store(true, Ordering::Release);
                h.thread().unpark();
                let _ = h.join();
            }
            // In a fork child the thread does not exist: joining it would wait for nothing
            // (pthread_join of a thread of another process) and std panics on what it finds.
            Some((h, _)) => std::mem::forget(h),
            None => {}
        }
        self.running.store(false, Ordering::Release);
    }

    fn govern_loop(self: Arc<Self>) {
        if make_current(self.ctx).is_err() {
            self.running.store(false, Ordering::Release);
            return;
        }
        let start = Instant::now();
        let mut g = Governor::new(self.policy, Duration::ZERO);
        let ops = GovernorOps {
            pool: &self,
            stream: Mutex::new(None),
        };
        // An idle pool is looked at only when something is due (Governor::next_look), not at
        // every poll: each wake-up of this thread costs CPU (~50 µs on the H200 VMs: a
        // one-second kernel alone in a process measured ~0.6 ms of it a second at every poll).
        // The first look is at once, while the device initialises: it learns what the pool
        // holds, so that a pool with nothing due is not woken again until it is used.
        let mut sleep = Duration::ZERO;
        while !self.stop.load(Ordering::Acquire) {
            if sleep > self.policy.poll {
                self.dozing.store(true, Ordering::SeqCst);
                if self.active.load(Ordering::SeqCst) {
                    sleep = self.policy.poll;
                }
            }
            std::thread::park_timeout(sleep);
            self.dozing.store(false, Ordering::SeqCst);
            if self.stop.load(Ordering::Acquire) {
                break;
            }
            let active = self.active.swap(false, Ordering::SeqCst);
            let now = start.elapsed();
            govern(&ops, &mut g, now, active);
            sleep = g.next_look(now, active);
        }
        if let Some(s) = ops.stream.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // SAFETY: our own stream, idle.
            let _ = call("cuStreamDestroy", || unsafe { sys::cuStreamDestroy_v2(s) });
        }
    }

    /// Registers a stream of the device for [`Pool::settle`].
    pub(crate) fn stream_created(&self, s: CUstream) {
        self.streams.lock().push(s as usize);
    }

    /// Forgets a stream about to be destroyed (a settle that recorded on it before holds an
    /// event that completes with the stream's work).
    pub(crate) fn stream_destroyed(&self, s: CUstream) {
        let mut streams = self.streams.lock();
        if let Some(i) = streams.iter().position(|&x| x == s as usize) {
            streams.swap_remove(i);
        }
    }

    /// Waits until the work queued so far on every stream of the device has completed, so that
    /// the host has seen the frees among it and a trim can release them. It sleeps on one
    /// blocking-sync event per stream, from the waiter's stash: `cuCtxSynchronize` would do the
    /// same under the default scheduling by spinning a core for as long as the device works (a
    /// one-second kernel, a second of CPU from a background thread). Falls back to
    /// `cuCtxSynchronize` when events cannot be made.
    pub(crate) fn settle(&self) {
        let streams = self.streams.lock();
        let mut events = Vec::with_capacity(streams.len());
        while events.len() < streams.len() {
            match self.waiter.take_event() {
                Ok(e) => events.push(e),
                Err(_) => break,
            }
        }
        if events.len() < streams.len() {
            drop(streams);
            self.waiter.put_events(events);
            // SAFETY: waits for this context's queued work.
            let _ = call("cuCtxSynchronize", || unsafe { sys::cuCtxSynchronize() });
            return;
        }
        for (&s, &e) in streams.iter().zip(&events) {
            // SAFETY: records a stashed event on a registered (live) stream: a stream is removed
            // under this lock before it is destroyed. Never blocks.
            let _ = call("cuEventRecord", || unsafe {
                sys::cuEventRecord(e as sys::CUevent, s as CUstream)
            });
        }
        drop(streams);
        for &e in &events {
            // SAFETY: waits for a stashed event; it sleeps (a blocking-sync event).
            let _ = call("cuEventSynchronize", || unsafe {
                sys::cuEventSynchronize(e as sys::CUevent)
            });
        }
        self.waiter.put_events(events);
    }

    /// Whether the pool holds more than it keeps cached, so that the next synchronisation
    /// gives the excess back to the device (another process may be waiting for it).
    pub(crate) fn over_release_threshold(&self) -> bool {
        self.attr(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
            > self.release_threshold
    }

    fn attr(&self, a: sys::CUmemPool_attribute) -> u64 {
        let mut v = 0u64;
        // SAFETY: the attributes read here are 64-bit counters of a live pool.
        let _ = call("cuMemPoolGetAttribute", || unsafe {
            sys::cuMemPoolGetAttribute(self.handle, a, (&raw mut v).cast())
        });
        v
    }

    pub(crate) fn reading(&self, device_free: bool) -> Reading {
        use sys::CUmemPool_attribute as P;
        let free = device_free
            .then(|| {
                let (mut free, mut total) = (0usize, 0usize);
                // SAFETY: writes two locals (the context is current on this thread).
                call("cuMemGetInfo", || unsafe {
                    sys::cuMemGetInfo_v2(&mut free, &mut total)
                })
                .ok()
                .map(|_| free as u64)
            })
            .flatten();
        Reading {
            device_free: free,
            reserved: self.attr(P::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            used: self.attr(P::CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
        }
    }

    /// Frees the cached small blocks to the pool on `stream` and waits for it, then trims the
    /// pool to `keep` bytes.
    pub(crate) fn give_back_on(&self, stream: CUstream, keep: u64) {
        let blocks = self.blocks.drain();
        if !blocks.is_empty() {
            for p in blocks {
                // SAFETY: frees a pool block no work uses (it was free in the cache).
                let _ = call("cuMemFreeAsync", || unsafe {
                    sys::cuMemFreeAsync(p as CUdeviceptr, stream)
                });
            }
            // SAFETY: waits for a live stream.
            let _ = call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(stream)
            });
        }
        // SAFETY: trims a live pool; the driver releases only memory no allocation uses.
        let _ = call("cuMemPoolTrimTo", || unsafe {
            sys::cuMemPoolTrimTo(self.handle, keep as usize)
        });
    }
}

/// The governor thread's view of the pool (its own stream for freeing cached blocks).
struct GovernorOps<'a> {
    pool: &'a Pool,
    stream: Mutex<Option<CUstream>>,
}

impl PoolOps for GovernorOps<'_> {
    fn total(&self) -> u64 {
        self.pool.total
    }
    fn try_alloc(&self, _size: u64) -> Result<Option<usize>> {
        Ok(None)
    }
    fn give_back(&self, keep: u64) {
        // Frees queued by constructs that returned before their work completed (the core's
        // deferred completion) are released only once a synchronisation has seen them: the
        // governor trims an idle or pressed pool, so waiting for the device costs little.
        self.pool.settle();
        let mut s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = create_stream().ok();
        }
        match *s {
            Some(stream) => self.pool.give_back_on(stream, keep),
            // No stream: trim what is free in the pool, leave the cached blocks.
            None => {
                // SAFETY: trims a live pool.
                let _ = call("cuMemPoolTrimTo", || unsafe {
                    sys::cuMemPoolTrimTo(self.pool.handle, keep as usize)
                });
            }
        }
    }
    fn settle(&self) {}
    fn reading(&self, device_free: bool) -> Reading {
        self.pool.reading(device_free)
    }
}

/// An allocation's view of the pool: attempts go to `attempt` (the construct's stream or an
/// internal one), cached memory goes back through `give_back`.
pub(crate) struct AllocOps<'a, A: Fn(usize) -> Result<usize>, G: Fn(u64)> {
    pub(crate) pool: &'a Pool,
    pub(crate) attempt: A,
    pub(crate) give_back: G,
}

impl<A: Fn(usize) -> Result<usize>, G: Fn(u64)> PoolOps for AllocOps<'_, A, G> {
    fn total(&self) -> u64 {
        self.pool.total
    }
    fn try_alloc(&self, size: u64) -> Result<Option<usize>> {
        match (self.attempt)(size as usize) {
            Ok(p) => Ok(Some(p)),
            Err(e) if e.kind == ErrorKind::OutOfMemory => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn give_back(&self, keep: u64) {
        (self.give_back)(keep)
    }
    fn settle(&self) {
        self.pool.settle();
    }
    fn reading(&self, device_free: bool) -> Reading {
        self.pool.reading(device_free)
    }
}
