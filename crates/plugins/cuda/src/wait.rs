//! How a host thread waits for the device.
//!
//! A wait polls (`cuStreamQuery`, `cuEventQuery`) for up to `OMPTARGET_RS_CUDA_SPIN_US` µs
//! ([`DEFAULT_SPIN_US`] by default), then sleeps in `cuEventSynchronize` on an event created
//! with `CU_EVENT_BLOCKING_SYNC` (the staging buffers' events are, and a stream gets one
//! recorded on it when its wait turns to sleeping). Polling wakes at once when the work
//! completes, as the driver's spinning synchronisation does; a sleeping thread wakes some
//! 15–35 µs late (measured on an H200: docs/PERFORMANCE.md), which matters for short waits
//! and not for long ones, and a long wait that spins takes a core from the program for all
//! of it (a one-second kernel, a second of CPU).
//!
//! So every wait shorter than the budget costs what a spinning wait costs and no more, and a
//! longer one costs the budget in CPU and a late wake-up. While the device's recent waits
//! are typically longer than [`LONG_WAITS`] budgets (a program of long kernels), a wait polls
//! only [`BRIEF_POLL_NS`] before it sleeps; the typical wait follows the recent ones both
//! ways, and one wait of twice [`LONG_WAITS`] budgets (a long kernel's) makes it long at once.
//! `OMPTARGET_RS_CUDA_SPIN_US=0`
//! sleeps at once, `-1` leaves every wait to the driver's synchronisation (it spins under the
//! default scheduling for as long as the device works).

use crate::driver::{CUstream, call, query};
use cudarc::driver::sys;
use omptarget_plugin::Result;
use omptarget_plugin::contention::{Lock, Site};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static EVENTS: Site = Site::new("cuda: events for sleeping waits");

/// The default longest poll before a wait sleeps, in µs: longer than every wait of the
/// latency rows (a 1 GiB region waits ~580 µs), short against a long kernel.
pub const DEFAULT_SPIN_US: u64 = 1000;

/// While the typical wait is longer than this many budgets, waits poll only [`BRIEF_POLL_NS`].
pub const LONG_WAITS: u64 = 4;

/// How long a wait polls while the typical wait is long, in ns: about what a sleeping wait's
/// late wake-up costs (15–35 µs), so that a wait costs at most twice what it would with
/// hindsight, and the short waits between long kernels (a copy home, an empty region) still
/// end while polling.
pub const BRIEF_POLL_NS: u64 = 25_000;

/// The poll budget for waits whose typical length is `typical_ns`, polling at most `max_ns`.
pub fn budget(typical_ns: u64, max_ns: u64) -> u64 {
    if typical_ns > LONG_WAITS * max_ns {
        max_ns.min(BRIEF_POLL_NS)
    } else {
        max_ns
    }
}

/// The typical wait after one more of `took_ns`, polling at most `max_ns`: a moving average
/// over about eight waits, each counted as at most twice [`LONG_WAITS`] budgets (8 ms by
/// default), so that one long kernel does not keep the short waits after it polling briefly
/// for long; a wait of that most or longer (a long kernel's) sets the typical wait to it at
/// once, so that the next long kernels' waits do not poll a whole budget each.
pub fn update(typical_ns: u64, took_ns: u64, max_ns: u64) -> u64 {
    let most = 2 * LONG_WAITS * max_ns;
    if took_ns >= most {
        return most;
    }
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

    /// Counts a wait in the typical one ([`update`]).
    fn note(&self, max_ns: u64, started: Instant) {
        let took = started.elapsed().as_nanos() as u64;
        let t = self.typical_ns.load(Ordering::Relaxed);
        self.typical_ns
            .store(update(t, took, max_ns), Ordering::Relaxed);
    }

    /// A blocking-sync event from the device's stash (made when the stash is empty), for a
    /// wait that sleeps; [`Waiter::put_events`] gives it back.
    pub fn take_event(&self) -> Result<usize> {
        let stashed = self.events.lock().pop();
        match stashed {
            Some(e) => Ok(e),
            None => crate::driver::create_event(true).map(|e| e as usize),
        }
    }

    /// Gives events taken with [`Waiter::take_event`] back to the stash.
    pub fn put_events(&self, events: impl IntoIterator<Item = usize>) {
        self.events.lock().extend(events);
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
            let event = self.take_event()?;
            // SAFETY: records a live event on a live stream, then sleeps until it completes.
            let r = call("cuEventRecord", || unsafe {
                sys::cuEventRecord(event as sys::CUevent, stream)
            })
            .and_then(|_| {
                call("cuEventSynchronize", || unsafe {
                    sys::cuEventSynchronize(event as sys::CUevent)
                })
            });
            self.put_events([event]);
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

    const MAX: u64 = DEFAULT_SPIN_US * 1000;

    fn noted(typical: u64, took: u64) -> u64 {
        update(typical, took, MAX)
    }

    #[test]
    fn waits_poll_for_the_budget_unless_recent_waits_were_long() {
        assert_eq!(budget(0, MAX), MAX);
        assert_eq!(budget(580_000, MAX), MAX, "a 1 GiB region's wait polls");
        assert_eq!(budget(LONG_WAITS * MAX, MAX), MAX);
        assert_eq!(budget(LONG_WAITS * MAX + 1, MAX), BRIEF_POLL_NS);
        assert_eq!(budget(0, 0), 0, "OMPTARGET_RS_CUDA_SPIN_US=0: always sleep");
        assert_eq!(budget(u64::MAX / 2, 0), 0);
        assert_eq!(
            budget(LONG_WAITS * 10_001, 10_000),
            10_000,
            "a budget below the brief poll"
        );
    }

    #[test]
    fn the_typical_wait_follows_recent_waits_both_ways() {
        let brief = |t| budget(t, MAX) == BRIEF_POLL_NS;
        // Long kernels (a wait of 8 budgets or more): the next wait polls briefly at once ...
        for long in [2 * LONG_WAITS * MAX, 10_000_000, 1_000_000_000] {
            assert!(brief(noted(50_000, long)), "after a wait of {long} ns");
        }
        // ... waits a little shorter only after several of them ...
        let mut t = 50_000;
        let mut n = 0;
        while !brief(t) {
            t = noted(t, 2 * LONG_WAITS * MAX - 1);
            n += 1;
        }
        assert!((4..=8).contains(&n), "{n} waits of 8 ms less 1 ns polled");
        for _ in 0..100 {
            t = noted(t, 1_000_000_000);
        }
        assert_eq!(
            t,
            2 * LONG_WAITS * MAX,
            "the typical wait stays at its most"
        );
        // ... and it comes back within a few waits once they are short again, even measured
        // with a sleep's late wake-up (~35 µs).
        let mut n = 0;
        while brief(t) {
            t = noted(t, 35_000);
            n += 1;
        }
        assert!(n <= 8, "{n} waits to come back");
        for _ in 0..100 {
            t = noted(t, 35_000);
        }
        assert!((34_000..=36_000).contains(&t), "{t}");
    }
}
