//! Long-lived helper threads for large staged copies: the host copies into and out of the
//! pinned buffers are split between them and the calling thread.
//!
//! Starting threads per copy (`std::thread::scope`, as before) cost each large copy the
//! creation of up to 8 OS threads and a `cuCtxSetCurrent` on each, twice per region of a
//! `tofrom` mapping. Here the threads are started once, on the first large copy, make the
//! device's context current once, and then wait on a condition variable for work.
//!
//! The work is borrowed from the caller's stack ([`Helpers::scope`]): a caller posts tickets
//! naming its work, runs its own part, takes back the tickets no helper picked up, and waits
//! until no helper runs its work any more before it returns. The caller always works too, so a
//! copy progresses when every helper is busy with other threads' copies (or none could be
//! started). The threads are never joined: at exit they are asleep on the condition variable
//! and do not keep the process alive; when the [`Helpers`] is dropped they end by themselves.

use crate::driver::{CUcontext, make_current};
use omptarget_plugin::{Error, ErrorKind, Result};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once};

/// A caller's work while helpers may run it; it lives on the caller's stack.
struct Task {
    /// The work, its lifetime erased (see the SAFETY argument in [`Helpers::scope`]).
    work: *const (dyn Fn() + Sync + 'static),
    /// Helpers running `work` now. Changed and read only under [`Shared::state`]'s lock (an
    /// atomic only to be changed through a shared reference).
    running: AtomicUsize,
    /// A helper's run of `work` panicked.
    panicked: AtomicBool,
}

/// A ticket: one helper may run the task's work.
struct Ticket(*const Task);

// SAFETY: a ticket is only dereferenced while its task is alive (see `Helpers::scope`), and the
// task's work is `Sync`.
unsafe impl Send for Ticket {}

#[derive(Default)]
struct State {
    queue: VecDeque<Ticket>,
    /// Helper threads alive (started, with the context current).
    threads: usize,
    /// The [`Helpers`] was dropped: the threads end once the queue is empty.
    closed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Helpers wait here for tickets.
    work: Condvar,
    /// Callers wait here for the helpers running their work.
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics with the lock held; a poisoned lock's state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(super) struct Helpers {
    /// The device's context (an address: the threads are started from any thread).
    ctx: usize,
    /// Threads to start.
    most: usize,
    started: Once,
    shared: Arc<Shared>,
}

impl Helpers {
    /// Up to `most` threads, started on the first [`Helpers::scope`] that asks for help.
    pub(super) fn new(ctx: CUcontext, most: usize) -> Self {
        Self {
            ctx: ctx as usize,
            most,
            started: Once::new(),
            shared: Arc::default(),
        }
    }

    fn start(&self) {
        for k in 0..self.most {
            let shared = self.shared.clone();
            let ctx = self.ctx;
            // Counted before the thread runs, so that the first copy already finds it; a thread
            // that cannot bind the context takes itself off again.
            shared.lock().threads += 1;
            let spawned = std::thread::Builder::new()
                .name(format!("omptarget-staging-{k}"))
                .spawn(move || helper(&shared, ctx));
            if spawned.is_err() {
                // No more threads: the callers do the work themselves.
                self.shared.lock().threads -= 1;
                break;
            }
        }
    }

    /// Helper threads alive (for tests).
    #[cfg(test)]
    pub(super) fn threads(&self) -> usize {
        self.shared.lock().threads
    }

