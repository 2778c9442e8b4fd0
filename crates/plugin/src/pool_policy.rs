//! When a stream-ordered memory pool gives cached memory back to the device, so that a fast
//! pool never starves another process sharing the GPU (several MPI ranks per GPU is the normal
//! way large offload codes run).
//!
//! The pool keeps freed memory for reuse: that is what makes a region that maps 64 MiB cost
//! 29 µs instead of 257 µs. Another process cannot see that memory is merely cached, so the
//! policy has four parts, each cheap for a single process:
//!
//! 1. **A bounded cache.** The pool's release threshold is a fraction of the device (a quarter
//!    by default), not everything: memory above it goes back at the next synchronisation.
//!    Regions up to that size keep their speed; a larger one pays what `cuMemAlloc` pays.
//! 2. **Idle trim.** After `idle` without any allocation or free, the pool is trimmed to `keep`
//!    bytes (and the small-block cache emptied): an idle process holds nothing (the CUDA
//!    plugin's `keep` is 0 unless configured) and, with nothing due, its governor sleeps until
//!    the next allocation or free.
//! 3. **Pressure trim.** While the device has less than `low_water` free and the pool holds
//!    memory no allocation uses, that memory goes back at once, busy or not. (An idle pool
//!    that keeps a nonzero `keep` unused reads the device's free memory once a second.)
//! 4. **Patience.** An allocation that fails after trimming our own pool waits, with
//!    exponential back-off up to `oom_wait`, for memory that other processes are giving back
//!    (their idle trims), before it fails with a message that says who holds the memory.
//!
//! This module is the decision logic only, driven by a clock and by readings the caller takes
//! (device free memory, pool reserved/used), so that it is tested with a fake clock and a fake
//! "other process"; the CUDA plugin runs it on a background thread per device.

use std::time::Duration;

/// The policy's settings (`OMPTARGET_RS_CUDA_POOL_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolPolicy {
    /// Idle time after which the pool is trimmed to `keep` (zero: never).
    pub idle: Duration,
    /// Bytes an idle trim keeps reserved (the head start the pool was grown by).
    pub keep: u64,
    /// Device free memory below which unused pool memory is given back at once (0: never).
    pub low_water: u64,
    /// How long a failed allocation waits for memory that others release (zero: fail at once).
    pub oom_wait: Duration,
    /// How often the governor looks.
    pub poll: Duration,
}

impl PoolPolicy {
    /// The defaults for a device of `total` bytes whose pool was grown by `keep` bytes.
    pub fn for_device(total: u64, keep: u64) -> Self {
        Self {
            idle: Duration::from_millis(1000),
            keep,
            low_water: (total / 32).max(1 << 30),
            oom_wait: Duration::from_millis(3000),
            poll: Duration::from_millis(100),
        }
    }

    /// The default release threshold (the bounded cache) of a device of `total` bytes.
    pub fn default_release_threshold(total: u64) -> u64 {
        total / 4
    }
}

/// What the governor reads each time it looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Free memory of the whole device (all processes), as the driver reports it; `None` when
    /// not read this time (the reading was taken without it).
    pub device_free: Option<u64>,
    /// Bytes the pool holds, in use or cached.
    pub reserved: u64,
    /// Bytes of the pool that allocations use.
    pub used: u64,
}

/// Why memory went back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimReason {
    Idle,
    Pressure,
}

/// What the pool should do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Nothing,
    /// Empty the small-block cache and trim the pool until it holds at most `keep` bytes
    /// (the driver never releases memory in use).
    Trim {
        keep: u64,
        why: TrimReason,
    },
}

/// The state of one device's governor. Time is whatever monotonic clock the caller uses.
#[derive(Debug)]
pub struct Governor {
    policy: PoolPolicy,
    /// When the last activity was seen.
    active_at: Duration,
    /// An idle trim already happened since then.
    idle_trimmed: bool,
    /// When the device's free memory was last read.
    free_read_at: Option<Duration>,
    /// The pool's reserved and used bytes as last read: they change only through allocations
    /// and frees (activity) and trims, so an idle look reuses them instead of asking the driver.
    pool_seen: Option<(u64, u64)>,
}

/// How often an idle pool that holds no more than `keep` unused reads the device's free
/// memory (a driver call of ~80 µs on an H200; every look, 10 a second, cost an idle process
/// ~1 ms of CPU a second).
pub const IDLE_FREE_EVERY: Duration = Duration::from_secs(1);

