//! Streams and events: a queue is a CUDA stream of the device's primary context (its handle
//! is the `QueueId`), an event a CUDA event without timing. Operations that come without a
//! queue borrow a stream from the device's pool of internal streams and wait for it.

use super::CudaDevice;
use crate::driver::{self, CUstream, call};
use cudarc::driver::sys;
use omptarget_plugin::{EventId, QueueId, Result, Timestamp};
use std::sync::atomic::Ordering;

/// The stream a queue stands for.
pub(super) fn stream(q: QueueId) -> CUstream {
    q.0 as CUstream
}

impl CudaDevice {
    /// The stream of `q`, to queue work on it: the stream's batched small copies were issued
    /// earlier, so they go to the driver first (staging.rs).
    pub(super) fn submit(&self, q: QueueId) -> Result<CUstream> {
        self.staging.flush(q.0)?;
        Ok(stream(q))
    }

    /// Runs `f` on an internal stream and waits for it (operations that come without a queue).
    pub(super) fn on_internal_stream(&self, f: impl FnOnce(CUstream) -> Result<()>) -> Result<()> {
        let s = match self.internal.lock().pop() {
            Some(s) => s,
            None => self.stream_create().map(stream)?,
        };
        let r = f(s).and_then(|_| self.waiter.stream(s));
        self.internal.lock().push(s);
        r
    }

    pub(super) fn stream_create(&self) -> Result<QueueId> {
        self.current()?;
        let s = driver::create_stream()?;
        if let Some(pool) = &self.pool {
            pool.stream_created(s);
        }
        Ok(QueueId(s as usize))
    }

    pub(super) fn stream_destroy(&self, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        if let Some(pool) = &self.pool {
            pool.stream_destroyed(s);
        }
        // SAFETY: destroys a stream we created, once.
        call("cuStreamDestroy", || unsafe { sys::cuStreamDestroy_v2(s) })
    }

    pub(super) fn stream_synchronize(&self, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = stream(queue);
        let mut wait = || self.waiter.stream(s);
        // Staged copies land as their chunks complete, then the stream is waited for.
        let finished = self.staging.finish(queue.0, Some(&mut wait));
        self.after_work(s, finished)?;
        self.blocks.completed(queue.0);
        Ok(())
    }

    /// `work`, the outcome of waiting for `s` or querying it that found it complete or
    /// failed, after [`CudaDevice::flush_output`] where a loaded image may print (written when
    /// the work failed too: a failed `assert` prints, then traps); the work's error comes first.
    #[inline]
    fn after_work<T>(&self, s: CUstream, work: Result<T>) -> Result<T> {
        if !self.prints.load(Ordering::Relaxed) {
            return work;
        }
        let flushed = self.flush_output(s);
        let v = work?;
        flushed.map(|()| v)
    }

    /// Makes the driver write what the stream's kernels printed (called where a loaded image may
    /// print): the driver writes device `printf` output only at synchronising calls
    /// (`cuStreamSynchronize`, `cuEventSynchronize`, a kernel launch, a module unload; not
    /// `cuStreamQuery`), and does not at process exit, so a wait that found the work complete
    /// by polling would leave it unwritten until some later call, or lose it. The stream's
    /// work is complete here, so the call returns at once. LLVM 19 waits with
    /// `cuStreamSynchronize`: a region's output is written when the region ends.
    #[cold]
    fn flush_output(&self, s: CUstream) -> Result<()> {
        // SAFETY: synchronises a live stream whose work is complete (or failed).
        call("cuStreamSynchronize", || unsafe {
            sys::cuStreamSynchronize(s)
        })
    }

    pub(super) fn stream_query(&self, queue: QueueId) -> Result<bool> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: non-blocking query of a live stream.
        let done = match driver::query("cuStreamQuery", || unsafe { sys::cuStreamQuery(s) }) {
            Ok(false) => false,
            ended => self.after_work(s, ended)?,
        };
        if done {
            self.staging.finish(queue.0, None)?;
            self.blocks.completed(queue.0);
        }
        Ok(done)
    }

    /// A timing event on the queue's stream, after the stream's batched copies (which are
    /// issued first, so the event follows every operation queued before it).
    pub(super) fn stream_timestamp(&self, queue: Option<QueueId>) -> Result<Timestamp> {
        let Some(q) = queue else {
            return Ok(Timestamp::At(omptarget_plugin::host_clock_ns()));
        };
        self.current()?;
        let s = self.submit(q)?;
        let token = self
            .timing
            .mark(s, |record| self.on_internal_stream(record))?;
        Ok(Timestamp::Pending(token))
    }

    pub(super) fn timestamp_resolve(&self, ts: Timestamp) -> Result<u64> {
        match ts {
            Timestamp::At(t) => Ok(t),
            Timestamp::Pending(token) => {
                self.current()?;
                self.timing.resolve(token)
            }
        }
    }

    pub(super) fn event_create(&self) -> Result<EventId> {
        self.current()?;
        driver::create_event(false).map(|e| EventId(e as usize))
    }

    pub(super) fn event_destroy(&self, event: EventId) -> Result<()> {
        self.current()?;
        // SAFETY: destroys an event we created, once.
        call("cuEventDestroy", || unsafe {
            sys::cuEventDestroy_v2(event.0 as sys::CUevent)
        })
    }

    pub(super) fn event_record(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: records a live event on a live stream.
        call("cuEventRecord", || unsafe {
            sys::cuEventRecord(event.0 as sys::CUevent, s)
        })
    }

    pub(super) fn stream_wait_event(&self, event: EventId, queue: QueueId) -> Result<()> {
        self.current()?;
        let s = self.submit(queue)?;
        // SAFETY: makes a live stream wait for a live event.
        call("cuStreamWaitEvent", || unsafe {
            sys::cuStreamWaitEvent(s, event.0 as sys::CUevent, 0)
        })
    }
}