    /// Runs `caller` on this thread while up to `extra` helper threads run `helper` (each at
    /// most once; `helper` may find nothing left to do); returns `caller`'s value once no
    /// helper runs `helper` any more. `Err` when a helper's run panicked; a panic of `caller`
    /// resumes here, also only after the helpers stopped. No lock of the runtime may be held
    /// by the caller (the wait is for other threads' memory copies).
    pub(super) fn scope<R>(
        &self,
        extra: usize,
        helper: &(dyn Fn() + Sync),
        caller: impl FnOnce() -> R,
    ) -> Result<R> {
        if extra == 0 || self.most == 0 {
            return Ok(caller());
        }
        self.started.call_once(|| self.start());
        // SAFETY: only the lifetime is erased. Helpers call `work` only through a ticket of
        // this task, and this function does not return (nor unwind: `caller` runs under
        // `catch_unwind`) before every ticket is either taken back unstarted or its run has
        // ended and been counted off `running` under the lock, after which no helper touches
        // the task again. So `helper`, and the stack data it borrows, outlive every call.
        let work: *const (dyn Fn() + Sync + 'static) = unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(
                helper,
            )
        };
        let task = Task {
            work,
            running: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
        };
        let me: *const Task = &task;
        let posted = {
            let mut st = self.shared.lock();
            let n = extra.min(st.threads);
            for _ in 0..n {
                st.queue.push_back(Ticket(me));
            }
            n
        };
        match posted {
            0 => {}
            1 => self.shared.work.notify_one(),
            _ => self.shared.work.notify_all(),
        }
        let r = catch_unwind(AssertUnwindSafe(caller));
        if posted > 0 {
            let mut st = self.shared.lock();
            // Tickets no helper picked up: the caller's part ended, and with it the work.
            st.queue.retain(|t| !std::ptr::eq(t.0, me));
            while task.running.load(Ordering::Relaxed) > 0 {
                st = self.shared.done.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        }
        let r = r.unwrap_or_else(|p| resume_unwind(p));
        if task.panicked.load(Ordering::Relaxed) {
            return Err(Error::new(
                ErrorKind::Backend,
                "a staging helper thread panicked during a host copy",
            ));
        }
        Ok(r)
    }
}

impl Helpers {
    /// Runs `fill(i)` for `i` in `0..n` on up to `extra` helpers and this thread, and
    /// `issue(i, filled)` on this thread in the order of `i`, each as soon as its `fill` is
    /// done. While the `i` it needs next is unclaimed (the helpers busy with other threads'
    /// work, or none started), this thread fills it itself. After the first failure nothing
    /// more is filled or issued, and `unused` gets every value filled but not issued.
    pub(super) fn pipeline<T: Send>(
        &self,
        extra: usize,
        n: usize,
        fill: impl Fn(usize) -> Result<T> + Sync,
        mut issue: impl FnMut(usize, T) -> Result<()>,
        mut unused: impl FnMut(T),
    ) -> Result<()> {
        let filled: Vec<Mutex<Option<Result<T>>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let take = |i: usize| filled[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        let next = AtomicUsize::new(0);
        let abort = AtomicBool::new(false);
        // Fills the next unclaimed index; false when none is left (or the work failed).
        let fill_next = || {
            if abort.load(Ordering::Relaxed) {
                return false;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                return false;
            }
            // A panic must not leave the index unfilled: the issuing loop waits for it.
            let r = catch_unwind(AssertUnwindSafe(|| fill(i))).unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorKind::Backend,
                    "a host copy into a staging buffer panicked",
                ))
            });
            *filled[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            true
        };
        let helper = || while fill_next() {};
        let issue_all = || -> Result<()> {
            for i in 0..n {
                let mut spins = 0u32;
                let got = loop {
                    if let Some(r) = take(i) {
                        break r;
                    }
                    if next.load(Ordering::Relaxed) <= i {
                        fill_next();
                        continue;
                    }
                    spins += 1;
                    if spins < 64 {
                        std::hint::spin_loop();
                    } else {
                        std::thread::yield_now();
                    }
                };
                let r = got.and_then(|v| issue(i, v));
                if r.is_err() {
                    abort.store(true, Ordering::Relaxed);
                    return r;
                }
            }
            Ok(())
        };
        let result = self.scope(extra, &helper, issue_all).and_then(|r| r);
        if result.is_err() {
            // No helper fills any more.
            for i in 0..n {
                if let Some(Ok(v)) = take(i) {
                    unused(v);
                }
            }
        }
        result
    }
}

impl Drop for Helpers {
    fn drop(&mut self) {
        // No caller is inside `scope` (it borrows `self`): the queue is empty.
        self.shared.lock().closed = true;
        self.shared.work.notify_all();
    }
}