/// How long an idle governor with nothing due sleeps: its idle trim is done and the pool holds
/// nothing unused to give back under pressure, so only the pool's next allocation or free (which
/// wakes it) can give it work.
pub const NOTHING_DUE: Duration = Duration::from_secs(3600);

impl Governor {
    pub fn new(policy: PoolPolicy, now: Duration) -> Self {
        Self {
            policy,
            active_at: now,
            idle_trimmed: false,
            free_read_at: None,
            pool_seen: None,
        }
    }

    pub fn policy(&self) -> &PoolPolicy {
        &self.policy
    }

    /// Whether every look reads the device's free memory: pressure trims are on and the pool
    /// is active or holds more than `keep` unused (pressure must find that memory at once).
    fn reads_every_look(&self, active: bool, unused: u64) -> bool {
        self.policy.low_water > 0 && (active || unused > self.policy.keep)
    }

    /// How long until the once-every-[`IDLE_FREE_EVERY`] reading of free memory is due at
    /// `now` (zero: due).
    fn free_read_in(&self, now: Duration) -> Duration {
        self.free_read_at.map_or(Duration::ZERO, |t| {
            (t + IDLE_FREE_EVERY).saturating_sub(now)
        })
    }

    /// Whether the governor needs the device's free memory at `now` (the caller skips the
    /// driver call otherwise): only when the pool holds something unused to give back, and,
    /// while the pool is idle (`active` false) with no more than `keep` unused, once every
    /// [`IDLE_FREE_EVERY`]. A `true` counts as a reading taken.
    pub fn needs_device_free(
        &mut self,
        now: Duration,
        active: bool,
        reserved: u64,
        used: u64,
    ) -> bool {
        let unused = reserved.saturating_sub(used);
        if self.policy.low_water == 0 || unused == 0 {
            return false;
        }
        let due = self.reads_every_look(active, unused) || self.free_read_in(now).is_zero();
        if due {
            self.free_read_at = Some(now);
        }
        due
    }

    /// How long the governor may sleep after its look at `now` (`active`: the pool allocated
    /// or freed since the look before): the policy's `poll` while the pool is active or every
    /// look reads free memory (or the pool's numbers are not known yet, with pressure trims
    /// on). Otherwise only what
    /// is due: the idle trim, and the next reading of the device's free memory (while
    /// something unused could be given back), never less than `poll`; with nothing due,
    /// [`NOTHING_DUE`]. Every wake-up costs the idle process CPU (~50 µs on the H200
    /// machines). Activity wakes a governor that sleeps longer than `poll` (the caller's
    /// part), so a pool that turns busy is looked at as before.
    pub fn next_look(&self, now: Duration, active: bool) -> Duration {
        let poll = self.policy.poll;
        let unused = self.pool_seen.map(|(r, u)| r.saturating_sub(u));
        let pressure = self.policy.low_water > 0;
        if active || unused.map_or(pressure, |u| self.reads_every_look(false, u)) {
            return poll;
        }
        let mut next = NOTHING_DUE;
        if pressure && unused.is_some_and(|u| u > 0) {
            next = next.min(self.free_read_in(now));
        }
        // A pool holding no more than keep has nothing for its idle trim to give (tick).
        let trim_gives = self.pool_seen.is_none_or(|(r, _)| r > self.policy.keep);
        if !self.policy.idle.is_zero() && !self.idle_trimmed && trim_gives {
            next = next.min((self.active_at + self.policy.idle).saturating_sub(now));
        }
        next.max(poll)
    }

    /// One look at time `now`; `active` says whether the pool allocated or freed since the
    /// last look.
    pub fn tick(&mut self, now: Duration, active: bool, r: Reading) -> Decision {
        self.pool_seen = Some((r.reserved, r.used));
        if active {
            self.active_at = now;
            self.idle_trimmed = false;
        }
        let unused = r.reserved.saturating_sub(r.used);
        if self.policy.low_water > 0
            && unused > 0
            && r.device_free.is_some_and(|f| f < self.policy.low_water)
        {
            return Decision::Trim {
                keep: 0,
                why: TrimReason::Pressure,
            };
        }
        let idle = !self.policy.idle.is_zero()
            && !self.idle_trimmed
            && now.saturating_sub(self.active_at) >= self.policy.idle;
        if idle {
            self.idle_trimmed = true;
            // A pool that holds no more than keep has nothing to give back: no trim, and none
            // of its waits for the device's streams.
            if r.reserved > self.policy.keep {
                return Decision::Trim {
                    keep: self.policy.keep,
                    why: TrimReason::Idle,
                };
            }
        }
        Decision::Nothing
    }
}

