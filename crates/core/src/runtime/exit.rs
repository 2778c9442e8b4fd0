//! Process exit while constructs run: `exit()` (or a return from `main`) runs
//! the program's unregistration while other threads (libomp's helper threads running `target
//! nowait` tasks, or the program's own) may be inside constructs. Unloading the images under
//! them makes their kernels' code and their mappings vanish mid-construct.
//!
//! So every construct is counted while it runs, on one of [`STRIPES`] counters chosen by its
//! thread's stack (threads issuing constructs at once mostly touch different cache lines). When the program
//! itself unregisters (only `exit` does that), the runtime first stops new constructs, then
//! waits for the ones running to finish, and only then unloads. A construct that begins after
//! that is not run: its results could reach nobody but the exit, and its images are gone.

use super::Runtime;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::{Duration, Instant};

/// Counters of constructs in flight; a power of two.
const STRIPES: usize = 64;

/// One counter on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicIsize);

/// The constructs running now, and whether the process has begun to exit.
pub(crate) struct InFlight {
    stripes: Box<[Stripe]>,
    exiting: AtomicBool,
}

impl Default for InFlight {
    fn default() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            exiting: AtomicBool::new(false),
        }
    }
}

/// The stripe of the calling thread, from the address of its stack: threads' stacks lie
/// megabytes apart (no thread-local, whose access from a shared library is a call).
#[inline]
fn my_stripe() -> usize {
    let here = 0u8;
    let addr = std::hint::black_box(&here) as *const u8 as u64;
    ((addr >> 20).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % STRIPES
}

/// A running construct, counted until dropped.
#[must_use = "the construct is counted while this lives"]
pub struct ConstructScope<'a> {
    stripe: &'a AtomicIsize,
}

impl Drop for ConstructScope<'_> {
    fn drop(&mut self) {
        self.stripe.fetch_sub(1, Ordering::Release);
    }
}

impl Runtime {
    /// Counts a construct that begins now; `None` when the process is exiting and the
    /// construct must not run ([`Runtime::begin_exit`]).
    #[inline]
    pub fn construct_scope(&self) -> Option<ConstructScope<'_>> {
        let stripe = &self.in_flight.stripes[my_stripe()].0;
        // Counted before the flag is read (both SeqCst): an exit that sets the flag after
        // this sees the count and waits for us; one that set it before is seen here.
        stripe.fetch_add(1, Ordering::SeqCst);
        if self.in_flight.exiting.load(Ordering::SeqCst) {
            stripe.fetch_sub(1, Ordering::Release);
            return None;
        }
        Some(ConstructScope { stripe })
    }

    /// Whether [`Runtime::begin_exit`] ran.
    pub fn exiting(&self) -> bool {
        self.in_flight.exiting.load(Ordering::Acquire)
    }

    /// The program is exiting (its own binary is being unregistered): constructs that begin
    /// from now on are not run, and this waits until those running have finished (up to
    /// `wait`; a construct that never finishes is reported and left), so that no image is
    /// unloaded under one. The caller holds no construct of its own.
    pub fn begin_exit(&self, wait: Duration) {
        self.in_flight.exiting.store(true, Ordering::SeqCst);
        self.wait_in_flight(wait);
        // Constructs that returned before their work completed complete now (parked.rs).
        let _ = self.complete_parked(None);
    }

    fn wait_in_flight(&self, wait: Duration) {
        let started = Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            let running: isize = self
                .in_flight
                .stripes
                .iter()
                .map(|s| s.0.load(Ordering::SeqCst))
                .sum();
            if running <= 0 {
                return;
            }
            if started.elapsed() >= wait {
                crate::message::report(format_args!(
                    "{running} target construct(s) still running on other threads after {wait:?} of the program's exit: unloading the images under them"
                ));
                return;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}
