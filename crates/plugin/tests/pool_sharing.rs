//! Processes sharing one GPU, simulated: each "process" has a stream-ordered pool (reserved /
//! used bytes, a release threshold applied at synchronisation, trims), all draw on one device,
//! and a fake clock drives every process's governor. The code under test is the policy the
//! CUDA plugin runs (`pool_policy::{govern, alloc_with_patience}`); only the pool is fake.

use omptarget_plugin::pool_policy::{
    Decision, Governor, PoolOps, PoolPolicy, Reading, Shortage, TrimReason, alloc_with_patience,
    govern,
};
use std::cell::{Cell, RefCell};
use std::time::Duration;

const GIB: u64 = 1 << 30;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// One device shared by several processes' pools.
struct Gpu {
    total: u64,
    /// Memory held outside any pool we simulate (another runtime's `cuMemAlloc`, contexts).
    outside: Cell<u64>,
    pools: RefCell<Vec<(u64, u64)>>, // (reserved, used) per process
}

impl Gpu {
    fn new(total: u64, processes: usize) -> Self {
        Self {
            total,
            outside: Cell::new(0),
            pools: RefCell::new(vec![(0, 0); processes]),
        }
    }
    fn free(&self) -> u64 {
        let held: u64 = self.pools.borrow().iter().map(|p| p.0).sum();
        self.total - held - self.outside.get()
    }
}

/// Process `id`'s pool on `gpu`.
struct Pool<'a> {
    gpu: &'a Gpu,
    id: usize,
    threshold: u64,
}

impl Pool<'_> {
    fn get(&self) -> (u64, u64) {
        self.gpu.pools.borrow()[self.id]
    }
    fn set(&self, v: (u64, u64)) {
        self.gpu.pools.borrow_mut()[self.id] = v;
    }
    fn free_bytes(&self, size: u64) {
        let (r, u) = self.get();
        self.set((r, u - size));
    }
    /// A synchronisation: the driver releases what exceeds the release threshold.
    fn sync(&self) {
        let (r, u) = self.get();
        if r > self.threshold {
            self.set((self.threshold.max(u), u));
        }
    }
}

impl PoolOps for Pool<'_> {
    fn total(&self) -> u64 {
        self.gpu.total
    }
    fn try_alloc(&self, size: u64) -> omptarget_plugin::Result<Option<usize>> {
        let (r, u) = self.get();
        let cached = r - u;
        if cached >= size {
            self.set((r, u + size));
            return Ok(Some(1));
        }
        let need = size - cached;
        if self.gpu.free() < need {
            return Ok(None);
        }
        self.set((r + need, u + size));
        Ok(Some(1))
    }
    fn give_back(&self, keep: u64) {
        let (r, u) = self.get();
        self.set((u.max(keep.min(r)), u));
    }
    fn settle(&self) {}
    fn reading(&self, device_free: bool) -> Reading {
        let (reserved, used) = self.get();
        Reading {
            device_free: device_free.then(|| self.gpu.free()),
            reserved,
            used,
        }
    }
}

/// Processes with their governors and one clock.
struct World<'a> {
    now: Cell<Duration>,
    pools: Vec<Pool<'a>>,
    governors: RefCell<Vec<Governor>>,
    active: RefCell<Vec<bool>>,
    policy: PoolPolicy,
    /// The next time each governor looks.
    next_look: RefCell<Vec<Duration>>,
}

impl<'a> World<'a> {
    fn new(gpu: &'a Gpu, policy: PoolPolicy, threshold: u64) -> Self {
        let n = gpu.pools.borrow().len();
        Self {
            now: Cell::new(Duration::ZERO),
            pools: (0..n).map(|id| Pool { gpu, id, threshold }).collect(),
            governors: RefCell::new(
                (0..n)
                    .map(|_| Governor::new(policy, Duration::ZERO))
                    .collect(),
            ),
            active: RefCell::new(vec![false; n]),
            policy,
            next_look: RefCell::new(vec![policy.poll; n]),
        }
    }