/// The waits of an allocation that failed after trimming its own pool: 1, 2, 4, … ms, at most
/// 250 ms each, until they add up to `oom_wait` (the last one shortened to fit).
pub fn backoff(oom_wait: Duration) -> impl Iterator<Item = Duration> {
    let mut next = Duration::from_millis(1);
    let mut left = oom_wait;
    std::iter::from_fn(move || {
        if left.is_zero() {
            return None;
        }
        let d = next.min(left);
        left -= d;
        next = (next * 2).min(Duration::from_millis(250));
        Some(d)
    })
}

/// The numbers an out-of-memory message needs, in GiB, with what other processes hold
/// (everything the device lacks that our pool does not account for).
pub fn describe_shortage(total: u64, r: Reading, size: u64) -> String {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    // Taken with the device's free memory (alloc_with_patience reads it for the message).
    let free = r.device_free.unwrap_or(0);
    let others = total.saturating_sub(free).saturating_sub(r.reserved);
    format!(
        "{:.2} GiB requested; the device has {:.2} GiB of {:.2} GiB free; this process's memory \
         pool holds {:.2} GiB ({:.2} GiB in use); other processes and contexts hold about {:.2} GiB",
        gib(size),
        gib(free),
        gib(total),
        gib(r.reserved),
        gib(r.used),
        gib(others)
    )
}

/// What the policy needs from a pool (the CUDA plugin's default memory pool, or a fake one in
/// tests).
pub trait PoolOps {
    /// The device's total memory.
    fn total(&self) -> u64;
    /// One allocation attempt: `Ok(None)` when the device is out of memory.
    fn try_alloc(&self, size: u64) -> crate::Result<Option<usize>>;
    /// Gives what this process caches back to the device: empties the small-block cache and
    /// trims the pool to `keep` bytes.
    fn give_back(&self, keep: u64);
    /// Waits for this process's queued frees, so that a following trim can release them.
    fn settle(&self);
    /// The pool's reserved and used bytes, and, when `device_free` is asked for, the
    /// device's free memory (a driver call; otherwise `None`).
    fn reading(&self, device_free: bool) -> Reading;
}

/// Why an allocation failed after everything the policy tried.
#[derive(Clone, Copy, Debug)]
pub struct Shortage {
    pub reading: Reading,
    pub waited: Duration,
}

/// Allocates `size` bytes; when the device is out of memory, gives our own cache back and
/// retries, then waits with back-off (`sleep`) for memory other processes release. A request
/// larger than the whole device fails at once.
pub fn alloc_with_patience(
    ops: &impl PoolOps,
    size: u64,
    policy: &PoolPolicy,
    mut sleep: impl FnMut(Duration),
) -> crate::Result<std::result::Result<usize, Shortage>> {
    if size > ops.total() {
        // Nothing given back or waited for can make room: no driver call either.
        return Ok(Err(Shortage {
            reading: ops.reading(true),
            waited: Duration::ZERO,
        }));
    }
    if let Some(p) = ops.try_alloc(size)? {
        return Ok(Ok(p));
    }
    ops.give_back(0);
    ops.settle();
    ops.give_back(0);
    if let Some(p) = ops.try_alloc(size)? {
        return Ok(Ok(p));
    }
    let mut waited = Duration::ZERO;
    if size <= ops.total() {
        for d in backoff(policy.oom_wait) {
            sleep(d);
            waited += d;
            // Try only once the device shows room (an attempt costs more than a look).
            if ops.reading(true).device_free.is_some_and(|f| f >= size)
                && let Some(p) = ops.try_alloc(size)?
            {
                return Ok(Ok(p));
            }
        }
    }
    Ok(Err(Shortage {
        reading: ops.reading(true),
        waited,
    }))
}

