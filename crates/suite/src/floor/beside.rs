//! The floors of the rows `beside_nowait4MiB` and `beside_fixed4MiB`: the CPU-bound host loop
//! of gpu_scenarios.c on all cores, alone and beside driver regions fed from its thread 0
//! (pinned memory, stream-ordered allocation, the fill kernel), and the loop's slowdown.

use super::*;

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
        while self.oldest < self.issued && event_done(self.events[self.oldest % BESIDE_SLOTS])? {
            self.oldest += 1;
        }
        Ok(self.oldest)
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
    use std::sync::atomic::{AtomicUsize, Ordering};
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
        f.streams.iter().try_for_each(|&st| sync(st))?;
    }
    Ok(((end - t0).as_secs_f64(), during))
}

/// The floor of `beside_nowait4MiB` (`fixed`: of `beside_fixed4MiB`): the host loop alone and
/// beside the driver's regions, alternating, one warm-up of each first; the slowdown is the
/// median of each repetition's beside/alone, as gpu_scenarios.c reports it.
pub(super) fn beside(
    gpu: &Gpu,
    streams: &[CUstream],
    reps: usize,
    scale: usize,
    print: bool,
    fixed: bool,
) -> Result<Floor, String> {
    let name = if fixed { BESIDE_FIXED_ROW } else { BESIDE };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = scaled(BESIDE_WORK, scale);
    // As gpu_scenarios.c: thread 0's share (n / threads, rounded down) in BESIDE_FIXED parts.
    let every = fixed.then(|| (n / threads / BESIDE_FIXED).max(1));
    let host = pinned(BESIDE_SLOTS * 4 * MIB)?;
    let events: Vec<sys::CUevent> = (0..BESIDE_SLOTS)
        .map(|_| event_new())
        .collect::<Result<_, _>>()?;
    let (mut alone, mut beside, mut slow, mut during) = (vec![], vec![], vec![], vec![]);
    for r in 0..=reps {
        let (a, _) = host_loop(n, threads, None)?;
        let mut f = Feeder {
            gpu,
            streams,
            events: &events,
            host,
            issued: 0,
            oldest: 0,
            every,
        };
        let (b, d) = host_loop(n, threads, Some(&mut f))?;
        if r > 0 {
            alone.push(a * 1e3);
            beside.push(b * 1e3);
            slow.push((b / a - 1.0) * 100.0);
            during.push(d as f64);
        }
    }
    let med = |v: &[f64]| crate::bench::median(v);
    let (a, b, p, d) = (med(&alone), med(&beside), med(&slow), med(&during));
    if print {
        println!(
            "floor={name} alone_ms={a:.3} beside_ms={b:.3} slowdown_pct={p:.2} regions_during={d:.0} \
             reps={reps} iters={n} threads={threads}"
        );
    }
    Ok(Floor {
        name: name.into(),
        median_us: b * 1e3,
        slowdown_pct: Some(p),
        ..Floor::default()
    })
}

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
