//! Process exit while constructs run: `exit()` (or a return from `main`) runs the program's
//! unregistration while other threads (libomp's helper threads running `target nowait`
//! tasks, or the program's own) may be inside constructs, or about to begin one. Unloading the images under them
//! makes their kernels' code and their mappings vanish mid-construct.
//!
//! So every construct is counted while it runs, on one of [`STRIPES`] counters chosen by its
//! thread's stack (threads issuing constructs at once mostly touch different cache lines),
//! and in a thread-local count of the calling thread's own. When the program itself
//! unregisters (only `exit` does that), the runtime closes a gate for the duration of that
//! unregistration: constructs that other threads begin meanwhile wait at it, and the exiting
//! thread waits until the constructs running on other threads have finished, then unloads.
//! While it waits (the gate is *draining*), a construct that runs inside a libomp target task
//! still passes and is waited for: the task was created before the exit began (a `target
//! nowait` whose helper thread started it late, behind the device's initialisation, say),
//! and it would otherwise wait for the unload and then fail. Once nothing is in flight the
//! gate is *unloading* and nothing passes; a construct counted just before that is seen by
//! the exit's second look, which then goes back to waiting.
//! Once the gate opens again every construct runs as at any other time: a shared library's
//! destructors and `atexit` handlers still offload with their own image, which is still
//! registered, and read the results; a construct of the program's own image, now unloaded,
//! fails under the offload policy.
//!
//! The exit never waits for the exiting thread's own constructs (`exit()` called inside a
//! region on the host device, from a signal handler that interrupted one, or after a
//! `longjmp` out of one), and a `fork()`ed child starts with none in flight but the forking
//! thread's own: the parent's other threads do not exist in the child.

use super::Runtime;
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// The gate is open: every construct runs.
const OPEN: u8 = 0;
/// The exit waits for the constructs in flight: constructs of target tasks pass, others wait.
const DRAINING: u8 = 1;
/// The exit unloads: every construct but the exiting thread's waits.
const UNLOADING: u8 = 2;

/// Counters of constructs in flight; a power of two.
const STRIPES: usize = 64;

/// One counter on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicIsize);

/// The constructs running now, and whether the program's exit is unloading its image.
pub(crate) struct InFlight {
    stripes: Box<[Stripe]>,
    /// `nowait` constructs that returned to libomp with their work still running, held in
    /// their target task's slot until a query finds them complete ([`Runtime::note_held`]):
    /// between polls no thread is inside them, but their queues and mappings are in use.
    held: AtomicIsize,
    /// The gate: [`OPEN`], [`DRAINING`] or [`UNLOADING`] while the exiting thread unregisters
    /// the program's own binary.
    gate: AtomicU8,
}

impl Default for InFlight {
    fn default() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
            held: AtomicIsize::new(0),
            gate: AtomicU8::new(OPEN),
        }
    }
}

