//! The floors of the rows `beside_nowait4MiB` and `beside_fixed4MiB`: the CPU-bound host loop
//! of gpu_scenarios.c on all cores, alone and beside driver regions fed from its thread 0
//! (pinned memory, stream-ordered allocation, the fill kernel), and the loop's slowdown; and
//! the same regions from pageable memory with only the host copies a runtime cannot avoid
//! added (`_pageable`): what copying pageable data on the host costs the loop at the least.

use super::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// The row `beside_nowait4MiB` of gpu_scenarios.c: regions issued as fast as they complete.
pub(super) const BESIDE: &str = "beside_nowait4MiB";
/// The row `beside_fixed4MiB`: BESIDE_FIXED regions, evenly over thread 0's share.
pub(super) const BESIDE_FIXED_ROW: &str = "beside_fixed4MiB";
pub(super) const BESIDE_SLOTS: usize = 64;
const BESIDE_WINDOW: usize = 32;
const BESIDE_FIXED: usize = 32;
const BESIDE_WORK: usize = 1_000_000;

/// One iteration of the beside row's host loop, as gpu_scenarios.c computes it: 1000 dependent
/// multiply-adds that the compiler cannot fold.
fn chain(i: usize) -> u64 {
    let mut x = i as u64;
    for _ in 0..1000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        // SAFETY: an empty instruction sequence that claims to read and write x.
        unsafe {
            std::arch::asm!("/* {0} */", inout(reg) x, options(nomem, nostack, preserves_flags));
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            x = std::hint::black_box(x);
        }
    }
    x
}

/// Thread `t`'s share of `n` iterations over `threads` threads, in one block (OpenMP's static
/// schedule).
fn share(n: usize, threads: usize, t: usize) -> std::ops::Range<usize> {
    let chunk = n.div_ceil(threads);
    (t * chunk).min(n)..((t + 1) * chunk).min(n)
}

/// The beside floor's regions: `map(tofrom: 4 MiB)` through the driver (pinned host buffers,
/// stream-ordered allocation, the fill kernel), at most BESIDE_WINDOW in flight, region k on
/// slot k % BESIDE_SLOTS (its stream, host buffer and event), fed from the loop's thread 0.
/// With `every` (the fixed row) BESIDE_FIXED regions in all, one every `every` of thread 0's
/// iterations, whether or not earlier ones completed.
struct Feeder<'a> {
    gpu: &'a Gpu,
    streams: &'a [CUstream],
    events: &'a [sys::CUevent],
    host: usize,
    issued: usize,
    /// Regions before this one are done (in issue order).
    oldest: usize,
    every: Option<usize>,
    /// The pageable floor: regions go to these threads instead of being queued here.
    copier: Option<&'a Copier>,
}

/// Threads of the pageable floor: as many as libomp's hidden helper threads, which run the
/// `target nowait` regions of gpu_scenarios.c.
const COPIERS: usize = 8;

/// The host side of the pageable floor: what a runtime must do at the least for a
/// `map(tofrom: 4 MiB)` of pageable memory. Each region is one job for one of [`COPIERS`]
/// threads: copy the 4 MiB from the program's pageable array into the slot's pinned buffer,
/// queue the driver's region from there, sleep on a blocking-sync event until it is done, and
/// copy the 4 MiB back. Nothing polls and nothing else runs on the host: the two host copies
/// are the whole CPU cost beyond the pinned floor.
struct Copier {
    /// Regions to run, and whether the floor is over.
    jobs: Mutex<(VecDeque<usize>, bool)>,
    ready: Condvar,
    /// Per slot: 1 + the last region on it whose copy home has landed (0: none), as the
    /// kernel's marker in gpu_scenarios.c.
    landed: Vec<AtomicUsize>,
    failed: Mutex<Option<String>>,
    /// Addresses: the pinned buffers, the pageable arrays, the slots' streams and blocking
    /// events (driver handles as numbers, so the threads may share them).
    pinned: usize,
    pageable: usize,
    streams: Vec<usize>,
    events: Vec<usize>,
}

impl Copier {
    fn push(&self, k: usize) {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .push_back(k);
        self.ready.notify_one();
    }

