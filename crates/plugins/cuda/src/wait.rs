//! How a host thread waits for the device.
//!
//! By default a wait is the driver's: `cuStreamSynchronize` and `cuEventSynchronize`, which
//! spin under the context's default scheduling. That wakes at once when the work completes
//! (LLVM's `CU_CTX_SCHED_BLOCKING_SYNC` sleeps and wakes ~10 µs later: most of an empty region's
//! cost), but a one-second kernel costs a second of CPU, and threads waiting for `nowait`
//! regions hold cores that the program's threads and the staging copies need.
//!
//! With `OMPTARGET_RS_CUDA_SPIN_US=N` each wait chooses instead (not yet measured on a GPU,
//! so not the default):
//!
//! - it polls (`cuStreamQuery`, `cuEventQuery`) for up to a budget, then sleeps in
//!   `cuEventSynchronize` on an event created with `CU_EVENT_BLOCKING_SYNC` (the staging
//!   buffers' events are, and a stream gets one recorded on it when its wait turns to
//!   sleeping);
//! - the budget follows the device's recent waits: while the typical wait is short (at most
//!   N/2 µs), twice the typical wait plus [`MIN_SPIN`], at most N µs; while waits are longer,
//!   none: a long wait sleeps at once, and the late wake-up is a small part of it. A wait that
//!   sleeps still measures how long the work took, so the budget comes back when waits become
//!   short again. N = 0 sleeps at once.

use crate::driver::{CUstream, call, query};
use cudarc::driver::sys;
use omptarget_plugin::Result;
use omptarget_plugin::contention::{Lock, Site};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static EVENTS: Site = Site::new("cuda: events for sleeping waits");

/// The budget when the typical wait is (near) zero: what a wait for an empty kernel needs.
pub const MIN_SPIN: u64 = 10_000;

/// The budget for waits whose typical length is `typical_ns`, polling at most `max_ns`.
pub fn budget(typical_ns: u64, max_ns: u64) -> u64 {
    if max_ns == 0 || typical_ns > max_ns / 2 {
        0
    } else {
        (2 * typical_ns + MIN_SPIN).min(max_ns)
    }
}

/// The typical wait after one more of `took_ns` (a moving average over about eight waits).
pub fn update(typical_ns: u64, took_ns: u64) -> u64 {
    typical_ns - typical_ns / 8 + took_ns / 8
}

/// One device's waits: how it waits, the typical wait and the blocking events streams borrow.
pub struct Waiter {
    /// `None`: the driver's own synchronisation; else the longest poll (0: sleep at once).
    max_spin_ns: Option<u64>,
    typical_ns: AtomicU64,
    events: Lock<Vec<usize>>,
}

impl Waiter {
    /// `spin_us`: `None` for the driver's own synchronisation, else the longest poll before
    /// a wait sleeps (0: at once).
    pub fn new(spin_us: Option<u64>) -> Self {
        Self {
            max_spin_ns: spin_us.map(|us| us.saturating_mul(1000)),
            typical_ns: AtomicU64::new(0),
            events: Lock::with_default(&EVENTS),
        }
    }

    /// Whether waits poll, then sleep (events to wait for are made with
    /// `CU_EVENT_BLOCKING_SYNC` then).
    pub fn polls(&self) -> bool {
        self.max_spin_ns.is_some()
    }