    /// Lets time pass: every governor looks at each of its poll times on the way.
    fn advance(&self, d: Duration) -> Vec<(usize, Decision)> {
        let end = self.now.get() + d;
        let mut seen = Vec::new();
        loop {
            let (i, t) = {
                let next = self.next_look.borrow();
                let (i, &t) = next
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, t)| **t)
                    .expect("processes");
                (i, t)
            };
            if t > end {
                break;
            }
            self.now.set(t);
            let active = std::mem::take(&mut self.active.borrow_mut()[i]);
            let decision = govern(
                &self.pools[i],
                &mut self.governors.borrow_mut()[i],
                t,
                active,
            );
            if decision != Decision::Nothing {
                seen.push((i, decision));
            }
            // As the plugin's governor thread: it sleeps as long as the governor says.
            let sleep = self.governors.borrow()[i].next_look(t, active);
            self.next_look.borrow_mut()[i] = t + sleep;
        }
        self.now.set(end);
        seen
    }

    /// Process `i` runs a region that maps `size` bytes: allocate (with the policy's patience;
    /// its waits let time pass for everyone), work for `busy`, free, synchronise.
    fn region(&self, i: usize, size: u64, busy: Duration) -> Result<Duration, Shortage> {
        self.note_activity(i);
        let mut waited = Duration::ZERO;
        let r = alloc_with_patience(&self.pools[i], size, &self.policy, |d| {
            waited += d;
            self.advance(d);
        })
        .expect("no driver error");
        r?;
        self.advance(busy);
        self.pools[i].free_bytes(size);
        self.pools[i].sync();
        self.note_activity(i);
        Ok(waited)
    }

    /// An allocation or free of process `i`: as the plugin's `note_activity`, which also wakes
    /// a governor sleeping longer than its poll.
    fn note_activity(&self, i: usize) {
        self.active.borrow_mut()[i] = true;
        let now = self.now.get();
        let mut next = self.next_look.borrow_mut();
        if next[i] > now + self.policy.poll {
            next[i] = now;
        }
    }
}

fn policy() -> PoolPolicy {
    PoolPolicy::for_device(140 * GIB, GIB / 4)
}

/// What the runtime did before this policy: keep everything, never trim, never wait.
fn keep_everything() -> PoolPolicy {
    PoolPolicy {
        idle: Duration::ZERO,
        low_water: 0,
        oom_wait: Duration::ZERO,
        ..policy()
    }
}

#[test]
fn the_issue_scenario_failed_with_a_pool_that_keeps_everything() {
    // A maps 80 GiB, then idles; B starts 2 s later and maps 80 GiB.
    let gpu = Gpu::new(140 * GIB, 2);
    let w = World::new(&gpu, keep_everything(), u64::MAX);
    w.region(0, 80 * GIB, ms(100)).expect("A");
    w.advance(ms(1900));
    let e = w.region(1, 80 * GIB, ms(100)).expect_err("B cannot fit");
    assert_eq!(e.reading.reserved, 0);
    assert_eq!(e.reading.device_free, Some(60 * GIB));
}

#[test]
fn an_idle_process_gives_its_memory_back_so_the_next_one_fits() {
    let gpu = Gpu::new(140 * GIB, 2);
    // The cap off: the idle trim alone must do it.
    let w = World::new(&gpu, policy(), u64::MAX);
    w.region(0, 80 * GIB, ms(100)).expect("A");
    assert_eq!(
        gpu.pools.borrow()[0].0,
        80 * GIB,
        "A caches its memory while busy"
    );
    let decisions = w.advance(ms(1900));
    assert_eq!(
        decisions,
        vec![(
            0,
            Decision::Trim {
                keep: GIB / 4,
                why: TrimReason::Idle
            }
        )]
    );
    assert_eq!(gpu.pools.borrow()[0].0, GIB / 4);
    assert_eq!(
        w.region(1, 80 * GIB, ms(100)).expect("B fits"),
        Duration::ZERO
    );
}

#[test]
fn the_bounded_cache_releases_at_synchronisation_without_waiting_for_idle() {
    let gpu = Gpu::new(140 * GIB, 2);
    let w = World::new(&gpu, keep_everything(), 35 * GIB);
    w.region(0, 80 * GIB, ms(100)).expect("A");
    assert_eq!(gpu.pools.borrow()[0].0, 35 * GIB);
    w.advance(ms(10));
    w.region(1, 80 * GIB, ms(100)).expect("B fits at once");
}

