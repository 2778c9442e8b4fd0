//! `nowait` constructs left running in their libomp target task's slot, and the one order
//! the runtime keeps between them and later constructs: a construct that copies host memory
//! to the device first completes the held constructs whose copies back land in that memory.
//!
//! Why: libomp gives `target in_reduction(+: x) nowait` tasks that run on its hidden helper
//! threads the list item itself instead of a private copy (`LIBOMPTARGET_INFO=32` shows all
//! of them copying `&x` in and out), so such tasks map one host variable at once and each
//! adds its part on the device and copies it back. A task that copies `x` in before an
//! earlier task's copy back has landed there loses that task's part. On the CUDA device small
//! copies back land when the construct is found complete, at its task's poll, a long window;
//! LLVM 19 loses parts the same way in the shorter window until its copy back has run.
//! Completing the held construct before another copies the memory in closes that window;
//! tasks whose regions overlap on the device completely still share the one device copy as
//! they share the variable. docs/ARCHITECTURE.md, "Held constructs".
//!
//! A tracked construct registers each copy back when it queues it (`register`), with a weak
//! reference to a cell of its own that is `Issuing` until the construct is held in it (the
//! slot then holds the `Arc<Held>`) or completes. Whoever completes a construct takes it out
//! of its cell under the cell's lock (leaving `Busy`) and synchronises it outside, so no lock
//! is held across a driver call; the task's poll then finds it `Done`. A reader waits for an
//! `Issuing` cell; no two threads wait for each other, as a construct checks before its first
//! copy in and registers only later copies back (and skips its own cell).

use crate::error::Result;
use crate::ops::AsyncInfo;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

// The cell is on the heap already (one allocation per held construct, as the boxed
// AsyncInfo was): boxing the large variant would make it two.
#[allow(clippy::large_enum_variant)]
enum State {
    /// Its thread is still issuing it (its copies back are registered as they are queued).
    Issuing,
    Running(AsyncInfo),
    /// Taken out by a thread that polls or completes it.
    Busy,
    /// Completed (by the issuing thread, or taken over by a later construct of its task);
    /// the result waits for the task's poll.
    Done(Option<Result<()>>),
}

/// What [`Held::take_out`] found (returned by value, moved once into its taker).
#[allow(clippy::large_enum_variant)]
enum Out {
    Taken(AsyncInfo),
    /// Completed; the result if nobody reported it yet.
    Done(Option<Result<()>>),
    Busy,
}

/// A construct in a target task's slot.
pub struct Held {
    state: Mutex<State>,
    /// Made for a copy back (`register`): other constructs may wait for it.
    copies_back: bool,
}

/// The host ranges held constructs copy back to, with their cells (dropped entries pruned
/// as constructs are held).
static HOME: Mutex<Vec<(usize, usize, Weak<Held>)>> = Mutex::new(Vec::new());
/// `HOME.len()`, read first by every construct that copies data in: 0 in a program that
/// never left a `nowait` construct with copies back running.
static COUNT: AtomicUsize = AtomicUsize::new(0);

fn home() -> MutexGuard<'static, Vec<(usize, usize, Weak<Held>)>> {
    HOME.lock().unwrap_or_else(|e| e.into_inner())
}