/// What the exit and the panic hook need to know of a thread: plain data, no destructor
/// (see docs/ARCHITECTURE.md, "Thread-locals"), in one thread-local so that a construct
/// reaches it once (`__tls_get_addr` in a shared library) and its scope keeps the address.
struct ThreadState {
    /// The thread's constructs in flight (nested ones too: a region on the host device may
    /// issue constructs).
    mine: Cell<isize>,
    /// Whether this thread is the one that runs the program's exit.
    exiting_here: Cell<bool>,
    /// The innermost construct this thread runs: its entry point's name and a word of the
    /// caller's (the ABI layer's source location), for the panic hook.
    current: Cell<Option<(&'static str, usize)>>,
    /// `__kmpc_push_target_tripcount`: the trip count for this thread's next kernel (0: none),
    /// here so that the kernel's construct reads it through its scope's pointer instead of a
    /// thread-local access of its own.
    tripcount: Cell<u64>,
}

thread_local! {
    static THREAD: ThreadState = const {
        ThreadState {
            mine: Cell::new(0),
            exiting_here: Cell::new(false),
            current: Cell::new(None),
            tripcount: Cell::new(0),
        }
    };
}

/// Records the trip count of the calling thread's next kernel (`__kmpc_push_target_tripcount`).
pub fn push_tripcount(tripcount: u64) {
    THREAD.with(|t| t.tripcount.set(tripcount));
}

/// The construct the calling thread is running (the innermost), as given to
/// [`Runtime::construct_scope`]; `None` outside constructs.
pub fn current_construct() -> Option<(&'static str, usize)> {
    THREAD.with(|t| t.current.get())
}

/// The stripe of the calling thread, from the address of its stack: threads' stacks lie
/// megabytes apart.
#[inline]
fn my_stripe() -> usize {
    let here = 0u8;
    let addr = std::hint::black_box(&here) as *const u8 as u64;
    ((addr >> 20).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58) as usize % STRIPES
}

/// A running construct, counted until dropped (also when a foreign unwind, such as a thread
/// cancellation, passes through the construct's frames).
#[must_use = "the construct is counted while this lives"]
pub struct ConstructScope<'a> {
    stripe: &'a AtomicIsize,
    /// This thread's state (the scope is neither `Send` nor `Sync`: it ends on its thread,
    /// which outlives it, and with it the thread-local).
    thread: *const ThreadState,
    /// The construct that was current before this one.
    outer: Option<(&'static str, usize)>,
}

impl ConstructScope<'_> {
    /// Takes the trip count pushed for this thread's next kernel ([`push_tripcount`]; 0: none).
    #[inline]
    pub fn take_tripcount(&self) -> u64 {
        // SAFETY: the thread-local of this thread, which is alive while its scope is.
        unsafe { &*self.thread }.tripcount.replace(0)
    }
}

impl Drop for ConstructScope<'_> {
    fn drop(&mut self) {
        // SAFETY: the thread-local of this thread, which is alive while its scope is.
        let t = unsafe { &*self.thread };
        t.mine.set(t.mine.get() - 1);
        t.current.set(self.outer);
        self.stripe.fetch_sub(1, Ordering::Release);
    }
}

impl Runtime {
    /// Counts a construct that begins now. While the program's exit unloads its image, a
    /// construct of another thread waits here until that is done (bounded by the exit's own
    /// wait, [`Runtime::begin_exit`]); while the exit still waits for the constructs in flight,
    /// one for which `in_target_task` answers true (it runs inside a libomp target task, which
    /// was created before the exit began) passes and is waited for. `in_target_task` is asked
    /// only then.
    /// `current` is what [`current_construct`] answers while the scope lives.
    #[inline]
    pub fn construct_scope(
        &self,
        current: Option<(&'static str, usize)>,
        in_target_task: impl Fn() -> bool,
    ) -> ConstructScope<'_> {
        let thread: *const ThreadState = THREAD.with(|t| t as *const ThreadState);
        // SAFETY: this thread's thread-local, alive as long as the thread.
        let t = unsafe { &*thread };
        loop {
            let stripe = &self.in_flight.stripes[my_stripe()].0;
            // Counted before the gate is read (both SeqCst): an exit that closes the gate
            // after this sees the count and waits for us; one that closed it before is
            // seen here.
            stripe.fetch_add(1, Ordering::SeqCst);
            let gate = self.in_flight.gate.load(Ordering::SeqCst);
            if gate == OPEN || t.exiting_here.get() || (gate == DRAINING && in_target_task()) {
                t.mine.set(t.mine.get() + 1);
                let outer = t.current.replace(current);
                return ConstructScope {
                    stripe,
                    thread,
                    outer,
                };
            }
            stripe.fetch_sub(1, Ordering::Release);
            self.wait_for_gate();
        }
    }

