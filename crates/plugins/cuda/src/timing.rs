//! Device timestamps for tracing (OMPT device tracing): a CUDA event recorded on an
//! operation's stream marks when the GPU reached that point; once the stream's work is done
//! its time is the elapsed time from an anchor event whose host time is known.
//!
//! Time base: the host's monotonic clock in nanoseconds (`omptarget_plugin::host_clock_ns`),
//! like every backend's, so records of the GPU and of the host device share one timeline. An
//! anchor is an event recorded on an idle internal stream and waited for; its host time is
//! the midpoint of the host clock before the record and after the wait (a few microseconds
//! wide). `cuEventElapsedTime` gives milliseconds as an `f32` (resolution about 0.5 µs, and a
//! 24-bit mantissa), so a new anchor is made once the current one is a minute old: times
//! stay within a few microseconds of the truth however long the program runs. Nothing here
//! runs unless a tool traces the device.

use crate::driver::{CUstream, call};
use cudarc::driver::sys;
use omptarget_plugin::{Result, host_clock_ns};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long an anchor serves before a new one is made (host nanoseconds).
const ANCHOR_LIFE_NS: u64 = 60_000_000_000;

struct Anchor {
    event: sys::CUevent,
    host_ns: u64,
}

#[derive(Default)]
pub(crate) struct Timing {
    /// Every anchor made (an event keeps its anchor until it is resolved).
    anchors: Mutex<Vec<Anchor>>,
    /// Recorded events not resolved yet → the anchor they are measured from and the host
    /// time just before they were recorded.
    pending: Mutex<HashMap<usize, (usize, u64)>>,
    /// Timing events for reuse.
    free: Mutex<Vec<sys::CUevent>>,
}

// SAFETY: CUDA events may be used from any thread with the context current (every caller
// makes it current first); the handles sit behind locks.
unsafe impl Send for Timing {}
// SAFETY: see above.
unsafe impl Sync for Timing {}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Timing {
    fn event(&self) -> Result<sys::CUevent> {
        if let Some(e) = lock(&self.free).pop() {
            return Ok(e);
        }
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: creates an event with timing (the default flags).
        call("cuEventCreate", || unsafe {
            sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DEFAULT as u32)
        })?;
        Ok(e)
    }

    /// The anchor to measure new events from, made on `idle` (an internal stream, run and
    /// waited for by the caller's `on_internal_stream`) when there is none or it is old.
    fn anchor(
        &self,
        on_idle: impl FnOnce(&mut dyn FnMut(CUstream) -> Result<()>) -> Result<()>,
    ) -> Result<usize> {
        let now = host_clock_ns();
        {
            let anchors = lock(&self.anchors);
            if let Some(a) = anchors.last()
                && now.saturating_sub(a.host_ns) < ANCHOR_LIFE_NS
            {
                return Ok(anchors.len() - 1);
            }
        }
        let event = self.event()?;
        let mut before = 0;
        on_idle(&mut |s| {
            before = host_clock_ns();
            // SAFETY: records a live event on a live stream (waited for by the caller).
            call("cuEventRecord", || unsafe { sys::cuEventRecord(event, s) })
        })?;
        let after = host_clock_ns();
        let mut anchors = lock(&self.anchors);
        anchors.push(Anchor {
            event,
            host_ns: before + (after - before) / 2,
        });
        Ok(anchors.len() - 1)
    }

    /// Records a timing event at the current end of stream `s`; returns its token.
    pub(crate) fn mark(
        &self,
        s: CUstream,
        on_idle: impl FnOnce(&mut dyn FnMut(CUstream) -> Result<()>) -> Result<()>,
    ) -> Result<usize> {
        let anchor = self.anchor(on_idle)?;
        let event = self.event()?;
        let recorded = host_clock_ns();
        // SAFETY: records a live event on a live stream.
        if let Err(e) = call("cuEventRecord", || unsafe { sys::cuEventRecord(event, s) }) {
            lock(&self.free).push(event);
            return Err(e);
        }
        lock(&self.pending).insert(event as usize, (anchor, recorded));
        Ok(event as usize)
    }

    /// The host-clock time of a recorded event whose stream's work has completed; the event
    /// goes back to the pool.
    pub(crate) fn resolve(&self, token: usize) -> Result<u64> {
        let pending = lock(&self.pending).remove(&token);
        let event = token as sys::CUevent;
        let Some((anchor, recorded)) = pending else {
            return Err(omptarget_plugin::Error::new(
                omptarget_plugin::ErrorKind::InvalidArgument,
                format!("unknown timing event {token:#x}"),
            ));
        };
        let (anchor_event, anchor_ns) = {
            let anchors = lock(&self.anchors);
            (anchors[anchor].event, anchors[anchor].host_ns)
        };
        let mut ms = 0f32;
        // SAFETY: both events were recorded and have completed (the caller synchronised the
        // event's stream; the anchor was waited for).
        let r = call("cuEventElapsedTime", || unsafe {
            sys::cuEventElapsedTime(&mut ms, anchor_event, event)
        });
        lock(&self.free).push(event);
        r?;
        Ok(from_anchor(anchor_ns, ms, recorded))
    }
}

/// An event's host-clock time: `ms` after its anchor's, but never before the host recorded
/// it (the GPU cannot reach an event before it is queued). The anchor's host time is only
/// known within a few microseconds, and without the bound an operation's start could come out
/// before the host-timed record of one the thread issued earlier (ompt_trace counted such
/// records as out of order, now and then, on the H200).
fn from_anchor(anchor_ns: u64, ms: f32, recorded: u64) -> u64 {
    anchor_ns
        .saturating_add_signed((f64::from(ms) * 1e6) as i64)
        .max(recorded)
}

#[cfg(test)]
mod tests {
    use super::from_anchor;

    #[test]
    fn an_event_is_never_before_it_was_recorded() {
        assert_eq!(from_anchor(1_000_000, 0.5, 1_400_000), 1_500_000);
        // The anchor's estimate 3 us late: the event would come out before its recording.
        assert_eq!(from_anchor(1_000_000, 0.5, 1_503_000), 1_503_000);
        assert_eq!(from_anchor(1_000_000, -0.002, 0), 998_000);
    }
}