/// A helper thread: binds the context once, then runs tickets until the pool is closed.
fn helper(shared: &Shared, ctx: usize) {
    if make_current(ctx as CUcontext).is_err() {
        shared.lock().threads -= 1;
        return;
    }
    let mut st = shared.lock();
    loop {
        if let Some(Ticket(t)) = st.queue.pop_front() {
            // SAFETY: the ticket was queued, so its task is alive until it is counted off
            // `running` below (`Helpers::scope` waits for that under this lock).
            let task = unsafe { &*t };
            task.running.fetch_add(1, Ordering::Relaxed);
            drop(st);
            // SAFETY: as above; `work` is `Sync`.
            let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*task.work)() })).is_ok();
            st = shared.lock();
            if !ok {
                task.panicked.store(true, Ordering::Relaxed);
            }
            task.running.fetch_sub(1, Ordering::Relaxed);
            // The task may be gone once the lock is released: not touched again.
            shared.done.notify_all();
            continue;
        }
        if st.closed {
            st.threads -= 1;
            return;
        }
        st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// Claims indices until none is left, counting each one's runs.
    fn claim_all(next: &AtomicUsize, seen: &[AtomicUsize], slow: bool) {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= seen.len() {
                break;
            }
            if slow {
                std::thread::sleep(Duration::from_micros(200));
            }
            seen[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn helpers_share_the_work_and_are_started_once() {
        let h = Helpers::new(std::ptr::null_mut(), 3);
        for _ in 0..20 {
            let next = AtomicUsize::new(0);
            let seen: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let helpers_ran = AtomicUsize::new(0);
            let work = || {
                helpers_ran.fetch_add(1, Ordering::Relaxed);
                claim_all(&next, &seen, true);
            };
            let r = h.scope(3, &work, || {
                claim_all(&next, &seen, true);
                7
            });
            assert_eq!(r.unwrap(), 7);
            assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
            // Every helper run has ended (none can start later: the tickets were taken back).
            assert!(helpers_ran.load(Ordering::Relaxed) <= 3);
        }
        assert_eq!(h.threads(), 3);
    }

    /// The caller returns only after a helper still in its work has finished it.
    #[test]
    fn the_caller_waits_for_a_running_helper() {
        let h = Helpers::new(std::ptr::null_mut(), 1);
        let entered = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        let work = || {
            entered.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            finished.store(true, Ordering::SeqCst);
        };
        h.scope(1, &work, || {
            while !entered.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
        })
        .unwrap();
        assert!(finished.load(Ordering::SeqCst));
    }

    /// A helper's panic is an error for its caller (after it ended); the helper lives on.
    /// A caller's panic resumes only after the helpers stopped.
    #[test]
    fn panics_are_reported_after_the_helpers_stopped() {
        let h = Helpers::new(std::ptr::null_mut(), 1);
        let entered = AtomicBool::new(false);
        let work = || {
            entered.store(true, Ordering::SeqCst);
            panic!("helper");
        };
        let r = h.scope(1, &work, || {
            while !entered.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
        });
        assert!(r.is_err());
        assert_eq!(h.threads(), 1);
        let started = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        let slow = || {
            started.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            finished.store(true, Ordering::SeqCst);
        };
        let caught = catch_unwind(AssertUnwindSafe(|| {
            h.scope(1, &slow, || {
                while !started.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                panic!("caller")
            })
        }));
        assert!(caught.is_err());
        assert!(
            finished.load(Ordering::SeqCst),
            "unwound before the helper ended"
        );
        assert_eq!(h.threads(), 1);
    }

    /// Many callers at once, more than there are helpers: every caller finishes its own
    /// work (doing it alone when every helper is busy).
    #[test]
    fn concurrent_callers_share_the_pool() {
        let h = Helpers::new(std::ptr::null_mut(), 2);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..10 {
                        let next = AtomicUsize::new(0);
                        let seen: Vec<AtomicUsize> = (0..16).map(|_| AtomicUsize::new(0)).collect();
                        let work = || claim_all(&next, &seen, false);
                        h.scope(2, &work, || claim_all(&next, &seen, false))
                            .unwrap();
                        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
                    }
                });
            }
        });
    }

    /// The pipeline issues every index once, in order, filled by the helpers and the caller;
    /// after a failure it issues nothing more and hands back what was filled but not issued.
    #[test]
    fn the_pipeline_issues_in_order_and_hands_back_the_unissued() {
        let h = Helpers::new(std::ptr::null_mut(), 3);
        for extra in [0, 3] {
            let fillers = Mutex::new(std::collections::HashSet::new());
            let mut order = Vec::new();
            h.pipeline(
                extra,
                40,
                |i| {
                    fillers.lock().unwrap().insert(std::thread::current().id());
                    std::thread::sleep(Duration::from_micros(100));
                    Ok(i * 10)
                },
                |i, v| {
                    assert_eq!(v, i * 10);
                    order.push(i);
                    Ok(())
                },
                |_| panic!("nothing unused"),
            )
            .unwrap();
            assert_eq!(order, (0..40).collect::<Vec<_>>());
            if extra == 0 {
                assert_eq!(fillers.lock().unwrap().len(), 1, "the caller alone");
            }
        }
        let filled = AtomicUsize::new(0);
        let mut issued = 0;
        let mut unused = 0;
        let r = h.pipeline(
            3,
            40,
            |i| {
                if i == 7 {
                    panic!("fill");
                }
                filled.fetch_add(1, Ordering::Relaxed);
                Ok(i)
            },
            |i, _| {
                assert!(i < 7);
                issued += 1;
                Ok(())
            },
            |_| unused += 1,
        );
        assert!(r.is_err());
        assert_eq!(issued, 7);
        // Every value filled was issued or handed back (none is lost).
        assert_eq!(issued + unused, filled.load(Ordering::Relaxed));
    }

    /// Dropped, the pool's threads end by themselves.
    #[test]
    fn dropped_pools_threads_end() {
        let h = Helpers::new(std::ptr::null_mut(), 2);
        h.scope(1, &|| {}, || {}).unwrap();
        let shared = h.shared.clone();
        drop(h);
        for _ in 0..1000 {
            if shared.lock().threads == 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("helper threads still alive");
    }
}