impl Held {
    fn new(state: State, copies_back: bool) -> Arc<Held> {
        Arc::new(Held {
            state: Mutex::new(state),
            copies_back,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the construct out (`Busy` left behind). `Busy`: another thread has it out now,
    /// returned at once unless `wait`, which waits until that thread puts it back or
    /// completes it (never long for a poll, which does not block; a completion waits for
    /// device work that is already queued).
    fn take_out(&self, wait: bool) -> Out {
        let mut spins = 0u32;
        loop {
            {
                let mut s = self.lock();
                match &mut *s {
                    State::Issuing | State::Busy if !wait => return Out::Busy,
                    State::Issuing | State::Busy => {}
                    State::Done(r) => return Out::Done(r.take()),
                    State::Running(_) => {
                        let State::Running(ai) = std::mem::replace(&mut *s, State::Busy) else {
                            unreachable!()
                        };
                        return Out::Taken(ai);
                    }
                }
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    fn put(&self, state: State) {
        *self.lock() = state;
    }
}

/// Leaves `ai` running in a target task's slot: the value to store there. Its copies back
/// were registered as they were queued (`register`).
pub fn hold(mut ai: AsyncInfo) -> *mut c_void {
    let held = match ai.take_cell() {
        Some(held) => {
            held.put(State::Running(ai));
            held
        }
        None => Held::new(State::Running(ai), false),
    };
    Arc::into_raw(held) as *mut c_void
}

/// A `nowait` construct queued a copy back to host memory `[begin, end)`: registered at once
/// (in its cell, made here on its first copy back), so that a construct that copies the
/// memory in meanwhile waits until this one is held and then completes it.
pub(crate) fn register(cell: &mut Option<Arc<Held>>, begin: usize, end: usize) {
    let held = cell.get_or_insert_with(|| Held::new(State::Issuing, true));
    let mut home = home();
    // Completed constructs' entries go every 32 registrations (and at every check), not at
    // each: the list is scanned under the one lock all `nowait` constructs take here.
    if home.len() % 32 == 31 {
        home.retain(|(_, _, w)| w.strong_count() > 0);
    }
    home.push((begin, end, Arc::downgrade(held)));
    COUNT.store(home.len(), Ordering::Release);
}

/// The construct that owned `cell` completed without being held: constructs waiting for it
/// go on.
pub(crate) fn issued_and_done(cell: Arc<Held>) {
    let mut s = cell.lock();
    if matches!(*s, State::Issuing) {
        *s = State::Done(None);
    }
}

/// Takes the construct out of a slot's value (which the caller has reset): a construct of
/// the same task takes it over (`Ok(Some)`), or it was completed meanwhile or is completed
/// now (`Ok(None)`, or its failure).
///
/// A construct with copies back still to land is completed here, not taken over: its copies
/// are registered against its cell, which other constructs would have to wait for while the
/// task's next construct is issued, and that construct may wait for theirs (no clang
/// construct issues two entry points from one target task as far as seen: the wait is rare).
///
/// # Safety
/// `ptr` is a value [`hold`] returned, taken out of its slot (owned once).
pub unsafe fn take(ptr: *mut c_void) -> Result<Option<AsyncInfo>> {
    // SAFETY: per the contract, the slot's reference is ours now.
    let held = unsafe { Arc::from_raw(ptr as *const Held) };
    match held.take_out(true) {
        Out::Taken(ai) if held.copies_back => {
            let r = ai.synchronize();
            held.put(State::Done(None));
            r.map(|_| None)
        }
        Out::Taken(ai) => {
            held.put(State::Done(None));
            Ok(Some(ai))
        }
        Out::Done(r) => r.unwrap_or(Ok(())).map(|_| None),
        Out::Busy => unreachable!("take_out waits while another thread has it out"),
    }
}

/// Whether the construct in a slot has completed, without blocking (`block`: waiting for
/// it). When it has, the slot's reference is released and the caller resets the slot.
///
/// # Safety
/// `ptr` is a value [`hold`] returned, still in its slot; with `Ok(true)` or an error it is
/// released and must not be used again.
pub unsafe fn poll(ptr: *mut c_void, block: bool) -> Result<bool> {
    // SAFETY: the slot's reference stays valid for the call.
    let held = unsafe { &*(ptr as *const Held) };
    let outcome = match held.take_out(false) {
        // Another thread completes it now: the task asks again later.
        Out::Busy => return Ok(false),
        Out::Taken(mut ai) => {
            let r = if block {
                ai.synchronize_in_place().map(|_| true)
            } else {
                ai.is_done()
            };
            match r {
                Ok(false) => {
                    held.put(State::Running(ai));
                    return Ok(false);
                }
                // Complete, or failed: dropping it waits and releases.
                r => {
                    drop(ai);
                    held.put(State::Done(None));
                    r
                }
            }
        }
        Out::Done(r) => r.unwrap_or(Ok(())).map(|_| true),
    };
    // SAFETY: done: the slot's reference goes (the caller resets the slot).
    drop(unsafe { Arc::from_raw(ptr as *const Held) });
    outcome
}

/// Whether a `nowait` construct that copies back to host memory may still be running (one
/// atomic load).
#[inline]
pub fn any() -> bool {
    COUNT.load(Ordering::Acquire) != 0
}

/// Before a construct copies host memory to the device (`ranges` gives each `[begin, end)`):
/// completes the held constructs whose copies back land there. One atomic load while none
/// is held.
#[inline]
pub fn before_reading(own: Option<&Arc<Held>>, ranges: impl Fn(&mut dyn FnMut(usize, usize))) {
    if any() {
        complete(own, ranges);
    }
}

/// Completes the held constructs not completed yet whose copies back land in `[begin,
/// end)` (not `own`): whether there were any. The caller looks again at what they released.
#[cold]
pub(crate) fn complete_running(own: Option<&Arc<Held>>, begin: usize, end: usize) -> bool {
    complete(own, |f| f(begin, end))
}

/// Completes the held constructs whose copies back land in `ranges`, but `own` and those
/// already completed (their copies back have landed): whether there were any.
#[cold]
fn complete(own: Option<&Arc<Held>>, ranges: impl Fn(&mut dyn FnMut(usize, usize))) -> bool {
    let mut found: Vec<Arc<Held>> = Vec::new();
    {
        let mut home = home();
        home.retain(|(_, _, w)| w.strong_count() > 0);
        COUNT.store(home.len(), Ordering::Release);
        ranges(&mut |begin, end| {
            for (b, e, w) in home.iter() {
                if *b < end
                    && begin < *e
                    && let Some(h) = w.upgrade()
                    && !own.is_some_and(|o| Arc::ptr_eq(o, &h))
                    && !found.iter().any(|f| Arc::ptr_eq(f, &h))
                    && !matches!(*h.lock(), State::Done(_))
                {
                    found.push(h);
                }
            }
        });
    }
    let any = !found.is_empty();
    // Completed outside the list's lock (a synchronisation waits for the device).
    for held in found {
        match held.take_out(true) {
            // A failure is the task's to report, at its poll.
            Out::Taken(ai) => held.put(State::Done(Some(ai.synchronize()))),
            Out::Done(r) => held.put(State::Done(r)),
            Out::Busy => unreachable!("take_out waits while another thread has it out"),
        }
    }
    any
}