    /// Polls `done` until it answers true or the budget (at most `max_ns`) is spent;
    /// `Ok(true)` when done.
    fn poll(
        &self,
        max_ns: u64,
        started: Instant,
        mut done: impl FnMut() -> Result<bool>,
    ) -> Result<bool> {
        if done()? {
            return Ok(true);
        }
        let budget = budget(self.typical_ns.load(Ordering::Relaxed), max_ns);
        while (started.elapsed().as_nanos() as u64) < budget {
            std::hint::spin_loop();
            if done()? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Counts a wait in the typical one: a wait longer than four times the longest poll counts
    /// as that long, so that one long kernel does not keep many short waits after it sleeping.
    fn note(&self, max_ns: u64, started: Instant) {
        let took = (started.elapsed().as_nanos() as u64).min(4 * max_ns);
        let t = self.typical_ns.load(Ordering::Relaxed);
        self.typical_ns.store(update(t, took), Ordering::Relaxed);
    }

    /// Waits for everything queued on `stream` so far (the current context is the device's).
    pub fn stream(&self, stream: CUstream) -> Result<()> {
        let Some(max_ns) = self.max_spin_ns else {
            // SAFETY: waits for a live stream.
            return call("cuStreamSynchronize", || unsafe {
                sys::cuStreamSynchronize(stream)
            });
        };
        let started = Instant::now();
        // SAFETY: non-blocking queries of a live stream.
        let done = self.poll(max_ns, started, || {
            query("cuStreamQuery", || unsafe { sys::cuStreamQuery(stream) })
        })?;
        if !done {
            let event = match self.events.lock().pop() {
                Some(e) => e,
                None => crate::driver::create_event(true)? as usize,
            };
            // SAFETY: records a live event on a live stream, then sleeps until it completes.
            let r = call("cuEventRecord", || unsafe {
                sys::cuEventRecord(event as sys::CUevent, stream)
            })
            .and_then(|_| {
                call("cuEventSynchronize", || unsafe {
                    sys::cuEventSynchronize(event as sys::CUevent)
                })
            });
            self.events.lock().push(event);
            r?;
        }
        self.note(max_ns, started);
        Ok(())
    }

    /// Waits for `event` (made by [`crate::driver::create_event`] with `sleeping` as
    /// [`Waiter::polls`] says).
    pub fn event(&self, event: usize) -> Result<()> {
        let Some(max_ns) = self.max_spin_ns else {
            // SAFETY: waits for a live event.
            return call("cuEventSynchronize", || unsafe {
                sys::cuEventSynchronize(event as sys::CUevent)
            });
        };
        let started = Instant::now();
        // SAFETY: non-blocking queries of a live event.
        let done = self.poll(max_ns, started, || {
            query("cuEventQuery", || unsafe {
                sys::cuEventQuery(event as sys::CUevent)
            })
        })?;
        if !done {
            // SAFETY: waits for a live event.
            call("cuEventSynchronize", || unsafe {
                sys::cuEventSynchronize(event as sys::CUevent)
            })?;
        }
        self.note(max_ns, started);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_waits_poll_and_long_ones_sleep_at_once() {
        let max = 100_000;
        assert_eq!(budget(0, max), MIN_SPIN);
        assert_eq!(budget(5_000, max), 20_000);
        assert_eq!(budget(45_000, max), max);
        assert_eq!(budget(50_000, max), max);
        assert_eq!(budget(50_001, max), 0);
        assert_eq!(budget(1_000_000_000, max), 0);
        assert_eq!(budget(0, 0), 0, "OMPTARGET_RS_CUDA_SPIN_US=0: always sleep");
    }

    #[test]
    fn the_typical_wait_follows_recent_waits_both_ways() {
        // Long waits (a one-second kernel, counted as four times the longest poll): polling
        // stops after the first ...
        let mut t = 5_000;
        let mut n = 0;
        while budget(t, 100_000) > 0 {
            t = update(t, 400_000);
            n += 1;
        }
        assert_eq!(n, 1);
        for _ in 0..100 {
            t = update(t, 400_000);
        }
        // ... and comes back within ~20 waits once they are short again, even measured with a
        // sleep's late wake-up (~15 µs for an empty kernel).
        let mut n = 0;
        while budget(t, 100_000) == 0 {
            t = update(t, 15_000);
            n += 1;
        }
        assert!(n <= 20, "{n} waits to come back");
        for _ in 0..100 {
            t = update(t, 15_000);
        }
        assert!((14_500..=15_500).contains(&t), "{t}");
    }
}
