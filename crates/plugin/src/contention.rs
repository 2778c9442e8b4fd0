//! Where host threads meet: the locks of a region's path, counted when one is found held.
//!
//! [`Lock`] is a `Mutex` that first tries to take its lock; only when that fails (another
//! thread holds it) does it look at whether profiling is on (`OMPTARGET_RS_PROFILE=1`,
//! [`profile::enabled`]) and, if so, time the wait and add it to its [`Site`]. The uncontended
//! path is `try_lock` (the same compare-and-swap as `lock`); nothing is counted or read then.
//! Sites are statics named after the lock (one per kind of lock: every device's mapping table
//! counts on one site). The table of sites that were ever found held is printed at exit with
//! the profile (docs/ARCHITECTURE.md, "Where threads meet").

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

/// The counters of one kind of lock.
pub struct Site {
    name: &'static str,
    /// Acquisitions that found the lock held.
    contended: AtomicU64,
    /// Their total and longest wait, in nanoseconds.
    waited_ns: AtomicU64,
    max_ns: AtomicU64,
    listed: AtomicBool,
}

impl Site {
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            contended: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            listed: AtomicBool::new(false),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How often an acquisition found the lock held, and how long those waited in total
    /// (nanoseconds), while profiling was on.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.contended.load(Ordering::Relaxed),
            self.waited_ns.load(Ordering::Relaxed),
        )
    }

    #[cold]
    fn note(&'static self, ns: u64) {
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.waited_ns.fetch_add(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
        if !self.listed.swap(true, Ordering::Relaxed) {
            SITES.lock().unwrap_or_else(|e| e.into_inner()).push(self);
        }
    }
}

/// Sites found held at least once (while profiling).
static SITES: Mutex<Vec<&'static Site>> = Mutex::new(Vec::new());

/// A mutex whose contention is counted on `site` under `OMPTARGET_RS_PROFILE=1`. Poisoning is
/// ignored, as everywhere in the runtime: every critical section leaves its data consistent
/// before anything that can panic.
pub struct Lock<T> {
    inner: Mutex<T>,
    site: &'static Site,
}

impl<T> Lock<T> {
    pub const fn new(site: &'static Site, value: T) -> Self {
        Self {
            inner: Mutex::new(value),
            site,
        }
    }

    /// Takes the lock; counted on the site when it was held and profiling is on.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => self.lock_held(),
        }
    }

    #[cold]
    #[inline(never)]
    fn lock_held(&self) -> MutexGuard<'_, T> {
        if !profile::enabled() {
            return self.inner.lock().unwrap_or_else(|e| e.into_inner());
        }
        let t = Instant::now();
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        self.site.note(t.elapsed().as_nanos() as u64);
        g
    }

    pub fn into_inner(self) -> T {
        self.inner.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.inner.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Default> Lock<T> {
    pub fn with_default(site: &'static Site) -> Self {
        Self::new(site, T::default())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("site", &self.site.name)
            .finish()
    }
}

/// A value on cache lines of its own (128 bytes: two lines, as adjacent-line prefetching
/// pulls pairs). For a lock or atomic that every thread writes, so that the fields beside it,
/// which threads only read, do not bounce between cores with it.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Padded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// The table printed at exit: one row per lock that was found held, most waited-for first.
pub fn report() -> String {
    let mut sites: Vec<&Site> = SITES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    sites.sort_by_key(|s| std::cmp::Reverse(s.waited_ns.load(Ordering::Relaxed)));
    let mut out = String::from(
        "omptarget-rs profile (locks found held by another thread: acquisitions, wait):\n",
    );
    if sites.is_empty() {
        out.push_str("  none\n");
    }
    for s in sites {
        let (n, ns) = s.counts();
        let max = s.max_ns.load(Ordering::Relaxed);
        out.push_str(&format!(
            "  {:<40} {n:>8} held {:>12.1} us waited {:>9.2} us/wait {:>9.1} us max\n",
            s.name,
            ns as f64 / 1e3,
            ns as f64 / 1e3 / n as f64,
            max as f64 / 1e3,
        ));
    }
    out
}

/// The `OMPTARGET_RS_PROFILE=1` switch, read once, and the printing of every profile section
/// at exit (the CUDA plugin's driver-call times, then the lock table above).
pub mod profile {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU8, Ordering};

    /// 0 unknown, 1 off, 2 on.
    static STATE: AtomicU8 = AtomicU8::new(0);
    /// Sections printed at exit before the lock table, in the order they were added.
    static SECTIONS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

    unsafe extern "C" {
        fn atexit(f: extern "C" fn()) -> i32;
    }

    /// Whether `OMPTARGET_RS_PROFILE=1`; the first call that finds it on arranges the printing
    /// at exit.
    #[inline]
    pub fn enabled() -> bool {
        match STATE.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => read_env(),
        }
    }

    #[cold]
    fn read_env() -> bool {
        let on = std::env::var("OMPTARGET_RS_PROFILE").is_ok_and(|v| v == "1");
        set(on);
        on
    }

    /// Turns profiling on or off (tests; the environment decides otherwise).
    pub fn set(on: bool) {
        let before = STATE.swap(if on { 2 } else { 1 }, Ordering::Relaxed);
        if on && before != 2 {
            static REGISTERED: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a plain extern "C" function once.
            REGISTERED.call_once(|| unsafe {
                atexit(print_at_exit);
            });
        }
    }

    /// Adds a section printed at exit (once per function).
    pub fn at_exit(section: fn()) {
        let mut s = SECTIONS.lock().unwrap_or_else(|e| e.into_inner());
        if !s.iter().any(|f| std::ptr::fn_addr_eq(*f, section)) {
            s.push(section);
        }
    }

    extern "C" fn print_at_exit() {
        let sections = SECTIONS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for s in sections {
            s();
        }
        eprint!("{}", super::report());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Holds `lock` on another thread for 50 ms while this thread takes it.
    fn meet(lock: &Arc<Lock<u32>>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let l = lock.clone();
        let holder = std::thread::spawn(move || {
            let mut g = l.lock();
            tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            *g += 1;
        });
        rx.recv().unwrap();
        *lock.lock() += 1;
        holder.join().unwrap();
    }

    // One test, as the switch is process-wide.
    #[test]
    fn a_held_lock_is_counted_only_while_profiling() {
        static OFF: Site = Site::new("test: profiling off");
        static ON: Site = Site::new("test: profiling on");
        profile::set(false);
        let off = Arc::new(Lock::new(&OFF, 0));
        meet(&off);
        assert_eq!(*off.lock(), 2);
        assert_eq!(OFF.counts(), (0, 0), "nothing counted with profiling off");

        profile::set(true);
        let on = Arc::new(Lock::new(&ON, 0));
        *on.lock() += 1;
        assert_eq!(
            ON.counts().0,
            0,
            "an uncontended acquisition is not counted"
        );
        meet(&on);
        let (n, ns) = ON.counts();
        assert_eq!(n, 1);
        assert!(ns >= 1_000_000, "waited {ns} ns for a 50 ms hold");
        let table = report();
        assert!(table.contains("test: profiling on"), "{table}");
        assert!(!table.contains("test: profiling off"), "{table}");
        profile::set(false);
    }
}