    #[cold]
    fn wait_for_gate(&self) {
        while self.in_flight.gate.load(Ordering::SeqCst) != OPEN {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// A `nowait` construct was left running in its task's slot (`delta` 1), or one so left
    /// completed or was taken over by a construct of its task (-1). The exit waits for these
    /// as for constructs running on other threads: its unregistration frees the devices'
    /// memory and queues, which their work still uses. (When `main` exits, its `taskwait`
    /// completes them first; another thread's `exit` has only this count to go by.)
    pub fn note_held(&self, delta: isize) {
        self.in_flight.held.fetch_add(delta, Ordering::SeqCst);
    }

    /// Whether the program's exit is unloading its image now.
    pub fn exiting(&self) -> bool {
        self.in_flight.gate.load(Ordering::Acquire) != OPEN
    }

    /// The program is exiting (its own binary is being unregistered): closes the gate and
    /// waits until the constructs running on other threads have finished (up to `wait`; one
    /// that never finishes is reported and left), so that no image is unloaded under one.
    /// The calling thread's own constructs (it may call `exit` from inside one) are not
    /// waited for. [`Runtime::end_exit`] opens the gate again.
    pub fn begin_exit(&self, wait: Duration) {
        THREAD.with(|t| t.exiting_here.set(true));
        let started = Instant::now();
        self.in_flight.gate.store(DRAINING, Ordering::SeqCst);
        loop {
            let left = wait.saturating_sub(started.elapsed());
            let drained = self.wait_in_flight(left, started, wait);
            self.in_flight.gate.store(UNLOADING, Ordering::SeqCst);
            // A target task's construct counted itself before it read DRAINING: seen here.
            if !drained || self.running_elsewhere() <= 0 {
                break;
            }
            self.in_flight.gate.store(DRAINING, Ordering::SeqCst);
        }
        // Constructs that returned before their work completed complete now (parked.rs).
        let _ = self.complete_parked(None);
    }

    /// The program's binary is unregistered: constructs run again, from every thread.
    pub fn end_exit(&self) {
        self.in_flight.gate.store(OPEN, Ordering::SeqCst);
    }

    /// In a `fork()`ed child: the parent's other threads do not exist here, so nothing is in
    /// flight but the forking thread's own constructs (it may fork inside a region), and no
    /// gate is closed. Async-signal-safe (atomic stores and a thread-local read).
    pub fn after_fork_in_child(&self) {
        for s in self.in_flight.stripes.iter() {
            s.0.store(0, Ordering::Relaxed);
        }
        // The parent's target tasks are not in the child either.
        self.in_flight.held.store(0, Ordering::Relaxed);
        self.in_flight.stripes[my_stripe()]
            .0
            .store(THREAD.with(|t| t.mine.get()), Ordering::Relaxed);
        self.in_flight.gate.store(OPEN, Ordering::SeqCst);
        THREAD.with(|t| t.exiting_here.set(false));
    }

    /// Constructs in flight on other threads, and those held in their task's slot.
    fn running_elsewhere(&self) -> isize {
        let mine = THREAD.with(|t| t.mine.get());
        self.in_flight
            .stripes
            .iter()
            .map(|s| s.0.load(Ordering::SeqCst))
            .sum::<isize>()
            - mine
            + self.in_flight.held.load(Ordering::SeqCst)
    }

    /// Waits up to `left` until nothing runs elsewhere; false (after a report) when the exit's
    /// whole bound (`wait`, counted from `started`) passed first.
    fn wait_in_flight(&self, left: Duration, started: Instant, wait: Duration) -> bool {
        let until = Instant::now() + left;
        let mut pause = Duration::from_micros(50);
        loop {
            let running = self.running_elsewhere();
            if running <= 0 {
                return true;
            }
            if Instant::now() >= until {
                crate::message::report(format_args!(
                    "{running} target construct(s) still running on other threads after {:?} of the program's exit: unloading the images under them",
                    started.elapsed().min(wait)
                ));
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }
}