#[test]
fn a_failed_allocation_waits_for_another_process_to_go_idle() {
    let gpu = Gpu::new(140 * GIB, 2);
    let w = World::new(&gpu, policy(), u64::MAX);
    w.region(0, 80 * GIB, ms(100)).expect("A");
    // B comes 400 ms after A's region, before A's idle trim (1 s after its last activity).
    w.advance(ms(400));
    let waited = w.region(1, 80 * GIB, ms(100)).expect("B, after waiting");
    assert!(
        waited >= ms(500) && waited <= ms(900),
        "B waited {waited:?} for A's idle trim"
    );
}

#[test]
fn a_request_larger_than_the_device_fails_without_waiting() {
    let gpu = Gpu::new(140 * GIB, 1);
    let w = World::new(&gpu, policy(), u64::MAX);
    w.region(0, 10 * GIB, ms(1)).expect("10 GiB");
    let cached = gpu.pools.borrow()[0].0;
    assert!(cached >= 10 * GIB);
    let e = w.region(0, 4096 * GIB, ms(1)).expect_err("4 TiB");
    assert_eq!(e.waited, Duration::ZERO);
    // No trim can make room for it: the cache stays (and the driver is not asked).
    assert_eq!(gpu.pools.borrow()[0].0, cached);
}

#[test]
fn pressure_makes_a_busy_process_give_back_what_it_does_not_use() {
    let gpu = Gpu::new(140 * GIB, 2);
    let w = World::new(&gpu, policy(), u64::MAX);
    // A once mapped 100 GiB and keeps working on small regions: never idle.
    w.region(0, 100 * GIB, ms(100)).expect("A big");
    // Something outside our pools (another runtime) takes most of the rest.
    gpu.outside.set(39 * GIB + GIB / 2);
    let mut trimmed = false;
    for _ in 0..20 {
        w.region(0, GIB, ms(50)).expect("A small");
        trimmed |= gpu.pools.borrow()[0].0 < 10 * GIB;
    }
    assert!(trimmed, "A gave its unused 99 GiB back under pressure");
    gpu.outside.set(0);
    w.region(1, 100 * GIB, ms(10)).expect("B");
}

#[test]
fn an_idle_process_gives_its_kept_memory_back_under_pressure_within_a_second() {
    // A keeps a large head start while idle; it reads the device's free memory only once a
    // second then (IDLE_FREE_EVERY), still within B's patience.
    let p = PoolPolicy {
        keep: 20 * GIB,
        ..policy()
    };
    let gpu = Gpu::new(140 * GIB, 2);
    let w = World::new(&gpu, p, u64::MAX);
    w.region(0, 20 * GIB, ms(10)).expect("A");
    w.advance(ms(5000));
    assert_eq!(gpu.pools.borrow()[0].0, 20 * GIB, "idle A keeps its keep");
    // The device below its low water (4 GiB free of 140), B needs what A keeps.
    gpu.outside.set(116 * GIB);
    let waited = w
        .region(1, 20 * GIB, ms(10))
        .expect("B, after A gave its keep back");
    assert!(
        waited <= omptarget_plugin::pool_policy::IDLE_FREE_EVERY + ms(100),
        "B waited {waited:?}"
    );
    assert_eq!(gpu.pools.borrow()[0].0, 0);
}

#[test]
fn eight_processes_with_phases_at_random_offsets_all_succeed() {
    // 8 × 15 GiB fits in 140 GiB whatever the offsets; each process keeps at most its own
    // working set, so no phase may fail. A small deterministic generator picks the offsets.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _run in 0..20 {
        let gpu = Gpu::new(140 * GIB, 8);
        let w = World::new(
            &gpu,
            policy(),
            PoolPolicy::default_release_threshold(140 * GIB),
        );
        let mut next: Vec<Duration> = (0..8).map(|_| ms(rand(3000))).collect();
        for _ in 0..8 * 10 {
            let (i, &t) = next.iter().enumerate().min_by_key(|(_, t)| **t).expect("8");
            w.advance(t.saturating_sub(w.now.get()));
            let size = (10 + rand(6)) * GIB;
            w.region(i, size, ms(100 + rand(400))).expect("phase");
            next[i] = w.now.get() + ms(rand(2000));
        }
    }
}