    fn close(&self) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.ready.notify_all();
    }

    fn next(&self) -> Option<usize> {
        let mut j = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(k) = j.0.pop_front() {
                return Some(k);
            }
            if j.1 {
                return None;
            }
            j = self.ready.wait(j).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// One thread: runs regions until the floor is over.
    fn work(&self, gpu: &Gpu) {
        // SAFETY: makes the retained context current on this thread.
        if let Err(e) = ck("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(gpu.ctx) }) {
            self.fail(e);
        }
        while let Some(k) = self.next() {
            if let Err(e) = self.region(gpu, k) {
                self.fail(e);
            }
            // Counted even when it failed, so that nothing waits for it forever.
            self.landed[k % BESIDE_SLOTS].store(k + 1, Ordering::Release);
        }
    }

    fn fail(&self, e: String) {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(e);
    }

    fn region(&self, gpu: &Gpu, k: usize) -> Result<(), String> {
        let slot = k % BESIDE_SLOTS;
        let (st, ev) = (
            self.streams[slot] as CUstream,
            self.events[slot] as sys::CUevent,
        );
        let (p, h) = (self.pinned + slot * 4 * MIB, self.pageable + slot * 4 * MIB);
        // SAFETY: both are 4 MiB slots of live buffers of BESIDE_SLOTS x 4 MiB, and only the
        // thread running region k uses slot k % BESIDE_SLOTS (at most BESIDE_WINDOW < SLOTS
        // regions are in flight).
        unsafe { std::ptr::copy_nonoverlapping(h as *const u8, p as *mut u8, 4 * MIB) };
        let a = alloc(4 * MIB, st)?;
        h2d(a, p, 4 * MIB, st)?;
        gpu.fill(a, 4 * MIB, st)?;
        d2h(p, a, 4 * MIB, st)?;
        free(a, st)?;
        record_and_wait(ev, st)?;
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(p as *const u8, h as *mut u8, 4 * MIB) };
        Ok(())
    }
}