/// One look of the governor at time `now` (`active`: the pool allocated or freed since the
/// last look): reads the pool, decides, and gives memory back when the policy says so.
/// An idle look reuses the pool's numbers of the look before: nothing was allocated, freed or
/// trimmed since. (What the driver releases on its own at a synchronisation, above the
/// release threshold, only makes them overstate what the pool holds unused: at worst a
/// reading of the device's free memory or a trim that finds nothing to give.)
pub fn govern(ops: &impl PoolOps, g: &mut Governor, now: Duration, active: bool) -> Decision {
    let mut r = match g.pool_seen {
        Some((reserved, used)) if !active => Reading {
            device_free: None,
            reserved,
            used,
        },
        _ => ops.reading(false),
    };
    if g.needs_device_free(now, active, r.reserved, r.used) {
        r = ops.reading(true);
    }
    let d = g.tick(now, active, r);
    if let Decision::Trim { keep, .. } = d {
        ops.give_back(keep);
        g.pool_seen = None;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn policy() -> PoolPolicy {
        PoolPolicy::for_device(140 * GIB, GIB / 4)
    }

    #[test]
    fn an_idle_pool_is_trimmed_once_after_the_idle_time() {
        let mut g = Governor::new(policy(), ms(0));
        let r = Reading {
            device_free: Some(60 * GIB),
            reserved: 80 * GIB,
            used: 0,
        };
        assert_eq!(g.tick(ms(100), true, r), Decision::Nothing);
        assert_eq!(g.tick(ms(1099), false, r), Decision::Nothing);
        assert_eq!(
            g.tick(ms(1100), false, r),
            Decision::Trim {
                keep: GIB / 4,
                why: TrimReason::Idle
            }
        );
        // Trimmed: nothing more until the next activity and idle period.
        assert_eq!(g.tick(ms(5000), false, r), Decision::Nothing);
        assert_eq!(g.tick(ms(5100), true, r), Decision::Nothing);
        assert!(matches!(g.tick(ms(6100), false, r), Decision::Trim { .. }));
    }

    #[test]
    fn a_busy_pool_is_never_idle_trimmed() {
        let mut g = Governor::new(policy(), ms(0));
        let r = Reading {
            device_free: Some(100 * GIB),
            reserved: 8 * GIB,
            used: GIB,
        };
        for t in (0..10_000).step_by(100) {
            assert_eq!(g.tick(ms(t), true, r), Decision::Nothing);
        }
    }

    #[test]
    fn pressure_gives_unused_memory_back_even_when_busy() {
        let mut g = Governor::new(policy(), ms(0));
        let low = Reading {
            device_free: Some(GIB),
            reserved: 30 * GIB,
            used: 2 * GIB,
        };
        assert_eq!(
            g.tick(ms(100), true, low),
            Decision::Trim {
                keep: 0,
                why: TrimReason::Pressure
            }
        );
        // Nothing unused: nothing to give, whatever the pressure.
        let all_used = Reading {
            used: 30 * GIB,
            ..low
        };
        assert_eq!(g.tick(ms(200), true, all_used), Decision::Nothing);
        assert!(!g.needs_device_free(ms(200), true, 30 * GIB, 30 * GIB));
        assert!(g.needs_device_free(ms(200), true, 30 * GIB, 2 * GIB));
    }

    #[test]
    fn an_idle_pool_holding_its_keep_reads_the_device_once_a_second() {
        let p = policy();
        let mut g = Governor::new(p, ms(0));
        let keep = p.keep;
        // Active, or holding more than keep unused: every look.
        assert!(g.needs_device_free(ms(100), true, keep, 0));
        assert!(g.needs_device_free(ms(200), false, 2 * keep, 0));
        // Idle with keep unused: once every IDLE_FREE_EVERY.
        assert!(!g.needs_device_free(ms(300), false, keep, 0));
        assert!(!g.needs_device_free(ms(1199), false, keep, 0));
        assert!(g.needs_device_free(ms(1200), false, keep, 0));
        assert!(!g.needs_device_free(ms(1300), false, keep, 0));
        assert!(
            g.needs_device_free(ms(1400), true, keep, 0),
            "activity reads at once"
        );
        assert!(
            !g.needs_device_free(ms(5000), false, keep, keep),
            "nothing unused"
        );
    }

    #[test]
    fn an_idle_pool_is_looked_at_only_when_something_is_due() {
        let p = policy();
        let mut g = Governor::new(p, ms(0));
        let r = Reading {
            device_free: Some(100 * GIB),
            reserved: p.keep,
            used: 0,
        };
        assert!(g.needs_device_free(ms(100), true, p.keep, 0));
        g.tick(ms(100), true, r);
        assert_eq!(g.next_look(ms(100), true), p.poll, "active: every poll");
        // Idle, holding keep unused: the idle trim's time and the free-memory reading's, both
        // a second after the last activity.
        g.tick(ms(200), false, r);
        assert_eq!(g.next_look(ms(200), false), ms(900));
        assert!(g.needs_device_free(ms(1100), false, p.keep, 0));
        assert_eq!(
            g.tick(ms(1100), false, r),
            Decision::Nothing,
            "keep: no trim"
        );
        // Then once a second, for the reading.
        assert_eq!(g.next_look(ms(1100), false), ms(1000));
        assert_eq!(g.next_look(ms(1700), false), ms(400));
        assert_eq!(g.next_look(ms(2099), false), p.poll, "never below the poll");
        assert_eq!(
            g.next_look(ms(2150), true),
            p.poll,
            "activity: every poll again"
        );
        // Idle with more than keep unused: every poll, for pressure.
        let big = Reading {
            reserved: 3 * p.keep,
            ..r
        };
        g.tick(ms(3000), false, big);
        assert_eq!(g.next_look(ms(3000), false), p.poll);
        // Nothing unused and no more than keep held: nothing to read, nothing for the idle
        // trim to give: nothing until activity.
        let used = Reading { used: p.keep, ..r };
        let mut g = Governor::new(p, ms(0));
        g.tick(ms(100), true, used);
        g.tick(ms(200), false, used);
        assert_eq!(g.next_look(ms(200), false), NOTHING_DUE);
        assert_eq!(g.next_look(ms(300), true), p.poll, "activity: every poll");
        // Nothing unused but more than keep held: the trim's time, then nothing until activity.
        let held = Reading {
            reserved: 2 * p.keep,
            used: 2 * p.keep,
            ..r
        };
        let mut g = Governor::new(p, ms(0));
        g.tick(ms(100), true, held);
        g.tick(ms(200), false, held);
        assert_eq!(g.next_look(ms(200), false), ms(900));
        g.tick(ms(1100), false, held);
        assert_eq!(g.next_look(ms(1100), false), NOTHING_DUE);
        // Pressure trims off: more than keep unused does not keep the governor looking.
        let mut g = Governor::new(PoolPolicy { low_water: 0, ..p }, ms(0));
        g.tick(ms(100), true, big);
        assert_eq!(g.next_look(ms(100), true), p.poll, "active: every poll");
        g.tick(ms(200), false, big);
        assert_eq!(g.next_look(ms(200), false), ms(900), "until the idle trim");
    }

    #[test]
    fn an_idle_pool_that_keeps_nothing_gives_everything_back_and_then_sleeps() {
        // The CUDA plugin's default: keep 0.
        let p = PoolPolicy::for_device(140 * GIB, 0);
        let mut g = Governor::new(p, ms(0));
        // Before any allocation (the head start already trimmed at initialisation): nothing.
        let empty = Reading {
            device_free: None,
            reserved: 0,
            used: 0,
        };
        assert!(!g.needs_device_free(ms(0), false, 0, 0));
        assert_eq!(g.tick(ms(0), false, empty), Decision::Nothing);
        assert_eq!(g.next_look(ms(0), false), NOTHING_DUE);
        // Used: 64 MiB freed into the pool; every look reads free memory while it holds it.
        let cached = Reading {
            device_free: Some(100 * GIB),
            reserved: 64 << 20,
            used: 0,
        };
        assert!(g.needs_device_free(ms(5000), true, cached.reserved, 0));
        assert_eq!(g.tick(ms(5000), true, cached), Decision::Nothing);
        assert_eq!(g.next_look(ms(5000), true), p.poll);
        assert_eq!(
            g.tick(ms(6000), false, cached),
            Decision::Trim {
                keep: 0,
                why: TrimReason::Idle
            }
        );
        // Trimmed: no reading and no look until the next allocation or free.
        assert!(!g.needs_device_free(ms(6100), false, 0, 0));
        g.tick(ms(6100), false, empty);
        assert_eq!(g.next_look(ms(6100), false), NOTHING_DUE);
    }

    /// A pool whose readings are counted.
    struct Counted {
        reads: std::cell::Cell<u32>,
        r: Reading,
    }

    impl PoolOps for Counted {
        fn total(&self) -> u64 {
            140 * GIB
        }
        fn try_alloc(&self, _: u64) -> crate::Result<Option<usize>> {
            Ok(None)
        }
        fn give_back(&self, _: u64) {}
        fn settle(&self) {}
        fn reading(&self, device_free: bool) -> Reading {
            self.reads.set(self.reads.get() + 1);
            Reading {
                device_free: device_free.then_some(self.r.device_free).flatten(),
                ..self.r
            }
        }
    }

    #[test]
    fn idle_looks_reuse_the_pools_numbers_until_activity_or_a_trim() {
        let p = policy();
        let ops = Counted {
            reads: 0.into(),
            r: Reading {
                device_free: Some(100 * GIB),
                reserved: p.keep,
                used: 0,
            },
        };
        let mut g = Governor::new(p, ms(0));
        let reads = |t: u64, active: bool, g: &mut Governor| {
            let before = ops.reads.get();
            govern(&ops, g, ms(t), active);
            ops.reads.get() - before
        };
        assert_eq!(
            reads(100, true, &mut g),
            2,
            "active: the pool's numbers and free memory"
        );
        assert_eq!(
            reads(200, false, &mut g),
            0,
            "idle: nothing asked of the driver"
        );
        assert_eq!(reads(300, true, &mut g), 2);
        assert_eq!(reads(400, false, &mut g), 0);
        assert_eq!(
            reads(1300, false, &mut g),
            1,
            "the free memory, due after a second"
        );
        assert_eq!(reads(1400, false, &mut g), 0);
        assert_eq!(reads(2300, false, &mut g), 1, "free memory once a second");
        // A pool holding more than keep unused: free memory at every look; the idle trim gives
        // memory back, and the look after it reads the pool again.
        let ops = Counted {
            reads: 0.into(),
            r: Reading {
                reserved: 2 * p.keep,
                ..ops.r
            },
        };
        let mut g = Governor::new(p, ms(0));
        let reads = |t: u64, active: bool, g: &mut Governor| {
            let before = ops.reads.get();
            let d = govern(&ops, g, ms(t), active);
            (ops.reads.get() - before, d)
        };
        assert_eq!(reads(100, true, &mut g), (2, Decision::Nothing));
        assert_eq!(reads(200, false, &mut g), (1, Decision::Nothing));
        let trim = Decision::Trim {
            keep: p.keep,
            why: TrimReason::Idle,
        };
        assert_eq!(reads(1100, false, &mut g), (1, trim));
        assert_eq!(reads(1200, false, &mut g), (2, Decision::Nothing));
    }

    #[test]
    fn an_idle_pool_holding_no_more_than_keep_is_not_trimmed() {
        let p = policy();
        let cases = [
            (p.keep, 0, false),
            (p.keep, p.keep, false),
            (p.keep + 1, 0, true),
        ];
        for (reserved, used, trimmed) in cases {
            let mut g = Governor::new(p, ms(0));
            let r = Reading {
                device_free: Some(100 * GIB),
                reserved,
                used,
            };
            let d = g.tick(ms(1000), false, r);
            assert_eq!(
                matches!(d, Decision::Trim { .. }),
                trimmed,
                "{reserved} {used}"
            );
        }
    }

    #[test]
    fn zero_settings_turn_each_part_off() {
        let p = PoolPolicy {
            idle: Duration::ZERO,
            low_water: 0,
            ..policy()
        };
        let mut g = Governor::new(p, ms(0));
        let r = Reading {
            device_free: Some(0),
            reserved: 80 * GIB,
            used: 0,
        };
        assert_eq!(g.tick(ms(100_000), false, r), Decision::Nothing);
        assert_eq!(backoff(Duration::ZERO).count(), 0);
    }

    #[test]
    fn backoff_doubles_up_to_a_cap_and_adds_up_to_the_wait() {
        let waits: Vec<_> = backoff(ms(3000)).collect();
        assert_eq!(&waits[..4], &[ms(1), ms(2), ms(4), ms(8)]);
        assert!(waits.iter().all(|w| *w <= ms(250)));
        assert_eq!(waits.iter().sum::<Duration>(), ms(3000));
    }

    #[test]
    fn the_shortage_names_what_others_hold() {
        let s = describe_shortage(
            140 * GIB,
            Reading {
                device_free: Some(59 * GIB),
                reserved: GIB,
                used: 0,
            },
            80 * GIB,
        );
        assert!(s.contains("80.00 GiB requested"), "{s}");
        assert!(s.contains("59.00 GiB of 140.00 GiB free"), "{s}");
        assert!(
            s.contains("other processes and contexts hold about 80.00 GiB"),
            "{s}"
        );
    }
}