impl Feeder<'_> {
    /// Thread 0's feeding at its iteration `i` of its share (None before and after it), as
    /// `beside_feed` in gpu_scenarios.c: in the fixed row the region that is due, if any (the
    /// first before the share, one at every `every`-th later iteration, the rest after it); else,
    /// before and after the share and every 64 iterations, regions until the window is full
    /// (finished ones counted first).
    fn feed(&mut self, i: Option<usize>) -> Result<(), String> {
        if let Some(every) = self.every {
            if self.issued < BESIDE_FIXED && i.is_none_or(|i| i > 0 && i % every == 0) {
                self.issue()?;
            }
            return Ok(());
        }
        if i.is_some_and(|i| i & 63 != 0) {
            return Ok(());
        }
        self.done()?;
        while self.issued - self.oldest < BESIDE_WINDOW {
            self.issue()?;
        }
        Ok(())
    }

    fn issue(&mut self) -> Result<(), String> {
        if let Some(c) = self.copier {
            c.push(self.issued);
            self.issued += 1;
            return Ok(());
        }
        let k = self.issued % BESIDE_SLOTS;
        let (st, h) = (self.streams[k], self.host + k * 4 * MIB);
        let a = alloc(4 * MIB, st)?;
        h2d(a, h, 4 * MIB, st)?;
        self.gpu.fill(a, 4 * MIB, st)?;
        d2h(h, a, 4 * MIB, st)?;
        free(a, st)?;
        event_record(self.events[k], st)?;
        self.issued += 1;
        Ok(())
    }

    /// The regions done so far, counted in issue order.
    fn done(&mut self) -> Result<usize, String> {
        while self.oldest < self.issued && self.is_done(self.oldest)? {
            self.oldest += 1;
        }
        Ok(self.oldest)
    }

    fn is_done(&self, k: usize) -> Result<bool, String> {
        match self.copier {
            Some(c) => Ok(c.landed[k % BESIDE_SLOTS].load(Ordering::Acquire) > k),
            None => event_done(self.events[k % BESIDE_SLOTS]),
        }
    }

    /// Waits for every region issued (not timed).
    fn finish(&mut self) -> Result<(), String> {
        let Some(c) = self.copier else {
            return self.streams.iter().try_for_each(|&st| sync(st));
        };
        while self.done()? < self.issued {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        match c.failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The host loop (`n` iterations on `threads` threads, this one thread 0) alone or, with a
/// feeder, beside its regions, fed as gpu_scenarios.c feeds them (before thread 0's first
/// iteration, every 64 of its iterations or at each later one in the fixed row, and after its
/// share until every thread is done).
/// Returns the loop's time in seconds (until its last thread is done) and the regions done
/// meanwhile; waits for the regions afterwards.
fn host_loop(
    n: usize,
    threads: usize,
    mut feeder: Option<&mut Feeder<'_>>,
) -> Result<(f64, usize), String> {
    let finished = AtomicUsize::new(0);
    let t0 = Instant::now();
    let (end, during) = std::thread::scope(|sc| -> Result<(Instant, usize), String> {
        let finished = &finished;
        let others: Vec<_> = (1..threads)
            .map(|t| {
                sc.spawn(move || {
                    let acc = share(n, threads, t).fold(0, |acc, i| acc ^ chain(i));
                    std::hint::black_box(acc);
                    let end = Instant::now();
                    finished.fetch_add(1, Ordering::AcqRel);
                    end
                })
            })
            .collect();
        let c0 = match feeder.as_deref_mut() {
            Some(f) => {
                let c = f.done()?;
                f.feed(None)?;
                c
            }
            None => 0,
        };
        let mine = share(n, threads, 0);
        let start = mine.start;
        let mut acc = 0;
        for i in mine {
            if let Some(f) = feeder.as_deref_mut() {
                f.feed(Some(i - start))?;
            }
            acc ^= chain(i);
        }
        std::hint::black_box(acc);
        let mut end = Instant::now();
        finished.fetch_add(1, Ordering::AcqRel);
        let mut c1 = 0;
        if let Some(f) = feeder.as_deref_mut() {
            while finished.load(Ordering::Acquire) < threads {
                f.feed(None)?;
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
            c1 = f.done()?;
        }
        for h in others {
            end = end.max(
                h.join()
                    .map_err(|_| "host loop thread panicked".to_string())?,
            );
        }
        Ok((end, c1 - c0))
    })?;
    if let Some(f) = feeder {
        f.finish()?;
    }
    Ok(((end - t0).as_secs_f64(), during))
}

/// The floor of `beside_nowait4MiB` (`fixed`: of `beside_fixed4MiB`): the host loop alone and
/// beside the driver's regions, alternating, one warm-up of each first; the slowdown is the
/// median of each repetition's beside/alone, as gpu_scenarios.c reports it. `pageable`: the
/// regions' data lies in pageable memory and [`Copier`]'s threads copy it (`NAME_pageable`).
pub(super) fn beside(
    gpu: &Gpu,
    streams: &[CUstream],
    reps: usize,
    scale: usize,
    print: bool,
    fixed: bool,
    pageable: bool,
) -> Result<Floor, String> {
    let row = if fixed { BESIDE_FIXED_ROW } else { BESIDE };
    let name = if pageable {
        format!("{row}{PAGEABLE}")
    } else {
        row.to_string()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = scaled(BESIDE_WORK, scale);
    // As gpu_scenarios.c: thread 0's share (n / threads, rounded down) in BESIDE_FIXED parts.
    let every = fixed.then(|| (n / threads / BESIDE_FIXED).max(1));
    let host = pinned(BESIDE_SLOTS * 4 * MIB)?;
    let events: Vec<sys::CUevent> = (0..BESIDE_SLOTS)
        .map(|_| {
            if pageable {
                blocking_event()
            } else {
                event_new()
            }
        })
        .collect::<Result<_, _>>()?;
    // The program's arrays, touched so that no page is first faulted in during the loop.
    let arrays = if pageable {
        vec![1u8; BESIDE_SLOTS * 4 * MIB]
    } else {
        Vec::new()
    };
    let copier = pageable.then(|| Copier {
        jobs: Mutex::new((VecDeque::new(), false)),
        ready: Condvar::new(),
        landed: (0..BESIDE_SLOTS).map(|_| AtomicUsize::new(0)).collect(),
        failed: Mutex::new(None),
        pinned: host,
        pageable: arrays.as_ptr() as usize,
        streams: streams.iter().map(|&s| s as usize).collect(),
        events: events.iter().map(|&e| e as usize).collect(),
    });
    let (mut alone, mut beside, mut slow, mut during) = (vec![], vec![], vec![], vec![]);
    std::thread::scope(|sc| -> Result<(), String> {
        if let Some(c) = &copier {
            for _ in 0..COPIERS {
                sc.spawn(|| c.work(gpu));
            }
        }
        let r = (0..=reps).try_for_each(|r| -> Result<(), String> {
            let (a, _) = host_loop(n, threads, None)?;
            if let Some(c) = &copier {
                // Every region of the last loop has landed (finish): the threads are idle.
                c.landed.iter().for_each(|l| l.store(0, Ordering::Relaxed));
            }
            let mut f = Feeder {
                gpu,
                streams,
                events: &events,
                host,
                issued: 0,
                oldest: 0,
                every,
                copier: copier.as_ref(),
            };
            let (b, d) = host_loop(n, threads, Some(&mut f))?;
            if r > 0 {
                alone.push(a * 1e3);
                beside.push(b * 1e3);
                slow.push((b / a - 1.0) * 100.0);
                during.push(d as f64);
            }
            Ok(())
        });
        if let Some(c) = &copier {
            c.close();
        }
        r
    })?;
    drop(arrays);
    let med = |v: &[f64]| crate::bench::median(v);
    let (a, b, p, d) = (med(&alone), med(&beside), med(&slow), med(&during));
    if print {
        println!(
            "floor={name} alone_ms={a:.3} beside_ms={b:.3} slowdown_pct={p:.2} regions_during={d:.0} \
             reps={reps} iters={n} threads={threads}"
        );
    }
    Ok(Floor {
        name,
        median_us: b * 1e3,
        slowdown_pct: Some(p),
        ..Floor::default()
    })
}

/// The suffix of the beside rows' pageable floors.
pub(crate) const PAGEABLE: &str = "_pageable";

#[cfg(test)]
mod tests {
    #[test]
    fn the_host_loop_is_shared_as_openmps_static_schedule_shares_it() {
        let s: Vec<_> = (0..3).map(|t| super::share(10, 3, t)).collect();
        assert_eq!(s, [0..4, 4..8, 8..10]);
        assert_eq!(super::share(2, 4, 3), 2..2);
        // Not folded away: different iterations, different chains.
        assert_ne!(super::chain(1), super::chain(2));
    }

    /// The beside floor feeds and measures as bench/gpu_scenarios.c does.
    #[test]
    fn the_beside_floor_matches_the_program() {
        let c = include_str!("../../../../bench/gpu_scenarios.c");
        for (name, v) in [
            ("BESIDE_SLOTS", super::BESIDE_SLOTS),
            ("BESIDE_WINDOW", super::BESIDE_WINDOW),
            ("BESIDE_FIXED", super::BESIDE_FIXED),
            ("BESIDE_WORK", super::BESIDE_WORK),
        ] {
            assert!(
                c.contains(&format!("#define {name} {v}")),
                "{name} {v} differs from gpu_scenarios.c"
            );
        }
        for row in [super::BESIDE, super::BESIDE_FIXED_ROW] {
            assert!(c.contains(&format!("beside_report(\"{row}\", ")));
        }
        assert!(c.contains("if (feeder) beside_feed(i);"));
        assert!(c.contains("i < 0 || (i > 0 && i % beside_every == 0)"));
        assert!(c.contains("if (i > 0 && (i & 63) != 0) return;"));
        assert!(c.contains("n / nth / BESIDE_FIXED"));
        assert!(c.contains("for (int k = 0; k < 1000; ++k)"));
        // kernel1s: at most 3 repetitions in both.
        assert!(c.contains("if (!strcmp(name, \"kernel1s\") && n > 3) n = 3;"));
        assert_eq!(super::reps_for("kernel1s", 5), 3);
        assert_eq!(super::reps_for("empty", 5), 5);
    }
}
